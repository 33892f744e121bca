"""Context assembly: an agent's whole turn fitted into its window (memory.context.assemble gives the steps).

The parts: the budget formula (budget); the chat messages, checked and grouped so that a tool call and its
answers move together (messages); how the budget is shared (allocation); tool schemas, counted and chosen
(tools); old or oversized tool results behind a reference (tool_results); earlier turns' ephemeral messages
dropped (ephemeral); tool-output processors (processors); the constraints block (constraints). For compaction
(issue 19, not yet part of assembly): identifiers kept verbatim (identifiers) and the extractive summary (summary).
"""

from memory.context.assemble import Assembler
from memory.context.budget import Budget, budget
from memory.context.ephemeral import Dropped, drop_ephemeral
from memory.context.messages import Message, ToolCall, Unit, count_tokens, group, message_tokens, parse_messages
from memory.context.model import Action, ContextReport, ContextRequest, ContextResult
from memory.context.tool_results import ToolAction, prune_tool_results

__all__ = [
    "Action",
    "Assembler",
    "Budget",
    "ContextReport",
    "ContextRequest",
    "ContextResult",
    "Dropped",
    "Message",
    "ToolAction",
    "ToolCall",
    "Unit",
    "budget",
    "count_tokens",
    "drop_ephemeral",
    "group",
    "message_tokens",
    "parse_messages",
    "prune_tool_results",
]
