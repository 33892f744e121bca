"""Wall time of `memory` commands on a small store: the ones that never embed should not load the model.

    .venv/bin/python -m bench.cli_startup [--runs 3] [--root DIR]

`--root` runs the CLI of another checkout (e.g. a worktree of an older commit) on the same kind of store, for a
before / after table in one sitting. Each command runs `--runs` times; the median is shown.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = [
    ["stats"],
    ["facts", "-n", "u1"],
    ["pin", "Never use emojis in answers.", "-n", "u1"],
    ["recall", "What must I keep in mind?", "-n", "u1", "--budget", "200"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose CLI to time")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    with tempfile.TemporaryDirectory() as folder:
        data = str(Path(folder) / "data")
        subprocess.run([sys.executable, "-m", "cli", "pin", "预算不超过500元。", "-n", "u1", "--data", data],
                       cwd=args.root, env=env, check=True, capture_output=True)
        print(f"CLI of {args.root}\n\n| command | median s | runs |\n|---|---|---|")
        for command in COMMANDS:
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "cli", *command, "--data", data], cwd=args.root, env=env,
                               check=True, capture_output=True)
                times.append(time.perf_counter() - started)
            print(f"| memory {command[0]} | {statistics.median(times):.2f} | {args.runs} |")


if __name__ == "__main__":
    main()
