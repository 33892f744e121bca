"""`memory ingest`: the pipeline over paths with a progress bar and a summary, into the store or a running server."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tqdm import tqdm

from cli.remote import Remote
from ingest.loaders import check_paths, iter_paths
from ingest.pipeline import FileOutcome, PassageCount, PassageEstimate, ingest_paths, kept_message
from memory.errors import ConflictError, MemoryError_
from memory.experience import DocumentResult
from memory.service import Memory

__all__ = ["run_ingest"]


def run_ingest(session: Memory | Remote, namespace: str, paths: Sequence[str], *, project: str | None = None,
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

    if isinstance(session, Remote):
        bar.write(f"a server holds the store: ingesting through {session.url}", file=sys.stderr)
        outcomes = _upload_paths(session, namespace, paths, project=project, tags=tuple(tags), replace=replace,
                                 progress=progress, passages=passages, bar=bar)
    else:
        outcomes = ingest_paths(session, namespace, paths, project=project, tags=tags, replace=replace,
                                progress=progress, passages=passages)
    bar.close()
    statuses = [r.status for o in outcomes for r in o.results]
    failed = [o for o in outcomes if o.error]
    elapsed = time.perf_counter() - started
    print(f"{len(outcomes)} files: {statuses.count('created')} created, {statuses.count('updated')} updated, "
          f"{statuses.count('unchanged')} unchanged, {sum(1 for o in outcomes if o.skipped)} skipped, "
          f"{len(failed)} failed; {chunks} chunks in {elapsed:.1f} s ({chunks / max(elapsed, 1e-9):.1f} chunks/s)")
    return 1 if failed else 0


def _upload_paths(remote: Remote, namespace: str, paths: Sequence[str], *, project: str | None,
                  tags: tuple[str, ...], replace: bool, progress: Callable[[FileOutcome], None],
                  passages: Callable[[PassageCount], None], bar: Any) -> list[FileOutcome]:
    """The pipeline's walk, each file uploaded under the name ingest_paths would give it (ingest.identity)."""
    found = list(iter_paths(paths))
    estimate = PassageEstimate(found)
    done = 0
    outcomes = []

    def job(state: Mapping[str, Any]) -> None:
        """A large file the server ingests as a job: its chunks move the bar, its stage shows beside it."""
        if state["state"] in ("queued", "running"):
            share = f"{state['done']}/{state['total']}" if state["total"] else "waiting"
            bar.set_postfix_str(f"job {state['job_id']}: {state['stage']} {share}", refresh=False)
            if state["stage"] == "embedding":
                passages(estimate.count(done + int(state["done"])))

    for index, found_path in enumerate(found):
        if found_path.skip_reason:
            outcome = FileOutcome(str(found_path.path), skipped=found_path.skip_reason)
        else:
            name = found_path.name or found_path.path.name
            try:
                answer = remote.upload(namespace, found_path.path, name, replace=replace, project=project,
                                       tags=tags, progress=job)
                outcome = FileOutcome(str(found_path.path), results=(
                    DocumentResult(answer["doc_id"], answer["chunks"], answer["status"]),))
            except ConflictError:
                outcome = FileOutcome(str(found_path.path), error=kept_message(name, namespace))
            except MemoryError_ as exc:
                outcome = FileOutcome(str(found_path.path), error=str(exc))
        given = sum(r.chunks for r in outcome.results)
        estimate.add(index, given)
        done += given
        outcomes.append(outcome)
        progress(outcome)
        passages(estimate.count(done))
    return outcomes
