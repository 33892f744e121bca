"""The client's public names and shape: `__all__` is exactly what it re-exports, the sync and async clients have the
same methods with the same signatures, and each method is one route of the route table (and back)."""

from __future__ import annotations

import dataclasses
import inspect

import memory_client
from memory_client import AsyncClient, Client
from memory_client._calls import ROUTES

LIFECYCLE = {"close", "base_url"}


def _methods(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_all_is_true_and_sorted() -> None:
    public = {name for name in vars(memory_client) if not name.startswith("_") and name[0].isupper()}
    assert set(memory_client.__all__) == public
    assert memory_client.__all__ == sorted(memory_client.__all__)


def test_every_public_name_has_a_docstring() -> None:
    for name in memory_client.__all__:
        assert getattr(memory_client, name).__doc__, name


def test_results_are_frozen_dataclasses_that_keep_the_raw_answer() -> None:
    results = [getattr(memory_client, n) for n in memory_client.__all__ if dataclasses.is_dataclass(
        getattr(memory_client, n))]
    assert len(results) > 30
    for cls in results:
        assert cls.__dataclass_params__.frozen, cls
        assert "raw" in {f.name for f in dataclasses.fields(cls)}, cls


def test_sync_and_async_clients_have_the_same_methods_and_signatures() -> None:
    assert _methods(Client) == _methods(AsyncClient)
    for name in _methods(Client) - {"base_url"}:
        sync, coro = getattr(Client, name), getattr(AsyncClient, name)
        assert inspect.iscoroutinefunction(coro), name
        assert not inspect.iscoroutinefunction(sync), name
        if name != "__init__":
            assert inspect.signature(sync) == inspect.signature(coro), name
            assert sync.__doc__ == coro.__doc__, name


# Helpers over a route: answer_read reads a set-aside text (GET /v1/tasks/{task_id}/items/{key}) for the read tool.
HELPERS = {"answer_read": "read_task_item"}


def test_each_method_is_one_route_and_each_route_one_method() -> None:
    assert set(ROUTES) == _methods(Client) - LIFECYCLE - set(HELPERS)
    assert set(HELPERS.values()) <= set(ROUTES)
    for name in ROUTES:
        assert getattr(Client, name).__doc__.startswith(f"{ROUTES[name].method} {ROUTES[name].template}"), name


def test_the_error_family_has_one_root() -> None:
    errors = [getattr(memory_client, n) for n in memory_client.__all__ if isinstance(getattr(memory_client, n), type)
              and issubclass(getattr(memory_client, n), BaseException)]
    assert len(errors) == 12
    assert all(issubclass(e, memory_client.MemoryClientError) for e in errors)
