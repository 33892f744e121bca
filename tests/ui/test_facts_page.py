"""The facts page in headless Chromium against a real `memory serve` (no keys) holding English and Chinese facts:
facts in force pinned first, a key's versions, the extract preview that stores nothing until saved, a delete that
asks first, and pin → recall → unpin. Screenshots go to .ui-screenshots/test_facts_page/."""

from __future__ import annotations

import re

from bench.server_process import ServerProcess
from tests.ui.data import BUDGET_AGAIN, FLOW_VALUE, PREFERENCE, facts_of, rest
from tests.ui.screen import Screen


def test_facts_in_force_pinned_first_with_kind_scope_value_and_clause(screen: Screen, server: ServerProcess) -> None:
    screen.open("/ui/facts?namespace=u1", "facts")
    screen.shot("facts")
    rows = screen.page.locator("#facts tbody tr")
    pinned = [rows.nth(i).get_attribute("data-pinned") for i in range(rows.count())]
    screen.check(pinned == sorted(pinned, reverse=True) and pinned[0] == "true",
                 f"pinned facts come first, got {pinned}", "facts-order")
    stored = {f["id"]: f for f in facts_of(server.url, "u1")}
    screen.check(len(stored) == rows.count(), f"{rows.count()} rows for {len(stored)} facts", "facts-count")
    for fact in stored.values():
        row = screen.sees(f'#facts tr[data-fact-id="{fact["id"]}"]')
        cells = row.locator("td")
        shown = [cells.nth(i).inner_text() for i in (1, 2, 3, 4, 5)]
        expected = [fact["kind"], fact["scope"], fact["key"], fact["value"], fact["text"]]
        screen.check(shown == expected, f"fact {fact['id']} shows {shown}, stored {expected}", "facts-row")
    screen.sees('#facts tr[data-pinned="true"] td.text', "不要用Python 2的语法")
    screen.sees('#facts tr[data-pinned="true"] td.text', "Never use Python 2 syntax.")
    screen.sees('#facts tr[data-pinned="false"] td.text', PREFERENCE)


def test_a_facts_version_history(screen: Screen) -> None:
    screen.open("/ui/facts?namespace=u1", "facts")
    budget = screen.sees("#facts tr", BUDGET_AGAIN)
    budget.get_by_role("button", name="History").click()
    screen.sees('#history [data-fragment="fact-history"]')
    screen.shot("fact-history")
    versions = screen.page.locator("#versions tbody tr")
    screen.check(versions.count() == 2, f"two versions of the budget, shown {versions.count()}", "history-count")
    screen.sees('#versions tr[data-version="1"] td.value', "500 CNY")
    screen.sees('#versions tr[data-version="2"].current td.value', "800 CNY")
    screen.sees('#versions tr[data-version="1"] td.text', "预算不超过500元")


def test_the_extract_preview_stores_nothing_until_saved(screen: Screen, server: ServerProcess) -> None:
    before = facts_of(server.url, "u1")
    screen.open("/ui/facts?namespace=u1", "facts")
    screen.page.fill("#extract-form textarea[name=text]", "Always answer in British English. 今天天气很好。预算不超过800元。")
    screen.page.click("#preview-button")
    screen.sees('#preview [data-fragment="fact-preview"]', "nothing has been stored")
    screen.shot("extract-preview")
    screen.sees('#preview tr[data-outcome="stored"] td.outcome', "would be stored")
    screen.sees('#preview tr[data-outcome="stored"] td.text', "British English")
    screen.sees('#preview tr[data-outcome="stored"] .fact-line .rule', re.compile(r"^by \S+"))  # why it was read
    ignored = screen.sees('#preview tr[data-outcome="ignored"]', "今天天气很好")
    screen.check(bool(ignored.locator("td.reason").inner_text().strip()), "an ignored sentence says why", "reason")
    screen.sees('#preview tr[data-outcome="ignored"] td.reason', re.compile(r"already known: same value as f-"))
    screen.check(facts_of(server.url, "u1") == before, "the preview stored nothing", "preview-stored")
    screen.lacks("#facts td.text", "British English", "preview-listed")

    screen.page.click("#save-button")
    screen.sees("#saved", "Saved")
    screen.shot("extract-saved")
    screen.sees('#saved tr[data-outcome="stored"] td.outcome', "stored")
    screen.sees("#facts td.text", "Always answer in British English.")
    after = facts_of(server.url, "u1")
    added = [f for f in after if f["id"] not in {b["id"] for b in before}]
    screen.check(len(added) == 1 and "British" in added[0]["value"] and added[0]["source"] == "web inspector",
                 f"saving stored the one new fact, got {added}", "saved-fact")


def test_delete_asks_first_and_dismissing_keeps_the_fact(screen: Screen, server: ServerProcess) -> None:
    rest(server.url, "POST", "/v1/facts", json={"namespace": "u1", "text": "Never use tabs for indentation."})
    fact = next(f for f in facts_of(server.url, "u1") if "tabs" in f["text"])
    screen.open("/ui/facts?namespace=u1", "facts")
    row = f'#facts tr[data-fact-id="{fact["id"]}"]'
    screen.answer_next_confirm(False)
    screen.sees(row).get_by_role("button", name="Delete").click()
    screen.page.wait_for_timeout(300)
    screen.check(screen.asked and fact["key"] in screen.asked[-1], f"the page asked first: {screen.asked}", "asked")
    screen.sees(row)
    screen.check(any(f["id"] == fact["id"] for f in facts_of(server.url, "u1")), "dismissed: still stored", "dismissed")
    screen.answer_next_confirm(True)
    screen.sees(row).get_by_role("button", name="Delete").click()
    screen.sees("#main .notice", "Deleted")
    screen.shot("fact-deleted")
    screen.lacks(row)
    screen.check(all(f["id"] != fact["id"] for f in facts_of(server.url, "u1")), "accepted: deleted", "deleted")


def test_pin_then_recall_then_unpin(screen: Screen, server: ServerProcess) -> None:
    query = "How should I write the CSV loader?"
    before = screen.recall("flow", query, 300)
    screen.check(FLOW_VALUE not in before and "CSV loader" in before, f"unpinned, not recalled: {before!r}", "before")
    screen.open("/ui/facts?namespace=flow", "facts")
    row = screen.sees('#facts tr[data-pinned="false"]', FLOW_VALUE)
    fact_id = row.get_attribute("data-fact-id")
    row.get_by_role("button", name="Pin").click()
    screen.sees("#main .notice", "Pinned")
    screen.sees('#facts tr[data-fact-id][data-pinned="true"]', FLOW_VALUE)
    screen.shot("flow-pinned")
    screen.check(any(f["pinned"] and FLOW_VALUE in f["value"] for f in facts_of(server.url, "flow")), "pinned in the store")

    rendered = screen.recall("flow", query, 300)
    screen.shot("flow-recall-pinned")
    bullets = [line for line in rendered.splitlines() if line.startswith("- ")]
    screen.check(bool(bullets) and FLOW_VALUE in bullets[0], f"the pinned fact comes first: {rendered!r}", "first")
    screen.sees("#items tbody tr:first-child", "pinned")

    screen.open("/ui/facts?namespace=flow", "facts")
    current = screen.sees('#facts tr[data-pinned="true"]', FLOW_VALUE)
    screen.check(current.get_attribute("data-fact-id") != fact_id, "a change of pinning is a new version")
    current.get_by_role("button", name="Unpin").click()
    screen.sees("#main .notice", "Unpinned")
    screen.sees('#facts tr[data-pinned="false"]', FLOW_VALUE)
    screen.lacks('#facts tr[data-pinned="true"]')
    screen.shot("flow-unpinned")

    rendered = screen.recall("flow", query, 300)
    screen.shot("flow-recall-unpinned")
    screen.check(FLOW_VALUE not in rendered and "CSV loader" in rendered,
                 f"an unrelated recall no longer holds the unpinned fact: {rendered!r}", "unpinned-recall")
