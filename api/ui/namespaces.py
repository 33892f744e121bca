"""/ui/fragments/namespaces: every namespace the key may see, with its counts per tier."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from api.deps import AccessDep, MemoryDep
from api.ui.render import guard, render

router = APIRouter(prefix="/ui/fragments", include_in_schema=False, dependencies=[Depends(guard)])


@router.get("/namespaces")
def namespaces(request: Request, memory: MemoryDep, access: AccessDep) -> HTMLResponse:
    """The namespaces that hold something (those of the key only, for a key limited to some)."""
    counted = memory.namespaces(None if access.everything else access.allows)
    return render(request, "namespaces.html", namespaces=counted, everything=access.everything)
