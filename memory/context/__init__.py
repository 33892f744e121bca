"""Context assembly: an agent's whole turn fitted into its window (memory.context.assemble lists the steps).

One module per step over one turn (turn) and one budget plan (plan): the task followed (thread), the user's
constraints (observe, constraints), ephemeral messages (ephemeral), retrieval (retrieval), the tool schemas
(toolset, tools), the history (history: summaries, compaction, summary, identifiers, processors, tool_results,
offload) and the output (writer). Below them: the budget formula (budget), the chat messages checked, counted and
grouped so a call and its answers move together (messages), the shares (allocation) and the read tool (read_tool).
"""

from memory.context.allocation import PRESETS, SHARED
from memory.context.assemble import Assembler
from memory.context.budget import MAX_SAFETY_MARGIN, Budget, budget
from memory.context.ephemeral import Dropped, drop_ephemeral
from memory.context.messages import Message, ToolCall, Unit, count_tokens, group, message_tokens, parse_messages
from memory.context.model import Action, ActionKind, ContextReport, ContextRequest, ContextResult
from memory.context.processors import ALIASES, PROCESSORS
from memory.context.read_tool import READ_TOOL, READ_TOOL_SCHEMA, task_of
from memory.context.tool_results import ToolAction, prune_tool_results

__all__ = [
    "ALIASES",
    "MAX_SAFETY_MARGIN",
    "PRESETS",
    "PROCESSORS",
    "READ_TOOL",
    "READ_TOOL_SCHEMA",
    "SHARED",
    "Action",
    "ActionKind",
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
    "task_of",
]
