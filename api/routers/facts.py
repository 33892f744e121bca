"""/v1/facts: extract-and-store, pin, list, history, unpin, delete."""

from __future__ import annotations

from fastapi import APIRouter, Query

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.schemas.facts import (
    FactChangePublic,
    FactListPublic,
    FactObserve,
    FactPin,
    FactPublic,
)

router = APIRouter(prefix="/v1/facts", tags=["facts"])


@router.post("", response_model=FactChangePublic)
def observe(body: FactObserve, memory: MemoryDep, access: AccessDep) -> FactChangePublic:
    """Extract facts from a user message by rules and store them (superseding older versions of a key); every
    sentence of the message gets one outcome: stored, superseded or ignored with the reason."""
    namespace = access.namespace(body.namespace)
    return FactChangePublic.of(memory.facts.observe(namespace, body.text, scope=body.scope, source=body.source,
                                                    task_id=body.task_id))


@router.post("/pin", response_model=FactChangePublic)
def pin(body: FactPin, memory: MemoryDep, access: AccessDep) -> FactChangePublic:
    """Pin a constraint so it is in every recall: `text`, or `key` and `value`."""
    namespace = access.namespace(body.namespace)
    change = memory.facts.pin(namespace, text=body.text, key=body.key, value=body.value, scope=body.scope,
                              source=body.source)
    return FactChangePublic.of(change)


@router.get("", response_model=FactListPublic)
def list_facts(memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
               pinned: bool | None = Query(default=None)) -> FactListPublic:
    """Current facts of a namespace, pinned first."""
    records = memory.facts.list_facts(access.namespace(namespace), pinned=pinned)
    return FactListPublic(facts=[FactPublic.of(r) for r in records])


@router.get("/{fact_id}/history", response_model=FactListPublic)
def history(fact_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> FactListPublic:
    """Every version of the fact's key, oldest first."""
    records = memory.facts.history(access.namespace(namespace), fact_id)
    return FactListPublic(facts=[FactPublic.of(r) for r in records])


@router.post("/{fact_id}/unpin", response_model=FactPublic)
def unpin(fact_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> FactPublic:
    """Unpin the fact (a new version); it is then recalled only when relevant."""
    return FactPublic.of(memory.facts.set_pinned(access.namespace(namespace), fact_id, pinned=False))


@router.post("/{fact_id}/pin", response_model=FactPublic)
def pin_existing(fact_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> FactPublic:
    """Pin an existing fact (a new version)."""
    return FactPublic.of(memory.facts.set_pinned(access.namespace(namespace), fact_id, pinned=True))


@router.delete("/{fact_id}")
def delete(fact_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> dict[str, int]:
    """Hard-delete the fact and every version of its key."""
    return {"deleted": memory.facts.delete(access.namespace(namespace), fact_id)}


@router.delete("")
def delete_all(memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> dict[str, int]:
    """Hard-delete every fact of a namespace."""
    return {"deleted": memory.facts.delete_namespace(access.namespace(namespace))}
