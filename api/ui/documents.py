"""/ui/fragments/documents: documents and conversation turns, a search laid open, one document's chunks, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.ui.render import FormField, guard, render, whole
from memory.experience import by_retriever
from memory.service import Memory

router = APIRouter(prefix="/ui/fragments/documents", include_in_schema=False, dependencies=[Depends(guard)])

SHOWN = 100  # rows of each list on one screen; `offset` pages on


def _documents(request: Request, memory: Memory, namespace: str, offset: int = 0, notice: str = "") -> HTMLResponse:
    # Each list read a screen at a time, so a namespace of many thousand turns costs the page no more than a few.
    listed = {kind: memory.experience.list_documents(namespace, kind=kind, limit=SHOWN, offset=offset)
              for kind in ("document", "memory")}
    return render(request, "documents.html", namespace=namespace, documents=listed["document"],
                  turns=listed["memory"], counts=memory.experience.count_documents(namespace), offset=offset,
                  shown=SHOWN, notice=notice)


@router.get("")
def documents(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
              offset: Annotated[int, Query(ge=0)] = 0) -> HTMLResponse:
    """The namespace's documents and its conversation turns, newest first, and the search box."""
    return _documents(request, memory, access.namespace(namespace), offset)


@router.post("/search")
def search(request: Request, memory: MemoryDep, access: AccessDep, namespace: FormField,
           query: FormField, k: FormField = "10") -> HTMLResponse:
    """The best chunks for the query, each with its fused score and each retriever's rank and score."""
    checked = access.namespace(namespace)
    explained = memory.experience.explain(checked, query, whole(k, "k") or 10)
    ranks = by_retriever(explained.dense, explained.lexical)
    return render(request, "search.html", namespace=checked, explained=explained, ranks=ranks)


@router.get("/chunks")
def chunks(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
           doc_id: str) -> HTMLResponse:
    """One document's record and its chunks in reading order, with their token counts."""
    checked = access.namespace(namespace)
    document = memory.experience.get_document(checked, doc_id)
    return render(request, "chunks.html", namespace=checked, document=document,
                  chunks=memory.experience.chunks(checked, doc_id))


@router.post("/delete")
def delete(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
           doc_id: str) -> HTMLResponse:
    """Remove the document everywhere (SQLite, the lexical index, the vectors), then the lists again."""
    checked = access.namespace(namespace)
    memory.experience.delete_document(checked, doc_id)
    return _documents(request, memory, checked, notice=f"Deleted {doc_id}.")
