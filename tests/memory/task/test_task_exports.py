"""The package's __all__ is honest: every name exists and each public module documents itself."""

from __future__ import annotations

import importlib

import pytest

import memory.task

MODULES = ["memory.task", "memory.task.model", "memory.task.policy", "memory.task.ranking", "memory.task.pages",
           "memory.task.tree", "memory.task.memory", "memory.task.summaries"]


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist_and_are_documented(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__
    for public in module.__all__:
        obj = getattr(module, public)
        if callable(obj):
            assert obj.__doc__, f"{name}.{public} has no docstring"


def test_package_exports_the_tier() -> None:
    assert set(memory.task.__all__) == {"KINDS", "MAX_TTL_S", "TASK_ID_PATTERN", "AddedItem", "Page", "SummaryVersion",
                                        "TaskItem", "TaskMemory"}
