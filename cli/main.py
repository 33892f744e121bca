"""The `memory` command: each subcommand is a few lines over one library call."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Any

from memory.config import Config, load_config
from memory.errors import MemoryError_, ValidationError

if TYPE_CHECKING:
    from cli.session import Session

__all__ = ["build_parser", "main"]


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
    from memory.service import Memory

    config = _config(args)
    # A thread that reads text keeps the interpreter for a whole switch interval before a waiting request gets it;
    # the service's process is its own, so a shorter interval lets short requests through while long ones run.
    sys.setswitchinterval(0.001)
    memory = Memory(config, command="serve")  # takes the store's lock first: one process per data folder
    try:
        host = config.service.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else "[::1]" if host == "::" else host
        memory.lock.publish(f"http://{shown}:{config.service.port}")  # `memory` commands find the server here
        uvicorn.run(create_app(config, memory), host=host, port=config.service.port,
                    log_level=config.service.log_level)
    finally:
        memory.close()
    return 0


def _mcp(args: argparse.Namespace) -> int:
    import anyio

    from api.mcp.beside import Beside, open_or_find
    from api.mcp.relay import run_relay
    from api.mcp.server import run_stdio, select_tools
    from cli.session import server_key
    from memory.namespaces import check_namespace

    config = _config(args)
    namespace = check_namespace(args.namespace)
    tools = select_tools(args.tools)
    # The first agent on a folder opens the store and serves it on a loopback port as well; the others, and the
    # other commands, talk to that (api.mcp.beside). Stderr is the log an MCP client keeps; stdout the protocol's.
    beside, url = open_or_find(config)
    if beside is not None:
        print(f"memory mcp: serving the store in {config.data_path} to other agents and commands at {url}",
              file=sys.stderr)
        try:
            anyio.run(run_stdio, beside.memory, namespace, tools)
        finally:
            beside.stop()
        return 0
    print(f"memory mcp: the store is served at {url}; relaying to {url}/mcp", file=sys.stderr)
    taken: list[Beside] = []

    def takeover() -> str:
        found, where = open_or_find(config)
        if found is not None:
            print(f"memory mcp: {url} stopped; serving the store here at {where}", file=sys.stderr)
            taken.append(found)
        return where

    try:
        anyio.run(run_relay, url, server_key(config, namespace), namespace, tools, takeover)
    finally:
        for serving in taken:
            serving.stop()
    return 0


def _session(args: argparse.Namespace) -> Session:
    """The store, or the server that holds it (cli.session)."""
    from cli.session import open_session

    return open_session(_config(args), args.command, getattr(args, "namespace", None))


def _stats(args: argparse.Namespace) -> int:
    with closing(_session(args)) as session:
        health = session.health()
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


def _ingest(args: argparse.Namespace) -> int:
    from cli.ingest import run_ingest

    with closing(_session(args)) as session:
        return run_ingest(session, args.namespace, args.paths, project=args.project, tags=args.tag or (),
                          replace=args.replace)


def _recall(args: argparse.Namespace) -> int:
    with closing(_session(args)) as session:
        result = session.recall(args.namespace, args.query, args.budget, args.task, args.min_score)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print(result["rendered"], end="")
        print(f"-- {result['used_tokens']}/{result['budget']} tokens, {len(result['items'])} items", file=sys.stderr)
        for warning in result["warnings"]:
            print(f"-- {warning}", file=sys.stderr)
    return 0


def _context(args: argparse.Namespace) -> int:
    import pydantic

    from api.errors import field_problems
    from api.schemas.context import ContextRequest

    body = _json_file(args.file)
    # The option, when given, names the namespace (and so the key a server is asked with); else the file does.
    args.namespace = args.namespace if args.namespace is not None else body.get("namespace", "default")
    body["namespace"] = args.namespace
    try:
        request = ContextRequest.model_validate(body)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"{args.file} is not a /v1/context request: {field_problems(exc.errors())}") from None
    with closing(_session(args)) as session:
        answer = session.context(request)
    print(json.dumps(answer["report"] if args.report else answer, ensure_ascii=False, indent=2))
    return 0


def _json_file(path: str) -> dict[str, Any]:
    """The JSON object in the file at `path`; ValidationError in a sentence when it cannot be read or is not one."""
    from api.errors import json_problem, parse_problem

    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except UnicodeDecodeError:
        raise ValidationError(f"{path} is not UTF-8 text; save it as UTF-8 JSON") from None
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{path} is not valid JSON: {json_problem(exc.msg, text, exc.pos)}") from None
    except (ValueError, RecursionError) as exc:
        raise ValidationError(f"{path} could not be read as JSON{parse_problem(exc)}") from None
    if not isinstance(body, dict):
        raise ValidationError(f"{path} holds a JSON {type(body).__name__}; it must hold one object, the body of a "
                              "/v1/context request")
    return body


def _pin(args: argparse.Namespace) -> int:
    with closing(_session(args)) as session:
        change = session.pin(args.namespace, args.text)
    for fact in change["stored"]:
        print(f"pinned {fact['id']}  {fact['key']} = {fact['value']}")
    for fact in change["superseded"]:
        print(f"superseded {fact['id']} (version {fact['version']})")
    return 0


def _facts(args: argparse.Namespace) -> int:
    with closing(_session(args)) as session:
        facts = session.facts(args.namespace)
    if args.json:
        print(json.dumps(facts, ensure_ascii=False, indent=2))
    for fact in [] if args.json else facts:
        print(f"{'*' if fact['pinned'] else ' '} {fact['id']}  v{fact['version']}  [{fact['kind']}] "
              f"{fact['key']} = {fact['value']}")
    if not facts and not args.json:
        print(f"no facts in namespace {args.namespace!r}")
    return 0


def _search(args: argparse.Namespace) -> int:
    with closing(_session(args)) as session:
        found = session.search(args.namespace, args.query, args.k)
    print(f"query terms: {' '.join(found['terms'])}  (CJK share {found['cjk_share']:.2f}, temporal "
          f"{found['temporal']}, weights dense {found['dense_weight']:.2f} / lexical {found['lexical_weight']:.2f})")
    for rank, hit in enumerate(found["results"], 1):
        d, lx = hit["dense"], hit["lexical"]
        where = (f"dense #{d['rank']} {d['score']:.3f}" if d else "dense -") + "  " + (
            f"bm25 #{lx['rank']} {lx['score']:.3f}" if lx else "bm25 -")
        print(f"{rank:>3}. {hit['score']:.3f}  [{where}]  {hit['doc_id']}: {hit['text'][:100]!r}")
    return 0


def _reembed(args: argparse.Namespace) -> int:
    from memory.lock import StoreLock

    config = _config(args)
    lock = StoreLock(config.data_path.resolve(), "reembed")  # a running server must not see its vectors switched
    try:
        return _reembed_locked(args, config)
    finally:
        lock.release()


def _reembed_locked(args: argparse.Namespace, config: Config) -> int:
    from tqdm import tqdm

    from memory.embedding import AUTO, default_model, load_embedder, resolved
    from memory.reembed import chunk_count, reembed

    if args.backend:
        backend = args.backend
        model = args.model or (config.embedding.model if backend == config.embedding.backend
                               else default_model(backend))
    else:  # "auto" (the default setting) moves a store to the backend a new store of that model gets
        model = args.model or config.embedding.model
        backend = resolved(config.replace("embedding", model=model).embedding).backend
    embedder = load_embedder(config.replace("embedding", backend=backend, model=model).embedding)
    with tqdm(total=chunk_count(config), unit="chunk", desc="re-embedding", file=sys.stderr) as bar:
        report = reembed(config, embedder, progress=lambda done, total: bar.update(done))
    before, after = report.previous, report.current
    print(f"re-embedded {report.chunks} chunks of {report.namespaces} namespaces: "
          f"{before.embedding_backend}/{before.embedding_model} ({before.dimension}) -> "
          f"{after.embedding_backend}/{after.embedding_model} ({after.dimension})")
    if config.embedding.backend != AUTO:  # "auto" follows the store by itself
        print(f'open the store with [embedding] backend = "{after.embedding_backend}" and '
              f'model = "{after.embedding_model}" from now on')
    return 0


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="TOML file with any subset of the settings in config.toml")
    parser.add_argument("--data", metavar="DIR", help="keep the whole store (SQLite + Chroma) in DIR")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand and its help."""
    from memory.embedding import BACKENDS, DEFAULT_BACKEND

    parser = argparse.ArgumentParser(
        prog="memory", description="Context memory for LLM agents: facts, experience and task memory."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands: list[tuple[str, str, Callable[[argparse.Namespace], int]]] = [
        ("serve", "start the REST service (127.0.0.1:8000 unless configured)", _serve),
        ("stats", "show the model, the store location and record counts", _stats),
        ("ingest", "ingest files and folders (.txt .md .html .pdf .json .jsonl) into experience memory", _ingest),
        ("recall", "print the context block recall would give an agent for QUERY", _recall),
        ("context", ("fit the agent turn in FILE (a /v1/context request body) into its window and print the "
                     "messages, tools and report as JSON"), _context),
        ("pin", "pin a constraint so every recall includes it", _pin),
        ("facts", "list the facts in force in a namespace (* = pinned)", _facts),
        ("search", "search experience memory, showing each retriever's rank and score", _search),
        ("mcp", "serve the memory tools to one agent over stdin/stdout (Model Context Protocol)", _mcp),
        ("reembed", ("re-encode every stored chunk with another embedding backend or model, then switch the "
                     "store to it (stop the service first)"), _reembed),
    ]
    for name, help_text, handler in commands:
        p = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        _common(p)
        p.set_defaults(handler=handler)
        if name == "serve":
            p.add_argument("--host", help="address to listen on (default 127.0.0.1)")
            p.add_argument("--port", type=int, help="port to listen on (default 8000)")
        if name in ("stats", "recall", "facts"):
            p.add_argument("--json", action="store_true", help="print JSON")
        if name in ("ingest", "recall", "pin", "facts", "search", "mcp"):
            p.add_argument("--namespace", "-n", default="default", help="namespace to use (default: default)")
        if name == "ingest":
            p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to ingest")
            p.add_argument("--project", help="project to tag the documents with")
            p.add_argument("--tag", action="append", help="tag to add (repeatable)")
            p.add_argument("--replace", action="store_true",
                           help="update a file's document when its content changed (without it a changed file is "
                                "reported and its stored version kept)")
        if name in ("recall", "search"):
            p.add_argument("query", metavar="QUERY", help="the question")
        if name == "recall":
            p.add_argument("--budget", type=int, default=1000, help="tokens the agent can spare (default 1000)")
            p.add_argument("--task", help="task id whose scratch items to include")
            p.add_argument("--min-score", type=float, help="relevance threshold 0..1 (default from config)")
        if name == "context":
            p.add_argument("file", metavar="FILE", help="JSON file holding the request body of POST /v1/context")
            p.add_argument("--namespace", "-n",
                           help='namespace to use (default: the file\'s "namespace", else default)')
            p.add_argument("--report", action="store_true", help="print only the report")
        if name == "mcp":
            p.add_argument("--tools", metavar="NAMES",
                           help="comma-separated tools to offer (default all: recall, context, remember, pin, facts, "
                                "forget_fact, add_memories, ingest_document, task_put, task_get); each one listed "
                                "costs the agent's prompt its schema")
        if name == "search":
            p.add_argument("-k", type=int, default=10, help="results to show (default 10)")
        if name == "reembed":
            p.add_argument("--backend", choices=tuple(BACKENDS),
                           help="embedding backend to switch to (default: the configured one; for \"auto\", "
                                f"{DEFAULT_BACKEND})")
            p.add_argument("--model", help="model of that backend (default: the configured model for the "
                                           "configured backend, else the backend's default model)")
        if name == "pin":
            p.add_argument("text", metavar="TEXT", help="the constraint, e.g. 'never use Python 2 syntax'")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `memory` command; library errors become one clear line and exit status 2."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except MemoryError_ as exc:
        print(f"memory {args.command}: {exc}", file=sys.stderr)
        return 2

