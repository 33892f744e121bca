"""One tenant's long turn before and after another tenant's delete: does a delete cool every tenant's caches?

    .venv/bin/python -m bench.cache_isolation [--messages 1500] [--runs 5] [--windows 1000000,32768] [--root DIR]

In one library process (the checkout at `--root`, by default this one): `alice` assembles a turn of `--messages`
messages once to warm the caches, then it is timed `--runs` times warm; `bob` pins a constraint and deletes his
namespace (a real delete, which forgets what the caches hold of bob); alice's same turn is timed again. Printed:
alice's median warm and right after bob's delete, and their ratio (1.0: bob's delete left alice's caches warm), for
each window: one that holds the turn as given, and one that compacts it.
Run with `--root` on a worktree of an older commit for the before figure in the same sitting.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = r"""
import inspect, json, statistics, sys, time
from memory import Memory, load_config
from memory.context import ContextRequest

messages_n, runs, data, window = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
config = load_config().replace("service", data_dir=data)
messages = [{"role": "user" if i % 2 == 0 else "assistant",
             "content": f"Step {i}: check order W{1000 + i} and the log at /var/log/app/{i}.log, then report."}
            for i in range(messages_n)]
messages.append({"role": "user", "content": "What is left to check?"})
with Memory(config) as memory:
    def turn():
        started = time.perf_counter()
        asked = dict(window=window, task_id="t-long", recall=False)
        if "request" in inspect.signature(memory.context).parameters:  # a checkout since the facade takes one
            memory.context(ContextRequest("alice", messages, **asked))
        else:
            memory.context("alice", messages, **asked)
        return time.perf_counter() - started
    turn()
    warm = statistics.median(turn() for _ in range(runs))
    after = []
    for _ in range(runs):
        memory.facts.pin("bob", text="Never use tabs.")
        memory.delete_namespace("bob")
        after.append(turn())
    print(json.dumps({"warm": warm, "after": statistics.median(after)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--windows", default="1000000,32768", help="window sizes in tokens, comma-separated")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose library to time")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    print(f"library of {args.root}, alice's turn of {args.messages} messages, median of {args.runs}\n")
    print("| window | warm | right after bob's delete | ratio |\n|---|---|---|---|")
    for window in (int(w) for w in args.windows.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            out = subprocess.run([sys.executable, "-c", _PROBE, str(args.messages), str(args.runs), folder,
                                  str(window)], cwd=args.root, env=env, check=True, capture_output=True,
                                 text=True).stdout
        found = json.loads(out.strip().splitlines()[-1])
        print(f"| {window:,} | {found['warm'] * 1000:.1f} ms | {found['after'] * 1000:.1f} ms | "
              f"{found['after'] / found['warm']:.2f} |")


if __name__ == "__main__":
    main()
