"""A second reading of the clauses the rules found nothing in: is the clause still an instruction or a personal
constraint, and of which kind?

The rules' own guards go first (a question, a hypothetical, reported speech, advice to a person is never an
instruction), so a clause is read alike whether or not the rules saw it before. Then a multinomial logistic
regression reads two views of it: the embedder's sentence vector (all-MiniLM-L6-v2,
which reads English well and Chinese poorly) and TF-IDF weighted n-grams (words, word pairs, Chinese character
triples and the opening words), which carry the Chinese. It is trained offline by bench/facts_detector_train.py
(which also prints why this design and how well it does) and applied here with numpy alone. The weights ship as
detector.npz; the labels, the per-language thresholds and the model the vectors came from as detector.toml.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np

from memory.embedding.base import Embedder
from memory.errors import ConfigError
from memory.facts import guards
from memory.facts.normalize import strip_edges
from memory.facts.rules import KINDS, RuleSet, load_rules
from memory.facts.sentences import fold_width, has_cjk
from memory.facts.weights import check_thresholds, read_described

__all__ = [
    "ARRAYS", "NONE", "ClauseDetector", "Detection", "DetectorModel", "clause_terms", "guard_reason", "load_detector",
    "read_model", "shipped_detector_path",
]

NONE = "none"
ARRAYS = ("vector_weights", "term_weights", "bias", "idf", "vocabulary")
"""The arrays of detector.npz, in the order memory.facts.weights.weights_digest hashes them."""

_CJK = "\u3400-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])[^\W_])+(?:'(?:(?![{_CJK}])[^\W_])+)?|[?!]")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_WORD = re.compile(r"[^\W_]")
_TOP_LEVEL = {"version", "labels", "weights", "weights_sha256", "embedder", "thresholds", "training"}
_CUES = 3
_DISTINCTIVE_IDF = 1.0 + float(np.log(100.0))  # smoothed IDF of an n-gram in one training clause in a hundred


@dataclass(frozen=True)
class Detection:
    """A clause read as an instruction or constraint: its kind, the classifier's probability of that kind, and
    what pushed it there (`classifier: "cue", ...`, the n-grams that weighed most for the kind)."""

    kind: str
    confidence: float
    evidence: str


def clause_terms(text: str) -> list[str]:
    """The n-grams the classifier reads: words (a Chinese character is a word), neighbouring pairs with the
    clause's edges, Chinese character triples, and the first one to three words."""
    tokens = _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold().replace("’", "'"))
    bounded = ["^", *tokens, "$"]
    terms = [f"w:{t}" for t in tokens]
    terms += [f"b:{a} {b}" for a, b in itertools.pairwise(bounded)]
    terms += [f"p:{' '.join(tokens[:n])}" for n in (1, 2, 3) if len(tokens) >= n]
    terms += [f"t:{a}{b}{c}" for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False)
              if _CJK_CHAR.fullmatch(a) and _CJK_CHAR.fullmatch(b) and _CJK_CHAR.fullmatch(c)]
    return terms


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: two models are equal only if identical
class DetectorModel:
    """The classifier: labels ("none" first), weights over the sentence vector and over the n-gram vocabulary,
    the vocabulary's IDF, the per-language thresholds, and the embedding model the vectors must come from."""

    labels: tuple[str, ...]
    vector_weights: np.ndarray  # (dimension, labels)
    term_weights: np.ndarray  # (vocabulary, labels)
    bias: np.ndarray  # (labels,)
    idf: np.ndarray  # (vocabulary,)
    vocabulary: tuple[str, ...]
    thresholds: Mapping[str, float]
    model: str
    index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", MappingProxyType({t: i for i, t in enumerate(self.vocabulary)}))

    @property
    def dimension(self) -> int:
        """Length of the sentence vectors the weights expect."""
        return int(self.vector_weights.shape[0])

    def term_vector(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The clause's known n-grams as (vocabulary indices, unit-length TF-IDF values)."""
        counts: dict[int, int] = {}
        for term in clause_terms(text):
            i = self.index.get(term)
            if i is not None:
                counts[i] = counts.get(i, 0) + 1
        indices = np.fromiter(counts, dtype=np.int64, count=len(counts))
        values = (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))) * self.idf[indices]
        norm = float(np.linalg.norm(values))
        return indices, (values / norm if norm > 0 else values)

    def probabilities(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """One row of label probabilities per text, from its sentence vector and its n-grams."""
        logits = vectors.astype(np.float64) @ self.vector_weights + self.bias
        for row, text in enumerate(texts):
            indices, values = self.term_vector(text)
            logits[row] += values @ self.term_weights[indices]
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probabilities: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
        return probabilities

    def cues(self, text: str, label: int) -> list[str]:
        """The n-grams of the clause that weighed most for `label` against "none", readable: only distinctive ones
        (in fewer than one training clause in a hundred) unless there are none, so "in" or "的" rarely shows."""
        indices, values = self.term_vector(text)
        pull = values * (self.term_weights[indices, label] - self.term_weights[indices, 0])
        pulling = sorted((j for j in range(len(indices)) if pull[j] > 0), key=lambda j: (-pull[j], int(indices[j])))
        distinctive = [j for j in pulling if self.idf[indices[j]] >= _DISTINCTIVE_IDF]
        cues: list[str] = []
        for j in distinctive or pulling:
            cue = _readable(self.vocabulary[indices[j]])
            if cue and cue not in cues:
                cues.append(cue)
        return cues[:_CUES]


class ClauseDetector:
    """Reads clauses the rules left undecided; None for chat, questions, advice to others and reported speech.

    A clause is detected when no guard of `rules` rejects it, the classifier's most likely kind beats "none", and
    that kind's probability reaches the threshold of the clause's language (Chinese when it has a Chinese
    character); that probability is the Detection's confidence. `thresholds` overrides the shipped ones.
    """

    def __init__(self, embedder: Embedder, model: DetectorModel, rules: RuleSet, *,
                 thresholds: Mapping[str, float] | None = None) -> None:
        if embedder.identity.model != model.model or embedder.dimension != model.dimension:
            raise ConfigError(
                f"the clause detector was trained on {model.model} vectors ({model.dimension} dimensions), but the "
                f"embedder is {embedder.identity.model} ({embedder.dimension}); detect with that model, or retrain "
                "with `python -m bench.facts_detector_train` under this one"
            )
        self._embedder = embedder
        self._model = model
        self._rules = rules
        self.thresholds = MappingProxyType(check_thresholds({**model.thresholds, **(thresholds or {})}, "thresholds"))

    def detect(self, clauses: Sequence[str]) -> list[Detection | None]:
        """One Detection or None per clause, in order; all clauses of the call are embedded in one batch."""
        texts = [clause.strip() for clause in clauses]
        readable = [i for i, text in enumerate(texts) if _WORD.search(text) and guard_reason(text, self._rules) is None]
        found: list[Detection | None] = [None] * len(texts)
        if not readable:
            return found
        batch = [texts[i] for i in readable]
        probabilities = self._model.probabilities(self._embedder.encode_queries(batch), batch)
        for row, i in enumerate(readable):
            label = 1 + int(np.argmax(probabilities[row, 1:]))
            confidence = float(probabilities[row, label])
            if confidence > probabilities[row, 0] and confidence >= self.thresholds[_lang(texts[i])]:
                cues = self._model.cues(texts[i], label)
                evidence = "classifier: " + (", ".join(f'"{c}"' for c in cues) if cues else "sentence vector")
                found[i] = Detection(self._model.labels[label], confidence, evidence)
        return found


def shipped_detector_path() -> Path:
    """Path of the detector description (detector.toml) that ships next to this module."""
    return Path(str(resources.files("memory.facts").joinpath("detector.toml")))


def load_detector(embedder: Embedder, path: str | Path | None = None, *,
                  rules: RuleSet | None = None) -> ClauseDetector:
    """A ClauseDetector over `embedder` with the shipped classifier (or the detector.toml at `path`), guarded by
    `rules` (the shipped rules when None: pass the RuleSet the extractor uses)."""
    return ClauseDetector(embedder, read_model(path or shipped_detector_path()), rules or load_rules())


def guard_reason(text: str, rules: RuleSet) -> str | None:
    """Why the rules' guards reject the clause as an instruction (a guards reason), else None.

    The clause is read as extract reads a sentence: full-width punctuation folded, lead-ins and trailers aside.
    """
    work = fold_width(text)
    markers = rules.markers[_lang(work)]
    start, end = strip_edges(work, 0, len(work), markers)
    if start >= end:
        return guards.NO_FACT
    verdict = guards.judge_sentence(work[start:], markers, whole=work) or guards.judge_clause(work[start:end], markers)
    return verdict.reason if verdict is not None else None


def read_model(path: str | Path) -> DetectorModel:
    """The classifier a detector.toml describes, with the weights file it names; ConfigError when they disagree."""
    path = Path(path)
    meta, arrays = read_described(path, keys=_TOP_LEVEL, arrays=ARRAYS, script="bench.facts_detector_train")
    labels = tuple(meta.get("labels", ()))
    if not labels or labels[0] != NONE or not set(labels[1:]) <= set(KINDS):
        raise ConfigError(f"{path}: labels must be 'none' then kinds out of {list(KINDS)}, got {list(labels)}")
    embedder = meta.get("embedder", {})
    model = DetectorModel(
        labels=labels, vector_weights=arrays["vector_weights"].astype(np.float64),
        term_weights=arrays["term_weights"].astype(np.float64), bias=arrays["bias"].astype(np.float64),
        idf=arrays["idf"].astype(np.float64), vocabulary=tuple(str(t) for t in arrays["vocabulary"]),
        thresholds=check_thresholds(meta.get("thresholds", {}), f"{path}: [thresholds]"),
        model=str(embedder.get("model", "")),
    )
    shapes = (model.vector_weights.shape[1], model.term_weights.shape, model.bias.shape, model.idf.shape)
    if shapes != (len(labels), (len(model.vocabulary), len(labels)), (len(labels),), (len(model.vocabulary),)) \
            or embedder.get("dimension") != model.dimension:
        raise ConfigError(f"{path.with_name(str(meta.get('weights', '')))}: array shapes {shapes} do not fit "
                          f"{len(labels)} labels, {len(model.vocabulary)} terms and {embedder.get('dimension')} "
                          "dimensions; rebuild it")
    return model


def _lang(text: str) -> str:
    return "zh" if has_cjk(text) else "en"


def _readable(term: str) -> str:
    words = [w for w in term[2:].split(" ") if w not in ("^", "$")]
    if term.startswith("t:") or all(_CJK_CHAR.fullmatch(w) for w in words):
        return "".join(words)
    return " ".join(words)
