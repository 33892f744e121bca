"""API keys and the namespaces each may use (patterns with `*`, "*" alone meaning every namespace)."""

from __future__ import annotations

import fnmatch
import hmac
from collections.abc import Mapping

from memory.errors import AuthError, NotFoundError

__all__ = ["KeyRing"]


class KeyRing:
    """Checks a presented key and whether it may use a namespace; empty means no auth (loopback only)."""

    def __init__(self, keys: Mapping[str, tuple[str, ...]]) -> None:
        self._keys = dict(keys)

    @property
    def enabled(self) -> bool:
        """True when keys are configured and every request must present one."""
        return bool(self._keys)

    def patterns(self, presented: str | None) -> tuple[str, ...]:
        """The namespace patterns of a presented key; AuthError if it is missing or unknown."""
        if not self.enabled:
            return ("*",)
        if not presented:
            raise AuthError("this service needs an API key: send the header 'Authorization: Bearer <key>'")
        for key, patterns in self._keys.items():
            if hmac.compare_digest(key.encode(), presented.encode()):
                return patterns
        raise AuthError("the API key sent is not configured on this service; check the key")

    @staticmethod
    def everything(patterns: tuple[str, ...]) -> bool:
        """True if these patterns grant every namespace ("*"): what store-wide figures need."""
        return "*" in patterns

    @staticmethod
    def allows(patterns: tuple[str, ...], namespace: str) -> bool:
        """True if `namespace` matches one of `patterns`."""
        return any(p == "*" or fnmatch.fnmatchcase(namespace, p) for p in patterns)

    def check(self, patterns: tuple[str, ...], namespace: str) -> None:
        """Raise NotFoundError (as if the namespace did not exist) when the key may not use it."""
        if not self.allows(patterns, namespace):
            raise NotFoundError(f"namespace {namespace!r} does not exist")
