"""Wall time of `memory` commands on a small store: the ones that never embed should not load the model.

    .venv/bin/python -m bench.cli_startup [--runs 3] [--root DIR]

`--root` runs the CLI of another checkout (e.g. a worktree of an older commit) on the same kind of store, for a
before / after table in one sitting. Each command runs `--runs` times; the median is shown, first on the store
itself, then beside a `memory serve` that holds it (the commands then speak its REST API).
"""

from __future__ import annotations

import argparse
import os
import socket
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
        print(f"CLI of {args.root}\n\n| command | on the store, median s | beside memory serve, median s | runs |\n"
              "|---|---|---|---|")
        alone = {command[0]: _time(args.root, command, data, env, args.runs) for command in COMMANDS}
        with _serving(args.root, data, env):
            beside = {command[0]: _time(args.root, command, data, env, args.runs) for command in COMMANDS}
        for command in COMMANDS:
            print(f"| memory {command[0]} | {alone[command[0]]:.2f} | {beside[command[0]]:.2f} | {args.runs} |")


def _time(root: Path, command: list[str], data: str, env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cli", *command, "--data", data], cwd=root, env=env, check=True,
                       capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class _serving:
    """`memory serve` on a free loopback port, holding the store until the block ends."""

    def __init__(self, root: Path, data: str, env: dict[str, str]) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._args = [sys.executable, "-m", "cli", "serve", "--data", data, "--port", str(self.port)]
        self._root, self._env = root, env

    def __enter__(self) -> None:
        import httpx

        self._process = subprocess.Popen(self._args, cwd=self._root, env=self._env, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.5)
        self._process.kill()
        raise SystemExit("memory serve did not answer /healthz within 120 s")

    def __exit__(self, *exc: object) -> None:
        self._process.terminate()
        self._process.wait(timeout=60)


if __name__ == "__main__":
    main()
