"""README's "Use it from your agent" examples run as written against the real service (the URL aside), and its
MCP snippets name a command and tools that exist."""

from __future__ import annotations

import contextlib
import io
import json
import re

from api.mcp.tools import TOOLS
from bench.server_process import ServerProcess
from cli.main import build_parser
from tests import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Use it from your agent"):README.index("## Using the library from Python")]


def block(after: str, language: str) -> str:
    """The first ```language block after the text `after` in the section."""
    start = SECTION.index(after)
    found = re.search(rf"```{language}\n(.*?)```", SECTION[start:], re.S)
    assert found, f"no {language} block after {after!r} in README's section"
    return found.group(1)


def test_the_client_example_runs_and_prints_the_recall_and_the_services_sentence(server: ServerProcess) -> None:
    code = block("**Python client.**", "python").replace("http://127.0.0.1:8000", server.url)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md", "exec"), {})  # the README's own example, run as a user would
    out = printed.getvalue()
    assert "不要用Python 2的语法" in out and "billing CSV exports" in out
    assert out.rstrip().endswith("budget must be a whole number of tokens from 0 to 200,000, got -1")


def test_the_mcp_snippets_name_what_exists() -> None:
    config = json.loads(block("**MCP.**", "json"))
    args = config["mcpServers"]["memory"]["args"]
    assert args[0] == "mcp" and build_parser().parse_args(args).command == "mcp"
    named = re.findall(r"`(\w+)`", SECTION[:SECTION.index("Claude Desktop")])
    assert [name for name in named if name in {s.name for s in TOOLS}] == [s.name for s in TOOLS]
