"""The read tool a turn may offer (`read_tool`): the agent reads back, page by page, what the context set aside.

Everything set aside is a task item whose key names its task (`<task_id>/r<n>`), so a call needs only the key; the
Python client, the LangChain middleware and MCP answer it (GET /v1/tasks/{task_id}/items/{key}?page=).
"""

from __future__ import annotations

from typing import Any

from memory.errors import ValidationError

__all__ = ["READ_TOOL", "READ_TOOL_SCHEMA", "task_of"]

READ_TOOL = "memory_read"
READ_TOOL_SCHEMA: dict[str, Any] = {"type": "function", "function": {
    "name": READ_TOOL,
    "description": "Read back text that was set aside to fit the context window: a tool result or earlier "
                   "messages named by a reference such as \"task item t-42/r7\". Returns one page; the end of the "
                   "text says how to ask for the next page.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["key"], "properties": {
        "key": {"type": "string", "description": "the task item named in the context, e.g. t-42/r7"},
        "page": {"type": "integer", "minimum": 1, "description": "which page (default 1)"}}}}}


def task_of(key: str) -> str:
    """The task a set-aside item's key belongs to ("t-42/r7" -> "t-42")."""
    task, sep, number = key.rpartition("/r")
    if not sep or not task or not number.isdigit():
        raise ValidationError(f"key must name a set-aside text such as 't-42/r7', got {key[:80]!r}")
    return task
