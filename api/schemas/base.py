"""Request building blocks: the base of every body, and the documented shape of namespaces and task ids."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field, model_validator

from memory.task.model import KINDS
from memory.task.policy import TASK_ID_PATTERN

__all__ = [
    "NAMESPACE_RULE", "Kind", "Namespace", "NamespacePath", "NamespaceQuery", "RequestModel", "Scope", "TaskId",
    "TaskIdPath",
]

# The rules are documented in the schema so clients (and the schema fuzzer) can follow them; the library enforces
# them, with messages that say more than "does not match pattern".
NAMESPACE_RULE = {"pattern": r"^[A-Za-z0-9_.:@\-]{1,128}$", "examples": ["u1"]}  # memory.namespaces.check_namespace
_TASK_ID = {"pattern": f"^{TASK_ID_PATTERN.pattern}$", "examples": ["t-42"]}
_SCOPE = {"pattern": r"^(global|(project|session):[A-Za-z0-9._:@\-]{1,128})$"}  # memory.facts.memory.check_scope

Namespace = Annotated[str, Field(json_schema_extra=NAMESPACE_RULE)]
NamespaceQuery = Annotated[str, Query(json_schema_extra=NAMESPACE_RULE)]
NamespacePath = Annotated[str, Path(json_schema_extra=NAMESPACE_RULE)]
TaskId = Annotated[str, Field(json_schema_extra=_TASK_ID)]
TaskIdPath = Annotated[str, Path(json_schema_extra=_TASK_ID)]
Scope = Annotated[str, Field(json_schema_extra=_SCOPE)]
Kind = Annotated[str, Field(json_schema_extra={"enum": list(KINDS)})]


class RequestModel(BaseModel):
    """A request body; JSON escapes such as "\\ud800" decode to lone surrogates, which no store can hold."""

    model_config = ConfigDict(extra="forbid")
    # Fields that are only read, never stored (a recall query): the library copes with any string there.
    unstored: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _valid_unicode(self) -> RequestModel:
        for name in type(self).model_fields:
            if name not in self.unstored:
                _check(getattr(self, name), name)
        return self


def _check(value: Any, where: str) -> None:
    # A loop, not recursion: metadata may nest as deep as the JSON parser allows.
    pending = [(value, where)]
    while pending:
        value, where = pending.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"{where} holds a lone surrogate ({value[exc.start]!r}) at character {exc.start}, which is not "
                    "valid Unicode; send the text as UTF-8"
                ) from None
        elif isinstance(value, dict):
            pending.extend((key, f"{where} (a key)") for key in value)
            pending.extend((item, f"{where}[{key!r}]") for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
