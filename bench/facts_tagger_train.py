"""Build the span tagger's shipped data (memory/facts/tagger.npz and tagger.toml) and print how well it does.

Run from the project root: `.venv/bin/python -m bench.facts_tagger_train`. Deterministic: fixed seed, fixed folds,
lbfgs. About a minute.

Training clauses are the ones the tagger is shown at run time: those of a message the rules find nothing in and do
not reject for a reason other than a question (memory.facts.tagger.READS). Sources:
- memory/facts/tagger_data.jsonl, customer messages written for it in English and Chinese (choices stated inside
  requests, and hard negatives: circumstance, identification, actions, questions whether something is possible);
- the τ-bench airline customers' messages of the dev split (tests/memory/facts/tau_labels.jsonl, texts from
  ../shared), the labelled sets tests/memory/facts/labelled.jsonl and dev.jsonl;
- as clauses stating nothing, the negatives written for the detector (memory/facts/detector_data.jsonl) and the
  development chat (LoCoMo conv-26/30/41, MemoryBank users 1-8). Held-out sets are never read.

A labelled fact is placed on the tokens of the clause that say its value: the window of tokens that best covers the
value's words (numbers compared as numbers, so "three bags" covers "3 checked bags"); a fact whose value no clause
says closely enough is left out, and so is every clause of its message, which might hold it. A fact's label is its
slot key when the key is a slot (not its value) seen at least MIN_SLOT times, else its kind. A slot's lexicon is
the content words at least LEXICON_MIN of its placed spans use; at run time a span of the slot must hold one.

Scored as the runtime decides, out of fold (grouped: a τ-bench task's trials, a chat conversation or user, stay
together): a span is right when its label is the fact's and it shares a token with the fact's (bench.facts_quality
scores the values themselves, on the shipped model).
The threshold per language is the lowest (0.01 grid) whose span precision is at least PRECISION and whose false
rate on clauses stating nothing is at most TARGET on each group of negatives (written, chat, customers).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from bench import _tau
from bench.facts_eval import BENCHDATA, chat_sources, load_labelled, load_tau_labels
from memory.errors import ValidationError
from memory.facts.detector import clause_terms
from memory.facts.extract import extract
from memory.facts.normalize import normalize_key
from memory.facts.numbers import parse_number
from memory.facts.rules import KINDS, LANGS, RuleSet, load_rules, shipped_rules_path
from memory.facts.sentences import has_cjk
from memory.facts.tagger import (
    ARRAYS,
    OUTSIDE,
    TaggerModel,
    Token,
    clause_features,
    content_words,
    label_kind,
    reads,
    spans,
    token_features,
    tokens,
)
from memory.facts.weights import weights_digest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "memory" / "facts" / "tagger_data.jsonl"
DETECTOR_DATA = ROOT / "memory" / "facts" / "detector_data.jsonl"
FACTS = ROOT / "tests" / "memory" / "facts"
OUT = ROOT / "memory" / "facts"
SEED = 2026
FOLDS = 5
C = 1.0  # inverse L2 strength; 3 and 10 did no better, cross-validated
CHAT_WEIGHT = 0.5  # the chat clauses outnumber everything else
MIN_DF = 2  # a feature seen once is a name, not a cue
MIN_SLOT = 6  # a slot key needs this many facts to be a label of its own, else the fact is labelled by its kind
LEXICON_MIN = 2  # a word is in a slot's lexicon when this many of its training spans use it (once is a name)
MIN_COVER = 0.5  # share of a value's tokens a window must say, and of the window's tokens the value must hold
PRECISION = 0.90
TARGET = 0.01
PRUNE = 0.05  # smallest weight a shipped feature has on some label
GRID = np.round(np.arange(0.30, 0.995, 0.01), 2)


@dataclass(frozen=True)
class Fact:
    kind: str
    key: str
    value: str
    lifetime: str
    span: str = ""  # the words that say it, where the source gives them (the written lines do)


@dataclass(frozen=True)
class Example:
    """One clause as the tagger sees it, with the facts placed on its tokens as (first, last, label) spans."""

    lang: str
    text: str
    spans: tuple[tuple[int, int, str], ...]
    source: str
    group: str
    lifetimes: tuple[str, ...] = ()


def _unit(token: str) -> str:
    word = token.casefold().replace("’", "'")
    number = parse_number(word) if word[0].isdigit() or word.isalpha() else None
    if number is not None:
        return f"#{number.normalize()}"
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def align(found: Sequence[Token], value: str) -> tuple[int, int] | None:
    """The window of tokens that best says `value` (F1 of their units), when it covers enough of it."""
    want = Counter(_unit(t.text) for t in tokens(value) if t.text[0].isalnum())
    units = [_unit(t.text) for t in found]
    if not want:
        return None
    size = sum(want.values())
    best: tuple[float, int, int] | None = None
    for i, unit in enumerate(units):
        if unit not in want:
            continue
        for j in range(i, min(len(units), i + size + 4)):
            if units[j] not in want:
                continue
            have = Counter(units[i:j + 1])
            overlap = sum((have & want).values())
            words = sum(1 for t in found[i:j + 1] if t.text[0].isalnum())
            recall, precision = overlap / size, overlap / max(words, 1)
            if recall < MIN_COVER or precision < MIN_COVER:
                continue
            f1 = 2 * recall * precision / (recall + precision)
            if best is None or f1 > best[0] + 1e-9:
                best = (f1, i, j)
    return None if best is None else (best[1], best[2])


def readable(text: str, rules: RuleSet) -> list[str]:
    """The clauses of a message the tagger reads at run time."""
    return [c.text for c in extract(text, rules).clauses if reads(c)]


def place(text: str, facts: Sequence[Fact], rules: RuleSet, source: str, group: str,
          labels: dict[str, str]) -> tuple[list[Example], int]:
    """The message's readable clauses with its facts placed on them; none when a fact could not be placed (its
    message's clauses might hold it). Returns the examples and how many facts were left out."""
    clauses = readable(text, rules)
    found = [tokens(c) for c in clauses]
    placed: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    lifetimes: dict[int, list[str]] = defaultdict(list)
    for fact in facts:
        best = None
        for k, clause_tokens in enumerate(found):
            window = _within(clauses[k], clause_tokens, fact)
            if window is not None and not any(a <= window[1] and window[0] <= b for a, b, _ in placed[k]):
                best = (k, window)
                break
        if best is None:
            if _read_by_rules(text, fact, rules):
                continue  # the rules' fact: its clause is not the tagger's to read
            # Said in other words than the label's: the message is left out whole, since any clause might say it.
            return [], 1
        k, (i, j) = best
        placed[k].append((i, j, labels[fact.key]))
        lifetimes[k].append(fact.lifetime)
    lang = "zh" if has_cjk(text) else "en"
    return [Example(lang, c, tuple(sorted(placed[k])), source, group, tuple(lifetimes[k]))
            for k, c in enumerate(clauses)], 0


def _read_by_rules(text: str, fact: Fact, rules: RuleSet) -> bool:
    # A clause the rules took a fact from says the value (or holds the span the source names).
    for clause in extract(text, rules).clauses:
        if clause.facts and ((fact.span and fact.span in clause.text) or align(tokens(clause.text), fact.value)):
            return True
    return False


def _within(clause: str, found: Sequence[Token], fact: Fact) -> tuple[int, int] | None:
    # The value's words inside the span the source names (or anywhere in the clause when it names none); the span
    # itself when the value is a normal form not said as such ("单程票" -> "one-way").
    if not fact.span:
        return align(found, fact.value)
    at = clause.find(fact.span)
    if at < 0:
        return None
    inside = [n for n, t in enumerate(found) if t.start >= at and t.end <= at + len(fact.span)]
    if not inside:
        return None
    window = align(found[inside[0]:inside[-1] + 1], fact.value)
    return (inside[0] + window[0], inside[0] + window[1]) if window else (inside[0], inside[-1])


def _label_of(given: Iterable[Fact]) -> dict[str, str]:
    facts = list(given)
    # A slot key is one that is not just the value ("requirement:cabin", not "prohibition:travel insurance").
    slots = Counter(f.key for f in facts if f.key != normalize_key(f.kind, f.value))
    return {f.key: f.key if slots[f.key] >= MIN_SLOT else f.kind for f in facts}


def _tau_dev() -> list[tuple[str, list[Fact], str]]:
    if _tau.missing() is not None:
        return []
    texts = {(t.task_id, t.trial, j): m.get("content") for t in _tau.load_trajectories()
             for j, m in enumerate(t.messages) if m.get("role") == "user"}
    out = []
    for label in load_tau_labels():
        text = texts.get((label.task_id, label.trial, label.index))
        if label.split == "dev" and isinstance(text, str):
            facts = [Fact(f.kind, f.key, f.value, "request" if f.lifetime == "task" else "standing")
                     for f in label.facts]
            out.append((text, facts, f"tau:{label.task_id}"))
    return out


def _written() -> list[tuple[str, list[Fact], str]]:
    out = []
    if not DATA.exists():
        return out
    for number, line in enumerate(DATA.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        text = row.get("text")
        facts = row.get("facts")
        if not isinstance(text, str) or not isinstance(facts, list) or row.get("lang") != (
                "zh" if has_cjk(text) else "en"):
            raise ValidationError(f"{DATA.name}:{number}: expected 'text', its 'lang' and a list 'facts'")
        for fact in facts:
            if fact.get("kind") not in KINDS or not str(fact.get("key", "")).startswith(f"{fact.get('kind')}:"):
                raise ValidationError(f"{DATA.name}:{number}: a fact needs a kind and a key 'kind:...', got {fact}")
        said = [Fact(f["kind"], f["key"], f["value"], "request", f.get("span", "")) for f in facts]
        out.append((text, said, f"written:{number}"))
    return out


def _labelled() -> list[tuple[str, list[Fact], str]]:
    out = []
    for name in ("labelled.jsonl", "dev.jsonl"):
        for number, item in enumerate(load_labelled(FACTS / name), 1):
            lifetime = item.lifetime or "standing"
            out.append((item.text, [Fact(f.kind, f.key, f.value, lifetime) for f in item.facts],
                        f"{name}:{number}"))
    return out


def examples(rules: RuleSet) -> tuple[list[Example], dict[str, str], Counter[str]]:
    """Every training clause, the label of each key, and per source how many facts were placed / left out."""
    sources = {"written": _written(), "tau": _tau_dev(), "labelled": _labelled()}
    labels = _label_of(f for messages in sources.values() for _, facts, _ in messages for f in facts)
    rows: list[Example] = []
    counts: Counter[str] = Counter()
    for source, messages in sources.items():
        for text, facts, group in messages:
            placed, lost = place(text, facts, rules, source, group, labels)
            rows.extend(placed)
            counts[f"{source} facts placed"] += sum(len(e.spans) for e in placed)
            counts[f"{source} facts left out"] += lost
    for number, line in enumerate(DETECTOR_DATA.read_text(encoding="utf-8").splitlines(), 1):
        item = json.loads(line) if line.strip() else {}
        if item.get("kind") == "none":
            rows.extend(Example(item["lang"], c, (), "negative", f"negative:{number}")
                        for c in readable(item["text"], rules))
    for group, lang, turn in chat_sources("dev", BENCHDATA):
        rows.extend(Example(lang, c, (), "chat", group) for c in readable(turn, rules))
    return rows, labels, counts


def tag_targets(example: Example, names: Sequence[str]) -> list[int]:
    target = [0] * len(tokens(example.text))
    for i, j, label in example.spans:
        for k in range(i, j + 1):
            target[k] = names.index(label)
    return target


def fit(rows: Sequence[Example], names: Sequence[str], c: float = C) -> TaggerModel:
    features = []
    for row in rows:
        words = [t.text for t in tokens(row.text)]
        shared = clause_features(words)
        features.append([[*token, *shared] for token in token_features(words)])
    df = Counter(f for clause in features for token in clause for f in set(token))
    vocabulary = tuple(sorted(f for f, count in df.items() if count >= MIN_DF))
    index = {f: i for i, f in enumerate(vocabulary)}
    data, columns, indptr, y, weight = [], [], [0], [], []
    for row, clause in zip(rows, features, strict=True):
        targets = tag_targets(row, names)
        for token, target in zip(clause, targets, strict=True):
            known = sorted({index[f] for f in token if f in index})
            columns.extend(known)
            data.extend([1.0] * len(known))
            indptr.append(len(columns))
            y.append(target)
            weight.append(CHAT_WEIGHT if row.source == "chat" else 1.0)
    x = csr_matrix((data, columns, indptr), shape=(len(y), len(vocabulary)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a classifier that did not converge is not shipped
        classifier = LogisticRegression(C=c, max_iter=3000).fit(x, np.array(y), sample_weight=np.array(weight))
    coef = np.zeros((len(names), len(vocabulary)))
    bias = np.full(len(names), -30.0)  # a label no training token had is never predicted
    for row, label in enumerate(classifier.classes_):
        coef[label] = classifier.coef_[row]
        bias[label] = classifier.intercept_[row]
    gate_weights, gate_bias, gate_vocabulary = fit_gate(rows, c)
    return TaggerModel(tuple(names), coef.T.astype(np.float32).astype(np.float64),
                       bias.astype(np.float32).astype(np.float64), vocabulary, gate_weights, gate_bias,
                       gate_vocabulary, {lang: 0.5 for lang in LANGS}, {}, lexicons(rows))


def lexicons(rows: Sequence[Example]) -> dict[str, frozenset[str]]:
    """Per slot label, the content words at least LEXICON_MIN of its training spans use (tagger.content_words)."""
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        words = [t.text for t in tokens(row.text)]
        for i, j, label in row.spans:
            if ":" in label:
                used[label].update(content_words(words[i:j + 1]))
    return {label: frozenset(w for w, n in counts.items() if n >= LEXICON_MIN) for label, counts in used.items()
            if any(n >= LEXICON_MIN for n in counts.values())}


def fit_gate(rows: Sequence[Example], c: float) -> tuple[np.ndarray, float, tuple[str, ...]]:
    """The clause-level regression: does the clause state a constraint at all (binary n-gram presence)."""
    terms = [sorted(set(clause_terms(row.text))) for row in rows]
    df = Counter(t for clause in terms for t in clause)
    vocabulary = tuple(sorted(t for t, count in df.items() if count >= MIN_DF))
    index = {t: i for i, t in enumerate(vocabulary)}
    columns, indptr = [], [0]
    for clause in terms:
        columns.extend(index[t] for t in clause if t in index)
        indptr.append(len(columns))
    x = csr_matrix((np.ones(len(columns)), columns, indptr), shape=(len(rows), len(vocabulary)))
    y = np.array([bool(row.spans) for row in rows])
    weight = np.where([row.source == "chat" for row in rows], CHAT_WEIGHT, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        classifier = LogisticRegression(C=c, max_iter=3000).fit(x, y, sample_weight=weight)
    return (classifier.coef_[0].astype(np.float32).astype(np.float64), float(np.float32(classifier.intercept_[0])),
            vocabulary)


def folds(rows: Sequence[Example]) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    groups = sorted({row.group for row in rows})
    place_of = {groups[j]: rank % FOLDS for rank, j in enumerate(rng.permutation(len(groups)))}
    return np.array([place_of[row.group] for row in rows])


@dataclass(frozen=True)
class Operating:
    threshold: float
    precision: float
    recall: float
    predicted: int
    false: dict[str, float]


def predictions(rows: Sequence[Example], names: Sequence[str], c: float = C
                ) -> list[list[tuple[int, int, str, float]]]:
    """Out-of-fold spans (first token, last token, label, confidence) for every row, at no threshold."""
    fold = folds(rows)
    out: list[list[tuple[int, int, str, float]]] = [[] for _ in rows]
    for k in range(FOLDS):
        model = fit([row for row, f in zip(rows, fold, strict=True) if f != k], names, c)
        for i in np.flatnonzero(fold == k):
            found = tokens(rows[i].text)
            probabilities = model.probabilities([t.text for t in found])
            starts = {t.start: n for n, t in enumerate(found)}
            ends = {t.end: n for n, t in enumerate(found)}
            out[i] = [(starts[s.start], ends[s.end], s.label, s.confidence)
                      for s in spans(model, rows[i].text, probabilities, found, model.states(rows[i].text))]
    return out


def operate(rows: Sequence[Example], found: Sequence[Sequence[tuple[int, int, str, float]]], lang: str,
            threshold: float) -> Operating:
    right = shown = gold = 0
    flagged: Counter[str] = Counter()
    negatives: Counter[str] = Counter()
    for row, spans_found in zip(rows, found, strict=True):
        if row.lang != lang:
            continue
        kept = [s for s in spans_found if s[3] >= threshold]
        gold += len(row.spans)
        shown += len(kept)
        left = list(row.spans)
        for i, j, label, _ in kept:
            hit = next((g for g in left if g[2] == label and _overlap((i, j), g[:2]) > 0), None)
            if hit is not None:
                left.remove(hit)
                right += 1
        if not row.spans and row.source != "labelled":
            group = row.source if row.source in ("chat", "tau", "negative") else "written"
            negatives[group] += 1
            flagged[group] += bool(kept)
    false = {g: flagged[g] / negatives[g] for g in negatives}
    return Operating(threshold, right / shown if shown else 1.0, right / gold if gold else 0.0, shown, false)


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> float:
    common = min(a[1], b[1]) - max(a[0], b[0]) + 1
    return max(common, 0) / max(a[1] - a[0] + 1, b[1] - b[0] + 1)


def choose(rows: Sequence[Example], found: Sequence[Sequence[tuple[int, int, str, float]]], lang: str) -> Operating:
    for threshold in GRID:
        point = operate(rows, found, lang, float(threshold))
        if point.precision >= PRECISION and max(point.false.values(), default=0.0) <= TARGET:
            return point
    return operate(rows, found, lang, 1.0)


def lifetimes(rows: Sequence[Example], names: Sequence[str]) -> dict[str, str]:
    said: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        for (_, _, label), lifetime in zip(row.spans, row.lifetimes, strict=False):
            said[label][lifetime] += 1
    # Who the user is and what they like stand; an instruction's lifetime is what its training facts said most.
    # A free label ("prohibition") leaves it to its sentence's reading (memory.facts.assisted).
    return {name: ("standing" if label_kind(name) in ("profile", "preference") or ":" not in name or not said[name]
                   else said[name].most_common(1)[0][0]) for name in names[1:]}


def write(model: TaggerModel, rows: Sequence[Example], out: Path = OUT) -> tuple[Path, Path]:
    # Only features with a weight that can matter ship: the rest barely move a probability and only grow the file
    # (bench.facts_quality scores the shipped, pruned model).
    keep = np.flatnonzero(np.abs(model.weights).max(axis=1) >= PRUNE)
    gate = np.flatnonzero(np.abs(model.gate_weights) >= PRUNE)
    arrays = {"weights": model.weights[keep].astype(np.float16), "bias": model.bias.astype(np.float32),
              "vocabulary": np.array([model.vocabulary[i] for i in keep], dtype=str),
              "gate_weights": model.gate_weights[gate].astype(np.float32),
              "gate_bias": np.array(model.gate_bias, dtype=np.float32),
              "gate_vocabulary": np.array([model.gate_vocabulary[i] for i in gate], dtype=str)}
    weights, meta = out / "tagger.npz", out / "tagger.toml"
    np.savez_compressed(weights, **arrays)
    lines = [
        "# Written by bench/facts_tagger_train.py; do not edit, rerun the script.",
        "version = 1",
        f"labels = {json.dumps(list(model.labels), ensure_ascii=False)}",
        'weights = "tagger.npz"',
        f'weights_sha256 = "{weights_digest(arrays, ARRAYS)}"',
        "",
        "# The mean probability of its label a span needs, per language (Chinese: any Chinese character).",
        "[thresholds]",
        *(f"{lang} = {model.thresholds[lang]}" for lang in LANGS),
        "",
        "# How long a constraint of each label holds.",
        "[lifetimes]",
        *(f"{json.dumps(name, ensure_ascii=False)} = \"{model.lifetimes[name]}\"" for name in model.labels[1:]),
        "",
        "# The words a span of each slot holds one of: those at least lexicon_min of its training spans use.",
        "[lexicons]",
        *(f"{json.dumps(name, ensure_ascii=False)} = {json.dumps(sorted(model.lexicons[name]), ensure_ascii=False)}"
          for name in model.labels[1:] if name in model.lexicons),
        "",
        "[training]",
        *(f'{name}_sha256 = "{hashlib.sha256(path.read_bytes()).hexdigest()}"'
          for name, path in (("data", DATA), ("labelled", FACTS / "labelled.jsonl"), ("dev", FACTS / "dev.jsonl"),
                             ("rules", shipped_rules_path()))),
        f"clauses = {len(rows)}",
        f"seed = {SEED}",
        f"c = {C}",
        f"chat_weight = {CHAT_WEIGHT}",
        f"min_df = {MIN_DF}",
        f"min_slot = {MIN_SLOT}",
        f"lexicon_min = {LEXICON_MIN}",
        f"prune = {PRUNE}",
        f"precision = {PRECISION}",
        f"target_false_rate = {TARGET}",
    ]
    meta.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return weights, meta


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write tagger.npz and tagger.toml to")
    parser.add_argument("--c", type=float, default=C, help="inverse L2 strength (to compare; C ships)")
    parser.add_argument("--no-write", action="store_true", help="only print the cross-validated figures")
    args = parser.parse_args(argv)
    rules = load_rules()
    rows, keys, counts = examples(rules)
    names = (OUTSIDE, *sorted(set(keys.values())))
    print(f"{len(rows)} clauses, {sum(len(r.spans) for r in rows)} facts placed; labels: {', '.join(names[1:])}")
    for name, count in sorted(counts.items()):
        print(f"  {name}: {count}")
    found = predictions(rows, names, args.c)
    print("\n| lang | threshold | spans | precision | recall | false rate written / chat / customers |")
    print("|---|---:|---:|---:|---:|---|")
    thresholds = {}
    for lang in LANGS:
        for threshold in (0.5, 0.7):
            point = operate(rows, found, lang, threshold)
            print(_row(lang, point))
        point = choose(rows, found, lang)
        thresholds[lang] = point.threshold
        print(_row(lang, point) + " (chosen)")
    if args.no_write:
        return
    model = fit(rows, names, args.c)
    final = replace(model, thresholds=thresholds, lifetimes=lifetimes(rows, names))
    for path in write(final, rows, args.out):
        print(f"wrote {path}")


def _row(lang: str, point: Operating) -> str:
    false = " / ".join(f"{point.false.get(g, 0.0):.3f}" for g in ("negative", "chat", "tau"))
    return (f"| {lang} | {point.threshold:.2f} | {point.predicted} | {point.precision:.3f} | {point.recall:.3f} | "
            f"{false} |")


if __name__ == "__main__":
    main()
