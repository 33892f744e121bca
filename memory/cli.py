"""The `memory` command: each subcommand is a few lines over one library call."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict

from memory.config import Config, load_config
from memory.errors import MemoryError_

__all__ = ["main", "build_parser"]


def _config(args: argparse.Namespace) -> Config:
    config = load_config(args.config or os.environ.get("MEMORY_CONFIG") or None, env=os.environ)
    if getattr(args, "data", None):
        config = config.replace("service", data_dir=args.data)
    if getattr(args, "host", None):
        config = config.replace("service", host=args.host)
    if getattr(args, "port", None):
        config = config.replace("service", port=args.port)
    return config


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app

    config = _config(args)
    app = create_app(config)
    uvicorn.run(app, host=config.service.host, port=config.service.port, log_level=config.service.log_level)
    return 0


def _stats(args: argparse.Namespace) -> int:
    from memory.service import Memory

    with Memory(_config(args)) as memory:
        health = asdict(memory.health())
    if args.json:
        print(json.dumps(health, ensure_ascii=False, indent=2))
    else:
        for key, value in health.items():
            if isinstance(value, dict):
                for sub, count in value.items():
                    print(f"{sub:>12}: {count}")
            else:
                print(f"{key:>12}: {value}")
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="TOML file with any subset of the settings in config.toml")
    parser.add_argument("--data", metavar="DIR", help="keep the whole store (SQLite + Chroma) in DIR")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand and its help."""
    parser = argparse.ArgumentParser(
        prog="memory", description="Context memory for LLM agents: facts, experience and task memory."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands: list[tuple[str, str, Callable[[argparse.Namespace], int]]] = [
        ("serve", "start the REST service (127.0.0.1:8000 unless configured)", _serve),
        ("stats", "show the model, the store location and record counts", _stats),
    ]
    for name, help_text, handler in commands:
        p = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        _common(p)
        p.set_defaults(handler=handler)
        if name == "serve":
            p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
            p.add_argument("--port", type=int, help="port to listen on (default 8000)")
        if name == "stats":
            p.add_argument("--json", action="store_true", help="print JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `memory` command; library errors become one clear line and exit status 2."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except MemoryError_ as exc:
        print(f"memory {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
