"""The other pages in headless Chromium against a real `memory serve` (no keys) holding English and Chinese data:
namespaces with counts per tier, documents and turns with their chunks, search, the recall playground, the context
view, a task's items read page by page, and stored `<script>` shown as text. Screenshots go to
.ui-screenshots/test_pages/."""

from __future__ import annotations

import json
import re

from bench.server_process import ServerProcess
from tests.ui.data import SCRIPT_DOC, SCRIPT_DOC_ID, SCRIPT_FACT, facts_of, rest
from tests.ui.screen import Screen


def test_namespaces_show_counts_per_tier(screen: Screen, server: ServerProcess) -> None:
    screen.open("/ui", "namespaces")
    screen.shot("namespaces")
    row = screen.sees('#namespaces tr[data-namespace="u1"]')
    documents = rest(server.url, "GET", "/v1/documents", params={"namespace": "u1"})["documents"]
    expected = {"facts": len(facts_of(server.url, "u1")), "pinned": sum(f["pinned"] for f in facts_of(server.url, "u1")),
                "documents": sum(d["kind"] == "document" for d in documents),
                "memories": sum(d["kind"] == "memory" for d in documents),
                "chunks": sum(d["chunks"] for d in documents), "tasks": 1, "task_items": 3}
    shown = {name: int(row.locator(f'[data-count="{name}"]').inner_text()) for name in expected}
    screen.check(shown == expected, f"counts shown {shown}, stored {expected}", "namespaces-counts")
    screen.sees('#namespaces tr[data-namespace="flow"]')
    row.get_by_role("link", name="facts").click()
    screen.sees('[data-fragment="facts"] h1', "u1")


def test_documents_turns_chunks_and_search(screen: Screen, server: ServerProcess) -> None:
    screen.open("/ui/documents?namespace=u1", "documents")
    screen.shot("documents")
    screen.sees('#documents tr[data-doc-id="loader.md"]', "The CSV loader")
    screen.sees('#documents tr[data-doc-id="铁路.md"]', "京沪高铁")
    screen.sees("#turns tr", "Anna")
    screen.sees("#turns tr", "小王")
    screen.sees('#documents tr[data-doc-id="loader.md"]').get_by_role("button", name="Chunks").click()
    screen.sees('#chunks [data-fragment="chunks"]', "The CSV loader")
    screen.shot("document-chunks")
    document = rest(server.url, "GET", "/v1/documents/loader.md", params={"namespace": "u1"})
    tokens = [int(t) for t in screen.page.locator("#chunk-list td.tokens").all_inner_texts()]
    screen.check(len(tokens) == document["chunks"] >= 2 and sum(tokens) == document["tokens"],
                 f"chunk tokens {tokens} against the document's {document['chunks']} chunks, {document['tokens']} "
                 "tokens", "chunk-tokens")
    texts = screen.page.locator("#chunk-list td.text").all_inner_texts()
    screen.check("streams rows in batches of 500" in texts[0] and "loader.toml" in texts[-1],
                 f"chunks in reading order: {[t[:40] for t in texts]}", "chunk-order")

    screen.page.fill("#search-form input[name=query]", "京沪高铁最高时速是多少？")
    screen.page.click("#search-form button[type=submit]")
    first = screen.sees('#search-hits tbody tr:first-child')
    screen.shot("documents-search")
    screen.check(first.get_attribute("data-doc-id") == "铁路.md", "the Chinese document is found first", "search")
    ranks = first.locator("td").nth(3).inner_text()
    screen.check(ranks.startswith("#1"), f"its lexical rank is shown: {ranks!r}", "search-rank")


def test_deleting_a_document_asks_first(screen: Screen, server: ServerProcess) -> None:
    rest(server.url, "POST", "/v1/documents", json={"namespace": "u1", "text": "A note to throw away.", "doc_id": "scrap"})
    screen.open("/ui/documents?namespace=u1", "documents")
    screen.answer_next_confirm(False)
    screen.sees('#documents tr[data-doc-id="scrap"]').get_by_role("button", name="Delete").click()
    screen.page.wait_for_timeout(300)
    screen.sees('#documents tr[data-doc-id="scrap"]')
    screen.answer_next_confirm(True)
    screen.sees('#documents tr[data-doc-id="scrap"]').get_by_role("button", name="Delete").click()
    screen.sees("#main .notice", "Deleted scrap")
    screen.lacks('#documents tr[data-doc-id="scrap"]')
    ids = [d["doc_id"] for d in rest(server.url, "GET", "/v1/documents", params={"namespace": "u1"})["documents"]]
    screen.check("scrap" not in ids and screen.asked[-1].startswith("Delete scrap"), f"deleted: {ids}", "doc-gone")


def test_the_recall_playground_shows_the_block_its_tokens_and_what_was_left_out(screen: Screen,
                                                                                 server: ServerProcess) -> None:
    query, budget = "How does the CSV loader handle rejected rows?", 120
    rendered = screen.recall("u1", query, budget)
    screen.shot("recall")
    agent = rest(server.url, "POST", "/v1/recall", json={"namespace": "u1", "query": query, "budget": budget})
    screen.check(rendered.strip() == agent["rendered"].strip(), "the block is the one the agent gets", "rendered")
    used = int(screen.sees("#used-tokens").inner_text())
    screen.check(used == agent["used_tokens"], f"used {used}, agent {agent['used_tokens']}", "used")
    legend = {li.get_attribute("data-part"): int(li.locator(".tokens").inner_text())
              for li in screen.page.locator(".tokenbar li").all()}
    for tier in ("fact", "experience"):
        expected = sum(i["tokens"] for i in agent["items"] if i["tier"] == tier)
        screen.check(legend.get(tier) == expected, f"{tier}: bar {legend.get(tier)}, items {expected}", "bar")
    screen.check(sum(legend.values()) == budget, f"the bar adds up to the budget: {legend}", "bar-total")
    screen.check(screen.page.locator(".tokenbar rect").count() == len(legend), "one segment per part", "rects")
    omitted = {tr.get_attribute("data-reason"): int(tr.locator("td").inner_text())
               for tr in screen.page.locator("#omitted tr").all()}
    wanted = {"below threshold": agent["omitted"]["below_threshold"], "over budget": agent["omitted"]["over_budget"],
              "duplicate": agent["omitted"]["duplicate"]}
    screen.check(all(omitted[k] == v for k, v in wanted.items()) and omitted["over budget"] > 0,
                 f"omitted {omitted}, agent {agent['omitted']}", "omitted")
    rows = screen.page.locator("#items tbody tr")
    screen.check(rows.count() == len(agent["items"]), "one row per item", "items")
    experience = screen.sees('#items tr[data-tier="experience"] td.why')
    screen.check(bool(re.search(r"dense #\d+", experience.inner_text())), "each retriever's rank is shown", "why")
    screen.sees('#items tr[data-tier="experience"]', re.compile(r"updated \d{4}-\d\d-\d\d"))


def test_the_context_view_of_a_pasted_turn(screen: Screen) -> None:
    big = "\n".join(f"{i},order-{i},shipped,2026-05-{i % 28 + 1:02d}" for i in range(1, 700))
    messages = [
        {"role": "system", "content": "You are a careful data engineer."},
        {"role": "user", "content": "How should I write the CSV loader?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.csv\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": big},
        {"role": "user", "content": "导入时出错的行要怎么处理？"},
    ]
    screen.open("/ui/context?namespace=ctx", "context")
    screen.page.fill("#context-form textarea[name=messages]", json.dumps(messages, ensure_ascii=False))
    screen.page.fill("#context-form input[name=window]", "16000")
    screen.page.click("#context-form button[type=submit]")
    screen.sees('#context-result [data-fragment="context-result"]')
    screen.shot("context")
    tokens = {tr.get_attribute("data-category"): int(tr.locator("td").first.inner_text())
              for tr in screen.page.locator("#categories tbody tr").all()}
    total = int(screen.sees("#total-tokens").inner_text())
    screen.check(sum(tokens.values()) == total and tokens["system"] > 0 and tokens["current"] > 0,
                 f"the categories {tokens} add up to the total {total}", "categories")
    legend = sum(int(t) for t in screen.page.locator(".tokenbar li .tokens").all_inner_texts())
    screen.check(legend == int(screen.sees("#available").inner_text()), "the bar spans the room", "context-bar")
    kinds = screen.page.locator("#actions tbody tr").evaluate_all("rows => rows.map(r => r.dataset.kind)")
    screen.check(bool(kinds), f"the big tool result was acted on: {kinds}", "actions")
    screen.sees("#sent li[data-role=system]", "careful data engineer")
    screen.sees("#sent li[data-role=user]", "导入时出错的行要怎么处理")


def test_a_tasks_items_by_kind_and_an_offloaded_item_page_by_page(screen: Screen, server: ServerProcess) -> None:
    screen.open("/ui/tasks?namespace=u1", "tasks")
    task = screen.sees('#tasks tr[data-task-id="t-42"]')
    screen.check(task.locator("td.expires").inner_text().strip() != "", "the task's expiry is shown", "expiry")
    task.get_by_role("button", name="Items").click()
    screen.sees('#task-items [data-fragment="task-items"]')
    screen.shot("task-items")
    kinds = screen.page.locator("#task-items table[data-kind]").evaluate_all("ts => ts.map(t => t.dataset.kind)")
    screen.check(kinds == ["plan", "note", "tool_result"], f"items grouped by kind: {kinds}", "kinds")
    screen.sees('table[data-kind="plan"] td.text', "先读文件")
    offloaded = screen.sees('table[data-kind="tool_result"] tr', "offloaded")
    offloaded.get_by_role("button", name="Read by page").click()
    page = screen.sees('#task-page [data-fragment="task-page"]')
    item = rest(server.url, "GET", "/v1/tasks/t-42/items/t-42/r3", params={"namespace": "u1", "page": 1})
    screen.check(page.get_attribute("data-pages") == str(item["pages"]) and item["pages"] > 1,
                 f"pages {page.get_attribute('data-pages')}, stored {item['pages']}", "pages")
    first = screen.sees("#task-page pre.page-text").inner_text()
    screen.check(first.startswith("line 1:") and first.strip() == item["text"].strip(), "page 1 as stored", "page1")
    screen.shot("task-page-1")
    screen.page.locator("#task-page button.next").click()
    screen.sees('#task-page [data-page="2"]')
    second = screen.sees("#task-page pre.page-text").inner_text()
    screen.shot("task-page-2")
    screen.check("line 1:" not in second and second != first, "page 2 follows page 1", "page2")
    screen.sees("#task-page button.previous")

    screen.open("/ui/tasks?namespace=u1", "tasks")  # a task opened by its id
    screen.page.fill("#main input[name=task_id]", "t-42")
    screen.page.press("#main input[name=task_id]", "Enter")
    screen.sees('#task-items [data-fragment="task-items"][data-task-id="t-42"]')


def test_stored_script_shows_as_text_and_never_runs(screen: Screen, server: ServerProcess) -> None:
    screen.open("/ui/facts?namespace=u1", "facts")
    screen.sees("#facts td.text", SCRIPT_FACT)
    screen.check(screen.page.locator("#facts script").count() == 0, "no script element in the facts", "script")
    screen.shot("script-fact")
    screen.open("/ui/documents?namespace=u1", "documents")
    row = screen.sees("#documents tbody tr", SCRIPT_DOC_ID)
    screen.check(row.get_attribute("data-doc-id") == SCRIPT_DOC_ID and "<i>title</i>" in row.inner_text(),
                 "the id (in an attribute too) and the title are shown as sent", "script-doc-row")
    row.get_by_role("button", name="Chunks").click()
    screen.sees("#chunk-list td.text", SCRIPT_DOC)
    screen.check(screen.page.locator("#main img, #main script, #main i").count() == 0,
                 "no element made from stored text", "script-doc")
    screen.shot("script-document")
    rendered = screen.recall("u1", "What must stay text in the inspector?", 400)
    screen.check("<script>alert('fact')</script>" in rendered and "<script>alert('doc')</script>" in rendered,
                 f"the block shows both literally: {rendered!r}", "script-recall")
    screen.page.wait_for_timeout(300)
    screen.check(screen.unexpected_dialogs == [], f"nothing ran: {screen.unexpected_dialogs}", "no-dialog")
