"""Identifiers kept verbatim for compaction's Key data section, in English and Chinese."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.context.identifiers import identifiers, values

CASES = [
    ("Wrote the loader to src/etl/loader.py and pushed commit 3f9c2ab; see https://github.com/acme/etl/pull/42.",
     {("path", "src/etl/loader.py"), ("digest", "3f9c2ab"), ("url", "https://github.com/acme/etl/pull/42")}),
    ("The run id is t-42/r3, ticket JIRA-1183, issue #77; it took 340 ms and cost $12.50.",
     {("id", "t-42/r3"), ("id", "JIRA-1183"), ("id", "#77"), ("amount", "340 ms"), ("amount", "$12.50")}),
    ("已把结果写入 /data/out/result.csv，预算不超过500元，截止2026年12月5日，版本 v2.3.1。",
     {("path", "/data/out/result.csv"), ("amount", "500元"), ("date", "2026年12月5日"), ("version", "v2.3.1")}),
    ("Mail anna@example.com at 10:30 am on 2023-05-08. Use `pandas.read_csv` with \"utf-8\".",
     {("email", "anna@example.com"), ("time", "10:30 am"), ("date", "2023-05-08"), ("code", "pandas.read_csv"),
      ("quoted", "utf-8")}),
    ("我们用的是 Python 3.12，文件在 C:\\Users\\li\\report.docx，参考《数据手册》。",
     {("version", "3.12"), ("path", "C:\\Users\\li\\report.docx"), ("quoted", "数据手册")}),
    ("Retried with uuid 123e4567-e89b-12d3-a456-426614174000.",
     {("uuid", "123e4567-e89b-12d3-a456-426614174000")}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_identifiers_are_found_verbatim_with_their_kind(text: str, expected: set[tuple[str, str]]) -> None:
    assert {(i.kind, i.text) for i in identifiers(text)} == expected


def test_a_url_is_one_identifier_and_each_comes_once_in_order() -> None:
    found = identifiers("See https://example.com/a/b.html, then https://example.com/a/b.html and src/a.py.")
    assert [i.text for i in found] == ["https://example.com/a/b.html", "src/a.py"]


def test_prose_without_identifiers_yields_none() -> None:
    assert identifiers("Please keep the answer short and friendly. 请简短友好地回答。") == ()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abcf0123456789 /.-_:@#$`\"元年月日中文 \n")), max_size=120))
def test_every_identifier_is_text_of_the_input(text: str) -> None:
    for found in identifiers(text):
        assert found.text and found.text in text


def test_an_amount_or_number_ending_a_clause_leaves_its_comma() -> None:
    found = identifiers("Book HAT083 priced at $304, please; it was 1299元, not 1,200, fine.")
    assert [(i.kind, i.text) for i in found] == [("id", "HAT083"), ("amount", "$304"), ("amount", "1299元"),
                                                 ("number", "1,200")]


@pytest.mark.parametrize(("text", "expected"), [
    ('{"origin": "ORD", "flight_number": "HAT271", "date": "2024-05-10", "seats": 3, "payment_methods": {}}',
     ("ORD", "HAT271", "2024-05-10")),
    ("Mail mia.li@example.com about order 4NQLHD (user mia_li_3668), 2 bags, $120, call 13957120386.",
     ("mia.li@example.com", "4NQLHD", "mia_li_3668", "13957120386")),
    ("订单 DD20261130-8842 于12月3日发出，物流单号 SF1234567890，共3件。",  # no spaces: a run of Chinese with it
     ("DD20261130-8842", "于12月3日发出", "SF1234567890", "共3件")),
    ("Please keep it short. 请简短回答。", ()),
])
def test_values_are_the_value_like_words_in_order(text: str, expected: tuple[str, ...]) -> None:
    assert values(text) == expected
