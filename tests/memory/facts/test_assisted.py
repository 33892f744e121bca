"""The model-assisted path in the fact tier: clauses no rule reads go to the real detector; rules win, chat stays out.

Real store, real MiniLM (the session embedder), real classifier shipped in memory/facts/detector.npz.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bench.facts_eval import chat_rate, chat_turns, missing_chat, score
from memory.config import load_config
from memory.embedding.base import Embedder
from memory.facts.assisted import MODEL_RULES, TAGGER_RULE, model_readers, read_again
from memory.facts.detector import load_detector
from memory.facts.extract import extract
from memory.facts.memory import FactMemory
from memory.facts.rules import RuleSet
from memory.facts.tagger import shipped_tagger
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock

_DATA = Path(__file__).parent


class _Counting(Embedder):
    """The real embedder, counting the query batches it is asked for (not a stand-in: it encodes)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner.identity, inner.calibration)
        self.inner = inner
        self.batches: list[list[str]] = []

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self.inner.encode_queries(texts)

    def _encode(self, texts: Sequence[str], role: str) -> np.ndarray:  # pragma: no cover - encode_queries above
        return self.inner.encode_queries(texts)


@pytest.fixture()
def counting(embedder: Embedder) -> _Counting:
    return _Counting(embedder)


@pytest.fixture()
def facts(store: Store, rules: RuleSet, counting: _Counting) -> FactMemory:
    return FactMemory(store, rules, get_counter(), load_config().facts, ManualClock(tick=60),
                      readers=model_readers(counting, rules))


@pytest.mark.parametrize(("text", "kind"), [
    ("Please cite a source for every statistic you give me.", "requirement"),
    ("所有图表都加上数据来源", "requirement"),
])
def test_a_clause_no_rule_reads_is_stored_with_its_confidence_and_not_pinned(facts: FactMemory, rules: RuleSet,
                                                                           counting: _Counting, text: str,
                                                                           kind: str) -> None:
    assert not extract(text, rules).facts  # the rules leave it open: a model reads it
    (record,) = facts.observe("u1", text).stored
    assert (record.kind, record.rule in MODEL_RULES, record.pinned) == (kind, True, False)
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"
    floor = (shipped_tagger() if record.rule == TAGGER_RULE else load_detector(counting, rules=rules)).thresholds[lang]
    assert floor <= record.confidence < 1.0  # the model's probability, at least its shipped threshold
    assert record.value in text and record.key == f"{kind}:{record.value.lower()}"


@pytest.mark.parametrize("text", ["Never use emojis.", "以后不要用表格。"])
def test_rules_win_and_the_model_is_not_asked(facts: FactMemory, counting: _Counting, text: str) -> None:
    (record,) = facts.observe("u1", text).stored
    assert record.rule not in MODEL_RULES and record.confidence == 1.0 and record.pinned
    assert counting.batches == []


def test_chat_questions_and_advice_yield_nothing_and_a_message_is_one_batch(facts: FactMemory,
                                                                           counting: _Counting) -> None:
    text = ("I went hiking with my sister last weekend. Should I use tabs or spaces? Don't give up! "
            "昨天和朋友去吃了火锅。")
    change = facts.observe("u1", text)
    assert not change.stored and all(o.outcome == "ignored" for o in change.outcomes)
    # The question and the advice are guarded out before the model; the two chat clauses go in one batch.
    assert [len(batch) for batch in counting.batches] == [2]


def test_without_readers_only_the_rules_read(store: Store, rules: RuleSet) -> None:
    text = "Please cite a source for every statistic you give me."
    plain = FactMemory(store, rules, get_counter(), load_config().facts, ManualClock(tick=60))
    assert not plain.observe("u1", text).stored
    assert read_again(extract(text, rules), None, rules) == extract(text, rules)


@pytest.mark.slow  # about 1.5 min: every open clause of 340 utterances and 2,500 chat turns through MiniLM
@pytest.mark.skipif(missing_chat() is not None, reason=str(missing_chat()))
def test_on_the_unseen_set_the_detector_adds_recall_and_keeps_chat_out(rules: RuleSet, embedder: Embedder) -> None:
    """Held out (docs/fact-labels.md): only the rates are read. The detector must add found constraints without
    costing more than a little precision, and real chat turns must stay under the issue's 2 %."""
    readers = model_readers(embedder, rules)
    alone = score(_DATA / "unseen.jsonl", rules)
    helped = score(_DATA / "unseen.jsonl", rules, readers=readers)
    for lang in ("en", "zh"):
        assert helped.facts[lang].recall > alone.facts[lang].recall, lang
        assert helped.facts[lang].precision >= alone.facts[lang].precision - 0.03, lang
    for lang, turns in chat_turns("heldout").items():
        assert chat_rate(turns, rules, readers=readers).rate <= 0.02, lang
