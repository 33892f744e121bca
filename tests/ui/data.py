"""The real data the inspector's tests look at, put in through the REST API in English and Chinese."""

from __future__ import annotations

from typing import Any

import httpx

FACT_EN = "Never use Python 2 syntax."
FACT_ZH = "以后不要用Python 2的语法，预算不超过500元。"
PREFERENCE = "I prefer dark roast coffee."
BUDGET_AGAIN = "预算不超过800元。"  # a second version of the budget: a history of two
SCRIPT_FACT = "<script>alert('fact')</script> is what the page must show as text"
SCRIPT_DOC = "<script>alert('doc')</script><img src=x onerror=\"alert('img')\"> must stay text in the inspector."
SCRIPT_DOC_ID = "notes/<b>bold</b> & \"quoted\".md"

LOADER = """# The CSV loader

The CSV loader streams rows in batches of 500 and retries a failed batch twice before giving up. It never loads a
whole file into memory, because the nightly exports reach several gigabytes, and it reports its progress every
ten thousand rows so that the operator can see that it is still alive.

## Rejected rows

A row that fails validation is written to the reject file together with its line number and the reason it was
refused. The reject file sits next to the input file, and its name ends in .rejects.csv. A batch whose rows are
all rejected counts as failed, and after three failed batches in a row the loader stops with exit status 3.

## Configuration

The loader reads its settings from loader.toml: the batch size, the number of retries, the target table and the
column mapping. An unknown setting stops it at start-up with a message naming the setting, so that a misspelt key
is never silently ignored.
"""
RAILWAY = """# 京沪高速铁路

京沪高速铁路全长一千三百多公里，二零一一年开通运营，最高时速三百五十公里。

沿途经过济南、徐州和南京，北京到上海最快只要四个多小时。
"""
TURNS = [{"text": "I moved to Berlin last May.", "speaker": "Anna", "timestamp": "2026-06-01T10:00:00Z"},
         {"text": "我们每天早上都在河边散步。", "speaker": "小王", "timestamp": "2026-06-01T10:05:00Z"}]
LONG_RESULT = "\n".join(f"line {i}: the loader read row {i} of the export and wrote it to the orders table."
                        for i in range(1, 121))

FLOW_PREFERENCE = "我喜欢喝绿茶。"
FLOW_VALUE = "喝绿茶"  # the value the rules read in it
FLOW_GUIDE = ("Writing the CSV loader: stream the rows in batches, validate each row against the schema, and write "
              "rejected rows to a reject file with their line numbers.")


def seed(url: str) -> None:
    """Facts, documents, conversation turns and a task with an offloaded item in "u1"; a preference and a guide
    in "flow" (for pin, recall, unpin); each request must succeed."""
    with httpx.Client(base_url=url, timeout=120) as http:
        def post(path: str, body: dict[str, object]) -> None:
            answer = http.post(path, json=body)
            assert answer.status_code == 200, (path, answer.text)

        for text in (FACT_EN, FACT_ZH, PREFERENCE, BUDGET_AGAIN):
            post("/v1/facts", {"namespace": "u1", "text": text})
        post("/v1/facts/pin", {"namespace": "u1", "text": SCRIPT_FACT})
        post("/v1/documents", {"namespace": "u1", "text": LOADER, "title": "The CSV loader", "doc_id": "loader.md"})
        post("/v1/documents", {"namespace": "u1", "text": RAILWAY, "title": "京沪高铁", "doc_id": "铁路.md"})
        post("/v1/documents", {"namespace": "u1", "text": SCRIPT_DOC, "title": "<i>title</i>", "doc_id": SCRIPT_DOC_ID})
        post("/v1/memories", {"namespace": "u1", "messages": TURNS})
        post("/v1/tasks/t-42/items", {"namespace": "u1", "kind": "plan", "text": "先读文件，再写入数据库。"})
        post("/v1/tasks/t-42/items", {"namespace": "u1", "kind": "note", "text": "The loader must stream rows."})
        post("/v1/tasks/t-42/items", {"namespace": "u1", "kind": "tool_result", "text": LONG_RESULT})
        post("/v1/facts", {"namespace": "flow", "text": FLOW_PREFERENCE})
        post("/v1/documents", {"namespace": "flow", "text": FLOW_GUIDE, "title": "loader guide", "doc_id": "guide"})


def rest(url: str, method: str, path: str, **kwargs: Any) -> Any:
    """The JSON answer of a REST call that must succeed."""
    answer = httpx.request(method, url + path, timeout=120, **kwargs)
    assert answer.status_code == 200, answer.text
    return answer.json()


def facts_of(url: str, namespace: str) -> list[dict[str, Any]]:
    """The namespace's facts in force, as GET /v1/facts answers."""
    return list(rest(url, "GET", "/v1/facts", params={"namespace": namespace})["facts"])
