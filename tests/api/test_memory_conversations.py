"""POST /v1/memories without timestamps: one request is one conversation (or the one its turns name), and recall
never pads a turn with a turn of another request."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

_FIRST = {
    "en": [("Melanie", "Did you end up going to that pottery workshop last weekend?"),
           ("Caroline", "Yes! I made a blue bowl and a small vase for my mom.")],
    "zh": [("小李", "你上周末去参加那个陶艺课了吗？"), ("小王", "去了！我做了一个蓝色的碗，还给妈妈做了一个小花瓶。")],
}
_SECOND = {
    "en": [("Priya", "Has the plumber fixed the kitchen sink yet?"),
           ("Omar", "Not yet, he is coming on Thursday with a new pipe.")],
    "zh": [("老张", "水管工修好厨房的水槽了吗？"), ("小赵", "还没有，他周四带新管子过来。")],
}
_QUERY = {"en": "What did Caroline make at the pottery workshop?", "zh": "小王在陶艺课上做了什么？"}


def _post(client: TestClient, turns: list[tuple[str, str]], **extra: Any) -> list[str]:
    messages = [{"text": text, "speaker": speaker, **extra} for speaker, text in turns]
    response = client.post("/v1/memories", json={"namespace": "u1", "messages": messages})
    assert response.status_code == 200, response.text
    return list(response.json()["ids"])


def _items(client: TestClient, query: str) -> list[dict[str, Any]]:
    response = client.post("/v1/recall", json={"namespace": "u1", "query": query, "budget": 4000, "min_score": 0})
    assert response.status_code == 200, response.text
    return [i for i in response.json()["items"] if i["tier"] == "experience"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_recall_never_pads_with_a_turn_of_another_request(client: TestClient, lang: str) -> None:
    first, second = set(_post(client, _FIRST[lang])), set(_post(client, _SECOND[lang]))
    items = _items(client, _QUERY[lang])
    doc_of = {i["id"]: i["doc_id"] for i in items}
    padded = [i for i in items if "neighbour_of" in i["why"]]
    assert padded, "the matching turn should bring its reply"
    for item in padded:
        seed = doc_of[item["why"]["neighbour_of"]]
        assert {item["doc_id"], seed} <= first or {item["doc_id"], seed} <= second, item


def test_turns_naming_a_conversation_are_neighbours_across_requests(client: TestClient) -> None:
    (question,) = _post(client, _FIRST["en"][:1], conversation="pottery")
    middle = set(_post(client, _SECOND["en"]))  # stored between them, in the same second
    (answer,) = _post(client, _FIRST["en"][1:], conversation="pottery")
    items = {i["doc_id"]: i for i in _items(client, "Did you end up going to that pottery workshop last weekend?")}
    assert next(iter(items)) == question
    assert items[answer]["why"].get("neighbour_of") == items[question]["id"]
    assert not any(items[d]["why"].get("neighbour_of") == items[question]["id"] for d in middle if d in items)


@pytest.mark.parametrize("conversation", ["", "x" * 201, 7])
def test_a_bad_conversation_is_422(client: TestClient, conversation: object) -> None:
    response = client.post("/v1/memories", json={"namespace": "u1", "messages": [
        {"text": "Hello.", "conversation": conversation}]})
    assert response.status_code == 422 and "conversation" in response.text
