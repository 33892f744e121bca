"""/ui/fragments/recall and /ui/fragments/context: run a recall or pack a pasted turn exactly as an agent would,
and lay the answer open (rendered block, token bars, each item's why, what was left out, the actions taken)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.errors import json_problem
from api.schemas.context import ContextRequest
from api.schemas.recall import RecallRequest
from api.ui.render import FormField, guard, number, optional, render, validated, whole
from api.ui.views import CONTEXT_CATEGORIES, context_bar, message_text, omitted_rows, recall_bar, why_parts
from memory.errors import ValidationError

router = APIRouter(prefix="/ui/fragments", include_in_schema=False, dependencies=[Depends(guard)])


@router.get("/recall")
def recall_form(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> HTMLResponse:
    """The recall playground's form."""
    return render(request, "recall.html", namespace=access.namespace(namespace),
                  budget=memory.config.recall.default_budget)


@router.post("/recall")
def recall(request: Request, memory: MemoryDep, access: AccessDep, namespace: FormField, query: FormField,
           budget: FormField = "", task_id: FormField = "", min_score: FormField = "", tags: FormField = "",
           project: FormField = "", source: FormField = "", kind: FormField = "", updated_from: FormField = "",
           updated_to: FormField = "") -> HTMLResponse:
    """The recall an agent would get for these fields (as POST /v1/recall answers it), laid open."""
    given = {"project": project, "source": source, "kind": kind, "updated_from": updated_from,
             "updated_to": updated_to}
    filters: dict[str, Any] = {k: optional(v) for k, v in given.items() if optional(v)}
    if split := [t.strip() for t in tags.split(",") if t.strip()]:
        filters["tags"] = split
    body = validated(RecallRequest, {"namespace": namespace, "query": query, "budget": whole(budget, "budget"),
                                     "task_id": optional(task_id), "min_score": number(min_score, "min_score"),
                                     "filters": filters or None})
    checked = access.namespace(body.namespace)
    result = memory.recall(checked, body.query, body.budget, task_id=body.task_id,
                           filters=body.filters.model_dump(exclude_none=True) if body.filters else None,
                           min_score=body.min_score)
    return render(request, "recall_result.html", namespace=checked, result=result, segments=recall_bar(result),
                  omitted=omitted_rows(result), why=why_parts)


@router.get("/context")
def context_form(request: Request, access: AccessDep, namespace: NamespaceQuery) -> HTMLResponse:
    """The context view's form: a pasted message list (or a whole /v1/context body) and the window."""
    return render(request, "context.html", namespace=access.namespace(namespace))


@router.post("/context")
def context(request: Request, memory: MemoryDep, access: AccessDep, namespace: FormField, messages: FormField,
            window: FormField = "8192", output_reserve: FormField = "", task_id: FormField = "",
            allocation: FormField = "") -> HTMLResponse:
    """What POST /v1/context answers for the pasted turn: the messages to send, tokens by category, actions."""
    fields = {"window": whole(window, "window"), "output_reserve": whole(output_reserve, "output_reserve"),
              "task_id": optional(task_id), "allocation": optional(allocation)}
    body = validated(ContextRequest, _context_body(namespace, messages, fields))
    checked = access.namespace(body.namespace)
    result = memory.context(body.turn(checked))
    return render(request, "context_result.html", namespace=checked, result=result,
                  segments=context_bar(result.report), categories=CONTEXT_CATEGORIES, text=message_text)


def _context_body(namespace: str, messages: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The /v1/context body for the form: the pasted JSON (a message list, or a whole body), with the form's
    namespace, and its other fields where they are filled in and the pasted body does not set them."""
    try:
        pasted = json.loads(messages)
    except json.JSONDecodeError as exc:
        raise ValidationError("messages must be a JSON list of chat messages (or a /v1/context body): "
                              + json_problem(exc.msg, exc.doc, exc.pos)) from None
    body: dict[str, Any] = dict(pasted) if isinstance(pasted, dict) else {"messages": pasted}
    body["namespace"] = namespace
    for name, value in fields.items():
        if value is not None:
            body.setdefault(name, value)
    return body
