"""Build the clause detector's shipped data (memory/facts/detector.npz and detector.toml) and print how well it does.

Run from the project root: `.venv/bin/python -m bench.facts_detector_train` (`--no-compare` skips the feature
comparison). Deterministic: fixed seed, fixed folds, lbfgs; vectors are cached in bench/.cache.

Training rows:
- memory/facts/detector_data.jsonl, written for the detector: kinds in phrasings the rules miss, and hard
  negatives (advice to a friend, questions, someone else's constraint, reported speech, one-off tasks, the past);
- tests/memory/facts/labelled.jsonl: lines with one kind of fact, and lines with none;
- the τ-bench airline customers' messages of the dev split (tests/memory/facts/tau_labels.jsonl, texts read from
  ../shared): the open clauses of messages labelled with no constraint as "none", one-clause messages of one kind
  as that kind; their false rate is held to the target on its own;
- as "none", every clause the rules leave without a fact (guards.NO_FACT) in the development chat (LoCoMo
  conv-26/30/41, MemoryBank users 1-8 in both languages): the clauses the detector is actually shown. Held-out
  sets (tests/memory/facts/heldout.jsonl, LoCoMo conv-42/43/44, MemoryBank users 9-15) are never read.

The shipped pipeline is what is scored: the rules' guards first (memory.facts.detector.guard_reason: questions,
hypotheticals, reported speech, advice to a person), then the classifier.

Why this design (the first table measures it): a logistic regression over the MiniLM vector and TF-IDF n-grams
together beats either alone at the same false rate; the vector alone is weak on Chinese (MiniLM reads it poorly),
the n-grams alone miss English paraphrases. Nearest-prototype scoring over the same vectors was tried while the
data was written and did worse than the classifier at every false rate, so no prototypes ship. A detection is
the most likely kind when its probability reaches the language's threshold; the threshold is the lowest (on a
0.01 grid) at which the cross-validated false rate is at most 1 % on the hand-written negatives, the chat clauses and
the customers' messages, each group on its own. Precision counts a detection of the wrong kind as wrong.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from bench import _tau
from bench.embed_cache import CachedEmbedder
from bench.facts_eval import BENCHDATA, chat_sources, load_tau_labels
from memory.config import load_config
from memory.embedding import load_embedder
from memory.errors import ValidationError
from memory.facts import guards
from memory.facts.detector import ARRAYS, NONE, DetectorModel, clause_terms, guard_reason
from memory.facts.extract import extract
from memory.facts.rules import KINDS, LANGS, load_rules, shipped_rules_path
from memory.facts.sentences import has_cjk
from memory.facts.weights import weights_digest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "memory" / "facts" / "detector_data.jsonl"
LABELLED = ROOT / "tests" / "memory" / "facts" / "labelled.jsonl"
OUT = ROOT / "memory" / "facts"
LABELS = (NONE, *KINDS)
SEED = 2026
FOLDS = 5
REPEATS = 3  # folds drawn three times and pooled: a few hundred hard negatives make one draw's false rate jumpy
C = 10.0  # inverse L2 strength; 3 and 30 did no better while the data was written
CHAT_WEIGHT = 0.5  # the chat clauses outnumber everything else; at full weight they drown the rare kinds
MIN_DF = 2  # an n-gram seen once is a name, not a cue
TARGET = 0.01  # highest false rate allowed on each group of negatives
GRID = np.round(np.arange(0.50, 0.995, 0.01), 2)
CURVE = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


@dataclass(frozen=True)
class Row:
    """One training clause: its language, text, label and where it came from (`group` keeps a chat together)."""

    lang: str
    text: str
    label: str
    source: str  # written | labelled | tau | chat
    group: str = ""


@dataclass(frozen=True)
class Views:
    """Which feature views a model reads."""

    vectors: bool = True
    terms: bool = True

    @property
    def name(self) -> str:
        return "vector + n-grams" if self.vectors and self.terms else "vector only" if self.vectors else "n-grams only"


def written_rows(path: Path = DATA) -> list[Row]:
    """The hand-written lines; ValidationError on a bad or repeated line."""
    rows: list[Row] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        item = json.loads(line)
        lang, text, kind = item.get("lang"), str(item.get("text", "")).strip(), item.get("kind")
        if lang not in LANGS or kind not in LABELS or not text or text in seen or lang != _lang(text):
            raise ValidationError(f"{path.name}:{number}: expected a new text, its lang ('zh' when it has a Chinese "
                                  f"character, else 'en') and a kind in {list(LABELS)}; got {line[:120]}")
        seen.add(text)
        rows.append(Row(lang, text, kind, "written"))
    return rows


def labelled_rows(path: Path = LABELLED) -> list[Row]:
    """labelled.jsonl lines whose facts are all of one kind (or none at all)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        kinds = {fact["kind"] for fact in item["facts"]}
        if len(kinds) <= 1:
            text = item["text"].strip()
            rows.append(Row(_lang(text), text, kinds.pop() if kinds else NONE, "labelled"))
    return rows


def chat_rows(data: Path = BENCHDATA) -> list[Row]:
    """Every development-chat clause the rules find no fact in, as "none", grouped by conversation or user."""
    rules = load_rules()
    rows: list[Row] = []
    for group, _, turn in chat_sources("dev", data):
        for clause in extract(turn, rules).clauses:
            if clause.reason == guards.NO_FACT and clause.text:
                rows.append(Row(_lang(clause.text), clause.text, NONE, "chat", group))
    return rows


def tau_rows() -> list[Row]:
    """The τ-bench customers' messages of the dev split (tests/memory/facts/tau_labels.jsonl; texts read from
    ../shared at run time), each task's trials grouped: every clause the rules leave without a fact in a message
    labelled with no constraint, as "none" (confirmations, circumstances, single requests: what an agent's user
    says most), and a message labelled with constraints of one kind whose only open clause is that clause, as that
    kind. None without the data; the held-out split is never read."""
    if _tau.missing() is not None:
        return []
    rules = load_rules()
    texts = {(t.task_id, t.trial, j): m.get("content") for t in _tau.load_trajectories()
             for j, m in enumerate(t.messages) if m.get("role") == "user"}
    rows: list[Row] = []
    for label in load_tau_labels():
        text = texts.get((label.task_id, label.trial, label.index))
        if label.split != "dev" or not isinstance(text, str):
            continue
        open_clauses = [c.text for c in extract(text, rules).clauses if c.reason == guards.NO_FACT and c.text]
        kinds = {fact.kind for fact in label.facts}
        group = f"tau:{label.task_id}"
        if not kinds:
            rows.extend(Row(_lang(c), c, NONE, "tau", group) for c in open_clauses)
        elif len(kinds) == 1 and len(open_clauses) == 1:
            rows.append(Row(_lang(open_clauses[0]), open_clauses[0], kinds.pop(), "tau", group))
    return rows


def _lang(text: str) -> str:
    # The detector's own reading (a Chinese character makes a clause Chinese), so each row is scored as it is read.
    return "zh" if has_cjk(text) else "en"


def merge(*sources: list[Row]) -> list[Row]:
    """All rows, each text once: an earlier source's label wins (hand-written over labelled over chat)."""
    rows: dict[str, Row] = {}
    for source in sources:
        for row in source:
            rows.setdefault(row.text, row)
    return list(rows.values())


def folds(rows: Sequence[Row], seed: int) -> np.ndarray:
    """Seeded folds; chat clauses of one conversation or user always share a fold."""
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(rows), dtype=np.int64)
    loose = [i for i, row in enumerate(rows) if not row.group]
    for rank, j in enumerate(rng.permutation(len(loose))):
        fold[loose[j]] = rank % FOLDS
    groups = sorted({row.group for row in rows if row.group})
    place = {groups[j]: rank % FOLDS for rank, j in enumerate(rng.permutation(len(groups)))}
    for i, row in enumerate(rows):
        if row.group:
            fold[i] = place[row.group]
    return fold


def fit(rows: Sequence[Row], vectors: np.ndarray, views: Views = Views()) -> DetectorModel:
    """Train on `rows` (vectors row-aligned) and return the classifier as the runtime applies it."""
    terms = [clause_terms(row.text) for row in rows] if views.terms else [[] for _ in rows]
    df = Counter(term for row_terms in terms for term in set(row_terms))
    vocabulary = tuple(sorted(term for term, count in df.items() if count >= MIN_DF))
    idf = np.log((1 + len(rows)) / (1 + np.array([df[t] for t in vocabulary], dtype=np.float64))) + 1.0
    empty = np.zeros((0, len(LABELS)))
    model = DetectorModel(LABELS, empty, np.zeros((len(vocabulary), len(LABELS))), np.zeros(len(LABELS)), idf,
                          vocabulary, {lang: 1.0 for lang in LANGS}, "")
    dimension = vectors.shape[1] if views.vectors else 0
    x = hstack([csr_matrix(vectors[:, :dimension]), _term_matrix(model, [row.text for row in rows])]).tocsr()
    y = np.array([LABELS.index(row.label) for row in rows])
    weight = np.where([row.source == "chat" for row in rows], CHAT_WEIGHT, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a classifier that did not converge is not shipped
        classifier = LogisticRegression(C=C, max_iter=5000).fit(x, y, sample_weight=weight)
    coef = classifier.coef_.astype(np.float32).astype(np.float64)
    vector_weights = np.zeros((vectors.shape[1], len(LABELS)))
    vector_weights[:dimension] = coef[:, :dimension].T
    return replace(model, vector_weights=vector_weights, term_weights=coef[:, dimension:].T.copy(),
                   bias=classifier.intercept_.astype(np.float32).astype(np.float64),
                   idf=idf.astype(np.float32).astype(np.float64))


def _term_matrix(model: DetectorModel, texts: Sequence[str]) -> csr_matrix:
    data, indices, indptr = [], [], [0]
    for text in texts:
        columns, values = model.term_vector(text)
        indices.extend(columns.tolist())
        data.extend(values.tolist())
        indptr.append(len(indices))
    return csr_matrix((data, indices, indptr), shape=(len(texts), len(model.vocabulary)))


def cross_validate(rows: Sequence[Row], vectors: np.ndarray, views: Views) -> np.ndarray:
    """Out-of-fold label probabilities for every row, once per repeat (REPEATS * len(rows) rows, repeat-major)."""
    probabilities = np.zeros((REPEATS, len(rows), len(LABELS)))
    for repeat in range(REPEATS):
        fold = folds(rows, SEED + repeat)
        for k in range(FOLDS):
            train, test = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            model = fit([rows[int(i)] for i in train], vectors[train], views)
            probabilities[repeat, test] = model.probabilities(vectors[test], [rows[int(i)].text for i in test])
    return probabilities.reshape(REPEATS * len(rows), len(LABELS))


@dataclass(frozen=True)
class Operating:
    """What a threshold does to one language's out-of-fold predictions."""

    threshold: float
    precision: float
    recall: float
    recall_missed: float  # on the positives the rules find nothing in: the detector's own job
    written_false: float
    chat_false: float
    detected: int
    dialogue_false: float = 0.0  # on the agent customers' messages that state no constraint (tau rows)


def detections(probabilities: np.ndarray, guarded: np.ndarray, thresholds: np.ndarray | float) -> np.ndarray:
    """Which rows the detector reports (as ClauseDetector.detect decides), and the kind: (mask, label index)."""
    label = 1 + probabilities[:, 1:].argmax(axis=1)
    confidence = probabilities[np.arange(len(probabilities)), label]
    return np.where(~guarded & (confidence >= thresholds) & (confidence > probabilities[:, 0]), label, 0)


def operate(rows: Sequence[Row], probabilities: np.ndarray, guarded: np.ndarray, missed: np.ndarray, lang: str,
            threshold: float) -> Operating:
    """Precision (right kind), recall and false rates of one language at `threshold`."""
    label = detections(probabilities, guarded, threshold)
    detected = label != 0
    truth = np.array([LABELS.index(row.label) for row in rows])
    mine = np.array([row.lang == lang for row in rows])
    chat = mine & np.array([row.source == "chat" for row in rows])
    # Each group of negatives is held to the target on its own: pooled, many easy ones would let the threshold
    # fall on the hard ones.
    dialogue = mine & (truth == 0) & np.array([row.source == "tau" for row in rows])
    positive, negative = mine & (truth != 0), mine & (truth == 0) & ~chat & ~dialogue
    right = detected & positive & (label == truth)
    shown = detected & (positive | negative)
    return Operating(
        threshold, _share(right.sum(), shown.sum()), _share(right.sum(), positive.sum()),
        _share((right & missed).sum(), (positive & missed).sum()), _share((detected & negative).sum(), negative.sum()),
        _share((detected & chat).sum(), chat.sum()), int(shown.sum()),
        _share((detected & dialogue).sum(), dialogue.sum()))


def choose(rows: Sequence[Row], probabilities: np.ndarray, guarded: np.ndarray, missed: np.ndarray,
           lang: str) -> Operating:
    """The lowest threshold whose false rates on hand-written, chat and customer-dialogue negatives are each within
    TARGET."""
    for threshold in GRID:
        point = operate(rows, probabilities, guarded, missed, lang, float(threshold))
        if max(point.written_false, point.chat_false, point.dialogue_false) <= TARGET:
            return point
    return operate(rows, probabilities, guarded, missed, lang, 1.0)


def _share(part: int, whole: int) -> float:
    return float(part) / whole if whole else 0.0


def write(model: DetectorModel, rows: Sequence[Row], out: Path = OUT) -> tuple[Path, Path]:
    """detector.npz (weights) and detector.toml (labels, thresholds, embedder, provenance)."""
    arrays = {name: getattr(model, name).astype(np.float32) for name in ARRAYS if name != "vocabulary"}
    arrays["vocabulary"] = np.array(model.vocabulary, dtype=str)
    weights, meta = out / "detector.npz", out / "detector.toml"
    np.savez_compressed(weights, **arrays)
    lines = [
        "# Written by bench/facts_detector_train.py from detector_data.jsonl; do not edit, rerun the script.",
        "version = 1",
        f"labels = {json.dumps(list(model.labels))}",
        'weights = "detector.npz"',
        f'weights_sha256 = "{weights_digest(arrays, ARRAYS)}"',
        "",
        "[embedder]",
        f"model = {json.dumps(model.model)}",
        f"dimension = {model.dimension}",
        "",
        "# The probability of the detected kind a clause needs, per language (Chinese: any Chinese character).",
        "[thresholds]",
        *(f"{lang} = {model.thresholds[lang]}" for lang in LANGS),
        "",
        "[training]",
        # What the rows came from: the written lines, the labelled lines, and the rules that picked the chat clauses.
        *(f'{name}_sha256 = "{hashlib.sha256(path.read_bytes()).hexdigest()}"'
          for name, path in (("data", DATA), ("labelled", LABELLED), ("rules", shipped_rules_path()))),
        f"rows = {len(rows)}",
        f"seed = {SEED}",
        f"c = {C}",
        f"chat_weight = {CHAT_WEIGHT}",
        f"min_df = {MIN_DF}",
        f"target_false_rate = {TARGET}",
    ]
    meta.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return weights, meta


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--no-compare", action="store_true", help="skip the vector-only / n-grams-only comparison")
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write detector.npz and detector.toml to "
                                                             "(default: the shipped ones, memory/facts)")
    args = parser.parse_args(argv)

    rows = merge(written_rows(), labelled_rows(), tau_rows(), chat_rows())
    rules = load_rules()
    embedder = CachedEmbedder(load_embedder(load_config().embedding))
    vectors = embedder.encode_queries([row.text for row in rows])
    missed = np.array([row.label != NONE and not extract(row.text, rules).facts for row in rows])
    guarded = np.array([guard_reason(row.text, rules) is not None for row in rows])
    describe(rows, guarded)

    # Scores pool the repeats: every row appears once per repeat.
    pooled, guarded_pooled, missed_pooled = list(rows) * REPEATS, np.tile(guarded, REPEATS), np.tile(missed, REPEATS)
    print(f"\n{FOLDS}-fold cross-validation drawn {REPEATS} times; each view at its own threshold:")
    print(f"  {'views':17} {'lang':4} {'threshold':>9} {'precision':>9} {'recall':>7} {'rule-missed recall':>18} "
          f"{'written FR':>10} {'chat FR':>8} {'dialogue FR':>11}")
    chosen: dict[str, Operating] = {}
    probabilities = np.zeros((0, len(LABELS)))
    for views in (Views(terms=False), Views(vectors=False), Views()) if not args.no_compare else (Views(),):
        probabilities = cross_validate(rows, vectors, views)
        chosen = {lang: choose(pooled, probabilities, guarded_pooled, missed_pooled, lang) for lang in LANGS}
        for lang in LANGS:
            print(f"  {views.name:17} " + _cells(lang, chosen[lang]))
    report_shipped(pooled, probabilities, guarded_pooled, missed_pooled, chosen)

    model = replace(fit(rows, vectors), thresholds={lang: chosen[lang].threshold for lang in LANGS},
                    model=embedder.identity.model)
    weights, meta = write(model, rows, args.out)
    thresholds = ", ".join(f"{lang} {value}" for lang, value in model.thresholds.items())
    print(f"\nwrote {weights} ({weights.stat().st_size // 1024} KiB, {len(model.vocabulary)} "
          f"n-grams) and {meta}; thresholds {thresholds}")


def describe(rows: Sequence[Row], guarded: np.ndarray) -> None:
    """Print the rows per language and source, and how many of them the guards reject."""
    counts = Counter((row.lang, row.source, row.label == NONE) for row in rows)
    print("rows (positives/negatives):")
    for lang in LANGS:
        cells = [f"{s} {counts[(lang, s, False)]}/{counts[(lang, s, True)]}"
                 for s in ("written", "labelled", "tau", "chat")]
        mine = [i for i, row in enumerate(rows) if row.lang == lang and row.source != "chat" and guarded[i]]
        negatives = sum(rows[i].label == NONE for i in mine)
        print(f"  {lang}: " + ", ".join(cells) + f"; rejected by the guards before the classifier "
              f"{len(mine) - negatives}/{negatives}")


def report_shipped(rows: Sequence[Row], probabilities: np.ndarray, guarded: np.ndarray, missed: np.ndarray,
                   chosen: dict[str, Operating]) -> None:
    """Print the shipped model's chat false rate per corpus and its operating curve."""
    print(f"\nshipped model, chat false rate per corpus at the chosen thresholds (the {REPEATS} draws pooled):")
    label = detections(probabilities, guarded, np.array([chosen[row.lang].threshold for row in rows]))
    for corpus in ("locomo", "memorybank-en", "memorybank-zh"):
        picked = [i for i, row in enumerate(rows) if row.group.startswith(corpus + " ")]
        hits = sum(label[i] != 0 for i in picked)
        print(f"  {corpus:14} {hits}/{len(picked)} = {_share(hits, len(picked)):.2%}")
    print("shipped model, operating curve (threshold: recall / rule-missed recall / written FR / chat FR):")
    for lang in LANGS:
        points = [operate(rows, probabilities, guarded, missed, lang, t) for t in CURVE]
        print(f"  {lang}: " + "  ".join(f"{p.threshold:.2f}: {p.recall:.2f}/{p.recall_missed:.2f}/"
                                        f"{p.written_false:.3f}/{p.chat_false:.4f}" for p in points))


def _cells(lang: str, point: Operating) -> str:
    return (f"{lang:4} {point.threshold:9.2f} {point.precision:9.3f} {point.recall:7.3f} {point.recall_missed:18.3f} "
            f"{point.written_false:10.3f} {point.chat_false:8.4f} {point.dialogue_false:11.3f}")


if __name__ == "__main__":
    main()
