"""Rule-based extraction in English and Chinese: every kind, every negative category, keys that supersede, quality."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench.facts_eval import (
    ALL,
    GoldFact,
    Labelled,
    chat_rate,
    chat_turns,
    load_labelled,
    load_pairs,
    missing_chat,
    same_value,
    same_words,
    score,
)
from memory.errors import ValidationError
from memory.facts import guards
from memory.facts.extract import Extraction, extract, normalize_key
from memory.facts.numbers import parse_number
from memory.facts.rules import RuleSet, load_rules

_DATA = Path(__file__).parent


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules()


def triples(text: str, rules: RuleSet) -> list[tuple[str, str, str]]:
    return [(f.kind, f.key, f.value) for f in extract(text, rules).facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Never use global variables.", ("prohibition", "prohibition:global variables", "global variables")),
        ("Please don't add emojis to commit messages.", ("prohibition", "prohibition:emojis to commit messages",
                                                         "emojis to commit messages")),
        ("We must not store passwords in plain text.", ("prohibition", "prohibition:store passwords in plain text",
                                                        "store passwords in plain text")),
        ("No ads.", ("prohibition", "prohibition:ads", "ads")),
        ("禁止在生产环境调试。", ("prohibition", "prohibition:在生产环境调试", "在生产环境调试")),
        ("千万别用递归。", ("prohibition", "prohibition:递归", "递归")),
        ("Always explain your reasoning.", ("requirement", "requirement:explain your reasoning",
                                            "explain your reasoning")),
        ("You need to validate every input.", ("requirement", "requirement:validate every input",
                                               "validate every input")),
        ("务必备份数据库。", ("requirement", "requirement:备份数据库", "备份数据库")),
        ("只用开源的库。", ("requirement", "requirement:开源库", "开源的库")),
        ("My budget is 1,200 dollars.", ("limit", "limit:budget", "1200 USD")),
        ("Keep it under 2k.", ("limit", "limit:budget", "2000")),
        ("预算五百元。", ("limit", "limit:budget", "500 CNY")),
        ("预算3万。", ("limit", "limit:budget", "30000 CNY")),
        ("两千块左右。", ("limit", "limit:budget", "2000 CNY")),
        ("At most 3 pages.", ("limit", "limit:pages", "3 pages")),
        ("不超过十页。", ("limit", "limit:pages", "10 pages")),
        ("The deadline is Friday.", ("limit", "limit:deadline", "Friday")),
        ("截止日期是周五。", ("limit", "limit:deadline", "Friday")),
        ("截止日期是3月5日。", ("limit", "limit:deadline", "March 5")),
        ("I prefer Vue over React.", ("preference", "preference:vue", "Vue")),
        ("我偏好纸质书。", ("preference", "preference:纸质书", "纸质书")),
        ("我更喜欢安静的餐厅。", ("preference", "preference:安静餐厅", "安静的餐厅")),
        ("My name is Anna.", ("profile", "profile:name", "Anna")),
        ("我叫王伟。", ("profile", "profile:name", "王伟")),
        ("I'm a data scientist.", ("profile", "profile:role", "data scientist")),
        ("我是产品经理。", ("profile", "profile:role", "产品经理")),
        ("As a platinum member, I'd like a lounge pass.", ("profile", "profile:membership", "platinum member")),
        ("I have gold status.", ("profile", "profile:membership", "gold member")),
        ("我是你们的金卡会员。", ("profile", "profile:membership", "金卡会员")),
        ("I'm a member of the chess club.", ("profile", "profile:role", "member")),
        ("I live in Berlin.", ("profile", "profile:location", "Berlin")),
        ("我住在上海。", ("profile", "profile:location", "上海")),
        ("Answer in Chinese.", ("format", "format:language", "Chinese")),
        ("用中文回答。", ("format", "format:language", "Chinese")),
        ("Reply in bullet points.", ("format", "format:layout", "bullet points")),
        ("Use markdown tables.", ("format", "format:layout", "table")),
        ("回答要简洁。", ("format", "format:length", "concise")),
        ("Keep it brief.", ("format", "format:length", "concise")),
    ],
)
def test_each_kind_in_both_languages(rules: RuleSet, text: str, expected: tuple[str, str, str]) -> None:
    assert triples(text, rules) == [expected]


@pytest.mark.parametrize(
    ("category", "text"),
    [
        ("question", "Should I avoid Python 2?"),
        ("question", "Can I use tabs"),
        ("question", "What is the budget?"),
        ("question", "预算是多少？"),
        ("question", "要不要用Python?"),
        ("question", "能不能用中文回答"),
        ("question", "是否需要加注释"),
        ("hypothetical", "If I said never use tabs..."),
        ("hypothetical", "Suppose the budget were $500."),
        ("hypothetical", "如果预算不超过500呢"),
        ("hypothetical", "假如我说不要用Python"),
        ("conditional", "If the tests fail, don't deploy."),
        ("conditional", "如果预算够的话就买新电脑。"),
        ("quoted", "He said 'never use globals'."),
        ("quoted", 'The poster says "always be closing".'),
        ("quoted", "他说“不要用Python”。"),
        ("reported", "My boss says we must use Java."),
        ("reported", "他说不要用Python。"),
        ("reported", "老板说必须用Java。"),
        ("negated", "I'm not saying don't use Python."),
        ("negated", "I never said you must use tabs."),
        ("negated", "我不是说不要用Python。"),
        ("negated", "我没说必须用中文。"),
        ("code", "```\nnever_use = True\n```"),
        ("code", "for x in items:"),
        ("code", "if (budget > 500) { return; }"),
        ("code", "```python\n# 不要用全局变量\n```"),
        ("chit-chat", "Thanks, that's great!"),
        ("chit-chat", "I like it."),
        ("chit-chat", "No worries."),
        ("chit-chat", "谢谢，非常有帮助！"),
        ("chit-chat", "不用谢。"),
        ("chit-chat", "哈哈，好的。"),
        ("circumstance", "I don't have my booking number with me right now."),
        ("circumstance", "We don't have the invoice handy."),
        ("circumstance", "I don't have access to my email at the moment."),
        ("circumstance", "我现在手边没有订单号。"),
        ("circumstance", "我身上没带护照。"),
    ],
)
def test_negative_categories_yield_no_facts(rules: RuleSet, category: str, text: str) -> None:
    assert extract(text, rules).facts == (), category


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Should I avoid Python 2?", guards.QUESTION),
        ("预算是多少？", guards.QUESTION),
        ("Imagine the budget were $500.", guards.HYPOTHETICAL),
        ("He said never use globals.", guards.REPORTED),
        ("他说不要用Python。", guards.REPORTED),
        ("He said 'never use globals'.", guards.QUOTED),
        ("```\n# never use tabs\n```", guards.CODE),
    ],
)
def test_rejections_are_reported_with_a_reason(rules: RuleSet, text: str, reason: str) -> None:
    found = extract(text, rules)
    assert found.facts == ()
    assert reason in {i.reason for i in found.ignored}


def test_negation_reason_quotes_the_negating_words(rules: RuleSet) -> None:
    ignored = extract("I'm not saying don't use Python.", rules).ignored
    assert [i.reason for i in ignored] == ["negated: 'I'm not saying'"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My budget is $800 and the deadline is next Friday.",
         [("limit", "limit:budget", "800 USD"), ("limit", "limit:deadline", "next Friday")]),
        ("Reply in English. Never use tabs. I live in Oslo.",
         [("format", "format:language", "English"), ("prohibition", "prohibition:tabs", "tabs"),
          ("profile", "profile:location", "Oslo")]),
        ("以后不要用Python 2的语法，预算不超过500元。",
         [("prohibition", "prohibition:python 2语法", "Python 2的语法"), ("limit", "limit:budget", "500 CNY")]),
        ("用中文回答，回答要简洁，不要用表情。",
         [("format", "format:language", "Chinese"), ("format", "format:length", "concise"),
          ("prohibition", "prohibition:表情", "表情")]),
        ("Should I avoid Python 2? Anyway, never use eval.", [("prohibition", "prohibition:eval", "eval")]),
        # A rule at the end of a sentence about something else is read as it is read alone.
        ("I need the report by Friday, and please answer in British spelling.",
         [("limit", "limit:deadline", "Friday"), ("format", "format:spelling", "British")]),
        ("报告周五前给我，另外请用英式拼写回答。",
         [("limit", "limit:deadline", "Friday"), ("format", "format:spelling", "British")]),
        # What one cannot have (a diet) is a rule; what one has not got on one is a circumstance (above).
        ("I don't have my ticket with me, and I can't have gluten.", [("prohibition", "prohibition:gluten", "gluten")]),
        ("我不吃猪肉，现在手边也没有订单号。", [("prohibition", "prohibition:猪肉", "猪肉")]),
        ("他说不要用Python，但我要求必须用Python 3。", [("requirement", "requirement:python", "Python 3")]),
    ],
)
def test_several_facts_per_message_and_only_the_good_clauses(
    rules: RuleSet, text: str, expected: list[tuple[str, str, str]]
) -> None:
    assert triples(text, rules) == expected


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My budget is under 500.", "Actually my budget is 800 now."),
        ("预算不超过500元。", "预算改成800元吧。"),
        ("Reply in English.", "用中文回答。"),
        ("My name is Anna.", "Call me Annie."),
        ("The deadline is Friday.", "截止日期改到下周一。"),
        ("At most 3 pages.", "不超过10页。"),
        ("Don't use tabs.", "Please never use tabs again."),
    ],
)
def test_a_later_statement_about_the_same_thing_has_the_same_key(rules: RuleSet, first: str, second: str) -> None:
    one, two = extract(first, rules).facts, extract(second, rules).facts
    assert len(one) == len(two) == 1
    assert one[0].key == two[0].key
    assert one[0].value != two[0].value or first.startswith("Don't")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Don't use Python 2.", "Don't use tabs."),
        ("不要用Python 2。", "不要用tabs。"),
        ("At most 3 pages.", "At most 300 words."),
        ("At most 5 slides.", "At least 5 slides."),
    ],
)
def test_different_subjects_have_different_keys(rules: RuleSet, first: str, second: str) -> None:
    assert extract(first, rules).facts[0].key != extract(second, rules).facts[0].key


def test_a_fact_keeps_its_source_clause_and_rule(rules: RuleSet) -> None:
    (fact,) = extract("Hi! Please, NEVER use Python 2 syntax.", rules).facts
    assert fact.text == "Please, NEVER use Python 2 syntax."
    assert fact.rule == "en.prohibition.head"
    assert fact.key == "prohibition:python 2 syntax"


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "。", "???"])
def test_empty_or_punctuation_only_messages_yield_nothing(rules: RuleSet, text: str) -> None:
    assert extract(text, rules) == Extraction(facts=(), ignored=())


def test_long_messages_stay_fast(rules: RuleSet) -> None:
    message = ("I went to the store and bought apples, and then I cooked. " * 80
               + "Never use tabs " + "and spaces " * 60 + ". 我今天去了商店然后回家做了晚饭，" * 60
               + "不要用表情。")
    started = time.perf_counter()
    facts = extract(message, rules).facts
    assert time.perf_counter() - started < 3.0
    assert ("prohibition", "prohibition:表情", "表情") in [(f.kind, f.key, f.value) for f in facts]


def test_repeating_a_constraint_in_one_message_yields_it_once(rules: RuleSet) -> None:
    assert len(extract("Never use tabs. Never use tabs!", rules).facts) == 1


@pytest.mark.parametrize(
    ("text", "value"),
    [("2,000", "2000"), ("1.5k", "1500"), ("3万", "30000"), ("1.5万", "15000"), ("两千", "2000"),
     ("五百", "500"), ("两千五", "2500"), ("3万5", "35000"), ("five hundred", "500"), ("十二", "12")],
)
def test_numbers_in_digits_words_and_chinese_numerals(text: str, value: str) -> None:
    parsed = parse_number(text)
    assert parsed is not None and format(parsed.normalize(), "f") == value


def test_keys_are_lower_case_without_articles_or_particles() -> None:
    assert normalize_key("prohibition", "The  Python 2 Syntax") == "prohibition:python 2 syntax"
    assert normalize_key("prohibition", "Python 2 的 语法") == "prohibition:python 2语法"


def test_values_compare_without_case_spaces_or_punctuation() -> None:
    assert same_value("Python 2 syntax", "python 2 syntax.")
    assert same_value("columns A and B", "Columns A and B")
    assert not same_value("500 USD", "800 USD")


@pytest.mark.parametrize(("predicted", "gold", "words"), [
    ("business class wherever possible", "business wherever possible", True),  # one word more
    ("cancel any reservations with one passenger", "cancel the reservations with one passenger", True),
    ("three checked bags", "3 checked bags", True),
    ("改成商务舱", "商务舱", True),
    ("tabs", "tabs for indentation in Python", False),  # most of the constraint missing
    ("answer in English", "answer in Chinese", False),
    ("用中文回答", "用英文回答", False),  # half the words in common is not enough
])
def test_the_looser_match_asks_for_most_words_in_common(predicted: str, gold: str, words: bool) -> None:
    assert same_words(predicted, gold) is words
    assert same_words(gold, predicted) is words


def test_the_looser_match_is_reported_beside_the_strict_one(rules: RuleSet) -> None:
    # A label saying the rules' value in more words matches by words only, in the words column.
    for lang, text, value, label in [("en", "Never use Python 2 syntax.", "Python 2 syntax",
                                      "python 2 syntax in new scripts"),
                                     ("zh", "不要用Python 2的语法。", "Python 2的语法", "新项目python 2语法")]:
        assert [f.value for f in extract(text, rules).facts] == [value]
        report = score([Labelled(lang, text, (GoldFact("prohibition", f"prohibition:{label}", label),))], rules)
        assert (report.facts[lang].correct, report.words[lang].correct) == (0, 1)


def test_quality_files_are_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"lang": "en", "text": "x", "facts": []}\n{"lang": "fr", "text": "x", "facts": []}\n')
    with pytest.raises(ValidationError, match=r"bad\.jsonl:2: 'lang' must be one of \['en', 'zh'\]"):
        load_labelled(bad)
    bad.write_text('{"lang": "en", "first": "a", "second": "b", "same_key": "yes"}\n')
    with pytest.raises(ValidationError, match=r"bad\.jsonl:1: expected 'first' and 'second'"):
        load_pairs(bad)


def test_labelled_data_is_big_enough_and_bilingual() -> None:
    items = load_labelled(_DATA / "labelled.jsonl")
    pairs = load_pairs(_DATA / "supersede.jsonl")
    assert len(items) >= 150 and sum(i.lang == "zh" for i in items) >= 60
    assert sum(not i.facts for i in items) >= 40
    assert len(pairs) >= 40 and sum(p.lang == "zh" for p in pairs) >= 15


def test_quality_targets_on_the_labelled_set(rules: RuleSet) -> None:
    report = score(_DATA / "labelled.jsonl", rules, _DATA / "supersede.jsonl")
    misses = "\n".join(f"{m.what}: {m.text!r} -> {m.fact}" for m in report.misses)
    for lang in ("en", "zh", ALL):
        facts = report.facts[lang]
        assert facts.precision >= 0.95, f"{lang} precision {facts.precision:.3f}\n{misses}"
        assert facts.recall >= 0.85, f"{lang} recall {facts.recall:.3f}\n{misses}"
        assert report.supersede[lang].accuracy >= 0.95, f"{lang} supersede {report.supersede[lang].accuracy:.3f}"


def test_quality_targets_on_the_held_out_set(rules: RuleSet) -> None:
    """The held-out utterances were never used to write or tune a rule: the figure that says how the rules generalise."""
    report = score(_DATA / "heldout.jsonl", rules)
    misses = "\n".join(f"{m.what}: {m.text!r} -> {m.fact}" for m in report.misses)
    for lang in ("en", "zh", ALL):
        facts = report.facts[lang]
        assert facts.utterances >= 16, f"{lang}: only {facts.utterances} held-out utterances"
        assert facts.precision >= 0.95, f"{lang} held-out precision {facts.precision:.3f}\n{misses}"
        assert facts.recall >= 0.85, f"{lang} held-out recall {facts.recall:.3f}\n{misses}"


def test_development_and_unseen_sets_are_big_bilingual_and_apart() -> None:
    """Several hundred utterances per language (docs/fact-labels.md); no sentence in both; a quarter negatives."""
    dev, unseen = load_labelled(_DATA / "dev.jsonl"), load_labelled(_DATA / "unseen.jsonl")
    for items, least in ((dev, 200), (unseen, 150)):
        for lang in ("en", "zh"):
            mine = [i for i in items if i.lang == lang]
            assert len(mine) >= least, f"{lang}: {len(mine)} utterances"
            assert sum(not i.facts for i in mine) >= len(mine) // 4
    assert not {i.text for i in dev} & {i.text for i in unseen}
    assert len(load_pairs(_DATA / "dev_supersede.jsonl")) >= 60
    assert len(load_pairs(_DATA / "unseen_supersede.jsonl")) >= 50


@pytest.mark.parametrize(("name", "pairs", "precision", "recall", "supersede"), [
    ("dev", "dev_supersede", 0.76, 0.62, 0.82),
    # Held out: never read to write a rule. These are floors against regressions, far from the targets
    # (precision 0.95, recall 0.90); bench/RESULTS.md has the figures and docs/experiments.md what would close them.
    ("unseen", "unseen_supersede", 0.65, 0.40, 0.50),
])
def test_quality_floors_on_the_development_and_unseen_sets(rules: RuleSet, name: str, pairs: str, precision: float,
                                                           recall: float, supersede: float) -> None:
    report = score(_DATA / f"{name}.jsonl", rules, _DATA / f"{pairs}.jsonl")
    for lang in ("en", "zh"):
        facts = report.facts[lang]
        assert facts.precision >= precision, f"{name} {lang} precision {facts.precision:.3f}"
        assert facts.recall >= recall, f"{name} {lang} recall {facts.recall:.3f}"
        assert report.supersede[lang].accuracy >= supersede, f"{name} {lang} supersede {report.supersede[lang]}"
        assert report.lifetime[lang].accuracy >= 0.8, f"{name} {lang} lifetime {report.lifetime[lang]}"


@pytest.mark.skipif(missing_chat() is not None, reason=str(missing_chat()))
def test_real_chat_turns_rarely_read_as_instructions(rules: RuleSet) -> None:
    """The held-out LoCoMo and MemoryBank turns: at most 2 % yield a prohibition, requirement, limit or format."""
    for lang, turns in chat_turns("heldout").items():
        rate = chat_rate(turns, rules)  # held out: the rate only, never the turns (docs/fact-labels.md)
        assert rate.turns >= 200, f"{lang}: only {rate.turns} turns"
        assert rate.rate <= 0.02, f"{lang}: {rate.rate:.4f} of held-out turns"
