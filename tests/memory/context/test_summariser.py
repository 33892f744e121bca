"""The model summariser against a real local chat-completions server: the request it sends, the extractive items it
keeps, the budget it fits exactly, and the extractive summary (with a warning) whenever the endpoint fails."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memory.config import Config, SummariserConfig
from memory.context import ContextRequest, parse_messages
from memory.context.summariser import ModelSummariser
from memory.context.summary import Summary, summarise
from memory.embedding import Embedder
from memory.service import Memory
from memory.tokens import TokenCounter

ENGLISH = [
    {"role": "user", "content": "Fix the login bug in src/app/main.py. Never use Python 2 syntax."},
    {"role": "assistant", "content": "I will use httpx instead of urllib. I fixed src/app/main.py; the spec is at https://example.com/x."},
    {"role": "user", "content": "Next, check order id ORD-48213: its refund failed."},
]
CHINESE = [
    {"role": "user", "content": "帮我订去上海的酒店，预算不超过500元。订单号 ORD-48213。"},
    {"role": "assistant", "content": "我决定用 https://example.com/x 的接口。已完成：配置写入 src/app/main.py。"},
    {"role": "user", "content": "下一步还需要确认入住日期 2026-12-01。"},
]
SPANS = {"english": (ENGLISH, ["Never use Python 2 syntax."]), "chinese": (CHINESE, ["预算不超过500元。"])}
GOOD = {
    "english": "### User constraints\n- Never use Python 2 syntax.\n### Open\n- Check why the refund of order ORD-48213 failed.\n"
               "### Done\n- The login bug in src/app/main.py is fixed (spec: https://example.com/x), using httpx.\n"
               "### References\n- t1/r1",
    "chinese": "### User constraints\n- 预算不超过500元。\n### Open\n- 确认入住日期 2026-12-01（订单号 ORD-48213）。\n"
               "### Done\n- 已用 https://example.com/x 的接口，配置写入 src/app/main.py。\n### References\n- t1/r1",
}
BUDGET = 400


@dataclass
class Endpoint:
    """What the fake chat-completions server answers, and the requests it got."""

    url: str
    status: int = 200
    body: bytes = b""
    delay_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, content: str | None, finish_reason: str = "stop") -> None:
        """Answer a chat completion whose message holds `content`."""
        self.body = completion(content, finish_reason)


def completion(content: str | None, finish_reason: str = "stop") -> bytes:
    """A chat-completions answer body."""
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
    return json.dumps({"id": "x", "object": "chat.completion", "choices": [choice]}).encode()


@pytest.fixture()
def endpoint() -> Iterator[Endpoint]:
    """A real HTTP server on 127.0.0.1 speaking POST /v1/chat/completions."""
    state = Endpoint(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            state.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)})
            time.sleep(state.delay_s)
            try:
                self.send_response(state.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(state.body)))
                self.end_headers()
                self.wfile.write(state.body)
            except OSError:  # the client gave up (the timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.block_on_close = False
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def extractive(counter: TokenCounter, language: str, budget: int = BUDGET) -> tuple[Any, Summary]:
    span, constraints = SPANS[language]
    messages = parse_messages(span)
    return messages, summarise(messages, counter, budget, constraints=constraints, references=["t1/r1"])


def summariser(endpoint: Endpoint, counter: TokenCounter, **settings: Any) -> ModelSummariser:
    values: dict[str, Any] = {"enabled": True, "base_url": endpoint.url, "model": "qwen-mini", "api_key": "sk-test"}
    return ModelSummariser(SummariserConfig(**(values | settings)), counter)


def kept_items(summary: Summary) -> list[str]:
    return [item for name in ("User constraints", "Key data", "References") for item in summary.sections[name]]


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_a_summary_that_keeps_everything_is_used_as_written(endpoint: Endpoint, counter: TokenCounter,
                                                              language: str) -> None:
    messages, floor = extractive(counter, language)
    endpoint.answer(GOOD[language])
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert warnings == []
    assert result.text == f"## Summary of messages[0] to messages[2]\n{GOOD[language]}"
    assert all(item in result.text for item in kept_items(floor))
    assert result.tokens == counter.count(result.text) <= BUDGET
    assert (result.sections, result.first, result.last) == (floor.sections, floor.first, floor.last)

    [request] = endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("qwen-mini", 0, BUDGET)
    system, user = body["messages"]
    assert system["role"] == "system"
    assert "English or Chinese" in system["content"] and "exactly as written" in system["content"]
    assert user["role"] == "user"
    assert f"user: {SPANS[language][0][0]['content']}" in user["content"]
    assert all(f"- {item}" in user["content"] for item in kept_items(floor))


def test_no_api_key_sends_no_authorization_and_a_trailing_slash_is_dropped(endpoint: Endpoint,
                                                                           counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "english")
    endpoint.answer(GOOD["english"])
    model = summariser(endpoint, counter, api_key="", base_url=endpoint.url + "/")
    assert model.name == "model:qwen-mini"
    model.summarise(messages, floor, BUDGET)
    [request] = endpoint.requests
    assert request["path"] == "/v1/chat/completions"
    assert "Authorization" not in request["headers"]


@pytest.mark.parametrize(("language", "answer", "expected"), [
    ("english", "### Open\n- Check the refund of order ORD-48213.\n### Done\n- Fixed src/app/main.py (https://example.com/x).\n- t1/r1",
     ["the model summary dropped 1 user constraint; the extractive User constraints was kept for it"]),
    ("english", "### User constraints\n- Never use Python 2 syntax.\n### Done\n- Fixed the login bug.\n",
     ["the model summary dropped 3 identifiers; the extractive Key data was kept for them",
      "the model summary dropped 1 reference; the extractive References was kept for it"]),
    ("chinese", "### 约束\n- 预算不超过 500 元。\n### 待办\n- 确认订单 ORD-48213 的入住日期 2026-12-01。\n- 接口 https://example.com/x，t1/r1",
     ["the model summary dropped 1 user constraint; the extractive User constraints was kept for it",
      "the model summary dropped 2 identifiers; the extractive Key data was kept for them"]),
])
def test_dropped_constraints_and_identifiers_are_appended_from_the_extractive_summary(
        endpoint: Endpoint, counter: TokenCounter, language: str, answer: str, expected: list[str]) -> None:
    messages, floor = extractive(counter, language)
    endpoint.answer(answer)
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert warnings == expected
    assert result.text.startswith(f"## Summary of messages[0] to messages[2]\n{answer.strip()}\n### ")
    assert all(item in result.text for item in kept_items(floor))
    assert result.tokens == counter.count(result.text) <= BUDGET


def test_only_the_missing_items_are_appended(endpoint: Endpoint, counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "chinese")
    answer = GOOD["chinese"].replace("（订单号 ORD-48213）", "")
    endpoint.answer(answer)
    result, _ = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert result.text.endswith(f"{answer}\n### Key data\n- ORD-48213")


def test_whitespace_differences_still_count_as_kept(endpoint: Endpoint, counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "english")
    endpoint.answer(GOOD["english"].replace("Never use Python 2 syntax.", "Never use\n  Python 2   syntax"))
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert warnings == [] and "### User constraints\n- Never use\n" in result.text


def test_a_reasoning_models_thoughts_are_left_out(endpoint: Endpoint, counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "english")
    endpoint.answer(f"<think>The user wants a brief.</think>\n\n{GOOD['english']}")
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert warnings == [] and result.text == f"## Summary of messages[0] to messages[2]\n{GOOD['english']}"


def test_an_answer_over_budget_falls_back_to_the_extractive_summary(endpoint: Endpoint,
                                                                    counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "english", budget=150)
    endpoint.answer(GOOD["english"] + "\n### Notes\n" + "- The refund flow was discussed at length.\n" * 20)
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, 150)
    assert result == floor
    [warning] = warnings
    assert "over the budget of 150; the extractive summary was used" in warning
    assert endpoint.requests[0]["body"]["max_tokens"] == 150


def test_appended_items_that_push_it_over_budget_fall_back(endpoint: Endpoint, counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "english")
    answer = "### Done\n- Fixed the login bug.\n" + "- More detail on the fix.\n" * 40
    budget = counter.count(f"## Summary of messages[0] to messages[2]\n{answer}") + 2
    endpoint.answer(answer)
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, budget)
    assert result == floor
    assert warnings == [f"the summary from model:qwen-mini with the extractive items it dropped came to "
                        f"{_over(counter, answer, floor)} tokens, over the budget of {budget}; the extractive "
                        "summary was used"]


def _over(counter: TokenCounter, answer: str, floor: Summary) -> int:
    """The tokens of the answer with every kept section appended (none of their items is in it)."""
    blocks = [answer] + [f"### {name}\n" + "\n".join(f"- {i}" for i in floor.sections[name])
                         for name in ("User constraints", "Key data", "References")]
    return counter.count("## Summary of messages[0] to messages[2]\n" + "\n".join(blocks))


NOT_A_COMPLETION = "answered with something other than a chat completion (expected JSON with choices[0].message.content)"


@pytest.mark.parametrize(("status", "body", "cause"), [
    (500, b'{"error": "model overloaded"}', 'answered HTTP 500 ({"error": "model overloaded"})'),
    (404, b"", "answered HTTP 404"),
    (200, b"<html>not json</html>", NOT_A_COMPLETION),
    (200, b'{"choices": []}', NOT_A_COMPLETION),
    (200, completion(None), NOT_A_COMPLETION),
    (200, completion(""), "answered with an empty summary"),
    (200, completion("<think>Hmm.</think>  \n"), "answered with an empty summary"),
    (200, completion(GOOD["english"], finish_reason="length"),
     f"was cut off at max_tokens ({BUDGET}) before its summary ended"),
], ids=["http-500", "http-404", "invalid-json", "no-choices", "null-content", "empty", "only-thoughts", "cut-off"])
def test_an_endpoint_failure_falls_back_with_a_warning_naming_the_cause(
        endpoint: Endpoint, counter: TokenCounter, status: int, body: bytes, cause: str) -> None:
    messages, floor = extractive(counter, "english")
    endpoint.status, endpoint.body = status, body
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert result == floor and result.text == floor.text
    assert warnings == [f"the summariser at {endpoint.url}/chat/completions {cause}; the extractive summary was used"]


def test_a_slow_endpoint_falls_back_after_its_timeout(endpoint: Endpoint, counter: TokenCounter) -> None:
    messages, floor = extractive(counter, "chinese")
    endpoint.answer(GOOD["chinese"])
    endpoint.delay_s = 2.0
    started = time.monotonic()
    result, warnings = summariser(endpoint, counter, timeout_s=0.3).summarise(messages, floor, BUDGET)
    assert time.monotonic() - started < 1.5
    assert result == floor
    assert warnings == [f"the summariser at {endpoint.url}/chat/completions did not answer in 0.3 s; "
                        "the extractive summary was used"]


def test_an_endpoint_that_is_down_falls_back(counter: TokenCounter) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()  # nothing listens on the port any more
    messages, floor = extractive(counter, "english")
    config = SummariserConfig(enabled=True, base_url=f"http://127.0.0.1:{port}", model="m")
    result, [warning] = ModelSummariser(config, counter).summarise(messages, floor, BUDGET)
    assert result == floor
    assert warning.startswith(f"the summariser at http://127.0.0.1:{port}/chat/completions could not be reached (")


def test_a_huge_span_is_cut_before_it_is_sent(endpoint: Endpoint, counter: TokenCounter) -> None:
    span = [{"role": "user", "content": "Never use Python 2 syntax. Start with src/app/main.py."}]
    span += [{"role": "assistant", "content": "Checked again: " + "the log says nothing new. " * 60}] * 120
    span.append({"role": "user", "content": "Last: check order id ORD-48213."})
    messages = parse_messages(span)
    floor = summarise(messages, counter, BUDGET, constraints=["Never use Python 2 syntax."])
    endpoint.answer("### User constraints\n- Never use Python 2 syntax.\n### Key data\n- src/app/main.py\n- ORD-48213")
    result, warnings = summariser(endpoint, counter).summarise(messages, floor, BUDGET)
    assert warnings == [] and result.tokens == counter.count(result.text) <= BUDGET
    sent = endpoint.requests[0]["body"]["messages"][1]["content"]
    assert counter.count(sent) < 18_000 < counter.count("\n".join(m["content"] for m in span))
    assert "user: Never use Python 2 syntax. Start with src/app/main.py." in sent
    assert "user: Last: check order id ORD-48213." in sent
    assert "messages left out …]" in sent


def test_an_empty_span_sends_nothing(endpoint: Endpoint, counter: TokenCounter) -> None:
    floor = summarise([], counter, BUDGET)
    assert summariser(endpoint, counter).summarise([], floor, BUDGET) == (floor, [])
    assert endpoint.requests == []


@pytest.mark.parametrize("language", ["en", "zh"])
def test_context_compaction_uses_the_model_and_keeps_what_it_dropped(
        endpoint: Endpoint, config: Config, embedder: Embedder, language: str) -> None:
    """Through Memory.context: the model's brief is the summary sent and stored, with the constraint it left out
    appended; when the endpoint fails, the extractive summary is sent and the report says why."""
    from tests.memory.context.test_compaction import IN_PASSING, session

    endpoint.answer("### Done\n- Answered the tidal power questions." if language == "en"
                    else "### 已完成\n- 回答了潮汐发电的问题。")
    on = config.replace("summariser", enabled=True, base_url=endpoint.url, model="qwen-mini")
    with Memory(on, embedder=embedder) as memory:
        result = memory.context(ContextRequest("ns", session(80, language), window=8192, task_id="m", recall=False))
        assert result.report.summary is not None and result.report.summary.summariser == "model:qwen-mini"
        version = memory.tasks.summary("ns", "m", result.report.summary.version)
        assert version.summariser == "model:qwen-mini" and version.text in [m["content"] for m in result.messages]
        assert "tidal power questions" in version.text or "潮汐发电的问题" in version.text
        # What the model left out and the extractive pass found is appended: the identifiers, and the Chinese rule
        # said in passing (the English one is in the constraints block, stated once).
        assert "src/etl/loader.py" in version.text and "JIRA-1183" in version.text
        assert language == "en" or IN_PASSING[language] in version.text
        [request] = endpoint.requests
        assert request["body"]["model"] == "qwen-mini" and IN_PASSING[language] in json.dumps(
            request["body"]["messages"], ensure_ascii=False)
        endpoint.status, endpoint.body = 500, b"down"
        failed = memory.context(ContextRequest("ns", session(80, language), window=8192, task_id="m2", recall=False))
        assert failed.report.summary is not None and failed.report.summary.summariser == "extractive"
        assert any("extractive summary was used" in w for w in failed.report.warnings)
