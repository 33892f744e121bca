"""A Chroma server's own tenancy: stores in two databases of one server keep the same namespace apart, and a
database the server does not have is refused in a sentence naming the settings."""

from __future__ import annotations

import uuid

import pytest

from bench.chroma_server import ChromaServer
from memory.config import Config
from memory.embedding import Embedder
from memory.errors import StoreError
from memory.service import Memory


def _on(config: Config, chroma: ChromaServer, database: str, folder: str) -> Config:
    return config.replace("service", data_dir=f"{config.service.data_dir}-{folder}").replace(
        "chroma", host="127.0.0.1", port=chroma.port, database=database)


@pytest.mark.parametrize(("text", "question"), [
    ("The nightly loader retries a failed batch twice.", "How often does the loader retry?"),
    ("夜间加载器失败的批次会重试两次。", "加载器会重试几次？"),
], ids=["en", "zh"])
def test_two_databases_of_one_server_keep_a_namespace_apart(config: Config, embedder: Embedder,
                                                           chroma_server: ChromaServer, text: str,
                                                           question: str) -> None:
    names = [f"d{uuid.uuid4().hex[:12]}" for _ in range(2)]
    for name in names:
        chroma_server.create_database(name)
    with Memory(_on(config, chroma_server, names[0], "a"), embedder=embedder) as a, \
            Memory(_on(config, chroma_server, names[1], "b"), embedder=embedder) as b:
        assert a.health().chroma == f"http://127.0.0.1:{chroma_server.port}/default_tenant/{names[0]}"
        a.add_document("shared", text)
        assert a.store.collection("shared", create=False) is not None
        assert b.store.collection("shared", create=False) is None  # same namespace, same collection name, elsewhere
        assert [i.snippet.text for i in a.recall("shared", question, 300).items] == [text]
        assert not b.recall("shared", question, 300).items


def test_a_database_the_server_lacks_is_refused_naming_the_settings(config: Config, embedder: Embedder,
                                                                    chroma_server: ChromaServer) -> None:
    with pytest.raises(StoreError, match=r"has no tenant 'default_tenant' with a database 'no-such-db' "
                                         r"\(\[chroma\] tenant, database\)"):
        Memory(_on(config, chroma_server, "no-such-db", "c"), embedder=embedder)  # refused at start
