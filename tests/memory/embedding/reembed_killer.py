"""Run by test_reembed: re-embed the store in DATA_DIR to MODEL two chunks at a time, SIGKILLing itself half-way."""

from __future__ import annotations

import os
import signal
import sys

from memory.config import load_config
from memory.embedding import load_embedder
from memory.reembed import reembed


def main() -> None:
    """Kill this process right after the first batch of new vectors has been written."""
    data_dir, model = sys.argv[1], sys.argv[2]
    config = load_config().replace("service", data_dir=data_dir)
    embedder = load_embedder(config.replace("embedding", model=model).embedding)
    done = 0

    def progress(step: int, total: int) -> None:
        nonlocal done
        done += step
        if done >= 2:
            print(done, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    reembed(config, embedder, progress=progress, batch=2)


if __name__ == "__main__":
    main()
