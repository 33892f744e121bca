"""GET /healthz and GET /metrics."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from api.deps import AccessDep, MemoryDep, MetricsDep, VisitorDep
from api.errors import ERROR_RESPONSES

router = APIRouter(tags=["service"])


@router.get("/healthz")
def healthz(memory: MemoryDep, visitor: VisitorDep) -> dict[str, Any]:
    """Liveness; with a valid key (or without keys configured) the model and record counts too: store-wide, with
    the store's location, for a key that may use every namespace; of its own namespaces for any other key."""
    if visitor is None:
        return {"status": "ok"}
    if visitor.everything:
        return {"status": "ok", **dataclasses.asdict(memory.health())}
    health = memory.health(within=visitor.allows)
    return {"status": "ok", "backend": health.backend, "model": health.model, "dimension": health.dimension,
            "tokenizer": health.tokenizer, "counts": health.counts}


@router.get("/metrics", response_class=Response, responses={401: ERROR_RESPONSES[401]})
def metrics(registry: MetricsDep, access: AccessDep) -> Response:
    """Prometheus text format: requests, latency, recall tokens and omitted items, context tokens and actions.

    With keys configured it needs a key for every namespace: the figures are the whole service's.
    """
    access.require_everything("/metrics")
    return Response(registry.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
