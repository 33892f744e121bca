"""The task tier: scratch items of one task (and its sub-tasks) that expire, offload and end with it, and the
task's versioned compaction summaries."""

from memory.task.memory import TaskMemory
from memory.task.model import KINDS, AddedItem, Page, SummaryVersion, TaskItem
from memory.task.policy import MAX_TTL_S, TASK_ID_PATTERN

__all__ = ["KINDS", "MAX_TTL_S", "TASK_ID_PATTERN", "AddedItem", "Page", "SummaryVersion", "TaskItem", "TaskMemory"]
