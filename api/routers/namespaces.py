"""/v1/namespaces/{namespace}: forget a whole namespace."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import AccessDep, MemoryDep, NamespacePath

router = APIRouter(prefix="/v1/namespaces", tags=["namespaces"])


@router.delete("/{namespace}")
def delete_namespace(namespace: NamespacePath, memory: MemoryDep, access: AccessDep) -> dict[str, int]:
    """Delete every fact, task item, document and vector of the namespace."""
    deleted = memory.delete_namespace(access.namespace(namespace))
    return {"facts": deleted.facts, "task_items": deleted.task_items, "documents": deleted.documents}
