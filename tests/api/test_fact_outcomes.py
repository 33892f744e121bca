"""POST /v1/facts answers one outcome per sentence: stored, superseded or ignored with a reason, in both languages."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient


def _post(client: TestClient, text: str) -> dict[str, Any]:
    response = client.post("/v1/facts", json={"namespace": "u1", "text": text})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The weather is nice today. Never use emojis.",
         [("The weather is nice today.", "ignored"), ("Never use emojis.", "stored")]),
        ("I had a long day and I prefer answers in bullet points.",
         [("I had a long day", "ignored"), ("I prefer answers in bullet points.", "stored")]),
        ("今天天气很好。我刚下班并且我喜欢简洁的回答。",
         [("今天天气很好。", "ignored"), ("我刚下班", "ignored"), ("我喜欢简洁的回答。", "stored")]),
    ],
    ids=["two-sentences", "conjoined", "zh"],
)
def test_every_sentence_has_an_outcome(client: TestClient, text: str, expected: list[tuple[str, str]]) -> None:
    body = _post(client, text)
    assert [(o["text"], o["outcome"]) for o in body["outcomes"]] == expected
    ignored = [o for o in body["outcomes"] if o["outcome"] == "ignored"]
    assert [i["text"] for i in body["ignored"]] == [o["text"] for o in ignored]
    assert all(i["reason"] for i in body["ignored"])
    stored = [o for o in body["outcomes"] if o["outcome"] == "stored"]
    assert [f for o in stored for f in o["facts"]] == [f["id"] for f in body["stored"]]


def test_a_new_version_is_a_superseded_outcome_naming_the_old_one(client: TestClient) -> None:
    first = _post(client, "My budget is under $500.")
    second = _post(client, "Actually my budget is $800 now. 天气不错。")
    (changed, plain) = second["outcomes"]
    assert changed["outcome"] == "superseded" and changed["facts"] == [second["stored"][0]["id"]]
    assert changed["supersedes"] == [first["stored"][0]["id"]] == [f["id"] for f in second["superseded"]]
    assert (plain["text"], plain["outcome"]) == ("天气不错。", "ignored")
    again = _post(client, "Actually my budget is $800 now.")
    assert again["stored"] == [] and again["outcomes"][0]["outcome"] == "ignored"
    assert again["outcomes"][0]["reason"].startswith("already known: same value")


def test_the_api_returns_this_turn_and_keeps_it_for_a_task(client: TestClient) -> None:
    body = client.post("/v1/facts", json={"namespace": "u1", "text": "这次回答不要超过50字。"}).json()
    assert body["stored"] == [] and [t["key"] for t in body["this_turn"]] == ["limit:words"]
    assert body["outcomes"][0]["outcome"] == "request"
    body = client.post("/v1/facts", json={"namespace": "u1", "text": "这次回答不要超过50字。", "task_id": "t2"}).json()
    assert [f["scope"] for f in body["stored"]] == ["session:t2"] and body["stored"][0]["confidence"] == 1.0
    listed = client.get("/v1/facts", params={"namespace": "u1"}).json()["facts"]
    assert [f["scope"] for f in listed] == ["session:t2"]
    bad = client.post("/v1/facts", json={"namespace": "u1", "text": "这次回答不要超过50字。", "task_id": "a b"})
    assert bad.status_code == 422 and "task" in bad.text.lower()


def test_the_service_answers_a_model_fact_with_its_confidence(client: TestClient) -> None:
    body = client.post("/v1/facts", json={"namespace": "u1",
                                          "text": "Please cite a source for every statistic you give me."}).json()
    (fact,) = body["stored"]
    assert fact["rule"] in ("detector", "tagger") and 0.0 < fact["confidence"] < 1.0 and fact["pinned"] is False


@pytest.mark.parametrize(("text", "word"), [("Could you put all three of us in business class?", "business"),
                                            ("麻烦把我们三个人都改成商务舱。", "商务舱")])
def test_a_customers_choice_is_keyed_by_its_slot_and_kept_for_the_task(client: TestClient, text: str,
                                                                       word: str) -> None:
    body = client.post("/v1/facts", json={"namespace": "u1", "text": text, "task_id": "trip"}).json()
    (fact,) = body["stored"]
    assert (fact["key"], fact["rule"], fact["scope"], fact["pinned"]) == (
        "requirement:cabin", "tagger", "session:trip", False)
    assert word in fact["value"] and 0.0 < fact["confidence"] < 1.0
