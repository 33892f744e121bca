"""Request building blocks: the base of every body, and the documented shape of namespaces and task ids."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memory.task import KINDS, TASK_ID_PATTERN

__all__ = ["NAMESPACE_RULE", "TASK_ID_RULE", "Kind", "Namespace", "RequestModel", "Scope", "TaskId"]

# The rules are documented in the schema so clients (and the schema fuzzer) can follow them; the library enforces
# them, with messages that say more than "does not match pattern".
NAMESPACE_RULE = {"pattern": r"^[A-Za-z0-9_.:@\-]{1,128}$", "examples": ["u1"]}  # memory.namespaces.check_namespace
TASK_ID_RULE = {"pattern": f"^{TASK_ID_PATTERN.pattern}$", "examples": ["t-42"]}
_SCOPE = {"pattern": r"^(global|(project|session):[A-Za-z0-9._:@\-]{1,128})$"}  # memory.facts.memory.check_scope

Namespace = Annotated[str, Field(json_schema_extra=NAMESPACE_RULE)]
TaskId = Annotated[str, Field(json_schema_extra=TASK_ID_RULE)]
Scope = Annotated[str, Field(json_schema_extra=_SCOPE)]
Kind = Annotated[str, Field(json_schema_extra={"enum": list(KINDS)})]


class RequestModel(BaseModel):
    """A request body; JSON escapes such as "\\ud800" decode to lone surrogates, which no store can hold.

    NUL characters are dropped from free text (`free_text`) and refused in every other string field (ids, names,
    speakers, keys, tags): a NUL means nothing in prose, and in a name it hides what the name is.
    """

    model_config = ConfigDict(extra="forbid")
    # Fields that are only read, never stored (a recall query): the library copes with any string there.
    unstored: ClassVar[frozenset[str]] = frozenset()
    free_text: ClassVar[frozenset[str]] = frozenset({"text"})

    @model_validator(mode="after")
    def _valid_unicode(self) -> RequestModel:
        for name in type(self).model_fields:
            if name in self.unstored:
                continue
            value = getattr(self, name)
            _check(value, name)
            if name in self.free_text and isinstance(value, str) and "\x00" in value:
                if not value.replace("\x00", "").strip():
                    raise ValueError(f"{name} holds nothing but NUL characters and spaces; send the text")
                setattr(self, name, value.replace("\x00", ""))
            else:
                _refuse_nul(value, name)
        return self


def _refuse_nul(value: Any, where: str) -> None:
    # Metadata is left alone: it is JSON the caller owns, stored and answered escaped.
    for i, text in enumerate(value if isinstance(value, list) else [value]):
        if isinstance(text, str) and "\x00" in text:
            name = f"{where}[{i}]" if isinstance(value, list) else where
            raise ValueError(f"{name} holds a NUL character at {text.index(chr(0))}, which ids, names, speakers, "
                             "keys and tags may not hold; remove it")


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
