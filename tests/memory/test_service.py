"""ingest_text refuses what no store can hold before it chunks or embeds anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import TextInput
from memory.config import Config
from memory.context import ContextRequest
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
    memory.add_document("team", TextInput("The loader retries a failed batch twice.", doc_id="loader"))
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
        assert listing.facts.list_facts("u1") == []
        with pytest.raises(ConfigError, match=r"mine\.toml"):  # `memory pin` does, and is told
            listing.facts.observe("u1", "以后不要用表格。")
    with Memory(config, embedder=embedder, command="pin") as pinning:
        assert [f.kind for f in pinning.facts.observe("u1", "Never use tabs.").stored] == ["prohibition"]


def test_a_one_shot_command_compiles_the_rules_of_the_languages_it_reads(config: Config, embedder: Embedder,
                                                                         tmp_path: Path) -> None:
    """An English pin compiles the English rules; a bad Chinese rule is found when Chinese is first read."""
    mine = tmp_path / "mine.toml"
    mine.write_text('[[rule]]\nid = "zh-broken"\nlang = "zh"\nkind = "prohibition"\npattern = "不要(("\n'
                    'key = "x"\nvalue = "y"\n', encoding="utf-8")
    with_broken = config.replace("facts", extra_rules=(str(mine),))
    with pytest.raises(ConfigError, match=r"zh-broken.*bad regular expression"):
        Memory(with_broken, embedder=embedder)  # a service compiles every language at start-up
    with Memory(with_broken, embedder=embedder, command="pin") as pinning:
        assert [f.kind for f in pinning.facts.pin("u1", text="Never use tabs.").stored] == ["prohibition"]
        with pytest.raises(ConfigError, match=r"zh-broken.*bad regular expression"):
            pinning.facts.pin("u1", text="以后不要用表格。")
        assert [f.value for f in pinning.facts.list_facts("u1")] == ["tabs"]  # the refused pin stored nothing


@pytest.mark.parametrize("text", ["Never use tabs.", "以后不要用表格。"], ids=["en", "zh"])
def test_rules_compiled_on_first_use_read_as_the_rules_loaded_at_once(config: Config, embedder: Embedder,
                                                                     text: str) -> None:
    from memory.facts.rules import load_rules, rules_on_first_use

    at_once, lazily = load_rules(), rules_on_first_use()
    for lang in ("en", "zh"):
        assert [(r.id, r.pattern.pattern) for r in lazily.for_lang(lang)] == \
               [(r.id, r.pattern.pattern) for r in at_once.for_lang(lang)]
    with Memory(config, embedder=embedder, command="pin") as pinning:
        lazy = [(f.kind, f.key, f.value) for f in pinning.facts.preview("u1", text).stored]
    with Memory(config, embedder=embedder) as serving:
        assert lazy == [(f.kind, f.key, f.value) for f in serving.facts.preview("u1", text).stored] != []


def test_commands_that_read_records_only_never_open_chroma_or_context_assembly(config: Config,
                                                                              embedder: Embedder) -> None:
    with Memory(config, embedder=embedder) as serving:
        serving.add_document("u1", TextInput("The loader retries a failed batch twice.", doc_id="loader"))
    for command in ("stats", "facts", "pin"):
        with Memory(config, embedder=embedder, command=command) as one_shot:
            one_shot.health()
            one_shot.facts.pin("u1", text="Never use tabs.")
            assert [f.value for f in one_shot.facts.list_facts("u1")] == ["tabs"]
            assert not one_shot.store._chroma.made and not one_shot._assembler.made
    with Memory(config, embedder=embedder, command="recall") as recalling:  # one that searches opens both
        assert "retries" in recalling.recall("u1", "how often does the loader retry?", 300).rendered
        assert recalling.store._chroma.made
        assert recalling.context(ContextRequest("u1", [{"role": "user", "content": "hi"}], window=4096)).report is not None
        assert recalling._assembler.made


def test_fresh_memory_is_zeroed_in_a_memory_command_and_left_alone_in_an_application(config: Config,
                                                                                      embedder: Embedder) -> None:
    """glibc's M_PERTURB holds for the whole process (memory.erase): "auto" turns it on in `memory serve`,
    `memory mcp` and the other commands, and leaves an application that imports the library as it is."""
    auto = config.replace("chroma", zero_fresh_memory="auto")
    with Memory(auto, embedder=embedder) as library:
        assert library.config.chroma.zero_fresh_memory == "off"
        assert library.health().fresh_memory_zeroed is False
    for command in ("serve", "mcp", "stats"):
        with Memory(auto, embedder=embedder, command=command) as ours:
            assert ours.config.chroma.zero_fresh_memory == "on"
            assert ours.health().fresh_memory_zeroed is True  # this machine's C library is glibc
    with Memory(auto.replace("chroma", zero_fresh_memory="off"), embedder=embedder, command="serve") as told:
        assert told.health().fresh_memory_zeroed is False  # a setting of "off" is kept, in any process
