"""A learned span tagger: where in a clause the user states a constraint, of which kind, on which slot.

The rules read what they were written for; customers state most of their choices inside requests ("upgrade all of
us to economy and use the gift card first, then the Visa"), where the words that carry a choice sit among an action,
a reservation and a name. The tagger labels each token of a clause the rules left open as outside any constraint or
inside one labelled `kind` (a free constraint, keyed by its value) or `kind:slot` (one of the slots the training data
holds often enough, such as `requirement:cabin`, the key a later statement supersedes). Tokens are words, numbers
and single Chinese characters; each is read through its own text, its neighbours up to three away, its shape and the
words of its clause, and a multinomial logistic regression gives its label. Runs of tokens of one label (a gap
of a word or two between them bridged) are a span. A token's label is read from its surroundings, which cannot
tell "use the gift card" from "can I still use the gift card?" or "I had two bags": a second regression, over the
clause's n-grams (as the detector reads them), gives the chance that the clause states a constraint at all, and a
span's confidence is the mean probability of its label over its tokens times that chance. A span of a slot holds a
word that the slot's training spans use (its lexicon), so the words of a clause cannot carry a slot onto a token
that never said one (spans).

It is trained offline by bench/facts_tagger_train.py (which also prints how well it does, cross-validated) on the
labelled sets and hand-written customer messages, and applied here with numpy alone: no vectors, so it costs well
under a millisecond a clause. The weights ship as tagger.npz; the labels, per-language thresholds, each label's
lifetime and each slot's lexicon as tagger.toml.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np

from memory.errors import ConfigError
from memory.facts import guards
from memory.facts.detector import clause_terms
from memory.facts.model import Clause
from memory.facts.rules import KINDS
from memory.facts.sentences import has_cjk
from memory.facts.weights import check_thresholds, read_described
from memory.text import terms

__all__ = [
    "ARRAYS", "OUTSIDE", "READS", "SpanTagger", "Tagged", "TaggerModel", "Token", "clause_features", "content_words",
    "label_kind",
    "read_tagger", "reads", "shipped_tagger", "shipped_tagger_path", "spans", "token_features", "tokens",
]

OUTSIDE = "O"
READS = frozenset({guards.NO_FACT, guards.QUESTION})
"""The clauses the tagger reads, by why the rules found nothing in them: none found, or a question (a customer asks
for most things: "could you book it in economy?"); never a hypothetical, reported speech, advice or circumstance."""
ARRAYS = ("weights", "bias", "vocabulary", "gate_weights", "gate_bias", "gate_vocabulary")
"""The arrays of tagger.npz, in the order memory.facts.weights.weights_digest hashes them."""

_CJK = "\u3400-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|\d[\d,.]*\d|\d|(?:(?![{_CJK}\d])[^\W_])+(?:'(?:(?![{_CJK}])[^\W_])+)?|[^\s\w]")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_WINDOW = 3
_GAP = 2  # two runs of one label this few tokens apart are one span ("the gift card, then the Visa")
_TOP_LEVEL = {"version", "labels", "weights", "weights_sha256", "thresholds", "lifetimes", "lexicons", "training"}
# Edges a span never starts or ends on: punctuation and the function words a run of tokens picks up at its borders.
_EDGE = frozenset(",.;:!?'\"()，。；：！？、「」…-—") | frozenset(
    "the a an my our your to and or of for with in on at 的 了 和 把 用".split())


@dataclass(frozen=True)
class Token:
    """One token of a clause, width-folded (NFKC), and where it is (character offsets into the clause as given)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Tagged:
    """A span the tagger labels a constraint: its label (`kind` or `kind:slot`), the words as the user wrote them,
    where they are in the clause, and the mean probability of the label over its tokens."""

    label: str
    text: str
    start: int
    end: int
    confidence: float

    @property
    def kind(self) -> str:
        """The constraint's kind (requirement, limit, ...)."""
        return label_kind(self.label)

    @property
    def slot(self) -> str | None:
        """The slot the label names ("cabin" for requirement:cabin), None for a free constraint."""
        return self.label.partition(":")[2] or None


def reads(clause: Clause) -> bool:
    """Whether the tagger reads this clause of an extraction: no rule's fact in it, a reason in READS, a word."""
    return not clause.facts and clause.reason in READS and bool(clause.text.strip())


def label_kind(label: str) -> str:
    """The kind of a tag label: "requirement:cabin" -> "requirement"."""
    return label.partition(":")[0]


def tokens(text: str) -> list[Token]:
    """The clause's tokens: words (with an apostrophe inside), numbers with their separators, single Chinese
    characters and single punctuation marks, in order."""
    folded = unicodedata.normalize("NFKC", text)
    if len(folded) != len(text):  # offsets must point into the text as given
        folded = text
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(folded)]


def _norm(token: str) -> str:
    word = token.casefold().replace("’", "'")
    if word[0].isdigit():
        return "<num>" if len(word) > 1 else "<digit>"
    return word


def _shape(token: str) -> str:
    if _CJK_CHAR.fullmatch(token):
        return "cjk"
    if token[0].isdigit():
        return "num"
    if not token[0].isalnum():
        return "punct" if token not in "$€£¥" else "currency"
    return "upper" if token[0].isupper() else "lower"


def token_features(words: Sequence[str]) -> list[list[str]]:
    """The features of each token of one clause (its tokens' texts, in order): the token, its neighbours up to
    `_WINDOW` away, pairs and a triple around it, its suffix and shape. Every token also reads the clause's own
    features (clause_features), which are the same for all of them."""
    norm = [_norm(w) for w in words]
    padded = ["<s>"] * _WINDOW + norm + ["</s>"] * _WINDOW
    features: list[list[str]] = []
    for i, word in enumerate(norm):
        j = i + _WINDOW
        row = [f"w:{word}", f"shape:{_shape(words[i])}", "bias"]
        row += [f"w{k:+d}:{padded[j + k]}" for k in range(-_WINDOW, _WINDOW + 1) if k]
        row += [f"b-:{padded[j - 1]} {word}", f"b+:{word} {padded[j + 1]}", f"t:{padded[j - 1]} {word} {padded[j + 1]}",
                f"b--:{padded[j - 2]} {padded[j - 1]}", f"b++:{padded[j + 1]} {padded[j + 2]}"]
        if word.isalpha() and not _CJK_CHAR.fullmatch(word) and len(word) > 3:
            row.append(f"suf:{word[-3:]}")
        features.append(row)
    return features


def content_words(words: Sequence[str]) -> set[str]:
    """The words of a span that can name what it says, as token_features reads them: no punctuation, no stop word
    (memory.text's), numbers as their shape."""
    return {_norm(w) for w in words if w[0].isalnum() and (w[0].isdigit() or terms(w))}


def clause_features(words: Sequence[str]) -> list[str]:
    """What every token of the clause also reads: its words, how it ends ("?") and its first two words. Summed once
    per clause at run time, so a long clause costs time in proportion to its length."""
    norm = [_norm(w) for w in words]
    ending = "end:?" if words and words[-1] in ("?", "？") else "end:."
    return [ending, f"open:{' '.join(norm[:2])}",
            *sorted({f"c:{w}" for w in norm if w.isalpha() or _CJK_CHAR.fullmatch(w)})]


@dataclass(frozen=True, eq=False)  # arrays have no single truth value: two models are equal only if identical
class TaggerModel:
    """The token classifier: labels (OUTSIDE first, then `kind` or `kind:slot`), one weight row per known
    feature, the bias, the per-language span thresholds and the lifetime each label's constraints take."""

    labels: tuple[str, ...]
    weights: np.ndarray  # (vocabulary, labels)
    bias: np.ndarray  # (labels,)
    vocabulary: tuple[str, ...]
    gate_weights: np.ndarray  # (gate vocabulary,)
    gate_bias: float
    gate_vocabulary: tuple[str, ...]
    thresholds: Mapping[str, float]
    lifetimes: Mapping[str, str]
    # Per slot label, the words (as token_features reads them) its training spans use; a span of the slot holds one.
    lexicons: Mapping[str, frozenset[str]] = field(default_factory=dict)
    index: Mapping[str, int] = field(init=False, repr=False, compare=False)
    gate_index: Mapping[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", MappingProxyType({t: i for i, t in enumerate(self.vocabulary)}))
        object.__setattr__(self, "gate_index", MappingProxyType({t: i for i, t in enumerate(self.gate_vocabulary)}))

    def states(self, text: str) -> float:
        """The chance that the clause states a constraint at all, from its n-grams."""
        known = sorted({self.gate_index[t] for t in clause_terms(text) if t in self.gate_index})
        logit = self.gate_bias + float(self.gate_weights[known].sum())
        return float(1.0 / (1.0 + np.exp(-logit)))

    def probabilities(self, words: Sequence[str]) -> np.ndarray:
        """One row of label probabilities per token of a clause."""
        shared = [self.index[f] for f in clause_features(words) if f in self.index]
        logits = np.tile(self.bias + self.weights[shared].sum(axis=0), (len(words), 1))
        for row, features in enumerate(token_features(words)):
            known = [self.index[f] for f in features if f in self.index]
            if known:
                logits[row] += self.weights[known].sum(axis=0)
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probabilities: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
        return probabilities


def spans(model: TaggerModel, text: str, probabilities: np.ndarray, found: Sequence[Token],
          states: float = 1.0) -> list[Tagged]:
    """The runs of tokens whose most likely label is one constraint label (bridging gaps of up to `_GAP` tokens),
    trimmed of edge words, with the mean probability of that label over the run times `states`.

    A run of a slot label holds a word of that slot's lexicon (the words its training spans use), or it is not a
    span: the clause's words are read by every token, so a clause that names a cabin can pull the card named after
    it into the cabin slot ("business class and put it on the Amex"), and no cabin was ever said "Amex"."""
    best = probabilities.argmax(axis=1)
    runs: list[Tagged] = []
    i = 0
    while i < len(found):
        label = int(best[i])
        if label == 0:
            i += 1
            continue
        j = i
        while True:
            ahead = [k for k in range(j + 1, min(j + 2 + _GAP, len(found))) if int(best[k]) == label]
            if not ahead or any(int(best[k]) not in (0, label) for k in range(j + 1, ahead[0])):
                break
            j = ahead[0]
        first, last = i, j
        while first <= last and found[first].text.casefold() in _EDGE:
            first += 1
        while last >= first and found[last].text.casefold() in _EDGE:
            last -= 1
        lexicon = model.lexicons.get(model.labels[label])
        if first <= last and (lexicon is None or not lexicon.isdisjoint(
                content_words([t.text for t in found[first:last + 1]]))):
            confidence = float(probabilities[i:j + 1, label].mean()) * states
            start, end = found[first].start, found[last].end
            runs.append(Tagged(model.labels[label], text[start:end], start, end, confidence))
        i = j + 1
    return runs


class SpanTagger:
    """Finds constraint spans in clauses: those whose confidence reaches the threshold of the clause's language
    (Chinese when it has a Chinese character). `thresholds` overrides the shipped ones."""

    def __init__(self, model: TaggerModel, *, thresholds: Mapping[str, float] | None = None) -> None:
        self._model = model
        self.thresholds = MappingProxyType(check_thresholds({**model.thresholds, **(thresholds or {})}, "thresholds"))

    @property
    def model(self) -> TaggerModel:
        """The classifier this tagger applies."""
        return self._model

    def lifetime(self, label: str) -> str:
        """How long a constraint of this label holds ("request" or "standing"), as the training data said it."""
        return self._model.lifetimes.get(label, "standing")

    def tag(self, clause: str) -> list[Tagged]:
        """The constraint spans of one clause, in order; none for a clause without a word."""
        found = tokens(clause)
        if not any(t.text[0].isalnum() for t in found):
            return []
        threshold = self.thresholds["zh" if has_cjk(clause) else "en"]
        probabilities = self._model.probabilities([t.text for t in found])
        tagged = spans(self._model, clause, probabilities, found, self._model.states(clause))
        return [s for s in tagged if s.confidence >= threshold]


def shipped_tagger_path() -> Path:
    """Path of the tagger description (tagger.toml) that ships next to this module."""
    return Path(str(resources.files("memory.facts").joinpath("tagger.toml")))


@functools.cache
def shipped_tagger() -> SpanTagger:
    """The shipped tagger, read once per process (its files never change while it runs)."""
    return SpanTagger(read_tagger(shipped_tagger_path()))


def read_tagger(path: str | Path) -> TaggerModel:
    """The classifier a tagger.toml describes, with the weights file it names; ConfigError when they disagree."""
    path = Path(path)
    meta, arrays = read_described(path, keys=_TOP_LEVEL, arrays=ARRAYS, script="bench.facts_tagger_train")
    labels = tuple(meta.get("labels", ()))
    if not labels or labels[0] != OUTSIDE or not all(label_kind(label) in KINDS for label in labels[1:]):
        raise ConfigError(f"{path}: labels must be {OUTSIDE!r} then 'kind' or 'kind:slot' with a kind out of "
                          f"{list(KINDS)}, got {list(labels)}")
    lifetimes = meta.get("lifetimes", {})
    if set(lifetimes) != set(labels[1:]) or not set(lifetimes.values()) <= {"request", "standing"}:
        raise ConfigError(f"{path}: [lifetimes] must give every label but {OUTSIDE!r} 'request' or 'standing'")
    lexicons = meta.get("lexicons", {})
    if not isinstance(lexicons, dict) or not set(lexicons) <= set(labels[1:]) or not all(
            isinstance(words, list) and words and all(isinstance(w, str) and w for w in words)
            for words in lexicons.values()):
        raise ConfigError(f"{path}: [lexicons] must give some of the labels a non-empty list of words")
    model = TaggerModel(
        labels=labels, weights=arrays["weights"].astype(np.float64), bias=arrays["bias"].astype(np.float64),
        vocabulary=tuple(str(t) for t in arrays["vocabulary"]),
        gate_weights=arrays["gate_weights"].astype(np.float64), gate_bias=float(arrays["gate_bias"]),
        gate_vocabulary=tuple(str(t) for t in arrays["gate_vocabulary"]),
        thresholds=check_thresholds(meta.get("thresholds", {}), f"{path}: [thresholds]"),
        lifetimes=MappingProxyType(dict(lifetimes)),
        lexicons=MappingProxyType({label: frozenset(words) for label, words in lexicons.items()}),
    )
    if model.weights.shape != (len(model.vocabulary), len(labels)) or model.bias.shape != (len(labels),) \
            or model.gate_weights.shape != (len(model.gate_vocabulary),):
        raise ConfigError(f"{path.with_name(str(meta.get('weights', '')))}: array shapes {model.weights.shape}, "
                          f"{model.bias.shape} do not fit {len(labels)} labels and {len(model.vocabulary)} features; "
                          "rebuild it")
    return model
