"""The task tier: scratch items of one task (and its sub-tasks) that expire, offload and end with it."""

from memory.task.model import KINDS, AddedItem, Page, TaskItem
from memory.task.store import TaskMemory

__all__ = ["KINDS", "AddedItem", "Page", "TaskItem", "TaskMemory"]
