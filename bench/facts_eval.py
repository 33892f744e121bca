"""Score rule-based extraction against labelled files: precision, recall, F1 and supersede accuracy per language."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from bench import _tau
from memory.errors import ValidationError
from memory.facts.assisted import DETECTOR_RULE, ModelReaders, read_again
from memory.facts.extract import extract
from memory.facts.model import Extraction
from memory.facts.normalize import normalize_key
from memory.facts.numbers import format_number, parse_number
from memory.facts.rules import INSTRUCTION_KINDS, KINDS, RuleSet
from memory.text import terms

__all__ = [
    "GoldFact",
    "Labelled",
    "Miss",
    "Pair",
    "QualityReport",
    "Score",
    "SupersedeScore",
    "TauLabel",
    "chat_rate",
    "chat_sources",
    "chat_turns",
    "kind_scores",
    "load_labelled",
    "load_pairs",
    "load_tau_labels",
    "same_value",
    "same_words",
    "score",
    "tau_messages",
]

ALL = "all"
LANGS = ("en", "zh")
# A supersede pair may state the same thing in two languages ("reply in English" then "用中文回答").
PAIR_LANGS = ("en", "zh", "mixed")


BENCHDATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata"
# The chat turns of LoCoMo and MemoryBank split as the labelled sets were: the first conversations and users are
# the development half (read when writing a rule), the others held out (only their rate is read).
_LOCOMO_DEV = frozenset({"conv-26", "conv-30", "conv-41"})
_MEMORYBANK_DEV_USERS = 8
CONSTRAINT_KINDS = INSTRUCTION_KINDS  # what a chat turn must not be mistaken for
# What a customer message labelled with no constraint must not be read as: the chat turns' kinds and preference too,
# since a stored preference is recalled into the agent's context like a rule; a profile fact is not a constraint.
FALSE_CONSTRAINT_KINDS = CONSTRAINT_KINDS | {"preference"}
TAU_LABELS = Path(__file__).resolve().parents[1] / "tests" / "memory" / "facts" / "tau_labels.jsonl"
# A customer's choice binds the booking being made ("task" in the label file); the extractor calls that lifetime
# "request", so the scorer compares it under that name.
TAU_LIFETIMES = {"task": "request", "standing": "standing"}
# A value that contains the labelled one (or is contained in it) still names the same thing when the shorter
# is at least this share of the longer: "tabs for indentation" ~ "tabs for indentation in Python", not "tabs".
_NEAR = 0.6
# The looser reading, reported beside the strict one and never in its place: a value matches when more than this
# share of the two values' words (as recall's analyzer reads them: stemmed, stop words out, Chinese segmented) is
# shared, so "business wherever possible" ~ "business class wherever possible", but not "tabs" ~ "tabs for
# indentation in Python", nor "用中文回答" ~ "用英文回答" (half their words).
_SHARED_WORDS = 0.5
_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class GoldFact:
    """One expected fact: kind, key and value as a person labelled them (and, when known, its lifetime)."""

    kind: str
    key: str
    value: str
    lifetime: str = ""
    rule: str = ""


@dataclass(frozen=True)
class Labelled:
    """One labelled utterance and the facts it should yield (none for chit-chat, questions and the like)."""

    lang: str
    text: str
    facts: tuple[GoldFact, ...]
    note: str = ""
    lifetime: str = ""


@dataclass(frozen=True)
class Pair:
    """Two utterances and whether the second should land on a key the first one produced."""

    lang: str
    first: str
    second: str
    same_key: bool


@dataclass(frozen=True)
class Miss:
    """One disagreement with the labels: a fact predicted but not labelled, or labelled but not predicted."""

    lang: str
    text: str
    what: str
    fact: GoldFact


@dataclass(frozen=True)
class Score:
    """Fact counts for one language (or 'all'), with precision, recall and F1 derived from them."""

    utterances: int
    predicted: int
    gold: int
    correct: int

    @property
    def precision(self) -> float:
        """Share of predicted facts that are correct; 1.0 when nothing was predicted."""
        return self.correct / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        """Share of labelled facts that were found; 1.0 when nothing was labelled."""
        return self.correct / self.gold if self.gold else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


@dataclass(frozen=True)
class TauLabel:
    """The labels of one customer message of the τ-bench airline data, named by where it is, never by its text."""

    task_id: int
    trial: int
    index: int
    split: str
    facts: tuple[GoldFact, ...]
    note: str = ""


@dataclass(frozen=True)
class SupersedeScore:
    """How many statement pairs were keyed correctly (same key exactly when they should be)."""

    pairs: int
    correct: int

    @property
    def accuracy(self) -> float:
        """Share of pairs keyed correctly; 1.0 when there are no pairs."""
        return self.correct / self.pairs if self.pairs else 1.0


@dataclass(frozen=True)
class QualityReport:
    """Scores per language plus 'all' (and per language and kind), supersede and lifetime scores, every miss."""

    facts: Mapping[str, Score]
    supersede: Mapping[str, SupersedeScore]
    misses: tuple[Miss, ...]
    kinds: Mapping[tuple[str, str], Score] = field(default_factory=lambda: MappingProxyType({}))
    lifetime: Mapping[str, SupersedeScore] = field(default_factory=lambda: MappingProxyType({}))
    words: Mapping[str, Score] = field(default_factory=lambda: MappingProxyType({}))  # values matched by same_words


@dataclass(frozen=True)
class ChatRate:
    """How many real chat turns the extractor read a constraint into (they state none, or almost none)."""

    turns: int
    flagged: int
    examples: tuple[tuple[str, tuple[GoldFact, ...]], ...]

    @property
    def rate(self) -> float:
        """Share of turns that yielded a prohibition, requirement, limit or format fact."""
        return self.flagged / self.turns if self.turns else 0.0


def score(labelled: str | Path | Iterable[Labelled], rules: RuleSet,
          pairs: str | Path | Iterable[Pair] | None = None, readers: ModelReaders | None = None) -> QualityReport:
    """Run the extractor (with the trained readers when given) over labelled utterances (and supersede
    pairs) and score it per language and kind."""
    items = load_labelled(labelled) if isinstance(labelled, (str, Path)) else list(labelled)
    counts: dict[str, list[int]] = {ALL: [0, 0, 0, 0]}
    words: dict[str, list[int]] = {ALL: [0, 0, 0, 0]}
    kinds: dict[tuple[str, str], list[int]] = {}
    lifetimes: dict[str, list[int]] = {}
    misses: list[Miss] = []
    for item in items:
        predicted = [GoldFact(f.kind, f.key, f.value, f.lifetime, f.rule)
                     for f in _extract(item.text, rules, readers).facts]
        matched, extra, missed = _match(predicted, list(item.facts))
        loose = _match(predicted, list(item.facts), loose=True)[0]
        for lang in (item.lang, ALL):
            for table, found in ((counts, matched), (words, loose)):
                row = table.setdefault(lang, [0, 0, 0, 0])
                for index, amount in enumerate((1, len(predicted), len(item.facts), len(found))):
                    row[index] += amount
            for kind in {f.kind for f in (*predicted, *item.facts)}:
                cell = kinds.setdefault((lang, kind), [0, 0, 0, 0])
                cell[0] += 1
                cell[1] += sum(f.kind == kind for f in predicted)
                cell[2] += sum(f.kind == kind for f in item.facts)
                cell[3] += sum(g.kind == kind for _, g in matched)
            for found, gold in matched:
                wanted = gold.lifetime or item.lifetime
                if wanted and gold.kind in CONSTRAINT_KINDS:
                    cell = lifetimes.setdefault(lang, [0, 0])
                    cell[0] += 1
                    cell[1] += int(found.lifetime == wanted)
        misses.extend(Miss(item.lang, item.text, "unexpected", fact) for fact in extra)
        misses.extend(Miss(item.lang, item.text, "missed", fact) for fact in missed)
    pair_items: list[Pair] = []
    if pairs is not None:
        pair_items = load_pairs(pairs) if isinstance(pairs, (str, Path)) else list(pairs)
    return QualityReport(
        facts=MappingProxyType({lang: Score(*row) for lang, row in sorted(counts.items())}),
        supersede=MappingProxyType(_supersede(pair_items, rules, readers)),
        misses=tuple(misses),
        kinds=MappingProxyType({key: Score(*row) for key, row in sorted(kinds.items())}),
        lifetime=MappingProxyType({lang: SupersedeScore(*row) for lang, row in sorted(lifetimes.items())}),
        words=MappingProxyType({lang: Score(*row) for lang, row in sorted(words.items())}),
    )


def chat_rate(turns: Iterable[str], rules: RuleSet, keep: int = 0,
              readers: ModelReaders | None = None, kinds: Collection[str] = CONSTRAINT_KINDS) -> ChatRate:
    """Run the extractor over real chat turns; count those yielding a fact of `kinds` (keep the first `keep`)."""
    count = flagged = 0
    examples: list[tuple[str, tuple[GoldFact, ...]]] = []
    for text in turns:
        count += 1
        found = tuple(GoldFact(f.kind, f.key, f.value, f.lifetime, f.rule)
                      for f in _extract(text, rules, readers).facts if f.kind in kinds)
        if found:
            flagged += 1
            if len(examples) < keep:
                examples.append((text, found))
    return ChatRate(count, flagged, tuple(examples))


def same_value(predicted: str, gold: str) -> bool:
    """Values match when they agree after Unicode folding, case folding and dropping spaces and punctuation, or
    when one contains the other and the shorter is at least `_NEAR` of the longer (docs/fact-labels.md)."""
    one, other = _fold_value(predicted), _fold_value(gold)
    if one == other:
        return True
    short, long = sorted((one, other), key=len)
    return bool(short) and short in long and len(short) >= _NEAR * len(long)


def same_words(predicted: str, gold: str) -> bool:
    """The looser match, reported beside same_value: more than `_SHARED_WORDS` of the two values' words in common
    (recall's analyzer, memory.text.terms, with counts in words read as digits: "three bags" ~ "3 bags")."""
    one, other = _word_set(predicted), _word_set(gold)
    return bool(one and other) and len(one & other) > _SHARED_WORDS * len(one | other)


def _word_set(value: str) -> set[str]:
    return {_number(word) or word for word in terms(value)}


def load_labelled(path: str | Path) -> list[Labelled]:
    """Read a labelled JSONL file: one {"lang", "text", "facts": [{"kind", "key", "value"}], "note"?} per line."""
    items: list[Labelled] = []
    for number, row in _rows(Path(path)):
        facts = row.get("facts")
        if not isinstance(row.get("text"), str) or not isinstance(facts, list):
            raise ValidationError(f"{path}:{number}: expected 'text' (string) and 'facts' (list), got {sorted(row)}.")
        gold = tuple(_gold(path, number, fact) for fact in cast(list[object], facts))
        lifetime = row.get("lifetime", "")
        if lifetime not in ("", "standing", "request"):
            raise ValidationError(f"{path}:{number}: 'lifetime' must be 'standing' or 'request', got {lifetime!r}.")
        items.append(Labelled(_lang(path, number, row), row["text"], gold, str(row.get("note", "")), lifetime))
    return items


def load_pairs(path: str | Path) -> list[Pair]:
    """Read a supersede JSONL file: one {"lang" (en, zh or mixed), "first", "second", "same_key": bool} per line."""
    pairs: list[Pair] = []
    for number, row in _rows(Path(path)):
        first, second, same = row.get("first"), row.get("second"), row.get("same_key")
        if not isinstance(first, str) or not isinstance(second, str) or not isinstance(same, bool):
            raise ValidationError(
                f"{path}:{number}: expected 'first' and 'second' (strings) and 'same_key' (true/false)."
            )
        pairs.append(Pair(_lang(path, number, row, PAIR_LANGS), first, second, same))
    return pairs


def load_tau_labels(path: str | Path = TAU_LABELS) -> list[TauLabel]:
    """Read the τ-bench label file: one {"task_id", "trial", "index", "split", "facts": [{"kind", "key", "value",
    "lifetime"}], "note"?} per customer message (docs/fact-labels.md, "Customer dialogue")."""
    labels: list[TauLabel] = []
    for number, row in _rows(Path(path)):
        where = [row.get(name) for name in ("task_id", "trial", "index")]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in where) or not isinstance(
                row.get("facts"), list):
            raise ValidationError(f"{path}:{number}: expected integers 'task_id', 'trial', 'index' and a list "
                                  f"'facts', got {sorted(row)}.")
        task_id, trial, index = cast(list[int], where)
        split = _tau.split_of(task_id)
        if row.get("split") != split:
            raise ValidationError(f"{path}:{number}: task {task_id} is in the {split!r} split, the line says "
                                  f"{row.get('split')!r}; bench/_tau.py fixes the split by task id.")
        facts = []
        for fact in cast(list[object], row["facts"]):
            fields = cast(dict[str, object], fact) if isinstance(fact, dict) else {}
            lifetime = fields.get("lifetime")
            if lifetime not in TAU_LIFETIMES or fields.get("kind") not in KINDS:
                raise ValidationError(f"{path}:{number}: a fact needs a 'kind' among {list(KINDS)} and a 'lifetime' "
                                      f"among {list(TAU_LIFETIMES)}, got {fields}.")
            gold = _gold(path, number, {**fields, "lifetime": ""})
            facts.append(GoldFact(gold.kind, gold.key, gold.value, str(lifetime)))
        labels.append(TauLabel(task_id, trial, index, split, tuple(facts), str(row.get("note", ""))))
    return labels


def tau_messages(labels: Iterable[TauLabel], split: str) -> list[Labelled]:
    """The labelled messages of one split with their texts, read from ../shared/benchdata at run time (the
    repository holds the labels only; `bench._tau.missing()` says when the data is absent)."""
    texts = {(t.task_id, t.trial, j): m.get("content") for t in _tau.load_trajectories()
             for j, m in enumerate(t.messages) if m.get("role") == "user"}
    items: list[Labelled] = []
    for label in labels:
        if label.split != split:
            continue
        text = texts.get((label.task_id, label.trial, label.index))
        if not isinstance(text, str):
            raise ValidationError(f"task {label.task_id} trial {label.trial} message {label.index} is not a customer "
                                  "message with text in the τ-bench data; the label file names user messages only.")
        facts = tuple(GoldFact(f.kind, f.key, f.value, TAU_LIFETIMES[f.lifetime]) for f in label.facts)
        items.append(Labelled("en", text, facts, label.note))
    return items


def _match(predicted: list[GoldFact], gold: list[GoldFact], *, loose: bool = False
           ) -> tuple[list[tuple[GoldFact, GoldFact]], list[GoldFact], list[GoldFact]]:
    # Greedy one-to-one matching: a predicted fact may use up at most one labelled fact.
    left = list(gold)
    extra: list[GoldFact] = []
    matched: list[tuple[GoldFact, GoldFact]] = []
    for fact in predicted:
        found = next((g for g in left if _same_fact(fact, g, loose)), None)
        if found is None:
            extra.append(fact)
        else:
            left.remove(found)
            matched.append((fact, found))
    return matched, extra, left


def _same_fact(predicted: GoldFact, gold: GoldFact, loose: bool = False) -> bool:
    # A slot key ("limit:budget", "requirement:diet") is what a later statement supersedes, so it must agree;
    # a free key is the value itself ("prohibition:tabs"), so the values decide (docs/fact-labels.md). The
    # detector's value is its whole clause: it matches a labelled fact of its kind that the clause states.
    if predicted.rule == DETECTOR_RULE:
        return predicted.kind == gold.kind and _fold_value(gold.value) in _fold_value(predicted.value)
    if predicted.kind != gold.kind or not (same_value(predicted.value, gold.value)
                                           or (loose and same_words(predicted.value, gold.value))):
        return False
    slot = _canonical_key(gold.key) != _canonical_key(normalize_key(gold.kind, gold.value))
    return not slot or _canonical_key(predicted.key) == _canonical_key(gold.key)


def _canonical_key(key: str) -> str:
    # Inflection folded as for values: "budget for flights" and "budget for flight" are one slot.
    kind, _, subject = key.partition(":")
    return f"{kind}:{_fold_value(normalize_key(kind, subject).partition(':')[2])}"


def _extract(text: str, rules: RuleSet, readers: ModelReaders | None) -> Extraction:
    return read_again(extract(text, rules), readers, rules)


def _supersede(pairs: list[Pair], rules: RuleSet, readers: ModelReaders | None = None
               ) -> dict[str, SupersedeScore]:
    counts: dict[str, list[int]] = {ALL: [0, 0]}
    for pair in pairs:
        first = {f.key for f in _extract(pair.first, rules, readers).facts}
        second = {f.key for f in _extract(pair.second, rules, readers).facts}
        # A pair only counts as right when both statements were understood at all.
        right = bool(first) and bool(second) and bool(first & second) == pair.same_key
        for lang in (pair.lang, ALL):
            row = counts.setdefault(lang, [0, 0])
            row[0] += 1
            row[1] += int(right)
    return {lang: SupersedeScore(*row) for lang, row in sorted(counts.items())}


def missing_chat(data: Path = BENCHDATA) -> str | None:
    """A one-line reason when the real conversations chat_sources reads are not there, else None."""
    absent = [p for p in (data / "locomo" / "locomo_dev.json", data / "zh_memorybank" / "memory_bank_cn.json",
                          data / "zh_memorybank" / "memory_bank_en.json") if not p.is_file()]
    if absent:
        return (f"the real conversations are missing ({', '.join(str(p) for p in absent)}); they are read from "
                "../shared/benchdata beside the repository (see its README.md)")
    return None


def chat_sources(split: str, data: Path = BENCHDATA) -> Iterator[tuple[str, str, str]]:
    """Real conversation turns as (group, language, text): LoCoMo (English) and MemoryBank's users (Chinese and
    English); a group is one conversation or one user ("locomo conv-26", "memorybank-zh 3").

    `split` is "dev" (LoCoMo conv-26/30/41, MemoryBank's first 8 users) or "heldout" (the rest)."""
    if split not in ("dev", "heldout"):
        raise ValidationError(f"split must be 'dev' or 'heldout', got {split!r}")
    for sample in json.loads((data / "locomo" / "locomo_dev.json").read_text(encoding="utf-8")):
        if (sample["sample_id"] in _LOCOMO_DEV) == (split == "dev"):
            for name, session in sample["conversation"].items():
                if name.startswith("session_") and isinstance(session, list):
                    yield from ((f"locomo {sample['sample_id']}", "en", turn["text"]) for turn in session)
    for lang, name in (("zh", "cn"), ("en", "en")):
        users = json.loads((data / "zh_memorybank" / f"memory_bank_{name}.json").read_text(encoding="utf-8"))
        for index, user in enumerate(users.values()):
            if (index < _MEMORYBANK_DEV_USERS) == (split == "dev"):
                yield from ((f"memorybank-{lang} {index + 1}", lang, t["query"])
                            for day in user["history"].values() for t in day if t.get("query"))


def chat_turns(split: str, data: Path = BENCHDATA) -> dict[str, list[str]]:
    """The turns of `chat_sources(split)` by language."""
    turns: dict[str, list[str]] = {"en": [], "zh": []}
    for _, lang, text in chat_sources(split, data):
        turns[lang].append(text)
    return turns


def kind_scores(labelled: str | Path | Iterable[Labelled], rules: RuleSet,
                readers: ModelReaders | None = None) -> dict[str, Score]:
    """Precision and recall of kinds alone, per language: a constraint of the right kind found, value aside."""
    items = load_labelled(labelled) if isinstance(labelled, (str, Path)) else list(labelled)
    counts: dict[str, list[int]] = {}
    for item in items:
        predicted = Counter(f.kind for f in _extract(item.text, rules, readers).facts)
        gold = Counter(f.kind for f in item.facts)
        for lang in (item.lang, ALL):
            row = counts.setdefault(lang, [0, 0, 0, 0])
            for index, amount in enumerate((1, predicted.total(), gold.total(), (predicted & gold).total())):
                row[index] += amount
    return {lang: Score(*row) for lang, row in sorted(counts.items())}


def _fold_value(value: str) -> str:
    # Each English word loses its inflection ("booking" ~ "book", "modifying" ~ "modify", "calls" ~ "call"):
    # labellers write a prohibited act as a gerund or a verb, and the value names the same act either way.
    # A count reads the same in words or digits ("three checked bags" ~ "3 checked bags").
    text = unicodedata.normalize("NFKC", value).casefold()
    return "".join(_number(word) or _stem(word) for word in _WORDS.findall(text))


def _number(word: str) -> str | None:
    value = parse_number(word) if word.isascii() and word.isalpha() else None
    return format_number(value) if value is not None else None


def _stem(word: str) -> str:
    # Crude on purpose: both sides go through it, so "take" ~ "taking" and "use" ~ "using" need only agree.
    if not word.isascii() or len(word) <= 2:
        return word
    for suffix in ("ying", "ing", "ies", "ied", "ed", "es", "s", "y", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


def _rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ValidationError(f"{path}: labelled file not found; expected a JSONL file.") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"{path}:{number}: not valid JSON ({exc.msg}); expected one object per line."
            ) from None
        if not isinstance(row, dict):
            raise ValidationError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}.")
        yield number, cast(dict[str, Any], row)


def _gold(path: str | Path, number: int, fact: object) -> GoldFact:
    if not isinstance(fact, dict):
        raise ValidationError(f"{path}:{number}: each fact must be an object with kind, key and value.")
    fields = cast(dict[str, object], fact)
    values = [fields.get(name) for name in ("kind", "key", "value")]
    if not all(isinstance(v, str) and v for v in values):
        raise ValidationError(f"{path}:{number}: a fact needs non-empty 'kind', 'key' and 'value', got {fields}.")
    lifetime = fields.get("lifetime", "")
    if lifetime not in ("", "standing", "request"):
        raise ValidationError(f"{path}:{number}: 'lifetime' must be 'standing' or 'request', got {lifetime!r}.")
    return GoldFact(*cast(list[str], values), lifetime=cast(str, lifetime))


def _lang(path: str | Path, number: int, row: Mapping[str, Any], allowed: tuple[str, ...] = LANGS) -> str:
    lang = row.get("lang")
    if lang not in allowed:
        raise ValidationError(f"{path}:{number}: 'lang' must be one of {list(allowed)}, got {lang!r}.")
    return cast(str, lang)
