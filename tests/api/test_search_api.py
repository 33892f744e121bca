"""POST /v1/search: each result with its fused score and each retriever's rank, in English and Chinese."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_search_lays_each_retriever_open(client: TestClient) -> None:
    for doc_id, text in (("en", "The La Rance tidal power station opened in 1966 in Brittany."),
                         ("zh", "朗斯潮汐电站于1966年在布列塔尼投入运行。"),
                         ("other", "Sourdough bread needs a starter fed with flour and water.")):
        assert client.post("/v1/documents", json={"namespace": "s", "doc_id": doc_id, "text": text}).status_code == 200
    found = client.post("/v1/search", json={"namespace": "s", "query": "La Rance tidal station", "k": 2}).json()
    assert found["results"][0]["doc_id"] == "en" and 1 <= len(found["results"]) <= 2
    assert found["results"][0]["dense"]["rank"] == 1 and found["results"][0]["lexical"]["rank"] == 1
    assert "tidal" in found["terms"] and found["cjk_share"] == 0
    zh = client.post("/v1/search", json={"namespace": "s", "query": "潮汐电站", "k": 3}).json()
    assert zh["results"][0]["doc_id"] == "zh" and zh["cjk_share"] == 1.0
    assert zh["results"][0]["lexical"] is not None


def test_search_refuses_bad_input_in_a_sentence(client: TestClient) -> None:
    answer = client.post("/v1/search", json={"namespace": "s", "query": "x", "k": 0})
    assert answer.status_code == 422 and "k" in answer.json()["detail"]
    answer = client.post("/v1/search", json={"namespace": "s"})
    assert answer.status_code == 422 and "query" in answer.json()["detail"]
