"""Context assembly (issue 18, in progress): an agent's whole turn fitted into its window.

So far: the budget formula (memory.context.budget); the chat messages an agent holds, checked and grouped so
that a tool call and its answers move together (memory.context.messages); old or oversized tool results put
behind a reference (memory.context.tool_results); earlier turns' ephemeral messages dropped
(memory.context.ephemeral); tool-output processors (memory.context.processors: JSON lists, row sets, HTML, logs).
"""

from memory.context.budget import Budget, budget
from memory.context.ephemeral import Dropped, drop_ephemeral
from memory.context.messages import Message, ToolCall, Unit, count_tokens, group, message_tokens, parse_messages
from memory.context.tool_results import ToolAction, prune_tool_results

__all__ = [
    "Budget", "Dropped", "Message", "ToolAction", "ToolCall", "Unit", "budget", "count_tokens", "drop_ephemeral",
    "group", "message_tokens", "parse_messages", "prune_tool_results",
]
