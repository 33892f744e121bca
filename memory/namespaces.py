"""Namespace names: what a valid one looks like."""

from __future__ import annotations

import re

from memory.errors import ValidationError

__all__ = ["check_namespace"]

_NAMESPACE = re.compile(r"[A-Za-z0-9_.:@\-]{1,128}")


def check_namespace(namespace: object) -> str:
    """Return `namespace` if it is 1-128 characters of letters, digits and _ . : @ -, else raise."""
    if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
        raise ValidationError(
            "namespace must be 1-128 characters of letters, digits and _ . : @ - "
            f"(for example 'u1' or 'alice-project'), got {str(namespace)[:80]!r}"
        )
    return namespace
