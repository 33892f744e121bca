"""One case of tests/security/test_disk_trace.py run many times in one long-lived process, as a served store lives:
how often a deleted needle is still in some file after the erase pass, and in which.

A single run of the test passes almost always; its rare failures were a deleted namespace's text in a *live*
collection's index file, written from memory that was not zeroed (memory.erase.zero_fresh_memory). `--no-zeroing`
turns that setting off after each open, to see the leak it narrows.

    .venv/bin/python -m tests.security.repeat_disk_trace [--case namespace] [--trials 60] [--no-zeroing]
"""

from __future__ import annotations

import argparse
import ctypes
import tempfile
from pathlib import Path

from api.app import create_app
from memory.config import load_config
from memory.embedding import load_embedder
from memory.service import Memory
from tests import local_client
from tests.security import test_disk_trace as trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(trace.CASES), default="namespace")
    parser.add_argument("--lang", choices=sorted(trace.MARKERS), default="en")
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--no-zeroing", action="store_true")
    args = parser.parse_args()
    base = load_config(None)
    embedder = load_embedder(base.embedding)
    hits: dict[str, int] = {}
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        for trial in range(args.trials):
            config = base.replace("service", data_dir=str(Path(folder) / f"t{trial}"))
            root = config.data_path.resolve()
            with Memory(config, embedder=embedder) as memory:
                if args.no_zeroing:
                    assert ctypes.CDLL("libc.so.6").mallopt(-6, 0) == 1  # M_PERTURB off
                client = local_client(create_app(memory.config, memory))
                gone, delete = trace.CASES[args.case](memory, client, trace.MARKERS[args.lang],
                                                      trace.KEEP[args.lang])
                delete()
                assert memory.store.eraser.wait(trace.BOUND_S)
                left = trace.holding(root, gone)
            if left:
                failed += 1
                for names in left.values():
                    for name in names:
                        kind = name.rsplit("/", 1)[-1]
                        hits[kind] = hits.get(kind, 0) + 1
                print(f"trial {trial}: {sorted(left)} in {sorted({n for v in left.values() for n in v})}",
                      flush=True)
    zeroing = "off" if args.no_zeroing else "on"
    print(f"\ncase {args.case}-{args.lang}, zeroing {zeroing}: {failed} of {args.trials} trials left a needle; "
          f"files: {hits or 'none'}")


if __name__ == "__main__":
    main()
