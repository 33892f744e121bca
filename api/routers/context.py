"""/v1/context: an agent's whole turn fitted into its window."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from api.deps import AccessDep, MemoryDep, MetricsDep
from api.schemas.context import ContextPublic, ContextRequest

router = APIRouter(prefix="/v1", tags=["context"])


@router.post("/context", response_model=ContextPublic)
def context(body: ContextRequest, memory: MemoryDep, access: AccessDep, metrics: MetricsDep) -> Response:
    """The messages and tools to send this turn, inside `window` tokens, and a report of where every token went."""
    namespace = access.namespace(body.namespace)
    result = memory.context(body.turn(namespace))
    report = result.report
    for category, tokens in report.tokens.items():
        if category != "total":
            metrics.context_tokens.labels(category).inc(tokens)
    for action in report.actions:
        metrics.context_actions.labels(action.kind).inc()
    metrics.prefix_seen(namespace, report.task_id, report.prefix_hash)
    # Serialised in one pass, as /v1/recall is (see there); response_model still documents the body.
    return Response(ContextPublic.of(result).model_dump_json(), media_type="application/json")
