"""ingest_text refuses what no store can hold before it chunks or embeds anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.config import Config
from memory.embedding import Embedder
from memory.errors import ConfigError, ValidationError
from memory.service import Memory


@pytest.mark.parametrize("text", ["bad \ud800 surrogate", "坏的\udfff代理"], ids=["en", "zh"])
def test_lone_surrogate_is_a_validation_error_and_stores_nothing(memory: Memory, text: str) -> None:
    with pytest.raises(ValidationError, match="lone surrogate"):
        memory.add_document("ns", text)
    assert memory.experience.list_documents("ns") == []


@pytest.mark.parametrize("query", ["how does the loader retry?", "加载程序怎么重试？"])
def test_a_recall_from_a_namespace_that_holds_nothing_says_so(memory: Memory, query: str) -> None:
    memory.add_document("team", "The loader retries a failed batch twice.", doc_id="loader")
    misspelt = memory.recall("teams", query, 400)
    assert misspelt.items == () and len(misspelt.warnings) == 1
    assert "namespace 'teams' holds no facts, tasks or documents" in misspelt.warnings[0]
    assert not memory.recall("team", query, 400).warnings


def test_a_one_shot_command_compiles_the_rules_only_when_it_reads_a_message(config: Config, embedder: Embedder,
                                                                            tmp_path: Path) -> None:
    broken = tmp_path / "mine.toml"
    broken.write_text("[[rule]]\\nthis is not toml", encoding="utf-8")
    with_broken = config.replace("facts", extra_rules=(str(broken),))
    with pytest.raises(ConfigError, match=r"mine\.toml"):  # a service stops at start-up on a bad rule file
        Memory(with_broken, embedder=embedder)
    with Memory(with_broken, embedder=embedder, command="stats") as listing:  # `memory stats` reads none
        assert listing.facts.list("u1") == []
        with pytest.raises(ConfigError, match=r"mine\.toml"):  # `memory pin` does, and is told
            listing.facts.observe("u1", "以后不要用表格。")
    with Memory(config, embedder=embedder, command="pin") as pinning:
        assert [f.kind for f in pinning.facts.observe("u1", "Never use tabs.").stored] == ["prohibition"]
