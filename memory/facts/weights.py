"""The shipped models' files, read one way: a TOML description naming an .npz of weights and its digest.

The clause detector and the span tagger are trained offline (bench/) and ship as two files each; a description and
weights rebuilt apart, a damaged file or an unknown version stop start-up with a ConfigError that says which script
rebuilds them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory.config import read_toml
from memory.errors import ConfigError
from memory.facts.rules import LANGS

__all__ = ["check_thresholds", "read_described", "weights_digest"]


def read_described(path: str | Path, *, keys: Collection[str], arrays: Sequence[str],
                   script: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The description at `path` (version 1, only `keys`) and the arrays of the weights file it names, checked
    against its `weights_sha256`; `script` is the module that rebuilds them, named in every error."""
    path = Path(path)
    meta = read_toml(path, missing=f"{path}: file not found; build it with `python -m {script}`",
                     invalid=f"{path}: not valid TOML ({{error}}); rebuild it with `python -m {script}`")
    unknown = set(meta) - set(keys)
    if unknown or meta.get("version") != 1:
        raise ConfigError(f"{path}: expected version = 1 and only the keys {sorted(keys)}; got version "
                          f"{meta.get('version')!r} and unknown keys {sorted(unknown)}")
    weights = path.with_name(str(meta.get("weights", "")))
    try:
        with np.load(weights, allow_pickle=False) as stored:
            found = {name: stored[name] for name in arrays}
    except (OSError, KeyError, ValueError) as exc:
        raise ConfigError(f"{weights}: unreadable weights ({exc}); expected an .npz with {list(arrays)}, rebuild it "
                          f"with `python -m {script}`") from None
    if weights_digest(found, arrays) != meta.get("weights_sha256"):
        raise ConfigError(f"{weights} does not match {path.name} (weights_sha256 differs): one was rebuilt without "
                          f"the other; rerun `python -m {script}`")
    return meta, found


def weights_digest(arrays: Mapping[str, np.ndarray], names: Sequence[str]) -> str:
    """SHA-256 over the named arrays' contents, in that order (not the .npz bytes, which carry zip timestamps)."""
    digest = hashlib.sha256()
    for name in names:
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def check_thresholds(thresholds: Mapping[str, Any], where: str) -> dict[str, float]:
    """A probability in (0, 1] for each language; ConfigError naming `where` otherwise."""
    if set(thresholds) != set(LANGS) or not all(
            isinstance(v, (int, float)) and 0.0 < v <= 1.0 for v in thresholds.values()):
        raise ConfigError(f"{where} must give each of {list(LANGS)} a probability in (0, 1], "
                          f"got {dict(thresholds)}")
    return {lang: float(thresholds[lang]) for lang in LANGS}
