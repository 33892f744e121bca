"""The public names: memory/__init__.py's __all__ is exactly what it re-exports, and each is documented."""

from __future__ import annotations

import memory


def test_all_is_true_and_sorted() -> None:
    public = {name for name in dir(memory) if (not name.startswith("_") and name[0].isupper()) or
              name in ("load_config",)}
    assert set(memory.__all__) == public
    assert memory.__all__ == sorted(memory.__all__)


def test_every_public_name_has_a_docstring() -> None:
    for name in memory.__all__:
        assert getattr(memory, name).__doc__, name
