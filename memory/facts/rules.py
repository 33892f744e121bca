"""Load and validate fact-extraction rule files (TOML) into one frozen RuleSet."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, cast

from memory.config import read_toml
from memory.errors import ConfigError

__all__ = [
    "INSTRUCTION_KINDS", "KINDS", "LANGS", "MARKER_NAMES", "Kind", "Lang", "Markers", "Rule", "RuleSet", "load_rules",
    "rules_on_first_use", "shipped_rules_path",
]

Kind = Literal["prohibition", "requirement", "limit", "preference", "profile", "format"]
Lang = Literal["en", "zh"]

KINDS: tuple[Kind, ...] = ("prohibition", "requirement", "limit", "preference", "profile", "format")
LANGS: tuple[Lang, ...] = ("en", "zh")
MARKER_NAMES = (
    "question", "hypothetical", "conditional", "reported", "negated", "lead_in", "trailer", "cue",
    "deictic", "light_verb", "filler", "conjunction", "new_clause", "request", "correction",
    "standing", "this_request", "one_off", "advice", "circumstance",
)

# The kinds that tell the assistant what to do or not to do: only they can hold for one request alone, and
# they are what a chat turn must not be mistaken for (bench/facts_eval.py).
INSTRUCTION_KINDS: frozenset[str] = frozenset({"prohibition", "requirement", "limit", "format"})

# Fixed slots (profile, format, limit) win over open-ended verbs when both match one clause.
_DEFAULT_PRIORITY: dict[str, int] = {
    "limit": 30, "profile": 30, "format": 30, "preference": 20, "requirement": 10, "prohibition": 10,
}
_TOP_LEVEL = {"version", "fragments", "vocab", "markers", "code_lines", "rule"}
_RULE_REQUIRED = ("id", "lang", "kind", "pattern", "key", "value")
_RULE_OPTIONAL = ("priority", "defaults", "note", "whole_clause", "each", "also")
_FRAGMENT_REF = re.compile(r"<<(\w+)>>")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_SUFFIX = re.compile(r"_\d+$")
_FLAGS = re.IGNORECASE


@dataclass(frozen=True)
class Rule:
    """One compiled extraction rule: a pattern plus key and value templates.

    A `whole_clause` rule (a bare "English." or "Spaces only.") never counts as one half of an "and". An `each`
    rule names a group that holds a list ("peanuts and shellfish", "海鲜和花生"): it yields one fact per item.
    An `also` rule adds its facts to the best rule's instead of competing with it ("write a 300-word summary
    without commas": a word limit, and no commas).
    """

    id: str
    lang: Lang
    kind: Kind
    pattern: re.Pattern[str]
    key: str
    value: str
    priority: int
    defaults: Mapping[str, str]
    source: str
    whole_clause: bool = False
    each: str | None = None
    also: bool = False


@dataclass(frozen=True)
class Markers:
    """Compiled marker patterns for one language; None where the rule files define none."""

    question: re.Pattern[str] | None
    request: re.Pattern[str] | None
    correction: re.Pattern[str] | None
    hypothetical: re.Pattern[str] | None
    conditional: re.Pattern[str] | None
    reported: re.Pattern[str] | None
    negated: re.Pattern[str] | None
    lead_in: re.Pattern[str] | None
    trailer: re.Pattern[str] | None
    cue: re.Pattern[str] | None
    deictic: re.Pattern[str] | None
    light_verb: re.Pattern[str] | None
    filler: tuple[re.Pattern[str], ...]
    conjunction: re.Pattern[str] | None
    new_clause: re.Pattern[str] | None
    standing: re.Pattern[str] | None = None
    this_request: re.Pattern[str] | None = None
    one_off: re.Pattern[str] | None = None
    advice: re.Pattern[str] | None = None
    circumstance: re.Pattern[str] | None = None


@dataclass(frozen=True)
class RuleSet:
    """Every rule, marker and vocabulary loaded from the shipped file plus user files."""

    rules: tuple[Rule, ...]
    markers: Mapping[str, Markers]
    vocab: Mapping[str, Mapping[str, str]]
    code_lines: re.Pattern[str] | None
    sources: tuple[str, ...]

    def for_lang(self, lang: str) -> tuple[Rule, ...]:
        """Rules for one language, highest priority first, file order breaking ties."""
        return tuple(r for r in self.rules if r.lang == lang)

    @functools.cached_property
    def currency_names(self) -> str:
        """The vocabulary's currency names as one regular expression ("" when it has none), longest first, a name
        that is a word matched as a whole word ("dollars"), a sign anywhere ("$", "元")."""
        names = sorted(self.vocab.get("currency", {}), key=len, reverse=True)
        return "|".join(rf"(?<![^\W\d_]){re.escape(n)}(?![^\W\d_])" if n.isascii() and n.isalpha() else re.escape(n)
                        for n in names)


def shipped_rules_path() -> Path:
    """Path of the rule file that ships next to this module."""
    return Path(str(resources.files("memory.facts").joinpath("rules.toml")))


def load_rules(*extra: str | Path, include_shipped: bool = True) -> RuleSet:
    """Load the shipped rules plus any extra user rule files; raise ConfigError on any bad file."""
    return _read_files(extra, include_shipped=include_shipped).build()


def _read_files(extra: Sequence[str | Path], *, include_shipped: bool) -> _Merged:
    paths = ([shipped_rules_path()] if include_shipped else []) + [Path(p) for p in extra]
    if not paths:
        raise ConfigError("load_rules got no rule files: pass a path or keep include_shipped=True.")
    merged = _Merged()
    for path in paths:
        merged.add(path, _read_toml(path))
    return merged


def rules_on_first_use(*extra: str | Path) -> RuleSet:
    """load_rules(*extra), read and compiled when the rule set is first used rather than now, and each
    language's rules when a clause in that language is first read.

    Compiling the rules' patterns is most of what opening a store costs a one-shot `memory` command, and most
    commands (stats, listing facts, recall) never read a message; a bad rule file is then reported when the rules
    (or its rules of one language) are first used. A service loads them at once (load_rules), so that a bad file
    stops it at start-up.
    """
    return cast(RuleSet, _OnFirstUse(extra))


class _OnFirstUse:
    """Stands for the RuleSet load_rules(*extra) gives: the files are read, and the markers compiled, when an
    attribute is first read; a language's rules when for_lang first asks for them."""

    def __init__(self, extra: tuple[str | Path, ...]) -> None:
        self._extra = extra
        self._merged: _Merged | None = None
        self._shared: RuleSet | None = None
        self._rules: dict[str, tuple[Rule, ...]] = {}
        self._lock = threading.Lock()

    def _read(self) -> tuple[_Merged, RuleSet]:
        with self._lock:
            if self._merged is None or self._shared is None:
                merged = _read_files(self._extra, include_shipped=True)
                self._shared = merged.build(langs=())
                self._merged = merged
            return self._merged, self._shared

    def for_lang(self, lang: str) -> tuple[Rule, ...]:
        """Rules for one language, highest priority first, file order breaking ties (compiled on first use)."""
        merged, _ = self._read()
        with self._lock:
            if lang not in self._rules:
                self._rules[lang] = merged.build(langs=(lang,)).for_lang(lang)
            return self._rules[lang]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._read()[1], name)


def _read_toml(path: Path) -> dict[str, Any]:
    data = read_toml(path, missing=f"{path}: rule file not found; expected an existing TOML file.",
                     invalid=f"{path}: not valid TOML ({{error}}); fix the syntax and reload.")
    unknown = set(data) - _TOP_LEVEL
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key(s) {sorted(unknown)}; expected only {sorted(_TOP_LEVEL)}."
        )
    return data


class _Merged:
    """Accumulates raw tables from several files before anything is compiled."""

    def __init__(self) -> None:
        self.fragments: dict[str, str] = {}
        self.vocab: dict[str, dict[str, str]] = {}
        self.markers: dict[str, dict[str, list[str]]] = {lang: {} for lang in LANGS}
        self.code_lines: list[str] = []
        self.raw_rules: list[tuple[Path, int, dict[str, Any]]] = []
        self.sources: list[str] = []

    def add(self, path: Path, data: dict[str, Any]) -> None:
        self.sources.append(str(path))
        for name, body in _table(path, data, "fragments").items():
            self.fragments[name] = _string(path, f"fragment '{name}'", body)
        for table, entries in _table(path, data, "vocab").items():
            target = self.vocab.setdefault(table.lower(), {})
            for phrase, canonical in _table(path, {table: entries}, table).items():
                target[_fold(phrase)] = _string(path, f"vocab.{table} entry '{phrase}'", canonical)
        for lang, names in _table(path, data, "markers").items():
            if lang not in LANGS:
                raise ConfigError(f"{path}: markers.{lang}: expected a language in {list(LANGS)}.")
            for name, patterns in _table(path, {lang: names}, lang).items():
                if name not in MARKER_NAMES:
                    raise ConfigError(
                        f"{path}: markers.{lang}.{name}: unknown marker; expected one of {list(MARKER_NAMES)}."
                    )
                found = _strings(path, f"markers.{lang}.{name}", patterns)
                for pattern in found:
                    _compile(path, f"markers.{lang}.{name}", pattern, self.fragments)
                self.markers[lang].setdefault(name, []).extend(found)
        for pattern in _strings(path, "code_lines", data.get("code_lines", [])):
            _compile(path, "code_lines", pattern, self.fragments)
            self.code_lines.append(pattern)
        rules = data.get("rule", [])
        if not isinstance(rules, list) or not all(isinstance(r, dict) for r in cast(list[object], rules)):
            raise ConfigError(f"{path}: 'rule' must be an array of tables ([[rule]]).")
        self.raw_rules.extend((path, n, cast(dict[str, Any], r)) for n, r in enumerate(cast(list[object], rules), 1))

    def build(self, langs: Sequence[str] = LANGS) -> RuleSet:
        """The rule set, with the rules of `langs` compiled (the others are left out)."""
        seen: dict[str, Path] = {}
        rules: list[Rule] = []
        for path, number, raw in self.raw_rules:
            if raw.get("lang") in LANGS and raw.get("lang") not in langs:
                _check_unique(seen, path, raw.get("id"))  # ids are unique across languages, compiled or not
                continue
            rule = _compile_rule(path, number, raw, self.fragments)
            _check_unique(seen, path, rule.id)
            rules.append(rule)
        ordered = sorted(enumerate(rules), key=lambda pair: (-pair[1].priority, pair[0]))
        return RuleSet(
            rules=tuple(rule for _, rule in ordered),
            markers=MappingProxyType({lang: self._markers(lang) for lang in LANGS}),
            vocab=MappingProxyType({k: MappingProxyType(v) for k, v in self.vocab.items()}),
            code_lines=self._alternation(self.code_lines),
            sources=tuple(self.sources),
        )

    def _markers(self, lang: str) -> Markers:
        found = self.markers[lang]
        one = {n: self._alternation(found.get(n, [])) for n in MARKER_NAMES if n != "filler"}
        fillers = tuple(_compile(Path(self.sources[-1]), "filler", p, self.fragments) for p in found.get("filler", []))
        return Markers(filler=fillers, **one)  # MARKER_NAMES are Markers' fields

    def _alternation(self, patterns: Sequence[str]) -> re.Pattern[str] | None:
        # Each pattern was already validated against the file that defined it.
        if not patterns:
            return None
        return _compile(Path(self.sources[-1]), "markers", "|".join(f"(?:{p})" for p in patterns), self.fragments)


def _check_unique(seen: dict[str, Path], path: Path, rule_id: object) -> None:
    if not isinstance(rule_id, str):
        return  # a rule without an id is reported when it is compiled
    if rule_id in seen:
        raise ConfigError(f"{path}: rule '{rule_id}': duplicate id (first defined in {seen[rule_id]}).")
    seen[rule_id] = path


def _compile(path: Path, where: str, pattern: str, fragments: Mapping[str, str]) -> re.Pattern[str]:
    expanded = _expand(path, where, pattern, fragments)
    try:
        return re.compile(expanded, _FLAGS)
    except re.error as exc:
        raise ConfigError(f"{path}: {where}: bad regular expression ({exc}); expected a Python re pattern.") from None


def _compile_rule(path: Path, number: int, raw: dict[str, Any], fragments: Mapping[str, str]) -> Rule:
    rule_id = raw.get("id")
    where = f"{path}: rule '{rule_id}'" if isinstance(rule_id, str) else f"{path}: rule #{number} (no id)"
    missing = [name for name in _RULE_REQUIRED if name not in raw]
    if missing:
        raise ConfigError(f"{where}: missing field(s) {missing}; every rule needs {list(_RULE_REQUIRED)}.")
    unknown = set(raw) - set(_RULE_REQUIRED) - set(_RULE_OPTIONAL)
    if unknown:
        raise ConfigError(
            f"{where}: unknown field(s) {sorted(unknown)}; expected only {list(_RULE_REQUIRED + _RULE_OPTIONAL)}."
        )
    for name in ("id", "lang", "kind", "pattern", "key", "value", "note"):
        if name in raw:
            _string(path, f"rule '{rule_id}' field '{name}'", raw[name])
    if raw["lang"] not in LANGS:
        raise ConfigError(f"{where}: lang must be one of {list(LANGS)}, got {raw['lang']!r}.")
    if raw["kind"] not in KINDS:
        raise ConfigError(f"{where}: kind must be one of {list(KINDS)}, got {raw['kind']!r}.")
    priority = raw.get("priority", _DEFAULT_PRIORITY[raw["kind"]])
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ConfigError(f"{where}: priority must be an integer, got {priority!r}.")
    whole_clause = raw.get("whole_clause", False)
    if not isinstance(whole_clause, bool):
        raise ConfigError(f"{where}: whole_clause must be true or false, got {whole_clause!r}.")
    also = raw.get("also", False)
    if not isinstance(also, bool):
        raise ConfigError(f"{where}: also must be true or false, got {also!r}.")
    pattern = _compile(path, f"rule '{rule_id}' pattern", raw["pattern"], fragments)
    each = raw.get("each")
    if each is not None and (not isinstance(each, str) or each not in {_SUFFIX.sub("", g) for g in pattern.groupindex}):
        raise ConfigError(f"{where}: each must name one of the pattern's groups, got {each!r}.")
    defaults = {k: _string(path, f"rule '{rule_id}' defaults.{k}", v) for k, v in _table(path, raw, "defaults").items()}
    groups = set(pattern.groupindex) | {_SUFFIX.sub("", g) for g in pattern.groupindex} | set(defaults)
    for field in ("key", "value"):
        for name in _PLACEHOLDER.findall(raw[field]):
            if name not in groups:
                raise ConfigError(
                    f"{where}: {field} template uses {{{name}}} but the pattern has no group '{name}'; "
                    f"expected one of {sorted(groups) or 'no groups'}."
                )
    return Rule(
        id=raw["id"], lang=cast(Lang, raw["lang"]), kind=cast(Kind, raw["kind"]), pattern=pattern,
        key=raw["key"], value=raw["value"], priority=priority, defaults=MappingProxyType(defaults),
        source=str(path), whole_clause=whole_clause, each=each, also=also,
    )


def _expand(path: Path, where: str, pattern: str, fragments: Mapping[str, str], depth: int = 0) -> str:
    if depth > 10:
        raise ConfigError(f"{path}: {where}: fragments nest more than 10 deep; expected no cycles.")

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            raise ConfigError(
                f"{path}: {where}: unknown fragment <<{name}>>; expected one of {sorted(fragments)}."
            )
        return _expand(path, where, fragments[name], fragments, depth + 1)

    return _FRAGMENT_REF.sub(replace, pattern)


def _table(path: Path, data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: '{name}' must be a table, got {type(value).__name__}.")
    return cast(dict[str, Any], value)


def _string(path: Path, where: str, value: object) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{path}: {where} must be a string, got {type(value).__name__}.")
    return value


def _strings(path: Path, where: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in cast(list[object], value)):
        raise ConfigError(f"{path}: {where} must be a list of strings.")
    return cast(list[str], value)


def _fold(text: str) -> str:
    return " ".join(text.lower().split())
