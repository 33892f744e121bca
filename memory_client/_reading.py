"""The read tool a fitted turn may offer (`read_tool=True`): a model's call to it read and answered, sans IO.

The service names everything it set aside by a task item key that holds its task (`<task_id>/r<n>`); a call
`memory_read {"key": ..., "page": n}` is answered with that page of the item and, while pages remain, a line saying
how to ask for the next one. `Client.answer_read` / `AsyncClient.answer_read` make the request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_client._records import TaskPage

__all__ = ["READ_TOOL", "ReadCall", "page_text", "read_call"]

READ_TOOL = "memory_read"
PAGE_TOKENS = 2000  # what one page of a set-aside text costs the model, at most


@dataclass(frozen=True)
class ReadCall:
    """One call of the read tool: its id, the task and item it reads, the page asked for; or why it cannot be
    answered (`problem`)."""

    call_id: str
    task_id: str
    key: str
    page: int
    problem: str | None = None


def read_call(call: Mapping[str, Any]) -> ReadCall:
    """A tool call in OpenAI's form (`{"id", "function": {"name", "arguments"}}`) or LangChain's (`{"id", "name",
    "args"}`) read as a read of a set-aside text; a ValueError when it is a call of another tool."""
    function = call.get("function")
    name = function.get("name") if isinstance(function, Mapping) else call.get("name")
    if name != READ_TOOL:
        raise ValueError(f"this is a call of {name!r}, not of {READ_TOOL}")
    raw = function.get("arguments", "{}") if isinstance(function, Mapping) else call.get("args", {})
    call_id = str(call.get("id") or "")
    try:
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (ValueError, TypeError):
        return ReadCall(call_id, "", "", 1, f"{READ_TOOL} needs JSON arguments such as {{\"key\": \"t-42/r7\"}}")
    key, page = args.get("key"), args.get("page", 1)
    task, sep, number = key.rpartition("/r") if isinstance(key, str) else ("", "", "")
    if not sep or not task or not number.isdigit():
        return ReadCall(call_id, "", "", 1, f"{READ_TOOL} needs the key of a set-aside text, such as "
                                            f"\"t-42/r7\", got {str(key)[:80]!r}")
    key = str(key)
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        return ReadCall(call_id, task, key, 1, f"{READ_TOOL}'s page must be a whole number from 1, got {page!r}")
    return ReadCall(call_id, task, key, page)


def page_text(page: TaskPage) -> str:
    """The page as the model reads it: its text and, while pages remain, how to ask for the next."""
    if page.page < page.pages:
        return (f"{page.text}\n\n[page {page.page} of {page.pages}: call {READ_TOOL} with key {page.key!r} and "
                f"page {page.page + 1} for the next]")
    return page.text
