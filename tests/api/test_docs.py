"""/docs and /redoc load everything from the service itself: no URL outside it, and every file they name exists."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

_REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|\burl\s*:\s*["']([^"']+)["']|spec-url=["']([^"']+)""")


@pytest.mark.parametrize(("page", "script"), [("/docs", "SwaggerUIBundle"), ("/redoc", "redoc")])
def test_the_docs_pages_need_nothing_from_outside(client: TestClient, page: str, script: str) -> None:
    html = client.get(page)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", html.text), "a URL outside the service"
    referenced = {next(g for g in m.groups() if g) for m in _REFERENCE.finditer(html.text)}
    assert "/openapi.json" in referenced and len(referenced) >= 3, referenced
    for url in referenced:
        assert url.startswith("/"), url
        answer = client.get(url)
        assert answer.status_code == 200, url
        assert len(answer.content) > 0, url
    bundle = next(u for u in referenced if u.endswith(".js"))
    assert script in client.get(bundle).text  # the real library, not a placeholder


def test_the_cdn_pages_fastapi_would_serve_are_gone(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert "/docs" not in schema["paths"] and "/redoc" not in schema["paths"]
    assert client.get("/docs/oauth2-redirect").status_code == 404
