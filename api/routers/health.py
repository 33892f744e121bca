"""GET /healthz and GET /metrics."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from api.deps import MemoryDep, MetricsDep

router = APIRouter(tags=["service"])


@router.get("/healthz")
def healthz(memory: MemoryDep) -> dict[str, Any]:
    """Liveness plus the model, the store location and record counts."""
    return {"status": "ok", **dataclasses.asdict(memory.health())}


@router.get("/metrics", response_class=Response)
def metrics(registry: MetricsDep) -> Response:
    """Prometheus text format: requests, latency histograms, recall tokens per tier, omitted items by reason."""
    return Response(registry.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
