"""The τ-bench airline customer messages: the label file's shape, and floors for today's extractor on held-out."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench import _tau
from bench.facts_eval import (
    FALSE_CONSTRAINT_KINDS,
    TAU_LABELS,
    chat_rate,
    kind_scores,
    load_tau_labels,
    score,
    tau_messages,
)
from memory.facts.rules import RuleSet

pytestmark = pytest.mark.skipif(_tau.missing() is not None, reason=str(_tau.missing()))

# A line names its message and holds labels only: the texts stay in ../shared (docs/fact-labels.md).
_FIELDS = {"task_id", "trial", "index", "split", "facts", "note"}
_FACT_FIELDS = {"kind", "key", "value", "lifetime"}


def test_every_customer_message_of_both_splits_is_labelled_once() -> None:
    labels = load_tau_labels()  # refuses an unknown kind or lifetime, or a split other than the task id's
    named = Counter((label.task_id, label.trial, label.index) for label in labels)
    assert [where for where, count in named.items() if count > 1] == []
    wanted = {(t.task_id, t.trial, j) for t in _tau.load_trajectories()
              for j, message in enumerate(t.messages) if message.get("role") == "user"}
    assert set(named) == wanted
    for split in ("dev", "held-out"):
        items = tau_messages(labels, split)
        assert len(items) >= 350, f"{split}: only {len(items)} messages"
        assert sum(bool(item.facts) for item in items) >= 80, f"{split}: few messages state a constraint"


def test_label_lines_hold_no_message_text() -> None:
    for number, line in enumerate(TAU_LABELS.read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        assert set(row) <= _FIELDS, f"line {number}: {sorted(set(row) - _FIELDS)}"
        assert all(set(fact) == _FACT_FIELDS for fact in row["facts"]), f"line {number}"


def test_held_out_floors(rules: RuleSet) -> None:
    """Floors against regressions (the issue's targets: recall 0.75, precision 0.90, false rate 2 %, which the
    false rate meets): bench/RESULTS.md has today's figures. Held out: only these aggregates are read, never the
    misses."""
    items = tau_messages(load_tau_labels(), "held-out")
    kinds = kind_scores(items, rules)["en"]
    assert kinds.precision >= 0.60, f"kinds precision {kinds.precision:.3f}"
    assert kinds.recall >= 0.05, f"kinds recall {kinds.recall:.3f}"
    # Today's rules match no labelled held-out fact whole (slot keys such as cabin and payment, and the customers'
    # wording), so facts have no floor yet: the first fact found raises one here.
    facts = score(items, rules).facts["en"]
    assert facts.utterances == len(items) and facts.gold >= 100
    rate = chat_rate([item.text for item in items if not item.facts], rules, kinds=FALSE_CONSTRAINT_KINDS)
    assert rate.turns >= 200, f"only {rate.turns} messages labelled with no constraint"
    assert rate.rate <= 0.02, f"{rate.rate:.4f} of held-out messages stating none read as a constraint"
