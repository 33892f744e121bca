"""Ingest rate: passages (stored chunks) per second of each ingest path, against the model's raw encode rate.

    .venv/bin/python -m bench.ingest_rate [--docs N] [--lang en|zh|both] [--phases raw,text,folder,rest,cli]

Real text: SciFact abstracts (en) and CMRC 2018 paragraphs (zh), one document each, as the .txt loader reads them
(no title). Each phase gets its own documents (dealt round-robin, so the slices are alike in size and kind) and a
fresh data folder, so no store or cache can answer a phase from another's work:

- raw: `embedder.encode_documents(chunk_texts)` of the exact texts the service stores (chunked beforehand, as
  add_text chunks them), one call at the embedder's own batch size; timed before the other phases and again after
  them, and the ratio is to their mean (other processes share the machine).
- text: `Memory.experience.add_text` once per document, in this process.
- folder: `ingest.pipeline.ingest_paths` over a folder of the documents as .txt files, in this process.
- rest: `POST /v1/documents` (JSON, doc_id given) once per document to a real `memory serve` subprocess.
- cli: `memory ingest FOLDER` in a subprocess: wall time including start-up, and the command's own figure.

The in-process phases break their time down: sentences embedded to find topic shifts (chunking), chunks embedded,
time holding the store's write lock (the SQLite transaction and the Chroma writes), and the rest (parsing,
chunking without the model, hashing, jieba, token counts).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import numpy as np

from bench.corpora import BenchDoc, load_cmrc, load_scifact
from bench.server_process import ServerProcess
from ingest.pipeline import ingest_paths
from memory import TextInput
from memory.chunking import chunk_text
from memory.config import Config, load_config
from memory.embedding import Embedder, Progress, load_embedder
from memory.embedding.base import Role
from memory.experience.model import indexed_text
from memory.service import Memory
from memory.tokens import get_counter

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("raw", "text", "folder", "rest", "cli")
NAMESPACE = "bench"
_CHUNKING = f"{os.sep}memory{os.sep}chunking{os.sep}"
_SUMMARY = re.compile(r"; (\d+) chunks in ([\d.]+) s")


class TimedEmbedder(Embedder):
    """The real embedder, timing each document call as chunking's sentences or stored chunks (by its caller)."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner.identity, inner.calibration)
        self.inner = inner
        self.document_batch = inner.document_batch
        self.seconds: Counter[str] = Counter()
        self.texts: Counter[str] = Counter()
        self.sentences: list[str] = []  # the texts chunking asked for

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Delegated, untimed."""
        return self.inner.encode_queries(texts)

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Delegated; its time is counted under "sentences" when chunking called, else "chunks"."""
        stage = "sentences" if _called_from_chunking() else "chunks"
        if stage == "sentences":
            self.sentences.extend(texts)
        started = time.perf_counter()
        try:
            return self.inner.encode_documents(texts, progress)
        finally:
            self.seconds[stage] += time.perf_counter() - started
            self.texts[stage] += len(texts)

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:  # pragma: no cover - the public calls delegate
        return self.inner._encode(texts, role)


def _called_from_chunking() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if _CHUNKING in frame.f_code.co_filename:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


class TimedLock:
    """A store's write lock (an RLock) that adds up the time this thread holds it, outermost acquire to last
    release (the store's own threads, ingest jobs and erasure, take it too; their holds are not counted)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._owner = threading.get_ident()
        self._depth = 0
        self._since = 0.0
        self.seconds = 0.0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = bool(self._inner.acquire(blocking, timeout))
        if got and threading.get_ident() == self._owner:
            if self._depth == 0:
                self._since = time.perf_counter()
            self._depth += 1
        return got

    def release(self) -> None:
        if threading.get_ident() == self._owner and self._depth:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._since
        self._inner.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


@dataclass
class Row:
    """One phase's figures."""

    phase: str
    docs: int
    passages: int
    seconds: float
    note: str = ""
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.passages / max(self.seconds, 1e-9)


def documents(lang: str, count: int) -> list[BenchDoc]:
    """`count` documents of the language, skipping exact repeats (a repeat would be stored once)."""
    corpus = load_scifact() if lang == "en" else load_cmrc()
    seen: set[str] = set()
    picked = []
    for doc in corpus.docs:
        if doc.text.strip() and doc.text not in seen:
            seen.add(doc.text)
            picked.append(doc)
        if len(picked) == count:
            break
    if len(picked) < count:
        raise SystemExit(f"{corpus.name} has only {len(picked)} distinct documents; ask for fewer with --docs")
    return picked


def write_folder(folder: Path, docs: Sequence[BenchDoc]) -> Path:
    folder.mkdir(parents=True)
    for i, doc in enumerate(docs):
        (folder / f"{i:05d}.txt").write_text(doc.text, encoding="utf-8")
    return folder


def raw(config: Config, embedder: Embedder, docs: Sequence[BenchDoc]) -> Row:
    """The chunk texts add_text would store (chunked untimed), then one timed encode_documents over them; and, for
    the model's share of a whole ingest, one over the sentences chunking embedded to find them."""
    counter = get_counter(config.tokenizer.encoding)
    recorder = TimedEmbedder(embedder)
    texts = [indexed_text(c.text, c.heading) for d in docs
             for c in chunk_text(d.text, counter, recorder, config.chunking)]
    started = time.perf_counter()
    embedder.encode_documents(recorder.sentences)
    sentences = time.perf_counter() - started
    started = time.perf_counter()
    embedder.encode_documents(texts)
    seconds = time.perf_counter() - started
    return Row("raw", len(docs), len(texts), seconds, f"{len(set(texts))} distinct texts, batch "
               f"{embedder.document_batch}; sentences: {len(recorder.sentences)}", {"sentences": sentences,
                                                                                  "chunks": seconds})


def in_process(config: Config, embedder: Embedder, docs: Sequence[BenchDoc], phase: str, folder: Path) -> Row:
    """add_text per document ("text") or ingest_paths over a folder ("folder"), with the time broken down."""
    timed = TimedEmbedder(embedder)
    with Memory(config, embedder=timed) as memory:
        memory.experience.remix_in_background().join()  # nothing to do in a new store; not timed anyway
        lock = TimedLock(memory.store.write_lock)
        memory.store.write_lock = lock  # type: ignore[assignment]
        started = time.perf_counter()
        if phase == "text":
            passages = sum(memory.experience.add_text(NAMESPACE, TextInput(d.text, doc_id=d.doc_id)).chunks
                           for d in docs)
        else:
            outcomes = ingest_paths(memory, NAMESPACE, [write_folder(folder, docs)])
            failed = [o for o in outcomes if o.error]
            if failed:
                raise SystemExit(f"{len(failed)} files failed, the first: {failed[0].path}: {failed[0].error}")
            passages = sum(r.chunks for o in outcomes for r in o.results)
        seconds = time.perf_counter() - started
    parts = {"sentences": timed.seconds["sentences"], "chunks": timed.seconds["chunks"], "write lock": lock.seconds}
    parts["other"] = seconds - sum(parts.values())
    note = f"embedded {timed.texts['sentences']} sentences, {timed.texts['chunks']} chunks"
    return Row(phase, len(docs), passages, seconds, note, parts)


def rest(folder: Path, docs: Sequence[BenchDoc]) -> Row:
    """POST /v1/documents once per document, in order, to a fresh `memory serve`."""
    with ServerProcess(folder / "data", folder / "server.log") as server, \
            httpx.Client(base_url=server.url, timeout=600) as client:
        started = time.perf_counter()
        passages = 0
        for doc in docs:
            answer = client.post("/v1/documents", json={"namespace": NAMESPACE, "doc_id": doc.doc_id,
                                                         "text": doc.text})
            answer.raise_for_status()
            passages += int(answer.json()["chunks"])
        return Row("rest", len(docs), passages, time.perf_counter() - started, "one request per document")


def cli(folder: Path, docs: Sequence[BenchDoc]) -> Row:
    """`memory ingest FOLDER` in a subprocess on a fresh data folder."""
    files = write_folder(folder / "files", docs)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    command = [sys.executable, "-m", "cli", "ingest", str(files), "-n", NAMESPACE, "--data", str(folder / "data")]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"memory ingest failed ({done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}")
    found = _SUMMARY.search(done.stdout)
    if found is None:
        raise SystemExit(f"memory ingest printed no summary:\n{done.stdout}")
    passages, own = int(found.group(1)), float(found.group(2))
    return Row("cli", len(docs), passages, wall,
               f"wall time with start-up; the command's own figure {passages / own:.1f} passages/s in {own:.1f} s")


def run_language(lang: str, count: int, phases: Sequence[str], config: Config, embedder: Embedder) -> list[Row]:
    """Every asked phase on its own `count` documents of the language."""
    slots = ["raw"] * ("raw" in phases) + [p for p in phases if p != "raw"] + ["raw"] * ("raw" in phases)
    pool = documents(lang, count * len(slots))
    slices = [pool[i::len(slots)] for i in range(len(slots))]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ingest-rate-") as scratch:
        for index, (phase, docs) in enumerate(zip(slots, slices, strict=True)):
            folder = Path(scratch) / f"{index}-{phase}"
            folder.mkdir()
            local = config.replace("service", data_dir=str(folder / "data"))
            print(f"[{lang}] {phase}: {len(docs)} documents ...", file=sys.stderr, flush=True)
            if phase == "raw":
                row = raw(local, embedder, docs)
                row.phase = "raw (before)" if index == 0 else "raw (after)"
            elif phase in ("text", "folder"):
                row = in_process(local, embedder, docs, phase, folder / "files")
            elif phase == "rest":
                row = rest(folder, docs)
            else:
                row = cli(folder, docs)
            rows.append(row)
    return rows


def report(lang: str, rows: Sequence[Row]) -> None:
    raws = [r for r in rows if r.phase.startswith("raw")]
    base = sum(r.rate for r in raws) / len(raws) if raws else float("nan")
    print(f"\n{lang}: raw encode {base:.1f} passages/s (mean of before and after)")
    if raws:  # what the model alone costs an ingest: the chunks, and the sentences chunking embeds to cut them
        both = sum(r.passages for r in raws) / sum(r.parts["sentences"] + r.parts["chunks"] for r in raws)
        print(f"{lang}: raw encode of the chunks and of chunking's sentences {both:.1f} passages/s "
              f"({both / base:.2f} x raw): an ingest that embeds sentences to cut by topic goes no faster, bar a chunk "
              "that is one sentence")
    print("\n| path | docs | passages | s | passages/s | x raw | sentences s | chunks s | write lock s | other s "
          "| note |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        parts = " | ".join(f"{r.parts[k]:.1f}" if k in r.parts else "" for k in
                           ("sentences", "chunks", "write lock", "other"))
        print(f"| {r.phase} | {r.docs} | {r.passages} | {r.seconds:.1f} | {r.rate:.1f} | {r.rate / base:.2f} | "
              f"{parts} | {r.note} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, help="documents per phase and language (default: 300 SciFact abstracts, "
                        "140 CMRC paragraphs: CMRC 2018 dev holds 848, for six phases)")
    parser.add_argument("--lang", choices=("en", "zh", "both"), default="both")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"comma-separated, of {', '.join(PHASES)}")
    args = parser.parse_args()
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = set(phases) - set(PHASES)
    if unknown:
        parser.error(f"unknown phases {', '.join(sorted(unknown))}; choose from {', '.join(PHASES)}")
    config = load_config(env={})
    embedder = load_embedder(config.embedding)
    embedder.encode_documents(["warm up the model", "预热模型"])
    print(f"model {embedder.identity.backend}/{embedder.identity.model}, document batch {embedder.document_batch}, "
          f"chunking {config.chunking}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    for lang in ("en", "zh") if args.lang == "both" else (args.lang,):
        count = args.docs or (300 if lang == "en" else 140)
        report(lang, run_language(lang, count, phases, config, embedder))


if __name__ == "__main__":
    main()
