"""`memory ingest`: the pipeline over paths with a progress bar and a summary, into the store or a running server."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from tqdm import tqdm

from cli.session import Session
from ingest.loaders import check_paths
from ingest.pipeline import FileOutcome, PassageCount

__all__ = ["run_ingest"]


def run_ingest(session: Session, namespace: str, paths: Sequence[str], *, project: str | None = None,
               tags: Sequence[str] = (), replace: bool = False) -> int:
    """Ingest `paths` under a bar of passages (chunks) with passages/s and an ETA, then a summary of the files;
    0 when every file went in, 1 otherwise."""
    started = time.perf_counter()
    chunks = 0  # of documents created or updated, for the summary
    files = 0
    # The rate over the whole run (smoothing=0): a batch's sentences are embedded before its chunks move the bar.
    check_paths(paths)  # before the bar: a path that does not exist is one line of error, not a bar and a line
    bar = tqdm(total=0, unit=" passages", file=sys.stderr, dynamic_ncols=True, smoothing=0)

    def progress(outcome: FileOutcome) -> None:
        nonlocal chunks, files
        chunks += sum(r.chunks for r in outcome.results if r.status != "unchanged")
        files += 1
        bar.set_postfix_str(f"{files} files", refresh=False)
        if outcome.error:
            bar.write(f"error: {outcome.path}: {outcome.error}", file=sys.stderr)

    def passages(count: PassageCount) -> None:
        bar.total = count.expected
        bar.update(count.done - bar.n)

    if session.url:
        bar.write(f"a server holds the store: ingesting through {session.url}", file=sys.stderr)
    outcomes = session.ingest(namespace, paths, project=project, tags=tuple(tags), replace=replace,
                              progress=progress, passages=passages,
                              stage=lambda said: bar.set_postfix_str(said, refresh=False))
    bar.close()
    statuses = [r.status for o in outcomes for r in o.results]
    failed = [o for o in outcomes if o.error]
    elapsed = time.perf_counter() - started
    print(f"{len(outcomes)} files: {statuses.count('created')} created, {statuses.count('updated')} updated, "
          f"{statuses.count('unchanged')} unchanged, {sum(1 for o in outcomes if o.skipped)} skipped, "
          f"{len(failed)} failed; {chunks} chunks in {elapsed:.1f} s ({chunks / max(elapsed, 1e-9):.1f} chunks/s)")
    return 1 if failed else 0
