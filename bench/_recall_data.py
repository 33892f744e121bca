"""LoCoMo and LongMemEval-S read from ../shared/benchdata (never copied) into turns and evidence-labelled questions."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "DATA",
    "Conversation",
    "Question",
    "Turn",
    "load_locomo",
    "load_longmemeval",
    "normalise_evidence",
]

DATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata"
LOCOMO_FILE = DATA / "locomo" / "locomo_dev.json"
LONGMEMEVAL_FILE = DATA / "longmemeval" / "longmemeval_s_subset_a.json.gz"

_SPLIT = re.compile(r"[;\s]+")
_DIA_ID = re.compile(r"^D:?(\d+):0*(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One conversation turn as posted to /v1/memories; `line` is what the baselines count tokens on."""

    text: str
    speaker: str
    timestamp: str  # ISO 8601, UTC
    date: str  # YYYY-MM-DD, shown in `line`
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def line(self) -> str:
        """`[date] speaker: text`: one turn as a prompt line."""
        return f"[{self.date}] {self.speaker}: {self.text}"

    @property
    def indexed(self) -> str:
        """`speaker: text`: what the baselines search (the service indexes turns the same way)."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    """A question and what counts as recalling it: evidence keys into turn metadata."""

    question_id: str
    text: str
    category: str
    evidence: tuple[str, ...]  # LoCoMo: dia_ids; LongMemEval: answer session ids
    answer: str = ""  # LongMemEval: the reference answer (LoCoMo's are not read)


@dataclass(frozen=True)
class Conversation:
    """One memory to build (one namespace) and the questions asked of it."""

    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    dropped_evidence: int = 0


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def normalise_evidence(raw: list[str], known: set[str]) -> tuple[list[str], int]:
    """Evidence ids split on [;\\s]+, `D30:05` → `D30:5`, `D:11:26` → `D11:26`; returns (resolved, dropped)."""
    resolved: list[str] = []
    dropped = 0
    for entry in raw:
        for piece in _SPLIT.split(entry.strip()):
            if not piece:
                continue
            match = _DIA_ID.match(piece)
            dia_id = f"D{match.group(1)}:{match.group(2)}" if match else piece
            if dia_id in known:
                if dia_id not in resolved:
                    resolved.append(dia_id)
            else:
                dropped += 1
    return resolved, dropped


def _locomo_turn_text(turn: Mapping[str, Any]) -> str:
    # The shared image is part of what was said; its caption is the only trace of it in the data.
    caption = turn.get("blip_caption")
    return f"{turn['text']} [shares {caption}]" if caption else str(turn["text"])


def load_locomo(limit: int | None = None, categories: tuple[int, ...] = (1, 2, 3, 4)) -> list[Conversation]:
    """Each LoCoMo conversation's turns (session time + one second per turn, to keep order) and its questions."""
    samples = json.loads(LOCOMO_FILE.read_text(encoding="utf-8"))
    conversations = []
    for sample in samples[:limit]:
        conv = sample["conversation"]
        sessions = sorted(
            (int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k)),
        )
        turns: list[Turn] = []
        for number in sessions:
            when = datetime.strptime(conv[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y")
            for i, turn in enumerate(conv[f"session_{number}"]):
                turns.append(Turn(
                    text=_locomo_turn_text(turn),
                    speaker=turn["speaker"],
                    timestamp=_iso(when + timedelta(seconds=i)),
                    date=when.strftime("%Y-%m-%d"),
                    metadata={"dia_id": turn["dia_id"], "session": number},
                ))
        known = {t.metadata["dia_id"] for t in turns}
        questions = []
        dropped_total = 0
        for n, qa in enumerate(sample["qa"]):
            if qa.get("category") not in categories:
                continue
            evidence, dropped = normalise_evidence(list(qa.get("evidence", [])), known)
            dropped_total += dropped
            questions.append(Question(f"{sample['sample_id']}#{n}", qa["question"], str(qa["category"]),
                                      tuple(evidence)))
        conversations.append(Conversation(sample["sample_id"], tuple(turns), tuple(questions), dropped_total))
    return conversations


def load_longmemeval(limit: int | None = None) -> list[Conversation]:
    """The first `limit` LongMemEval-S subset-a questions, each with its own haystack (sessions in date order)."""
    with gzip.open(LONGMEMEVAL_FILE, "rt", encoding="utf-8") as fh:
        records = json.load(fh)
    conversations = []
    for record in records[:limit]:
        sessions = sorted(
            zip(record["haystack_dates"], record["haystack_session_ids"], record["haystack_sessions"], strict=True),
            key=lambda s: datetime.strptime(s[0], "%Y/%m/%d (%a) %H:%M"),
        )
        turns: list[Turn] = []
        for date_text, session_id, session in sessions:
            when = datetime.strptime(date_text, "%Y/%m/%d (%a) %H:%M")
            for i, turn in enumerate(session):
                if not turn["content"].strip():
                    continue  # one filler turn is empty: nothing to store or find, and the service refuses it
                turns.append(Turn(
                    text=turn["content"],
                    speaker=turn["role"],
                    timestamp=_iso(when + timedelta(seconds=i)),
                    date=when.strftime("%Y-%m-%d"),
                    metadata={"session_id": session_id, "has_answer": bool(turn.get("has_answer", False))},
                ))
        question = Question(record["question_id"], record["question"], record["question_type"],
                            tuple(record["answer_session_ids"]), str(record["answer"]))
        conversations.append(Conversation(record["question_id"], tuple(turns), (question,)))
    return conversations
