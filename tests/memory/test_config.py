"""Configuration: defaults match config.toml, files and variables override, bad input names the key."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from memory.config import AUTO, CALIBRATION_KEYS, Calibration, Config, RetrievalConfig, load_config
from memory.errors import ConfigError
from tests import ROOT


def test_config_toml_documents_exactly_the_defaults() -> None:
    assert load_config(ROOT / "config.toml") == Config()


def test_every_setting_appears_in_config_toml() -> None:
    text = (ROOT / "config.toml").read_text(encoding="utf-8")
    sections = [f.name for f in dataclasses.fields(Config) if dataclasses.is_dataclass(getattr(Config(), f.name))]
    assert "retrieval" in sections and "auto_calibration" not in sections
    for section in sections:
        assert f"[{section}" in text
        for setting in dataclasses.fields(getattr(Config(), section)):
            assert f"\n{setting.name} = " in text or f"[{section}.{setting.name}]" in text, setting.name


def test_a_file_may_set_a_subset(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[service]\nport = 9123\n[recall]\nmin_score = 0.5\n', encoding="utf-8")
    config = load_config(path)
    assert config.service.port == 9123
    assert config.recall.min_score == 0.5
    assert config.service.host == "127.0.0.1"
    assert config.chunking == Config().chunking


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[service]\nport = 9123\n", encoding="utf-8")
    env = {"MEMORY_SERVICE_PORT": "9200", "MEMORY_RECALL_RESTATE_CONSTRAINTS": "yes",
           "MEMORY_AUTH_KEYS": '{"k-alice-7f3a": ["alice", "alice-*"]}', "MEMORY_CONFIG": "ignored", "HOME": "/x"}
    config = load_config(path, env=env)
    assert config.service.port == 9200
    assert config.recall.restate_constraints is True
    assert dict(config.auth.keys) == {"k-alice-7f3a": ("alice", "alice-*")}


@pytest.mark.parametrize(
    ("toml", "env", "named"),
    [
        ("[service]\nprot = 1\n", {}, "service.prot"),
        ("[servce]\nport = 1\n", {}, "[servce]"),
        ('[service]\nport = "eighty"\n', {}, "service.port"),
        ("[service]\nport = 0\n", {}, "service.port"),
        ("[recall]\nmin_score = 1.5\n", {}, "recall.min_score"),
        ("[recall]\nfact_share = 0.9\n", {}, "must add up to 1"),
        ("[recall]\nitem_share = 0\n", {}, "recall.item_share must be above 0"),
        ('[retrieval]\nfusion = "magic"\n', {}, "retrieval.fusion"),
        ("[chunking]\ntarget_tokens = 900\n", {}, "target_tokens"),
        ('[service]\nhost = "0.0.0.0"\n', {}, "service.host"),
        ('[auth.keys]\n"short" = ["a"]\n', {}, "too short"),
        ("", {"MEMORY_SERVICE_PROT": "1"}, "MEMORY_SERVICE_PROT"),
        ("", {"MEMORY_RECALL_RESTATE_CONSTRAINTS": "maybe"}, "MEMORY_RECALL_RESTATE_CONSTRAINTS"),
        ("[service\n", {}, "not valid TOML"),
        ('[retrieval]\ndense_floor = "high"\n', {}, 'retrieval.dense_floor must be a number or "auto"'),
        ("", {"MEMORY_RETRIEVAL_DENSE_CEILING": "1.5"}, "retrieval.dense_ceiling"),
        ("[retrieval]\ndense_floor = 0.9\ndense_ceiling = 0.8\n", {}, "dense_floor must be below"),
        ("[jobs]\nlease_s = 5\n", {}, "jobs.lease_s must be at least 10 seconds, got 5"),
    ],
)
def test_bad_settings_stop_with_a_message_naming_the_key(tmp_path: Path, toml: str, env: dict[str, str],
                                                         named: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env=env)
    assert named in str(caught.value)


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_non_loopback_host_allowed_once_keys_exist(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[service]\nhost = "0.0.0.0"\n[auth.keys]\n"k-admin-91c2" = ["*"]\n', encoding="utf-8")
    assert load_config(path).service.host == "0.0.0.0"


E5_LIKE = Calibration(dense_floor=0.8, dense_ceiling=0.95, dense_cjk_trust=1.0)


def test_calibration_settings_are_auto_unless_set(tmp_path: Path) -> None:
    assert load_config().auto_calibration == CALIBRATION_KEYS == Config().auto_calibration
    path = tmp_path / "c.toml"
    path.write_text("[retrieval]\ndense_floor = 0.7\n", encoding="utf-8")
    config = load_config(path, env={"MEMORY_RETRIEVAL_DENSE_CJK_TRUST": "0.5"})
    assert config.auto_calibration == {"dense_ceiling"}
    assert (config.retrieval.dense_floor, config.retrieval.dense_cjk_trust) == (0.7, 0.5)
    assert load_config(path, env={"MEMORY_RETRIEVAL_DENSE_FLOOR": "auto"}).auto_calibration == CALIBRATION_KEYS


def test_auto_settings_hold_the_default_backends_values_until_calibrated() -> None:
    # A bare RetrievalConfig (and any Config no Memory has calibrated) is all-MiniLM-L6-v2's.
    assert load_config().retrieval == RetrievalConfig() == Config().retrieval


def test_calibrated_fills_only_the_auto_settings() -> None:
    config = load_config(env={"MEMORY_RETRIEVAL_DENSE_FLOOR": "0.85"}).calibrated(E5_LIKE)
    r = config.retrieval
    assert (r.dense_floor, r.dense_ceiling, r.dense_cjk_trust) == (0.85, 0.95, 1.0)
    assert config.auto_calibration == {"dense_ceiling", "dense_cjk_trust"}
    assert config.calibrated(E5_LIKE) == config


def test_replace_keeps_the_calibration_and_what_was_set() -> None:
    config = load_config().calibrated(E5_LIKE)
    moved = config.replace("service", data_dir="elsewhere")
    assert moved.retrieval == config.retrieval and moved.auto_calibration == CALIBRATION_KEYS
    fixed = config.replace("retrieval", dense_floor=0.5)
    assert fixed.auto_calibration == {"dense_ceiling", "dense_cjk_trust"}
    assert fixed.calibrated(Calibration(0.1, 0.8, 0.1)).retrieval.dense_floor == 0.5
    assert config.replace("retrieval", dense_floor=AUTO).auto_calibration == CALIBRATION_KEYS


def test_a_set_floor_above_the_backends_ceiling_is_refused_when_calibrated() -> None:
    config = load_config(env={"MEMORY_RETRIEVAL_DENSE_FLOOR": "0.85"})
    with pytest.raises(ConfigError, match=r"dense_floor 0\.85 must be below retrieval\.dense_ceiling 0\.8"):
        config.calibrated(Calibration(dense_floor=0.1, dense_ceiling=0.8, dense_cjk_trust=0.1))


def test_the_choices_a_setting_takes_are_those_of_the_code_that_reads_it() -> None:
    """Config cannot import the layers that define them (memory.config is below everything), so a test ties the
    choices declared on the fields to their source."""
    from memory.config import ContextConfig, EmbeddingConfig
    from memory.context.allocation import PRESETS
    from memory.embedding.factory import AUTO, BACKENDS

    def choices(settings: type, name: str) -> tuple[str, ...]:
        return next(f for f in dataclasses.fields(settings) if f.name == name).metadata["choices"]

    assert set(choices(EmbeddingConfig, "backend")) == {AUTO, *BACKENDS}
    assert set(choices(ContextConfig, "allocation")) == set(PRESETS)


def test_the_shortest_lease_a_job_may_have_spans_several_of_its_reports() -> None:
    """A running job renews its lease at each report (memory.jobs): one late report must not lose it."""
    from memory.config import JobsConfig
    from memory.jobs import _REPORT_S

    assert JobsConfig.MIN_LEASE_S >= 4 * _REPORT_S
    assert load_config(env={"MEMORY_JOBS_LEASE_S": str(JobsConfig.MIN_LEASE_S)}).jobs.lease_s == JobsConfig.MIN_LEASE_S


@pytest.mark.parametrize(("setting", "value", "says"), [
    ("MEMORY_EMBEDDING_BACKEND", "bert", "embedding.backend must be one of auto, onnx-int8"),
    ("MEMORY_RETRIEVAL_DENSE_K", "0", "retrieval.dense_k must be greater than 0, got 0"),
    ("MEMORY_CONTEXT_KEEP_TURNS", "-1", "context.keep_turns must be 0 (off) or more, got -1"),
    ("MEMORY_RECALL_MIN_SCORE", "1.5", "recall.min_score must be between 0 and 1, got 1.5"),
])
def test_a_setting_out_of_its_range_is_named_with_what_it_must_be(setting: str, value: str, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_config(env={setting: value})
