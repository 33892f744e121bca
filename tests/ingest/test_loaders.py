"""Loaders for every suffix, in English and Chinese, and the errors they raise."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest.loaders import LoadedDocument, load_path
from memory.errors import NotFoundError, TooLargeError, ValidationError

MTIME = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    os.utime(path, (MTIME.timestamp(), MTIME.timestamp()))
    return path


def _one(path: Path) -> LoadedDocument:
    documents = load_path(path)
    assert len(documents) == 1
    return documents[0]


@pytest.mark.parametrize("body", ["Plain English text.\r\nSecond line.", "纯中文文本。\r\n第二行。"], ids=["en", "zh"])
def test_text(tmp_path: Path, body: str) -> None:
    doc = _one(_write(tmp_path / "notes.txt", "\ufeff" + body))
    assert doc.text == body.replace("\r\n", "\n")
    assert (doc.doc_id_hint, doc.title, doc.kind, doc.turns) == ("notes.txt", None, "document", ())
    assert doc.source == str(tmp_path / "notes.txt") and doc.updated_at == MTIME


@pytest.mark.parametrize("suffix", [".md", ".markdown"])
def test_markdown_front_matter(tmp_path: Path, suffix: str) -> None:
    text = '---\ntitle: "部署指南"\nupdated: 2023-02-03T04:05:06Z\ntags: [a]\n---\n# Heading one\n\nBody.\n'
    doc = _one(_write(tmp_path / f"guide{suffix}", text))
    assert doc.title == "部署指南"
    assert doc.updated_at == datetime(2023, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert doc.text == "# Heading one\n\nBody.\n"


@pytest.mark.parametrize(
    ("text", "title"), [("Intro.\n\n# Setup Guide #\n\nBody.", "Setup Guide"), ("# 安装说明\n\n正文。", "安装说明")]
)
def test_markdown_title_from_heading(tmp_path: Path, text: str, title: str) -> None:
    doc = _one(_write(tmp_path / "a.md", text))
    assert doc.title == title and doc.updated_at == MTIME and doc.text == text


def test_markdown_with_only_front_matter_is_empty(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="is empty"):
        load_path(_write(tmp_path / "a.md", "---\ntitle: x\n---\n\n"))


HTML = """<!doctype html><html><head><title> Page  Title </title>
<meta property="article:modified_time" content="2022-07-08T09:10:11+02:00">
<style>body { color: red }</style><script>alert("no");</script></head>
<body><h1>Main heading</h1><p>First <b>bold</b> paragraph &amp; more.</p>
<h2>第二节</h2><p>中文段落。<br>第二行。</p>
<ul><li>one</li><li><p>two</p><ol><li>nested</li></ol></li></ul>
<pre><code>x = 1
y = 2</code></pre>
<table><tr><th>name</th><th>值</th></tr><tr><td>a|b</td><td>1</td></tr></table>
<noscript>enable js</noscript></body></html>"""


def test_html(tmp_path: Path) -> None:
    doc = _one(_write(tmp_path / "page.html", HTML))
    assert doc.title == "Page Title"
    assert doc.updated_at == datetime(2022, 7, 8, 7, 10, 11, tzinfo=UTC)
    assert doc.text == (
        "# Main heading\n\nFirst bold paragraph & more.\n\n## 第二节\n\n中文段落。\n第二行。\n\n"
        "- one\n\n- two\n\n  1. nested\n\n```\nx = 1\ny = 2\n```\n\n| name | 值 |\n| a\\|b | 1 |"
    )
    for hidden in ("alert", "color", "enable js"):
        assert hidden not in doc.text


def test_htm_title_falls_back_to_h1_and_mtime(tmp_path: Path) -> None:
    doc = _one(_write(tmp_path / "page.htm", "<h1>标题</h1><p>内容</p>"))
    assert (doc.title, doc.text, doc.updated_at) == ("标题", "# 标题\n\n内容", MTIME)


def test_html_without_visible_text(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="no visible text"):
        load_path(_write(tmp_path / "empty.html", "<html><script>x()</script></html>"))


def test_pdf(tmp_path: Path, make_pdf: Callable[..., Path]) -> None:
    path = make_pdf(
        tmp_path / "paper.pdf",
        [["Hello world. This is page one.", "Second line."], ["第二页的中文内容。", "还有一行。"]],
        title="A Paper",
        mod_date="D:20240301120000Z",
    )
    doc = _one(path)
    assert doc.text == "Hello world. This is page one.\nSecond line.\n\n第二页的中文内容。\n还有一行。"
    assert doc.title == "A Paper"
    assert doc.updated_at == datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_html_page_s_navigation_is_not_its_text(tmp_path: Path, lang: str) -> None:
    links, body = {"en": ("Home Products Pricing Blog Contact", "The loader retries a failed batch twice."),
                   "zh": ("首页 产品 价格 博客 联系我们", "加载程序会把失败的批次重试两次。")}[lang]
    page = (f"<html><body><nav><ul>{''.join(f'<li><a href=/{i}>{w}</a></li>' for i, w in enumerate(links.split()))}"
            f"</ul></nav><main><h1>Loader</h1><p>{body}</p></main></body></html>")
    doc = _one(_write(tmp_path / "page.html", page))
    assert body in doc.text and not any(word in doc.text for word in links.split())


@pytest.mark.parametrize("title", ["pdfsrc.html", "Microsoft Word - 会议纪要.docx", "  report.PDF "])
def test_a_pdf_title_that_names_a_file_is_no_title(tmp_path: Path, make_pdf: Callable[..., Path], title: str) -> None:
    doc = _one(make_pdf(tmp_path / "minutes.pdf", [["Minutes of the meeting.", "会议纪要。"]], title=title))
    assert doc.title is None and doc.doc_id_hint == "minutes.pdf"
    named = _one(make_pdf(tmp_path / "paper.pdf", [["Text."]], title="Release checklist v2.1"))
    assert named.title == "Release checklist v2.1"


def test_pdf_without_metadata_uses_mtime(tmp_path: Path, make_pdf: Callable[..., Path]) -> None:
    path = make_pdf(tmp_path / "plain.pdf", [["Only text."]])
    os.utime(path, (MTIME.timestamp(), MTIME.timestamp()))
    doc = _one(path)
    assert (doc.title, doc.updated_at, doc.text) == (None, MTIME, "Only text.")


def test_pdf_errors(tmp_path: Path, make_pdf: Callable[..., Path]) -> None:
    with pytest.raises(ValidationError, match="no text layer"):
        load_path(make_pdf(tmp_path / "scan.pdf", [[]]))
    with pytest.raises(ValidationError, match="not a readable PDF"):
        load_path(_write(tmp_path / "fake.pdf", b"this is not a pdf at all"))


def test_conversation_list(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "chat.json",
        """[
        {"role": "user", "content": "我喜欢喝绿茶。", "timestamp": "2024-01-02T03:04:05Z", "id": "m1"},
        {"role": "assistant", "content": null, "tool_calls": []},
        {"speaker": "assistant", "text": "Noted: green tea.", "timestamp": "2024-01-03T00:00:00Z"},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}, {"type": "image_url"}]}
    ]""",
    )
    doc = _one(path)
    assert doc.kind == "conversation" and doc.doc_id_hint == "chat.json"
    assert [(t.speaker, t.text, t.timestamp) for t in doc.turns] == [
        ("user", "我喜欢喝绿茶。", "2024-01-02T03:04:05Z"),
        ("assistant", "Noted: green tea.", "2024-01-03T00:00:00Z"),
        ("user", "Thanks", None),
    ]
    assert dict(doc.turns[0].metadata) == {"id": "m1"}
    assert doc.text == "user: 我喜欢喝绿茶。\nassistant: Noted: green tea.\nuser: Thanks"
    assert doc.updated_at == datetime(2024, 1, 3, tzinfo=UTC)


def test_conversation_messages_object_and_many_conversations(tmp_path: Path) -> None:
    single = _one(_write(tmp_path / "one.json", '{"title": "Trip", "messages": [{"role": "user", "content": "hi"}]}'))
    assert single.title == "Trip" and single.updated_at == MTIME
    many = load_path(
        _write(
            tmp_path / "many.json",
            """[
        {"id": "a", "messages": [{"role": "user", "content": "first"}]},
        {"messages": [{"role": "user", "content": "第二个", "timestamp": 1700000000}]}
    ]""",
        )
    )
    assert [d.doc_id_hint for d in many] == ["many.json#a", "many.json#2"]
    assert many[1].turns[0].timestamp == "2023-11-14T22:13:20Z"


def test_conversation_jsonl(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "chat.jsonl", '{"role": "user", "content": "你好"}\n\n{"role": "assistant", "content": "Hello"}\n'
    )
    doc = _one(path)
    assert [t.text for t in doc.turns] == ["你好", "Hello"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", '{"conversation": {}}', r"bad.json holds an object with keys \['conversation'\]; expected a list"),
        ("empty.json", "[]", "holds an empty list"),
        ("broken.json", "[{", "is not valid JSON"),
        ("broken.jsonl", '{"role": "user", "content": "ok"}\nnot json\n', "line 2 is not valid JSON"),
        ("nospeaker.json", '[{"content": "hi"}]', 'message 1 has keys .* needs "text" or "content" and "speaker"'),
        ("scalar.json", '["hello"]', "message 1 is a str"),
        ("blank.json", '[{"role": "user", "content": "  "}]', "has no message with text"),
        ("badtime.json", '[{"role": "user", "content": "x", "timestamp": true}]', "timestamp must be"),
    ],
)
def test_conversation_errors(tmp_path: Path, name: str, content: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        load_path(_write(tmp_path / name, content))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe\x00binary", "is not UTF-8 text"),
        (b"abc\x00def", "is not UTF-8 text"),
        (b"", "is empty"),
        (b" \n\t\n", "is empty"),
    ],
)
def test_text_errors(tmp_path: Path, content: bytes, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        load_path(_write(tmp_path / "file.txt", content))


def test_path_errors(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"unsupported suffix '\.docx'"):
        load_path(_write(tmp_path / "a.docx", "x"))
    with pytest.raises(NotFoundError, match="does not exist"):
        load_path(tmp_path / "missing.txt")
    (tmp_path / "folder.md").mkdir()
    with pytest.raises(ValidationError, match="not a regular file"):
        load_path(tmp_path / "folder.md")


def test_max_chars(tmp_path: Path) -> None:
    path = _write(tmp_path / "big.txt", "字" * 50)
    assert load_path(path, max_chars=50)[0].text == "字" * 50
    with pytest.raises(TooLargeError, match=r"50 characters, over the limit of 49 \(limits.max_text_chars\)"):
        load_path(path, max_chars=49)
    with pytest.raises(TooLargeError, match="more than max_text_chars=10"):
        load_path(path, max_chars=10)  # refused from the file size, before reading


@pytest.mark.parametrize("module", ["ingest.loaders", "memory.chunking.chunker", "memory.text.sentences", "memory.chunking.boundaries"])
def test_all_names_exist(module: str) -> None:
    imported = importlib.import_module(module)
    assert all(hasattr(imported, name) for name in imported.__all__)
