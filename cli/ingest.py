"""`memory ingest`: the pipeline over paths with a progress bar and a summary, into the store or a running server."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tqdm import tqdm

from cli.remote import Remote
from ingest.loaders import iter_paths
from ingest.pipeline import FileOutcome, ingest_paths, kept_message
from memory.errors import ConflictError, MemoryError_
from memory.experience import DocumentResult
from memory.service import Memory

__all__ = ["run_ingest"]


def run_ingest(session: Memory | Remote, namespace: str, paths: Sequence[str], *, project: str | None = None,
               tags: Sequence[str] = (), replace: bool = False) -> int:
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
            bar.write(f"error: {outcome.path}: {outcome.error}", file=sys.stderr)

    def job(state: Mapping[str, Any]) -> None:
        """A large file the server ingests as a job: its stage and progress beside the file count."""
        if state["state"] in ("queued", "running"):
            share = f"{state['done']}/{state['total']}" if state["total"] else "waiting"
            bar.set_postfix_str(f"{chunks} chunks; job {state['job_id']}: {state['stage']} {share}")

    if isinstance(session, Remote):
        bar.write(f"a server holds the store: ingesting through {session.url}", file=sys.stderr)
        outcomes = _upload_paths(session, namespace, paths, project=project, tags=tuple(tags), replace=replace,
                                 progress=progress, job=job)
    else:
        outcomes = ingest_paths(session, namespace, paths, project=project, tags=tags, replace=replace,
                                progress=progress)
    bar.close()
    statuses = [r.status for o in outcomes for r in o.results]
    failed = [o for o in outcomes if o.error]
    elapsed = time.perf_counter() - started
    print(f"{len(outcomes)} files: {statuses.count('created')} created, {statuses.count('updated')} updated, "
          f"{statuses.count('unchanged')} unchanged, {sum(1 for o in outcomes if o.skipped)} skipped, "
          f"{len(failed)} failed; {chunks} chunks in {elapsed:.1f} s ({chunks / max(elapsed, 1e-9):.1f} chunks/s)")
    return 1 if failed else 0


def _upload_paths(remote: Remote, namespace: str, paths: Sequence[str], *, project: str | None,
                  tags: tuple[str, ...], replace: bool, progress: Any, job: Any) -> list[FileOutcome]:
    """The pipeline's walk, each file uploaded under the name ingest_paths would give it (ingest.identity)."""
    outcomes = []
    for found in iter_paths(paths):
        if found.skip_reason:
            outcome = FileOutcome(str(found.path), skipped=found.skip_reason)
        else:
            name = found.name or found.path.name
            try:
                answer = remote.upload(namespace, found.path, name, replace=replace, project=project, tags=tags,
                                       progress=job)
                outcome = FileOutcome(str(found.path), results=(
                    DocumentResult(answer["doc_id"], answer["chunks"], answer["status"]),))
            except ConflictError:
                outcome = FileOutcome(str(found.path), error=kept_message(name, namespace))
            except MemoryError_ as exc:
                outcome = FileOutcome(str(found.path), error=str(exc))
        outcomes.append(outcome)
        progress(outcome)
    return outcomes
