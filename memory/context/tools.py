"""Tool schemas: checked, written byte-stable, counted, and chosen when they exceed their share.

A schema costs the tokens of its canonical JSON (keys sorted, no spaces): OpenAI documents no formula for
tool definitions, so this one is stated, not measured. Schemas are returned sorted by name and written the
same way every time, so the tool block of a prompt never changes while the tool set does not.

Selection (progressive disclosure): when the schemas exceed their share, the pinned tools stay, then the tools
most relevant to the query (query terms found in the name and description, plus the embedding similarity of the
two), while they fit; the rest are left out and named in the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.errors import ValidationError
from memory.text import query_terms
from memory.tokens import TokenCounter

__all__ = ["ScopedSimilarity", "Similarity", "Tool", "canonical", "parse_tools", "select_tools"]

# (query, texts) -> one similarity in 0..1 per text (the facade's embedder; none: lexical only)
Similarity = Callable[[str, Sequence[str]], Sequence[float]]
# The same for the texts a namespace sent: (namespace, query, texts) (memory.context.tool_vectors)
ScopedSimilarity = Callable[[str, str, Sequence[str]], Sequence[float]]
# A description is read up to here for relevance: the encoder reads less than this, and a description of a megabyte
# must not cost every turn a megabyte of analysis.
_DESCRIPTION_CHARS = 2000


@dataclass(frozen=True)
class Tool:
    """One function schema as it will be sent (`schema`, without our `pinned` flag) and what it costs."""

    name: str
    description: str
    schema: Mapping[str, Any]
    tokens: int
    pinned: bool = False


def canonical(value: Any) -> str:
    """The byte-stable JSON text of a value (what is counted and hashed)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def parse_tools(raw: object, counter: TokenCounter) -> tuple[Tool, ...]:
    """Check OpenAI function schemas; a ValidationError names the tool's index and what was expected."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise ValidationError("tools must be a list of function schemas ({\"type\": \"function\", \"function\": "
                              "{\"name\": ..., \"description\": ..., \"parameters\": {...}}})")
    tools: dict[str, Tool] = {}
    for i, entry in enumerate(raw):
        where = f"tools[{i}]"
        function = entry.get("function") if isinstance(entry, Mapping) else None
        if not isinstance(entry, Mapping) or entry.get("type", "function") != "function" \
                or not isinstance(function, Mapping):
            raise ValidationError(f"{where} must be {{\"type\": \"function\", \"function\": {{\"name\": ..., "
                                  "\"description\": ..., \"parameters\": {...}}}}")
        name = function.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ValidationError(f"{where}.function.name must be a non-empty string")
        description = function.get("description", "")
        if not isinstance(description, str):
            raise ValidationError(f"{where}.function.description must be a string")
        if "parameters" in function and not isinstance(function["parameters"], Mapping):
            raise ValidationError(f"{where}.function.parameters must be a JSON schema object")
        pinned = entry.get("pinned", False)
        if not isinstance(pinned, bool):
            raise ValidationError(f"{where}.pinned must be true or false, got {str(pinned)[:40]!r}")
        if name in tools:
            raise ValidationError(f"{where} is a second tool named {name!r}; tool names must differ")
        schema = {"type": "function", "function": dict(function)}
        tools[name] = Tool(name, description, schema, counter.count(canonical(schema)), pinned)
    return tuple(tools[name] for name in sorted(tools))


def select_tools(tools: Sequence[Tool], grant: int, query: str, similarity: Similarity | None,
                 previous: Sequence[str] = ()) -> tuple[tuple[Tool, ...], tuple[str, ...]]:
    """The tools kept within `grant` tokens (sorted by name) and the names left out (pinned tools always stay).

    `previous` is the selection the task sent last: it is sent again while it fits, with any pinned tool it lacks,
    so that the tool block, part of the cached prefix, changes only when it must; when it no longer fits, its least
    relevant tools go first. Without one, the most relevant tools are taken while they fit.
    """
    if sum(t.tokens for t in tools) <= grant:
        return tuple(tools), ()
    others = [t for t in tools if not t.pinned]
    scores = _relevance(others, query, similarity)
    ranked = sorted(others, key=lambda t: (-scores[t.name], t.name))
    kept = [t for t in tools if t.pinned]
    spent = sum(t.tokens for t in kept)
    before = set(previous) & {t.name for t in others}
    for tool in [*(t for t in ranked if t.name in before), *(t for t in ranked if t.name not in before)]:
        if before and tool.name not in before:
            break  # a kept selection is not topped up: each new tool would change the prefix
        if spent + tool.tokens <= grant:
            kept.append(tool)
            spent += tool.tokens
    names = {t.name for t in kept}
    return tuple(t for t in tools if t.name in names), tuple(t.name for t in tools if t.name not in names)


def _relevance(tools: Sequence[Tool], query: str, similarity: Similarity | None) -> dict[str, float]:
    """Half the share of the query's terms a tool's name and description hold, half their embedding similarity."""
    wanted = set(query_terms(query))
    texts = [f"{t.name.replace('_', ' ')}: {t.description[:_DESCRIPTION_CHARS]}" for t in tools]
    dense = list(similarity(query, texts)) if similarity is not None and query.strip() and texts else [0.0] * len(texts)
    scores = {}
    for tool, text, close in zip(tools, texts, dense, strict=True):
        own = set(query_terms(text))
        lexical = len(own & wanted) / len(wanted) if wanted else 0.0
        scores[tool.name] = 0.5 * lexical + 0.5 * max(0.0, float(close))
    return scores
