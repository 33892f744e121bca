"""A long agent trace for bench/context_trace.py, built deterministically from ../shared/benchdata (read in place).

The conversation is one LongMemEval-S haystack (its sessions' user/assistant messages in order); tool calls are
woven in before some assistant replies: `search_papers` answers with SciFact abstracts, `search_wiki_zh` with CMRC
paragraphs, `web_search` with a JSON list of 20-50 results built from both corpora, and `get_time` (ephemeral)
with the time; one assistant message in four that calls tools calls two. Early user messages state constraints in
passing (English and Chinese). The last user message is the haystack's question.
"""

from __future__ import annotations

import gzip
import json
import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bench.corpora import DATA, BenchDoc, load_cmrc, load_scifact

__all__ = ["EPHEMERAL_TOOLS", "SYSTEM_PROMPT", "TOOLS", "Constraint", "Trace", "TraceTurn", "build_trace",
           "load_haystack"]

LONGMEMEVAL_S = DATA / "longmemeval" / "longmemeval_s_subset_a.json.gz"
SYSTEM_PROMPT = ("You are a helpful research assistant. Use the tools when the user needs papers, Chinese "
                 "Wikipedia facts, web results or the current time; otherwise answer from the conversation.")
EPHEMERAL_TOOLS = ("get_time",)
TOOL_SHARE = 0.25  # share of the user messages whose reply first calls tools
TWO_CALLS = 0.25  # share of tool-calling assistant messages that call two tools at once

Message = dict[str, Any]


def _schema(name: str, description: str, properties: Mapping[str, Any], required: Sequence[str]) -> Message:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": dict(properties), "required": list(required)}}}


_TEXT = {"type": "string"}
TOOLS: tuple[Message, ...] = (
    _schema("search_papers", "Search biomedical paper abstracts; returns the best abstracts with titles and ids.",
            {"query": {**_TEXT, "description": "what the papers should be about"},
             "limit": {"type": "integer", "description": "how many abstracts (1-5)"}}, ["query"]),
    _schema("search_wiki_zh", "Search Chinese Wikipedia; returns whole paragraphs.",
            {"query": {**_TEXT, "description": "the question, in Chinese"}}, ["query"]),
    _schema("web_search", "Search the web; returns a JSON list of results {id, title, url, snippet}.",
            {"query": _TEXT, "num_results": {"type": "integer", "description": "results wanted (10-50)"}},
            ["query"]),
    _schema("get_time", "The current date and time in a time zone.",
            {"timezone": {**_TEXT, "description": "an IANA zone name such as Europe/Paris"}}, []),
    _schema("send_email", "Send an e-mail on the user's behalf.",
            {"to": _TEXT, "subject": _TEXT, "body": _TEXT}, ["to", "subject", "body"]),
    _schema("run_python", "Run a Python 3 snippet in a sandbox and return its standard output.",
            {"code": _TEXT}, ["code"]),
)


@dataclass(frozen=True)
class Constraint:
    """A rule the user states in passing; `phrase` is what must stay in every later turn's context."""

    phrase: str
    sentence: str
    turn: int  # the turn whose user message states it


# (turn, sentence, key phrase): said in the first turns, long before the window fills.
CONSTRAINTS: tuple[tuple[int, str, str], ...] = (
    (2, "By the way, never use Python 2 syntax in any code you give me.", "Python 2"),
    (4, "顺便说一下，预算不超过500元。", "500元"),
    (7, "Also, please always give measurements in metric units.", "metric units"),
)


@dataclass(frozen=True)
class TraceTurn:
    """One turn: its user message at `start`, the messages the agent holds when it calls (`[:call_end]`), and
    the messages up to the next turn (`[:end]`); `user` and `assistant` are its texts to remember."""

    start: int
    call_end: int
    end: int
    user: str
    assistant: str
    timestamp: str


@dataclass(frozen=True)
class Trace:
    """The whole conversation, its turns, the constraints stated in it and the final question's evidence."""

    question_id: str
    question: str
    messages: tuple[Message, ...]
    turns: tuple[TraceTurn, ...]
    constraints: tuple[Constraint, ...]
    evidence: Mapping[str, tuple[str, ...]]  # answer session id -> its evidence texts


def load_haystack(index: int) -> Mapping[str, Any]:
    """Question `index` of the LongMemEval-S subset (its haystack and evidence)."""
    with gzip.open(LONGMEMEVAL_S, "rt", encoding="utf-8") as fh:
        records = json.load(fh)
    if not 0 <= index < len(records):
        raise SystemExit(f"--question must be from 0 to {len(records) - 1}, got {index}")
    record: Mapping[str, Any] = records[index]
    return record


class _ToolAnswers:
    """Calls and answers drawn from SciFact and CMRC with one seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        scifact, cmrc = load_scifact(), load_cmrc()
        self.papers = scifact.docs
        self.paper_by_id = {d.doc_id: d for d in scifact.docs}
        self.claims = scifact.queries
        self.paragraphs = cmrc.docs
        self.paragraph_by_id = {d.doc_id: d for d in cmrc.docs}
        self.questions_zh = cmrc.queries
        self.calls = 0

    def call(self, name: str, now: datetime) -> tuple[Message, str]:
        """One call of tool `name` (an OpenAI tool_calls entry) and the text of its answer."""
        self.calls += 1
        call_id = "call_" + "".join(self.rng.choices(string.ascii_letters + string.digits, k=24))
        arguments, answer = getattr(self, f"_{name}")(now)
        call = {"id": call_id, "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
        return call, answer

    def _search_papers(self, now: datetime) -> tuple[Message, str]:
        claim = self.rng.choice(self.claims)
        limit = self.rng.randint(2, 5)
        found = [self.paper_by_id[i] for i in sorted(claim.relevant) if i in self.paper_by_id]
        found += self.rng.sample(self.papers, limit)
        lines = [f"[{n}] {d.title} (paper {d.doc_id})\n{d.text}" for n, d in enumerate(found[:limit], 1)]
        return {"query": claim.text, "limit": limit}, "\n\n".join(lines)

    def _search_wiki_zh(self, now: datetime) -> tuple[Message, str]:
        question = self.rng.choice(self.questions_zh)
        gold = self.paragraph_by_id[next(iter(question.relevant))]
        found = [gold, *self.rng.sample(self.paragraphs, self.rng.randint(0, 2))]
        return {"query": question.text}, "\n\n".join(f"《{d.title}》\n{d.text}" for d in found)

    def _web_search(self, now: datetime) -> tuple[Message, str]:
        english = self.rng.random() < 0.6
        query = (self.rng.choice(self.claims) if english else self.rng.choice(self.questions_zh)).text
        wanted = self.rng.randint(20, 50)
        pool: Sequence[BenchDoc] = self.papers if english else self.paragraphs
        results = [_web_result(n, d, english) for n, d in enumerate(self.rng.sample(pool, wanted), 1)]
        return {"query": query, "num_results": wanted}, json.dumps(results, ensure_ascii=False)

    def _get_time(self, now: datetime) -> tuple[Message, str]:
        zone = self.rng.choice(["UTC", "Europe/Paris", "Asia/Shanghai", "America/New_York"])
        return {"timezone": zone}, json.dumps({"now": now.isoformat(), "timezone": zone})


def _web_result(n: int, doc: BenchDoc, english: bool) -> Message:
    if english:
        url = f"https://www.ncbi.nlm.nih.gov/pubmed/?term=scifact-{doc.doc_id}"
        snippet = doc.text[:220].rsplit(" ", 1)[0] + " ..."
    else:
        url = f"https://zh.wikipedia.org/wiki/{doc.title}"
        snippet = doc.text[:90] + "……"
    return {"id": n, "title": doc.title, "url": url, "snippet": snippet}


def _session_start(date: str) -> datetime:
    """LongMemEval's '2023/05/20 (Sat) 07:47' as a datetime."""
    day, _, clock = date.partition(" (")
    return datetime.strptime(f"{day} {clock.split(') ')[1]}", "%Y/%m/%d %H:%M")


def _tool_messages(tools: _ToolAnswers, now: datetime) -> list[Message]:
    """One assistant message calling one or two tools, then their answers in call order."""
    rng = tools.rng
    names = ["search_papers", "search_wiki_zh", "web_search", "get_time"]
    weights = [3, 2, 3, 2]
    count = 2 if rng.random() < TWO_CALLS else 1
    picked = [rng.choices(names, weights)[0] for _ in range(count)]
    calls = [tools.call(name, now) for name in picked]
    out: list[Message] = [{"role": "assistant", "content": "", "tool_calls": [c for c, _ in calls]}]
    out += [{"role": "tool", "tool_call_id": c["id"], "content": answer} for c, answer in calls]
    return out


def _sessions(record: Mapping[str, Any], sessions: int | None) -> list[int]:
    """Session positions in the trace: all, or the first `sessions` plus the evidence sessions (in order)."""
    ids = record["haystack_session_ids"]
    evidence = set(record["answer_session_ids"])
    return [i for i, sid in enumerate(ids) if sessions is None or i < sessions or sid in evidence]


def build_trace(records: Sequence[Mapping[str, Any]], *, sessions: int | None = None, seed: int = 18,
                constraints: Sequence[tuple[int, str, str]] = CONSTRAINTS) -> Trace:
    """The trace of one or more haystacks in turn (their sessions in order; the last record's question ends it).

    `sessions` keeps only the first sessions of each haystack (and the evidence sessions): a short trace.
    `constraints` are (turn, sentence, key phrase) said in passing.
    """
    rng = random.Random(seed)
    tools = _ToolAnswers(rng)
    messages: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT}]
    turns: list[dict[str, Any]] = []
    for record in records:
        for s in _sessions(record, sessions):
            start = _session_start(record["haystack_dates"][s])
            for n, turn in enumerate(t for t in record["haystack_sessions"][s] if t["content"].strip()):
                now = start + timedelta(minutes=n)
                if turn["role"] == "user":
                    turns.append({"start": len(messages), "user": turn["content"], "assistant": [],
                                  "timestamp": now.isoformat() + "Z"})
                    messages.append({"role": "user", "content": turn["content"]})
                    if rng.random() < TOOL_SHARE:
                        messages += _tool_messages(tools, now)
                    turns[-1]["call_end"] = len(messages)
                    continue
                if turns:
                    turns[-1]["assistant"].append(turn["content"])
                messages.append({"role": "assistant", "content": turn["content"]})
    question = records[-1]["question"]
    asked = _session_start(records[-1]["question_date"]).isoformat() + "Z"
    turns.append({"start": len(messages), "user": question, "assistant": [], "call_end": len(messages) + 1,
                  "timestamp": asked})
    messages.append({"role": "user", "content": question})
    stated = _state_constraints(messages, turns, constraints)
    return Trace(
        question_id=records[-1]["question_id"], question=question, messages=tuple(messages),
        turns=tuple(_turn(t, turns[i + 1]["start"] if i + 1 < len(turns) else len(messages))
                    for i, t in enumerate(turns)),
        constraints=stated, evidence=_evidence(records[-1]))


def _turn(raw: Mapping[str, Any], end: int) -> TraceTurn:
    return TraceTurn(raw["start"], raw["call_end"], end, raw["user"], "\n\n".join(raw["assistant"]),
                     raw["timestamp"])


def _state_constraints(messages: list[Message], turns: list[dict[str, Any]],
                       constraints: Sequence[tuple[int, str, str]]) -> tuple[Constraint, ...]:
    """Append each constraint sentence to its turn's user message; refuse a trace that already holds a phrase."""
    text = "\n".join(str(m.get("content") or "") for m in messages)
    stated = []
    for turn, sentence, phrase in constraints:
        if phrase in text:
            raise SystemExit(f"this trace already contains the constraint phrase {phrase!r} outside the "
                             "constraint; choose another --question")
        message = messages[turns[turn]["start"]]
        message["content"] = f"{message['content']}\n\n{sentence}"
        turns[turn]["user"] = message["content"]
        stated.append(Constraint(phrase, sentence, turn))
    return tuple(stated)


def _evidence(record: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each answer session's has_answer turns (all its turns when none is marked)."""
    out = {}
    for sid in record["answer_session_ids"]:
        session = record["haystack_sessions"][record["haystack_session_ids"].index(sid)]
        marked = [t["content"] for t in session if t.get("has_answer")]
        out[sid] = tuple(marked or [t["content"] for t in session if t["content"].strip()])
    return out
