"""`memory ingest`: the pipeline over paths with a progress bar and a summary."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from tqdm import tqdm

from ingest.pipeline import FileOutcome, ingest_paths
from memory.service import Memory

__all__ = ["run_ingest"]


def run_ingest(memory: Memory, namespace: str, paths: Sequence[str], *, project: str | None = None,
               tags: Sequence[str] = ()) -> int:
    """Ingest `paths`, showing files, chunks and chunks/s; 0 when every file went in, 1 otherwise."""
    started = time.perf_counter()
    chunks = 0
    bar = tqdm(unit=" files", file=sys.stderr, dynamic_ncols=True)

    def progress(outcome: FileOutcome) -> None:
        nonlocal chunks
        chunks += sum(r.chunks for r in outcome.results if r.status != "unchanged")
        bar.update(1)
        rate = chunks / max(time.perf_counter() - started, 1e-9)
        bar.set_postfix_str(f"{chunks} chunks, {rate:.1f} chunks/s")
        if outcome.error:
            bar.write(f"error: {outcome.path}: {outcome.error}")

    outcomes = ingest_paths(memory, namespace, paths, project=project, tags=tags, progress=progress)
    bar.close()
    statuses = [r.status for o in outcomes for r in o.results]
    failed = [o for o in outcomes if o.error]
    elapsed = time.perf_counter() - started
    print(f"{len(outcomes)} files: {statuses.count('created')} created, {statuses.count('updated')} updated, "
          f"{statuses.count('unchanged')} unchanged, {sum(1 for o in outcomes if o.skipped)} skipped, "
          f"{len(failed)} failed; {chunks} chunks in {elapsed:.1f} s ({chunks / max(elapsed, 1e-9):.1f} chunks/s)")
    return 1 if failed else 0
