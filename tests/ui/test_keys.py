"""The inspector behind API keys, in headless Chromium against a real `memory serve` with [auth.keys]: it asks for a
key, says so when a key is wrong, keeps the right one in the tab's session storage only (no local storage, no
cookie), and a key limited to "alice" sees nothing of "bob"."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest

from bench.server_process import ServerProcess, logged_errors
from tests.ui.screen import Screen

ADMIN = "k-admin-ui-7f3a"
ALICE = "k-alice-ui-91c2"
ALICE_FACT = "Never use Python 2 syntax."
BOB_FACT = "以后不要用表格，预算不超过300元。"
STORAGE_KEY = "context-memory-inspector-key"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("ui-keys")
    config = folder / "keys.toml"
    config.write_text(f'[auth.keys]\n"{ADMIN}" = ["*"]\n"{ALICE}" = ["alice"]\n', encoding="utf-8")
    with ServerProcess(folder / "data", folder / "server.log", config_file=config) as running:
        with httpx.Client(base_url=running.url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=120) as http:
            for namespace, text in (("alice", ALICE_FACT), ("bob", BOB_FACT)):
                assert http.post("/v1/facts", json={"namespace": namespace, "text": text}).status_code == 200
            assert http.post("/v1/documents", json={"namespace": "bob", "text": "Bob's private plans for May.",
                                                    "doc_id": "bob-plans"}).status_code == 200
        yield running
        assert logged_errors(running.log_text()) == []


@pytest.fixture()
def screen(new_screen: Callable[[str], Screen], server: ServerProcess) -> Screen:
    return new_screen(server.url)


def give_key(screen: Screen, key: str) -> None:
    screen.sees("#key-panel")
    screen.page.fill("#key-input", key)
    screen.page.click("#key-form button[type=submit]")


def stored_key(screen: Screen) -> str | None:
    value = screen.page.evaluate(f"() => sessionStorage.getItem({STORAGE_KEY!r})")
    return value if isinstance(value, str) else None


def test_the_page_asks_for_a_key_and_says_when_one_is_wrong(screen: Screen) -> None:
    screen.open("/ui/facts?namespace=alice")
    screen.sees("#key-message", "needs an API key")
    screen.shot("asks-for-key")
    screen.lacks("[data-fragment]")
    give_key(screen, "k-wrong-000000")
    screen.sees("#key-message", "The key was not accepted")
    screen.sees("#key-message", "not configured on this service")
    screen.shot("wrong-key")
    screen.check(stored_key(screen) is None, "a refused key is not kept", "wrong-key-kept")
    screen.lacks("[data-fragment]")


def test_the_right_key_is_kept_in_session_storage_only(screen: Screen, server: ServerProcess,
                                                        new_screen: Callable[[str], Screen]) -> None:
    screen.open("/ui/facts?namespace=alice")
    give_key(screen, ALICE)
    screen.sees("#facts td.text", ALICE_FACT)
    screen.shot("right-key")
    screen.check(screen.page.locator("#key-panel").is_hidden(), "the key panel is gone", "key-panel")
    screen.check(stored_key(screen) == ALICE, "the key is in session storage", "session-storage")
    local = screen.page.evaluate("() => localStorage.length")
    cookies = screen.page.context.cookies(server.url)
    screen.check(local == 0 and cookies == [] and "k-" not in screen.page.evaluate("() => document.cookie"),
                 f"nothing else holds it: localStorage {local}, cookies {cookies}", "other-storage")
    screen.open("/ui/documents?namespace=alice", "documents")  # the same tab keeps it across pages
    screen.lacks("#key-panel:visible")

    other = new_screen(server.url)  # another tab has its own session storage
    other.open("/ui/facts?namespace=alice")
    other.sees("#key-message", "needs an API key")
    other.shot("new-tab-asks-again")

    screen.page.click("#forget-key")
    screen.sees("#key-message", "needs an API key")
    screen.check(stored_key(screen) is None, "forgotten", "forgotten")


def test_a_key_for_alice_sees_nothing_of_bob(screen: Screen) -> None:
    screen.open("/ui/facts?namespace=bob")
    give_key(screen, ALICE)
    problem = screen.problem()
    screen.shot("alice-on-bob")
    screen.check("404" in problem and "namespace 'bob' does not exist" in problem, f"refused: {problem!r}", "404")
    screen.lacks("[data-fragment]")
    for path in ("/ui/documents?namespace=bob", "/ui/tasks?namespace=bob", "/ui/recall?namespace=bob"):
        screen.open(path)
        screen.check("does not exist" in screen.problem(), f"{path} is refused", "bob-page")
    screen.open("/ui/namespaces", "namespaces")
    screen.shot("alice-namespaces")
    screen.sees('#namespaces tr[data-namespace="alice"]')
    screen.lacks('#namespaces tr[data-namespace="bob"]')
    screen.check("表格" not in screen.page.content() and "bob" not in screen.page.locator("#main").inner_text(),
                 "no trace of bob's facts", "bob-trace")


def test_an_operators_key_sees_every_namespace(screen: Screen) -> None:
    screen.open("/ui/namespaces")
    give_key(screen, ADMIN)
    screen.sees('#namespaces tr[data-namespace="alice"]')
    bob = screen.sees('#namespaces tr[data-namespace="bob"]')
    screen.shot("admin-namespaces")
    screen.check(bob.locator('[data-count="documents"]').inner_text() == "1", "bob's counts", "admin-counts")
    screen.open("/ui/facts?namespace=bob", "facts")
    screen.sees("#facts td.text", "不要用表格")
