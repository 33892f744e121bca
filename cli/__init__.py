"""The `memory` command: a skin over the library, like the REST API (see cli.main)."""

from cli.main import build_parser, main

__all__ = ["build_parser", "main"]
