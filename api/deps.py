"""FastAPI dependencies: the Memory facade, the caller's namespace rights (or none), and the metrics registry."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import Depends, Header, Path, Query, Request

from api.auth import KeyRing
from api.metrics import Metrics
from api.schemas.base import NAMESPACE_RULE, TASK_ID_RULE
from memory.errors import AuthError
from memory.namespaces import check_namespace
from memory.service import Memory

__all__ = ["Access", "AccessDep", "MemoryDep", "MetricsDep", "NamespacePath", "NamespaceQuery", "TaskIdPath",
           "VisitorDep"]

# Route parameters, documented as the bodies' fields are (api.schemas.base); here, beside the other request
# plumbing, so the schemas import pydantic only (the CLI prints through them without loading FastAPI).
NamespaceQuery = Annotated[str, Query(json_schema_extra=NAMESPACE_RULE)]
NamespacePath = Annotated[str, Path(json_schema_extra=NAMESPACE_RULE)]
TaskIdPath = Annotated[str, Path(json_schema_extra=TASK_ID_RULE)]


# The dependencies are `async def` although nothing in them waits: FastAPI runs a plain `def` dependency in its
# thread pool, a thread hop per dependency per request (three for a recall) for an attribute read.


async def _memory(request: Request) -> Memory:
    return cast(Memory, request.app.state.memory)


async def _metrics(request: Request) -> Metrics:
    return cast(Metrics, request.app.state.metrics)


class Access:
    """The namespaces the caller's key may use; `namespace(ns)` validates and checks one."""

    def __init__(self, keyring: KeyRing, patterns: tuple[str, ...]) -> None:
        self._keyring = keyring
        self._patterns = patterns

    def namespace(self, namespace: object) -> str:
        """Validate `namespace` and make sure this key may use it (404 as if absent otherwise)."""
        checked = check_namespace(namespace)
        self._keyring.check(self._patterns, checked)
        return checked

    def allows(self, namespace: str) -> bool:
        """True when this key may use `namespace`."""
        return self._keyring.allows(self._patterns, namespace)

    @property
    def everything(self) -> bool:
        """True when this key may use every namespace (or no keys are configured): it may see store-wide figures."""
        return self._keyring.everything(self._patterns)

    def require_everything(self, what: str) -> None:
        """Raise AuthError unless this key may use every namespace (`what` names what the caller asked for)."""
        if not self.everything:
            raise AuthError(f"{what} covers every namespace, so it needs a key configured for \"*\"; the key sent "
                            "is limited to some namespaces: use an operator's key")


async def _access(request: Request, authorization: Annotated[str | None, Header()] = None) -> Access:
    keyring: KeyRing = request.app.state.keyring
    token = None
    if authorization:
        scheme, _, value = authorization.partition(" ")
        token = value.strip() if scheme.lower() == "bearer" else None
    return Access(keyring, keyring.patterns(token))


async def _visitor(request: Request, authorization: Annotated[str | None, Header()] = None) -> Access | None:
    """The caller's Access, or None when keys are configured and it sent none that is valid (liveness only)."""
    try:
        return await _access(request, authorization)
    except AuthError:
        return None


MemoryDep = Annotated[Memory, Depends(_memory)]
AccessDep = Annotated[Access, Depends(_access)]
VisitorDep = Annotated[Access | None, Depends(_visitor)]
MetricsDep = Annotated[Metrics, Depends(_metrics)]
