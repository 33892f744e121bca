"""The inspector's browser tests: one real `memory serve` (no keys, the English and Chinese data of tests.ui.data)
and one headless Chromium per module, a fresh tab per test, a screenshot folder per module
(.ui-screenshots/<module>/), and a screenshot of the tab named in the report of any test that fails. A module that
needs another server (with keys) defines its own `server` and `screen`."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext

from bench.server_process import ServerProcess, logged_errors
from tests.ui.data import seed
from tests.ui.screen import SCREENSHOTS, Screen, chromium


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The service without keys, holding tests.ui.data's facts, documents, turns and task; its log must stay clean."""
    folder = tmp_path_factory.mktemp("ui")
    with ServerProcess(folder / "data", folder / "server.log") as running:
        seed(running.url)
        yield running
        assert logged_errors(running.log_text()) == []


@pytest.fixture(scope="module")
def shots(request: pytest.FixtureRequest) -> Path:
    """This module's screenshot folder, emptied first."""
    folder = SCREENSHOTS / request.module.__name__.rsplit(".", 1)[-1]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    """Debian's Chromium, headless, with a fresh profile, for the whole module."""
    with chromium() as context:
        yield context


@pytest.fixture()
def new_screen(browser: BrowserContext, shots: Path) -> Iterator[Callable[[str], Screen]]:
    """Opens tabs on a base URL (each tab has its own session storage); at the end, none may have seen a dialog
    the test did not expect (an `alert` from stored text would be one)."""
    opened: list[Screen] = []

    def make(base_url: str) -> Screen:
        screen = Screen(browser.new_page(), base_url, shots)
        opened.append(screen)
        return screen

    yield make
    for screen in opened:
        assert screen.unexpected_dialogs == [], f"dialogs nobody expected: {screen.unexpected_dialogs}"
        screen.page.close()


@pytest.fixture()
def screen(new_screen: Callable[[str], Screen], server: ServerProcess) -> Screen:
    """A fresh tab on the module's server."""
    return new_screen(server.url)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report = outcome.get_result()
    screen = item.funcargs.get("screen") if hasattr(item, "funcargs") else None
    if report.when == "call" and report.failed and isinstance(screen, Screen) and not screen.page.is_closed():
        try:
            path = screen.shot(f"{item.name}-at-failure")
        except Exception as exc:  # the browser itself may be what failed
            report.sections.append(("screenshot", f"none could be taken: {exc}"))
        else:
            report.sections.append(("screenshot", str(path)))
