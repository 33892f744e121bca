"""/v1/recall: the per-turn call."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from api.deps import AccessDep, MemoryDep, MetricsDep
from api.schemas.recall import RecallPublic, RecallRequest

router = APIRouter(prefix="/v1", tags=["recall"])


@router.post("/recall", response_model=RecallPublic)
def recall(body: RecallRequest, memory: MemoryDep, access: AccessDep, metrics: MetricsDep) -> Response:
    """What the agent must know this turn: pinned facts, task items, experience, inside `budget` tokens."""
    namespace = access.namespace(body.namespace)
    filters = body.filters.model_dump(exclude_none=True) if body.filters else None
    result = memory.recall(namespace, body.query, body.budget, task_id=body.task_id, filters=filters,
                           min_score=body.min_score)
    for item in result.items:
        metrics.tokens.labels(item.snippet.tier).inc(item.tokens)
    for reason in ("below_threshold", "over_budget", "duplicate"):
        metrics.omitted.labels(reason).inc(getattr(result.omitted, reason))
    # Serialised here in one pass: handing FastAPI the model makes it dump, re-validate and dump it again, paid
    # on every turn (bench/recall_speed.py times REST recall); response_model still documents the body.
    return Response(RecallPublic.of(result).model_dump_json(), media_type="application/json")
