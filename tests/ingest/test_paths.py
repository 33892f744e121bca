"""Folder walks, skipped entries and the path-traversal guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.loaders import FoundPath, iter_paths, safe_path
from memory.errors import NotFoundError, ValidationError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / ".git").mkdir()
    for name in (
        "b.md",
        "a.txt",
        "image.png",
        ".hidden.txt",
        "sub/c.html",
        "sub/deeper/d.jsonl",
        ".git/config.txt",
        "README",
    ):
        (root / name).write_text("x", encoding="utf-8")
    return root


def test_walk_skips_hidden_and_unsupported(tree: Path) -> None:
    found = list(iter_paths([tree]))
    loaded = [f.path.relative_to(tree).as_posix() for f in found if f.skip_reason is None]
    skipped = {f.path.relative_to(tree).as_posix(): f.skip_reason for f in found if f.skip_reason}
    assert loaded == ["a.txt", "b.md", "sub/c.html", "sub/deeper/d.jsonl"]
    assert skipped == {
        ".git": "hidden",
        ".hidden.txt": "hidden",
        "README": "unsupported suffix '(none)'",
        "image.png": "unsupported suffix '.png'",
    }


def test_named_files_and_missing_paths(tree: Path) -> None:
    found = list(iter_paths([tree / "a.txt", tree / "image.png", str(tree / ".hidden.txt")]))
    assert found == [
        FoundPath(tree / "a.txt", name="a.txt"),  # a file argument is named by its own name, not its path
        FoundPath(tree / "image.png", "unsupported suffix '.png'"),
        FoundPath(tree / ".hidden.txt", name=".hidden.txt"),  # named on purpose, so read
    ]
    with pytest.raises(NotFoundError, match="does not exist"):
        list(iter_paths([tree / "nope"]))


def test_symlinks(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    (tree / "link.txt").symlink_to(outside)
    (tree / "linked_dir").symlink_to(tree / "sub", target_is_directory=True)
    reasons = {f.path.name: f.skip_reason for f in iter_paths(["."], root=tree)}
    assert reasons["link.txt"] == f"links outside the allowed folder {tree.resolve()}"
    assert reasons["linked_dir"] == "symbolic link to a folder (not followed)"
    assert reasons["a.txt"] is None


@pytest.mark.parametrize("escape", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd", "../docs2/x.txt"])
def test_safe_path_rejects_traversal(tree: Path, escape: str) -> None:
    with pytest.raises(ValidationError, match="outside the allowed folder"):
        safe_path(escape, tree)
    with pytest.raises(ValidationError, match="outside the allowed folder"):
        list(iter_paths([escape], root=tree))


def test_safe_path_accepts_paths_inside(tree: Path) -> None:
    assert safe_path("sub/c.html", tree) == (tree / "sub" / "c.html").resolve()
    assert safe_path(tree / "a.txt", tree) == (tree / "a.txt").resolve()
    assert safe_path("sub/../a.txt", tree) == (tree / "a.txt").resolve()
    assert safe_path(tree / "a.txt") == (tree / "a.txt").resolve()
    with pytest.raises(ValidationError, match="NUL byte"):
        safe_path("a\x00.txt", tree)
