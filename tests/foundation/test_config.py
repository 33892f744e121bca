"""Configuration: defaults match config.toml, files and variables override, bad input names the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memory.config import Config, load_config
from memory.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_config_toml_documents_exactly_the_defaults() -> None:
    assert load_config(ROOT / "config.toml") == Config()


def test_every_setting_appears_in_config_toml() -> None:
    text = (ROOT / "config.toml").read_text(encoding="utf-8")
    for section in dataclasses.fields(Config):
        assert f"[{section.name}" in text
        for setting in dataclasses.fields(getattr(Config(), section.name)):
            assert f"\n{setting.name} = " in text or f"[{section.name}.{setting.name}]" in text, setting.name


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
        ('[retrieval]\nfusion = "magic"\n', {}, "retrieval.fusion"),
        ("[chunking]\ntarget_tokens = 900\n", {}, "target_tokens"),
        ('[service]\nhost = "0.0.0.0"\n', {}, "service.host"),
        ('[auth.keys]\n"short" = ["a"]\n', {}, "too short"),
        ("", {"MEMORY_SERVICE_PROT": "1"}, "MEMORY_SERVICE_PROT"),
        ("", {"MEMORY_RECALL_RESTATE_CONSTRAINTS": "maybe"}, "MEMORY_RECALL_RESTATE_CONSTRAINTS"),
        ("[service\n", {}, "not valid TOML"),
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
