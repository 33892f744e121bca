"""The clause detector on the real MiniLM model: kinds the rules miss, chat and advice left alone, one batch per call.

None of the sentences below is a line of memory/facts/detector_data.jsonl (a test checks it).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memory.config import EmbeddingConfig
from memory.embedding import Embedder
from memory.embedding.base import Role
from memory.embedding.onnx_minilm import OnnxEmbedder
from memory.errors import ConfigError
from memory.facts.detector import (
    NONE,
    ClauseDetector,
    Detection,
    clause_terms,
    guard_reason,
    load_detector,
    read_model,
    shipped_detector_path,
)
from memory.facts.rules import KINDS, LANGS, RuleSet, load_rules

DATA = Path(__file__).resolve().parents[3] / "memory" / "facts" / "detector_data.jsonl"

POSITIVES = [
    ("I'm allergic to peanuts.", "prohibition"),
    ("Leave the jargon at the door.", "prohibition"),
    ("No meetings on Fridays for me.", "prohibition"),
    ("Every script you write should log to stderr.", "requirement"),
    ("We're running everything on Debian 12.", "requirement"),
    ("Give me a maximum of four suggestions.", "limit"),
    ("I've lived in Oslo for six years.", "profile"),
    ("I work in logistics at DHL.", "profile"),
    ("A friendly, relaxed tone works best for me.", "format"),
    ("Celsius please, not Fahrenheit.", "format"),
    ("别给我推荐含酒精的饮料。", "prohibition"),
    ("每段代码都得有测试覆盖。", "requirement"),
    ("这次出差预算三千以内。", "limit"),
    ("下周二之前得交给编辑。", "limit"),
    ("自驾游是我最喜欢的旅行方式。", "preference"),
    ("我是急救员。", "profile"),
    ("我在奥斯陆住了六年。", "profile"),
    ("回复时请用书面语。", "format"),
    ("语气友好轻松一点。", "format"),
]

NEGATIVES = [
    "I went hiking with my sister last weekend",
    "We had a barbecue in the garden yesterday.",
    "Should I use tabs or spaces?",
    "What's the weather like in Paris?",
    "Don't give up, Jon!",
    "make sure you take care of yourself",
    "You should try the new sushi place, Mia!",
    "My boss never uses Slack.",
    "She told me to always carry an umbrella.",
    "My daughter is allergic to eggs.",
    "昨天和朋友去吃了火锅",
    "上周我们去海边玩了。",
    "你觉得我该学Python还是Java？",
    "加油，别放弃！",
    "要照顾好自己哦。",
    "我同事从来不用微信。",
    "老师说作文不能少于八百字。",
    "我女儿对鸡蛋过敏。",
]


class Counting(OnnxEmbedder):
    """The real bundled model (the default backend's session), counting how often it is asked for query vectors
    and what it actually encodes."""

    def __init__(self, model: OnnxEmbedder) -> None:
        super().__init__(model._session, model._tokenizer, EmbeddingConfig(backend=model.identity.backend))
        self.calls = 0
        self.batches: list[list[str]] = []

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return super().encode_queries(texts)

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:
        self.batches.append(list(texts))
        return super()._encode(texts, role)


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules()


@pytest.fixture(scope="module")
def detector(embedder: Embedder, rules: RuleSet) -> ClauseDetector:
    return load_detector(embedder, rules=rules)


@pytest.fixture()
def counting(embedder: Embedder) -> Counting:
    assert isinstance(embedder, OnnxEmbedder)
    return Counting(embedder)


def test_no_test_sentence_is_training_data() -> None:
    written = {json.loads(line)["text"] for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert not {text for text, _ in POSITIVES} & written
    assert not set(NEGATIVES) & written


@pytest.mark.parametrize(("text", "kind"), POSITIVES, ids=[t for t, _ in POSITIVES])
def test_a_constraint_is_detected_with_its_kind(detector: ClauseDetector, text: str, kind: str) -> None:
    (found,) = detector.detect([text])
    assert found is not None, text
    assert found.kind == kind
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"
    assert detector.thresholds[lang] <= found.confidence <= 1.0
    assert found.evidence.startswith("classifier: ")


@pytest.mark.parametrize("text", NEGATIVES)
def test_chat_questions_advice_and_reported_speech_are_not_instructions(detector: ClauseDetector, text: str) -> None:
    assert detector.detect([text]) == [None]


def test_a_batch_is_one_encode_call_in_order(embedder: Embedder, rules: RuleSet, counting: Counting) -> None:
    detector = load_detector(counting, rules=rules)
    clauses = [text for text, _ in POSITIVES[:6]] + NEGATIVES[:6]
    found = detector.detect(clauses)
    assert counting.calls == 1
    assert len(counting.batches) == 1
    # Guarded clauses (the question, the advice) are never embedded; the rest are, in one batch.
    assert set(counting.batches[0]) == {c for c in clauses if guard_reason(c, rules) is None}
    assert [d.kind if d else None for d in found] == [k for _, k in POSITIVES[:6]] + [None] * 6
    alone = [load_detector(embedder, rules=rules).detect([c])[0] for c in clauses]
    assert [d.confidence if d else None for d in found] == pytest.approx(
        [d.confidence if d else None for d in alone], abs=1e-4)


def test_empty_and_wordless_input_encodes_nothing(rules: RuleSet, counting: Counting) -> None:
    detector = load_detector(counting, rules=rules)
    assert detector.detect([]) == []
    assert detector.detect(["", "   ", "!!!", "。", "🙂"]) == [None] * 5
    assert counting.calls == 0


def test_repeats_and_padding_read_alike(detector: ClauseDetector) -> None:
    first, again, padded = detector.detect(["我是急救员。", "我是急救员。", "  我是急救员。 "])
    assert isinstance(first, Detection)
    assert first == again
    assert padded is not None and padded.kind == first.kind
    assert padded.confidence == pytest.approx(first.confidence, abs=1e-5)


def test_thresholds_can_be_raised_per_language(embedder: Embedder, rules: RuleSet) -> None:
    model = read_model(shipped_detector_path())
    strict = ClauseDetector(embedder, model, rules, thresholds={"zh": 1.0})
    assert strict.thresholds["en"] == model.thresholds["en"]
    found = strict.detect(["I work in logistics at DHL.", "我是急救员。"])
    assert found[0] is not None and found[1] is None


def test_the_shipped_model_covers_every_kind_and_language() -> None:
    model = read_model(shipped_detector_path())
    assert model.labels == (NONE, *KINDS)
    assert set(model.thresholds) == set(LANGS)
    assert all(0.5 <= value < 1.0 for value in model.thresholds.values())
    assert model.model == "all-MiniLM-L6-v2" and model.dimension == 384


def test_another_embedding_model_is_refused(embedder: Embedder, rules: RuleSet) -> None:
    assert isinstance(embedder, OnnxEmbedder)
    other = OnnxEmbedder(embedder._session, embedder._tokenizer,
                         EmbeddingConfig(backend="onnx-int8", model="multilingual-e5-small"))
    with pytest.raises(ConfigError, match="trained on all-MiniLM-L6-v2"):
        load_detector(other, rules=rules)


def test_weights_that_do_not_match_their_description_are_refused(tmp_path: Path) -> None:
    shipped = shipped_detector_path()
    shutil.copy(shipped.with_name("detector.npz"), tmp_path / "detector.npz")
    text = shipped.read_text(encoding="utf-8")
    (tmp_path / "detector.toml").write_text(text.replace('weights_sha256 = "', 'weights_sha256 = "0'), encoding="utf-8")
    with pytest.raises(ConfigError, match="does not match"):
        read_model(tmp_path / "detector.toml")
    (tmp_path / "detector.toml").write_text(text.replace("[thresholds]\n", "[thresholds]\nfr = 0.5\n"), encoding="utf-8")
    with pytest.raises(ConfigError, match="thresholds"):
        read_model(tmp_path / "detector.toml")
    with pytest.raises(ConfigError, match="not found"):
        read_model(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Don't use tabs", {"w:don't", "b:^ don't", "p:don't use tabs", "b:tabs $"}),
        ("不要用表格", {"w:不", "b:不 要", "t:不要用", "p:不 要 用"}),
        ("ＮＯ emojis！", {"w:no", "w:!", "b:emojis !"}),
    ],
)
def test_terms_fold_width_and_case_and_keep_chinese_as_characters(text: str, expected: set[str]) -> None:
    assert expected <= set(clause_terms(text))


def test_the_shipped_weights_were_built_from_the_shipped_data() -> None:
    recorded = tomllib.loads(shipped_detector_path().read_text(encoding="utf-8"))["training"]["data_sha256"]
    assert recorded == hashlib.sha256(DATA.read_bytes()).hexdigest(), (
        "detector_data.jsonl changed since the weights were built: run `python -m bench.facts_detector_train`")
