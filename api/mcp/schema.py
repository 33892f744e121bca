"""A REST model's JSON schema, trimmed for a tool listing: what an agent's prompt carries on every turn.

Only what tells a model nothing goes: pydantic's generated titles, examples, `null` as an alternative for an
optional field (leaving it out means the same), a `null` default and "any other key allowed". The constraints
(types, ranges, patterns, enums, required fields, unknown fields refused) stay, and the server validates with the
model itself, so a call the trimmed schema allows is judged exactly as REST would judge it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["compact"]

_NULL = {"type": "null"}


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without titles, examples, nullable alternatives of optional fields and null defaults."""
    trimmed = _trim(schema)
    assert isinstance(trimmed, dict)
    trimmed.pop("description", None)  # the tool's own description says what the call does, shorter
    return trimmed


def _trim(node: Any) -> Any:
    if isinstance(node, list):
        return [_trim(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "examples") and not isinstance(value, dict):
            continue
        if key == "default" and value is None:
            continue
        if key == "additionalProperties" and value is True:
            continue
        out[key] = _trim(value) if key not in ("properties", "$defs") else {k: _trim(v) for k, v in value.items()}
    options = out.get("anyOf")
    if isinstance(options, list) and _NULL in options:
        rest = [option for option in options if option != _NULL]
        del out["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            out = {**rest[0], **out}
        else:
            out["anyOf"] = rest
    return out
