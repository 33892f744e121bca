"""A browser tab on the inspector that screenshots each page it checks, and whose failed checks name the screenshot
of what the tab showed; Debian's Chromium, headless, driven by playwright (no browser is ever downloaded)."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import BrowserContext, Dialog, Locator, Page, expect, sync_playwright

from tests import ROOT

CHROMIUM = "/usr/bin/chromium"  # Debian's package (make installs it); playwright's own builds cannot be fetched
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / ".ui-screenshots"  # one folder per test module, emptied when the module starts
WAIT_MS = 15_000


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """One headless Chromium with a fresh profile folder, removed afterwards."""
    profile = Path(tempfile.mkdtemp(prefix="ui-profile-"))
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS, locale="en-US",
                viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(WAIT_MS)
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Screen:
    """One tab: opens inspector pages, answers the dialogs a test expects, and checks what is shown."""

    def __init__(self, page: Page, base_url: str, folder: Path) -> None:
        self.page = page
        self.base_url = base_url
        self.folder = folder
        self.unexpected_dialogs: list[str] = []
        self._answers: list[bool] = []
        self.asked: list[str] = []
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Dialog) -> None:
        if self._answers and dialog.type == "confirm":
            self.asked.append(dialog.message)
            dialog.accept() if self._answers.pop(0) else dialog.dismiss()
            return
        self.unexpected_dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def answer_next_confirm(self, accept: bool) -> None:
        """The next confirmation the page asks for is accepted (True) or dismissed (False)."""
        self._answers.append(accept)

    def open(self, path: str, fragment: str | None = None) -> None:
        """Load `path` (e.g. "/ui/facts?namespace=u1") and, when named, wait for its fragment to be shown."""
        self.page.goto(self.base_url + path)
        if fragment is not None:
            self.sees(f'[data-fragment="{fragment}"]')

    def shot(self, name: str) -> Path:
        """A screenshot of the whole page, saved as `name`.png in this module's folder; its path."""
        path = self.folder / (re.sub(r"[^\w.-]+", "-", name) + ".png")
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def check(self, condition: bool, message: str, name: str = "failed-check") -> None:
        """Fail with `message` and the path of a screenshot of the page unless `condition` holds."""
        if not condition:
            raise AssertionError(f"{message}; screenshot: {self.shot(name)}")

    def sees(self, selector: str, text: str | re.Pattern[str] | None = None, name: str = "missing") -> Locator:
        """The first element matching `selector` (and containing `text`, when given) once it is visible."""
        found = self.page.locator(selector)
        if text is not None:
            found = found.filter(has_text=text)
        found = found.first
        try:
            expect(found).to_be_visible()
        except AssertionError as exc:
            wanted = f"{selector!r}" + (f" containing {text!r}" if text is not None else "")
            raise AssertionError(f"the page does not show {wanted}: {str(exc).splitlines()[0]}; "
                                 f"screenshot: {self.shot(name)}") from None
        return found

    def lacks(self, selector: str, text: str | None = None, name: str = "unexpected") -> None:
        """No element matching `selector` (containing `text`, when given) is on the page."""
        found = self.page.locator(selector)
        if text is not None:
            found = found.filter(has_text=text)
        try:
            expect(found).to_have_count(0)
        except AssertionError:
            shown = found.first.inner_text()[:200]
            raise AssertionError(f"the page still shows {selector!r} ({shown!r}); screenshot: {self.shot(name)}") from None

    def recall(self, namespace: str, query: str, budget: int) -> str:
        """Run the recall playground for `query` within `budget` tokens; the rendered block it shows."""
        self.open(f"/ui/recall?namespace={namespace}", "recall")
        self.page.fill("#recall-form textarea[name=query]", query)
        self.page.fill("#recall-form input[name=budget]", str(budget))
        self.page.click("#recall-form button[type=submit]")
        return self.sees('#recall-result [data-fragment="recall-result"] #rendered').inner_text()

    def problem(self) -> str:
        """The error banner's text once it is shown."""
        return self.sees("#problem").inner_text()
