"""Context assembly (issue 18, in progress): an agent's whole turn fitted into its window.

So far: the budget formula (memory.context.budget), and the chat messages an agent holds, checked and grouped so
that a tool call and its answers move together (memory.context.messages).
"""

from memory.context.budget import Budget, budget
from memory.context.messages import Message, ToolCall, Unit, count_tokens, group, message_tokens, parse_messages

__all__ = [
    "Budget", "Message", "ToolCall", "Unit", "budget", "count_tokens", "group", "message_tokens", "parse_messages",
]
