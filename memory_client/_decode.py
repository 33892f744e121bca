"""Build the frozen result dataclasses from the service's JSON, led by their type hints.

Fields the answer has and the dataclass does not are kept in its `raw` field (the whole JSON object it was built
from), so a newer service's additions are readable through an older client; fields the dataclass declares with a
default may be missing (an older service, or an auth level that shows less). A declared field without a default
that the answer lacks is an InvalidAnswer: the client and the service do not speak the same contract.

Each class's hints are read once and turned into one converter per field, so decoding an answer walks the JSON
only (bench/client_overhead.py times it against a bare `response.json()`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from memory_client._errors import InvalidAnswer

__all__ = ["decode", "decode_list", "raw_field"]

T = TypeVar("T")
Convert = Callable[[Any, str], Any]
_PLANS: dict[type, tuple[tuple[str, Convert | None, bool], ...]] = {}  # (name, converter, required) per field


def raw_field() -> Any:
    """The `raw` field every result carries: the JSON object it came from, left out of repr and comparisons."""
    return dataclasses.field(default_factory=dict, repr=False, compare=False)


def decode(cls: type[T], data: object, where: str = "the answer") -> T:
    """An instance of the dataclass `cls` from a JSON object."""
    if not isinstance(data, Mapping):
        raise InvalidAnswer(f"{where} should be a JSON object for {cls.__name__}, got {_kind(data)}")
    values: dict[str, Any] = {}
    for name, convert, required in _plan(cls):
        if name == "raw":
            values["raw"] = dict(data)
        elif name in data:
            value = data[name]
            values[name] = value if convert is None else convert(value, f"{where}.{name}")
        elif required:
            raise InvalidAnswer(f"{where} has no field {name!r}, which {cls.__name__} needs; the service "
                                "may speak another version of the REST contract than this client")
    return cls(**values)


def decode_list(cls: type[T], data: object, where: str = "the answer") -> tuple[T, ...]:
    """A tuple of `cls` from a JSON array of objects."""
    if not isinstance(data, list):
        raise InvalidAnswer(f"{where} should be a JSON array, got {_kind(data)}")
    return tuple(decode(cls, item, f"{where}[{i}]") for i, item in enumerate(data))


def _plan(cls: type) -> tuple[tuple[str, Convert | None, bool], ...]:
    if cls not in _PLANS:  # the annotations are strings (postponed evaluation): resolved once per class
        hints = typing.get_type_hints(cls)
        _PLANS[cls] = tuple(
            (f.name, _converter(hints[f.name]),
             f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
            for f in dataclasses.fields(cls))
    return _PLANS[cls]


def _converter(hint: Any) -> Convert | None:
    """How to turn a JSON value into the hinted type; None when the value is used as it comes."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        inner = _converter(next(a for a in typing.get_args(hint) if a is not type(None)))
        return None if inner is None else (lambda value, where: None if value is None else inner(value, where))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        nested = hint
        return lambda value, where: decode(nested, value, where)
    if origin is tuple:
        item = _converter(typing.get_args(hint)[0])

        def to_tuple(value: Any, where: str) -> tuple[Any, ...]:
            if not isinstance(value, list):
                raise InvalidAnswer(f"{where} should be a JSON array, got {_kind(value)}")
            return tuple(value) if item is None else tuple(item(v, f"{where}[{i}]") for i, v in enumerate(value))

        return to_tuple
    if origin is Mapping:
        item = _converter(typing.get_args(hint)[1])

        def to_dict(value: Any, where: str) -> dict[str, Any]:
            if not isinstance(value, Mapping):
                raise InvalidAnswer(f"{where} should be a JSON object, got {_kind(value)}")
            return dict(value) if item is None else {k: item(v, f"{where}[{k!r}]") for k, v in value.items()}

        return to_dict
    if hint is float:  # JSON may write a whole float as an integer
        return lambda value, where: float(value) if type(value) is int else value
    return None


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), type(value).__name__)
