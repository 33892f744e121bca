"""Lexical analysis: jieba for Chinese, Porter stems for English, stop words, CJK share, query-time syntax."""

from __future__ import annotations

import pytest

from memory.text.analyze import cjk_share, has_cjk, query_terms, terms
from memory.text.porter import porter_stem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The studies showed increased reductions", ["studi", "show", "increas", "reduct"]),
        ("C++ loaders, e.g. CSVLoader_v2!", ["c", "loader", "e", "g", "csvloader", "v2"]),
        ("北京大学的学生喜欢喝龙井茶", ["北京", "大学", "北京大学", "学生", "喜欢", "喝", "龙井", "龙井茶"]),
        ("用Python 2写的加载器", ["用", "python", "2", "写", "加载", "器"]),
        ("", []),
        ("？！……", []),
    ],
    ids=["en", "en-punctuation", "zh", "mixed", "empty", "punctuation"],
)
def test_terms_segment_lowercase_stem_and_drop_stop_words(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_query_terms_are_distinct_and_ordered() -> None:
    assert query_terms("loader loaders LOADER 熊猫 熊猫") == ("loader", "熊猫")


@pytest.mark.parametrize(
    ("text", "share"), [("hello", 0.0), ("你好", 1.0), ("ab你好", 0.5), ("123 ?", 0.0), ("", 0.0)]
)
def test_cjk_share_counts_ideographs_among_letters(text: str, share: float) -> None:
    assert cjk_share(text) == share
    assert has_cjk(text) == (share > 0)


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("caresses", "caress"), ("ponies", "poni"), ("relational", "relat"), ("hopefulness", "hope"),
        ("generalizations", "gener"), ("agreed", "agre"), ("hopping", "hop"), ("sized", "size"),
        ("electrical", "electr"), ("adjustment", "adjust"), ("adoption", "adopt"), ("controll", "control"),
        ("sky", "sky"), ("ω", "ω"), ("h2o", "h2o"),
    ],
)
def test_porter_stems_match_the_published_algorithm(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_prepare_loads_jieba_so_no_request_waits_for_it() -> None:
    import jieba  # type: ignore[import-untyped]

    from memory.text import prepare

    prepare()
    assert jieba.dt.initialized
    assert terms("北京大学") == ["北京", "大学", "北京大学"]
