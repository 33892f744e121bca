"""An optional model summariser for compaction: an OpenAI-compatible chat endpoint writes the brief, and the
extractive summary (memory.context.summary) is the floor it must keep.

The model is given the span and the extractive sections; its text is used only when every *User constraints*,
*Key data* and *References* item of the extractive summary appears in it verbatim (whitespace aside), or can be
appended to it, and the whole fits the budget. Otherwise, and whenever the endpoint fails (down, slow, an error
status, an answer that is not chat-completions JSON, an empty answer), the extractive summary is returned with a
warning: compaction never fails because an optional model does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.bullet import clean
from memory.config import SummariserConfig
from memory.context.messages import Message
from memory.context.summary import Summary, heading, section
from memory.tokens import TokenCounter

__all__ = ["ModelSummariser"]

# The sections whose items the model must keep verbatim; each entry names an item the way a warning counts it.
_KEPT = {"User constraints": ("user constraint", "user constraints"),
         "Key data": ("identifier", "identifiers"),
         "References": ("reference", "references")}
# The span goes to a model with a context window of its own: a long tool result is cut to its head, and a span
# over the total keeps its first and last messages, so a huge history cannot make a huge (slow, costly, refused)
# request. What must survive is in the extractive facts, which are always sent whole.
_MESSAGE_TOKENS = 1_000
_SPAN_TOKENS = 16_000
_THINKING = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)  # reasoning models put their thoughts first
_END_PUNCTUATION = ".。!！?？;；"

_INSTRUCTION = """You compact an AI agent's conversation history. Write a brief the next agent can work from \
without the original messages: what the user wants and the constraints they set, what was decided, what was done \
and its results, and what is still open (pending steps, errors). Use Markdown sections headed "### ", in this \
order: User constraints, Open, Decisions, Done, Key data, References; leave out a section with nothing in it.
Every item listed under User constraints, Key data and References in the facts must appear in your brief exactly \
as written, character for character: do not translate, reword, shorten or reformat them (file paths, URLs, ids, \
numbers, amounts, dates, versions). Write in the language of the conversation (English or Chinese). Do not invent \
anything. Keep the brief under {target} tokens; answer with the brief only."""


class ModelSummariser:
    """Summaries written by a chat model, checked against the extractive summary they replace."""

    def __init__(self, config: SummariserConfig, counter: TokenCounter) -> None:
        self.config = config
        self.counter = counter
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.name = f"model:{config.model}"

    def summarise(self, messages: Sequence[Message], extractive: Summary, budget: int) -> tuple[Summary, list[str]]:
        """The model's summary of `messages` when it keeps what the extractive pass found, else the extractive one;
        plus warnings (sentences a person understands) saying what happened."""
        if not messages:
            return extractive, []
        header = heading(extractive.first, extractive.last)
        reply = self._ask(messages, extractive, budget, header)
        if isinstance(reply, _Failure):
            return extractive, [f"{reply.cause}; the extractive summary was used"]
        body, warnings = _keep_extractive(reply, extractive)
        text = f"{header}\n{body}"
        tokens = self.counter.count(text)
        if tokens > budget:
            added = " with the extractive items it dropped" if warnings else ""
            return extractive, [f"the summary from {self.name}{added} came to {tokens} tokens, over the budget of "
                                f"{budget}; the extractive summary was used"]
        return Summary(text, tokens, extractive.sections, extractive.first, extractive.last), warnings

    def _ask(self, messages: Sequence[Message], extractive: Summary, budget: int, header: str) -> str | _Failure:
        """The model's text, or why there is none."""
        target = max(1, budget - self.counter.count(header + "\n"))
        body = {
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": _INSTRUCTION.format(target=target)},
                {"role": "user", "content": self._prompt(messages, extractive)},
            ],
            "temperature": 0,
            "max_tokens": budget,
        }
        headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
        where = f"the summariser at {self.url}"
        import httpx  # here: the summariser is optional, and a process that never calls it need not load httpx

        try:
            response = httpx.post(self.url, json=body, headers=headers, timeout=self.config.timeout_s)
        except httpx.TimeoutException:
            return _Failure(f"{where} did not answer in {self.config.timeout_s:g} s")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            return _Failure(f"{where} could not be reached ({type(exc).__name__}: {exc})")
        if response.status_code != 200:
            said = " ".join(response.text.split())[:200]
            return _Failure(f"{where} answered HTTP {response.status_code}" + (f" ({said})" if said else ""))
        try:
            choice = response.json()["choices"][0]
            content = _content(choice["message"]["content"])
        except (json.JSONDecodeError, UnicodeDecodeError, LookupError, TypeError, ValueError):
            return _Failure(f"{where} answered with something other than a chat completion "
                            "(expected JSON with choices[0].message.content)")
        if choice.get("finish_reason") == "length":
            return _Failure(f"{where} was cut off at max_tokens ({budget}) before its summary ended")
        content = _THINKING.sub("", content).strip()
        if not content:
            return _Failure(f"{where} answered with an empty summary")
        return content

    def _prompt(self, messages: Sequence[Message], extractive: Summary) -> str:
        """The span as "role: content" lines, then the extractive sections as the facts to keep."""
        lines = [self._line(m) for m in messages]
        span = "\n".join(_cap(lines, self.counter))
        facts = [section(name, items) for name, items in extractive.sections.items() if items]
        must = ", ".join(name for name in _KEPT if extractive.sections.get(name))
        rule = f"Keep every item of {must} verbatim." if must else "Keep every identifier verbatim."
        return (f"Conversation (messages[{extractive.first}] to messages[{extractive.last}]):\n{span}\n\n"
                f"Facts found in it. {rule}\n" + "\n".join(facts))

    def _line(self, message: Message) -> str:
        text = message.content
        calls = "; ".join(f"calls {c.name}({c.arguments})" for c in message.tool_calls)
        text = f"{text} [{calls}]" if text and calls else text or calls
        cut = self.counter.head(text, _MESSAGE_TOKENS)
        if cut != text:
            cut += " […cut]"
        return f"{message.role}: {' '.join(cut.split())}"


@dataclass(frozen=True)
class _Failure:
    """Why the endpoint gave no usable summary (a sentence)."""

    cause: str


def _content(raw: Any) -> str:
    """The message content as text (some servers answer a list of text parts)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        return "".join(p["text"] for p in raw if isinstance(p, dict) and isinstance(p.get("text"), str))
    raise TypeError(f"content is {type(raw).__name__}")


def _keep_extractive(text: str, extractive: Summary) -> tuple[str, list[str]]:
    """The model's text with every kept-section item it lacks appended under its section, and what was added."""
    seen = clean(text)  # whitespace folded; plain substrings, as Chinese has no word boundaries
    blocks, warnings = [text], []
    for name, (one, many) in _KEPT.items():
        missing = [item for item in extractive.sections.get(name, ()) if clean(item).rstrip(_END_PUNCTUATION)
                   not in seen]
        if missing:
            blocks.append(section(name, missing))
            it = "it" if len(missing) == 1 else "them"
            warnings.append(f"the model summary dropped {len(missing)} {one if len(missing) == 1 else many}; "
                            f"the extractive {name} was kept for {it}")
    return "\n".join(blocks), warnings


def _cap(lines: list[str], counter: TokenCounter) -> list[str]:
    """The lines within _SPAN_TOKENS: all of them, or the first and the last with a note of how many were left out."""
    costs = [counter.count(line) + 1 for line in lines]
    if sum(costs) <= _SPAN_TOKENS:
        return lines
    head: list[str] = []
    tail: list[str] = []
    spent, i, j = 0, 0, len(lines) - 1
    while i <= j:  # alternate ends, so both the task's start and its latest state survive
        take_head = len(head) <= len(tail)
        k = i if take_head else j
        if spent + costs[k] > _SPAN_TOKENS:
            break
        spent += costs[k]
        if take_head:
            head.append(lines[i])
            i += 1
        else:
            tail.append(lines[j])
            j -= 1
    left_out = j - i + 1
    return [*head, f"[… {left_out} messages left out …]", *reversed(tail)]
