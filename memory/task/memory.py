"""TaskMemory: per-task scratch items in SQLite, with expiry, one-shot items, offloading and sub-tasks, and each
task's versioned compaction summaries."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from memory.caches import BoundedCache, Caches
from memory.clock import Clock, to_iso, utc_now
from memory.config import LimitsConfig, TasksConfig
from memory.database import Connection
from memory.errors import NotFoundError, ValidationError
from memory.limits import check_length, check_metadata, parse_metadata
from memory.snippet import Snippet
from memory.store import Store
from memory.task import listing, policy, ranking, selections, threads, tree
from memory.task import summaries as summary_sql  # as: TaskMemory.summaries is a method
from memory.task.model import AddedItem, Page, SummaryVersion, TaskInfo, TaskItem
from memory.task.pages import first_page, page_ends
from memory.tokens import TokenCounter

__all__ = ["TaskMemory"]

_ITEM = (
    "SELECT i.namespace, i.task_id, i.key, i.kind, i.text, i.tokens, i.created_at, i.expires_at, t.expires_at, "
    "i.ephemeral, i.offloaded, t.parent_task_id, i.metadata "
    "FROM task_items i JOIN tasks t ON t.namespace = i.namespace AND t.task_id = i.task_id "
)
_NO_METADATA: Mapping[str, Any] = MappingProxyType({})
_REF = "offload_ref"  # the metadata key under which an item added with `ref` keeps it
_LIVE = "t.expires_at > :now AND (i.expires_at IS NULL OR i.expires_at > :now)"
# Recall never reads an offloaded item's full text, only the head form stored with its count.
_CANDIDATE = (
    "SELECT i.task_id, i.key, i.seq, i.kind, CASE WHEN i.offloaded = 1 THEN i.head ELSE i.text END, "
    "CASE WHEN i.offloaded = 1 THEN i.head_tokens ELSE i.tokens END, i.ephemeral, i.offloaded, i.created_at, "
    "i.metadata, i.tokens "
    "FROM task_items i JOIN tasks t ON t.namespace = i.namespace AND t.task_id = i.task_id "
)


class TaskMemory:
    """The task tier: items keyed by (namespace, task id), gone when they or their task expire or end.

    A task exists from its first item on (or its first summary, tool selection, `touch` or `thread`); its expiry
    (tasks.default_ttl_s) slides forward on every add to it or to any of its sub-tasks. An item lives as long as
    its task, or less when given its own ttl_s.
    """

    def __init__(self, store: Store, counter: TokenCounter, config: TasksConfig, clock: Clock = utc_now, *,
                 limits: LimitsConfig = LimitsConfig(), caches: Caches | None = None) -> None:
        self._caches = caches or Caches()
        # An agent reads a long item page after page, and each read needs the page count: the cuts of the last
        # texts read are kept (by content, so a reused key is never served another text's cuts).
        self._pages: BoundedCache[tuple[str, int], tuple[int, ...]] = self._caches.new(
            64, weight=16_000_000, weigh=lambda key, ends: len(key[0]))
        self._store = store
        self._ref_of = store.database.dialect.json_field("i.metadata", _REF)  # an item's `ref`, as text
        self._limits = limits
        self._counter = counter
        self._config = config
        self._clock = clock

    def add(
        self,
        namespace: str,
        task_id: str,
        kind: str,
        text: str,
        *,
        ephemeral: bool = False,
        ttl_s: int | None = None,
        parent_task_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        ref: str | None = None,
    ) -> AddedItem:
        """Store one item; large items are kept whole but recalled as a head (one-shot items are never cut).

        With `ref`, the item is stored once: a live item of the task added with the same ref is answered instead
        (context assembly offloads the same tool result on every turn and must get the same key back).
        """
        policy.check_namespace(namespace)
        check_length(text, self._limits.max_text_chars, "text", "limits.max_text_chars")
        policy.check_task_id(task_id)
        policy.check_kind(kind)
        if isinstance(text, str):
            text = text.replace("\x00", "")  # free text: a NUL means nothing in it (ids and kinds refuse one)
        policy.check_text(text)
        ttl = policy.check_ttl(ttl_s)
        if parent_task_id is not None:
            policy.check_task_id(parent_task_id, "parent_task_id")
        if isinstance(metadata, Mapping):
            check_metadata(metadata, "metadata", self._limits)
        meta = policy.encode_metadata(metadata)
        tokens = self._counter.count(text)
        # A one-shot item is deleted when recalled, so a key to read the rest later would point at nothing.
        offloaded = not ephemeral and tokens > self._config.offload_tokens
        head = first_page(self._counter, text, self._config.head_tokens) if offloaded else None
        moment = self._clock()
        now = to_iso(moment)
        task_expiry = to_iso(moment + timedelta(seconds=self._config.default_ttl_s))
        item_expiry = to_iso(moment + timedelta(seconds=ttl)) if ttl is not None else None
        if ref is not None:
            meta = policy.encode_metadata({**(metadata or {}), _REF: ref})
        with self._store.transaction() as db:
            if ref is not None:
                known = db.execute(
                    "SELECT i.key, i.offloaded, i.tokens, i.expires_at, t.expires_at FROM task_items i JOIN tasks t "
                    "ON t.namespace = i.namespace AND t.task_id = i.task_id WHERE i.namespace = :namespace "
                    f"AND i.task_id = :task_id AND {self._ref_of} = :ref AND {_LIVE}",
                    {"namespace": namespace, "task_id": task_id, "ref": ref, "now": now}).fetchone()
                if known is not None:
                    key, was_offloaded, size, own, task_end = known
                    return AddedItem(key=key, task_id=task_id, offloaded=bool(was_offloaded), tokens=size,
                                     expires_at=min(own, task_end) if own else task_end)
            seq, task_expiry = self._open(db, namespace, task_id, parent_task_id, now, task_expiry)
            key = f"{task_id}/r{seq}"
            shown = ranking.offload_text(key, tokens, head) if head is not None else None
            db.execute(
                "INSERT INTO task_items (namespace, task_id, key, seq, kind, text, tokens, ephemeral, offloaded, "
                "head, head_tokens, created_at, expires_at, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [namespace, task_id, key, seq, kind, text, tokens, int(bool(ephemeral)), int(offloaded), shown,
                 None if shown is None else self._counter.count(shown), now, item_expiry, meta],
            )
        expires = min(item_expiry, task_expiry) if item_expiry is not None else task_expiry
        return AddedItem(key=key, task_id=task_id, offloaded=offloaded, tokens=tokens, expires_at=expires)

    def touch(self, namespace: str, task_id: str, parent_task_id: str | None = None) -> None:
        """Open the task, or slide its expiry, without adding an item (as `add` does): a conversation whose turn
        stores only facts still has a task that ending it or its expiry removes, facts included."""
        policy.check_namespace(namespace)
        policy.check_task_id(task_id)
        if parent_task_id is not None:
            policy.check_task_id(parent_task_id, "parent_task_id")
        now, expiry = self._expiry()
        with self._store.transaction() as db:
            self._open(db, namespace, task_id, parent_task_id, now, expiry, numbered=False)

    def thread(self, namespace: str, seed: str, prefixes: Sequence[str]) -> str:
        """The task of a conversation sent without task_id (memory.task.threads), opened or its expiry slid.

        `seed` is the caller's digest of how the conversation starts, `prefixes[k]` its digest of the request's
        messages[:k + 1]. The request continues the known thread of that seed whose newest request it extends or
        repeats (the longest), else a new one starts (task id `ctx-` and 16 hex digits, the same on every replica);
        this request becomes the thread's newest.
        """
        policy.check_namespace(namespace)
        seed, checked = threads.check(seed, prefixes)
        now, expiry = self._expiry()
        with self._store.transaction() as db:
            task_id = threads.task_of(db, namespace, seed, checked)
            self._open(db, namespace, task_id, None, now, expiry, numbered=False)
            threads.record(db, namespace, task_id, seed, checked, now)
        return task_id

    def peek_thread(self, namespace: str, seed: str, prefixes: Sequence[str]) -> str:
        """The task `thread` would answer now, with nothing opened or recorded: a read ahead of the caller's
        transaction, which asks `thread` itself (another request may have moved the thread meanwhile)."""
        policy.check_namespace(namespace)
        seed, checked = threads.check(seed, prefixes)
        return threads.task_of(self._store.db, namespace, seed, checked)

    def tool_selection(self, namespace: str, task_id: str) -> tuple[str, ...]:
        """The task's last tool selection (set_tool_selection); empty when it has none, is unknown or expired."""
        now = self._enter(namespace, task_id)
        return selections.read(self._store.db, namespace, task_id, now)

    def set_tool_selection(self, namespace: str, task_id: str, names: Sequence[str]) -> None:
        """Keep the tool names chosen for the task's turn; the task opens or its expiry slides as on `add`."""
        policy.check_namespace(namespace)
        policy.check_task_id(task_id)
        chosen = selections.check_names(names, self._limits)
        now, expiry = self._expiry()
        with self._store.transaction() as db:
            self._open(db, namespace, task_id, None, now, expiry, numbered=False)
            selections.write(db, namespace, task_id, chosen)

    def get(self, namespace: str, task_id: str, key: str) -> TaskItem:
        """One live item of the task or of one of its sub-tasks, with its full text."""
        now = self._enter(namespace, task_id)
        self._require_task(namespace, task_id, now)
        return self._find(namespace, task_id, [key], now)[0]

    def read(
        self, namespace: str, task_id: str, key: str, page: int | None = None, page_tokens: int | None = None
    ) -> Page:
        """An item's full text, or page `page` (from 1) of it cut every `page_tokens` tokens.

        Without either argument the whole text is one page. `page_tokens` defaults to tasks.offload_tokens.
        A page holds at most `page_tokens` tokens unless a single character needs more.
        """
        item = self.get(namespace, task_id, key)
        if page is None and page_tokens is None:
            return Page(key=key, text=item.text, page=1, pages=1, tokens=item.tokens, total_tokens=item.tokens)
        number = policy.check_positive(1 if page is None else page, "page")
        size = policy.check_positive(self._config.offload_tokens if page_tokens is None else page_tokens,
                                     "page_tokens")
        ends = self._pages.get_or_compute(namespace, (item.text, size),
                                          lambda: page_ends(self._counter, item.text, size))
        if number > len(ends):
            raise ValidationError(
                f"page must be between 1 and {len(ends)} for {key} at {size} tokens a page, got {number}"
            )
        start = ends[number - 2] if number > 1 else 0
        text = item.text[start : ends[number - 1]]
        return Page(key=key, text=text, page=number, pages=len(ends), tokens=self._counter.count(text),
                    total_tokens=item.tokens)

    def refs(self, namespace: str, task_id: str) -> dict[str, str]:
        """The keys of the task's live items that were added with a `ref`, by ref (one read for a whole turn)."""
        now = self._enter(namespace, task_id)
        rows = self._store.db.execute(
            f"SELECT {self._ref_of}, i.key FROM task_items i JOIN tasks t "
            "ON t.namespace = i.namespace AND t.task_id = i.task_id WHERE i.namespace = :namespace "
            f"AND i.task_id = :task_id AND {self._ref_of} IS NOT NULL AND {_LIVE}",
            {"namespace": namespace, "task_id": task_id, "now": now}).fetchall()
        return {ref: key for ref, key in rows}

    def list_items(self, namespace: str, task_id: str) -> list[TaskItem]:
        """The task's own live items, oldest first (one-shot items included and not consumed)."""
        now = self._enter(namespace, task_id)
        self._require_task(namespace, task_id, now)
        rows = self._store.db.execute(
            _ITEM + f"WHERE i.namespace = :namespace AND i.task_id = :task_id AND {_LIVE} ORDER BY i.seq",
            {"namespace": namespace, "task_id": task_id, "now": now},
        ).fetchall()
        return [_item(row) for row in rows]

    def list_tasks(self, namespace: str) -> list[TaskInfo]:
        """The namespace's live tasks, newest first, with their live items' count and tokens."""
        policy.check_namespace(namespace)
        return listing.live_tasks(self._store.db, namespace, to_iso(self._clock()))

    def counts(self, within: Callable[[str], bool] | None = None) -> dict[str, tuple[int, int]]:
        """(live tasks, live items) per namespace, of the namespaces `within` accepts (all without it)."""
        return listing.counts(self._store.db, to_iso(self._clock()), within)

    def snippets(
        self, namespace: str, task_id: str, query_terms: str | Sequence[str] | None = None, *,
        consume: bool = True, with_refs: bool = True,
    ) -> list[Snippet]:
        """Recall candidates: the task's live items plus its direct sub-tasks' `result` items, best first.

        With `consume` (the default) one-shot items are consumed here: each is handed to exactly one call, even
        under concurrent calls. Without it they are only shown (`why["ephemeral"]`), and the caller consumes
        the ones it really used with `consume()`.
        Scores are in 0.3..1.0 (see ranking.score): 0.3 + 0.3·recency (halving every 8 places back from the
        newest) + 0.25·kind weight (plan/result 1.0 ... tool_result 0.4) + 0.15·share of query terms found
        in the shown text; one-shot items score as the newest plan. An unknown or expired task has none.
        Offloaded items show their head form; metadata is the item's own plus its `kind`. `with_refs=False`
        leaves out the items added with a `ref` (tool results context assembly offloaded).
        """
        now = self._enter(namespace, task_id)
        terms = ranking.query_terms(query_terms)
        params = {"namespace": namespace, "task_id": task_id, "now": now}
        own = "" if with_refs else f" AND {self._ref_of} IS NULL"
        rows = self._store.db.execute(
            _CANDIDATE + f"WHERE i.namespace = :namespace AND i.task_id = :task_id AND {_LIVE}{own} UNION ALL "
            + _CANDIDATE + f"WHERE i.namespace = :namespace AND i.kind = 'result' AND {_LIVE} AND i.task_id IN "
            "(SELECT task_id FROM tasks WHERE namespace = :namespace AND parent_task_id = :task_id)",
            params,
        ).fetchall()
        if consume:
            won = self.consume(namespace, [row[1] for row in rows if row[6]])
            rows = [row for row in rows if not row[6] or row[1] in won]
        rows.sort(key=lambda r: (r[8], r[2], r[1]), reverse=True)
        snippets = [self._snippet(task_id, row, rank, terms) for rank, row in enumerate(rows)]
        snippets.sort(key=lambda s: (-s.score, s.id))
        return snippets

    def add_summary(
        self,
        namespace: str,
        task_id: str,
        *,
        first: int,
        last: int,
        digest: str,
        text: str,
        tokens: int,
        covered_tokens: int,
        sections: Mapping[str, Sequence[str]],
        dropped: Sequence[Mapping[str, str]] = (),
        references: Sequence[str] = (),
        summariser: str = "extractive",
        parent_task_id: str | None = None,
    ) -> SummaryVersion:
        """Store the task's next compaction summary: version 1, then one more than its highest on every call.

        It covers messages[first] to messages[last] (both included). The task opens or its expiry slides as on
        `add` (no item number is used), and the summaries go with the task when it ends or expires.
        """
        policy.check_namespace(namespace)
        policy.check_task_id(task_id)
        values = summary_sql.prepare(first=first, last=last, digest=digest, text=text, tokens=tokens,
                                   covered_tokens=covered_tokens, sections=sections, dropped=dropped,
                                   references=references, summariser=summariser, limits=self._limits)
        if parent_task_id is not None:
            policy.check_task_id(parent_task_id, "parent_task_id")
        moment = self._clock()
        now = to_iso(moment)
        expiry = to_iso(moment + timedelta(seconds=self._config.default_ttl_s))
        with self._store.transaction() as db:
            self._open(db, namespace, task_id, parent_task_id, now, expiry, numbered=False)
            return summary_sql.insert(db, namespace, task_id, now, values)

    def latest_summary(self, namespace: str, task_id: str) -> SummaryVersion | None:
        """The newest summary of a live task; None when it has none, is unknown or expired (asked every turn)."""
        now = self._enter(namespace, task_id)
        return summary_sql.latest(self._store.db, namespace, task_id, now)

    def summaries(self, namespace: str, task_id: str) -> list[SummaryVersion]:
        """Every summary version of the task, oldest first (empty while it has none)."""
        now = self._enter(namespace, task_id)
        self._require_task(namespace, task_id, now)
        return summary_sql.every(self._store.db, namespace, task_id, now)

    def summary(self, namespace: str, task_id: str, version: int) -> SummaryVersion:
        """One summary version of the task (versions count from 1)."""
        number = policy.check_positive(version, "version")
        now = self._enter(namespace, task_id)
        self._require_task(namespace, task_id, now)
        db = self._store.db
        found = summary_sql.one(db, namespace, task_id, number, now)
        if found is None:
            held = summary_sql.versions(db, namespace, task_id)
            has = ("it has no summary yet" if not held else f"its only version is {held[0]}" if len(held) == 1
                   else f"its versions are {summary_sql.spans(held)}")
            raise NotFoundError(
                f"task {task_id!r} of namespace {namespace!r} has no summary version {number}; {has} — "
                "ask for one of those"
            )
        return found

    def end_task(self, namespace: str, task_id: str) -> int:
        """Remove the task, its sub-tasks (recursively), all their items and summaries, and with the tasks their
        conversation state and session facts (a trigger, memory.schema); the number of items removed."""
        policy.check_namespace(namespace)
        policy.check_task_id(task_id)
        with self._store.transaction() as db:
            exists = db.execute(
                "SELECT 1 FROM tasks WHERE namespace = ? AND task_id = ?", [namespace, task_id]
            ).fetchone()
            if exists is None:
                raise NotFoundError(_no_task(namespace, task_id))
            removed = tree.delete_tree(db, namespace, task_id)
            self._store.erase_later(db)  # the WAL still holds the items' text (memory.erase)
        self._caches.forget(namespace)
        return removed

    def delete_namespace(self, namespace: str) -> int:
        """Remove every task, item and summary of a namespace, and with the tasks their conversation state and
        session facts (a trigger, memory.schema); the number of items removed (0 for an unknown one)."""
        policy.check_namespace(namespace)
        with self._store.transaction() as db:
            removed = db.execute("DELETE FROM task_items WHERE namespace = ?", [namespace]).rowcount
            summaries = db.execute("DELETE FROM task_summaries WHERE namespace = ?", [namespace]).rowcount
            # a task row takes its conversation state and session facts along (triggers): none without one
            tasks = db.execute("DELETE FROM tasks WHERE namespace = ?", [namespace]).rowcount
            changed = removed + summaries + tasks > 0
            if changed:
                self._store.erase_later(db)
        if changed:  # nothing deleted, nothing to forget
            self._caches.forget(namespace)
        return removed

    def promote(self, namespace: str, task_id: str, keys: Sequence[str]) -> tuple[TaskItem, ...]:
        """Full copies of chosen items of the task's tree, for the caller to store as experience.

        Nothing is removed or copied here; asking for no keys returns nothing.
        """
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise ValidationError(f"keys must be a list of item keys such as ['t-42/r7'], got {keys!r}")
        now = self._enter(namespace, task_id)
        self._require_task(namespace, task_id, now)
        wanted = list(dict.fromkeys(keys))
        return tuple(self._find(namespace, task_id, wanted, now)) if wanted else ()

    def purge_expired(self) -> int:
        """Remove every expired task and item in every namespace; the number of items removed."""
        now = to_iso(self._clock())
        with self._store.transaction() as db:
            removed, namespaces = tree.purge_all(db, now)
            if namespaces:  # a task may have expired with summaries but no items
                self._store.erase_later(db)  # expired items' and summaries' text must not stay in the WAL either
        for namespace in namespaces:
            self._caches.forget(namespace)
        return removed

    def _expiry(self) -> tuple[str, str]:
        """Now, and when a task opened or slid now expires."""
        moment = self._clock()
        return to_iso(moment), to_iso(moment + timedelta(seconds=self._config.default_ttl_s))

    def _open(self, db: Connection, namespace: str, task_id: str, parent_task_id: str | None, now: str,
              expiry: str, *, numbered: bool = True) -> tuple[int, str]:
        """tree.open_task, owing an erase pass when it starts an expired task over: its items, summaries and
        session facts are deleted then (memory.erase)."""
        expired = db.execute("SELECT 1 FROM tasks WHERE namespace = ? AND task_id = ? AND expires_at <= ?",
                             [namespace, task_id, now]).fetchone()
        if expired is not None:
            self._store.erase_later(db)
        return tree.open_task(db, namespace, task_id, parent_task_id, now, expiry, numbered=numbered)

    def _enter(self, namespace: str, task_id: str) -> str:
        """Validate, read the clock once, and purge what of this task has expired; the call's `now`."""
        policy.check_namespace(namespace)
        policy.check_task_id(task_id)
        now = to_iso(self._clock())
        stale = self._store.db.execute(
            "SELECT EXISTS (SELECT 1 FROM tasks WHERE namespace = :namespace AND task_id = :task_id "
            "AND expires_at <= :now) OR EXISTS (SELECT 1 FROM task_items WHERE namespace = :namespace "
            "AND task_id = :task_id AND expires_at <= :now)",
            {"namespace": namespace, "task_id": task_id, "now": now},
        ).fetchone()[0]
        if stale:  # checked first so that reads do not queue for the write lock when nothing expired
            with self._store.transaction() as db:
                if tree.purge_task(db, namespace, task_id, now):
                    self._store.erase_later(db)  # as purge_expired: what expired must leave the WAL too
        return now

    def _require_task(self, namespace: str, task_id: str, now: str) -> None:
        row = self._store.db.execute(
            "SELECT 1 FROM tasks WHERE namespace = ? AND task_id = ? AND expires_at > ?", [namespace, task_id, now]
        ).fetchone()
        if row is None:
            raise NotFoundError(_no_task(namespace, task_id))

    def _find(self, namespace: str, task_id: str, keys: list[str], now: str) -> list[TaskItem]:
        """Live items by key, in the order asked, each of the task or one of its sub-tasks."""
        db = self._store.db
        marks = ", ".join("?" for _ in keys)
        rows = db.execute(
            _ITEM + f"WHERE i.namespace = ? AND i.key IN ({marks}) AND t.expires_at > ? "
            "AND (i.expires_at IS NULL OR i.expires_at > ?)",
            [namespace, *keys, now, now],
        ).fetchall()
        found = {row[2]: _item(row) for row in rows}
        if any(item.task_id != task_id for item in found.values()):
            family = set(tree.subtree(db, namespace, task_id))
            found = {key: item for key, item in found.items() if item.task_id in family}
        missing = [key for key in keys if key not in found]
        if missing:
            raise NotFoundError(
                f"no live item {', '.join(map(repr, missing))} in task {task_id!r} of namespace {namespace!r}; "
                "it may have expired, been recalled once (one-shot) or belong to another task — "
                "use the key returned by add"
            )
        return [found[key] for key in keys]

    def consume(self, namespace: str, keys: Sequence[str]) -> set[str]:
        """Delete the one-shot items among `keys`; the keys this call deleted (another call got the rest).

        Keys that are not one-shot items are left alone and not returned.
        """
        policy.check_namespace(namespace)
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return set()
        with self._store.transaction() as db:
            return self._consume(db, namespace, wanted)

    def consume_all(self, namespace: str, keys: Sequence[str]) -> bool:
        """Delete the one-shot items `keys` together, or none of them when another call consumed any of them first;
        whether they were deleted. For a caller that chose them before its transaction and, inside it, must take
        all it chose or choose again."""
        policy.check_namespace(namespace)
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return True
        marks = ", ".join("?" for _ in wanted)
        with self._store.transaction() as db:
            left = db.execute(f"SELECT count(*) FROM task_items WHERE namespace = ? AND ephemeral = 1 "
                              f"AND key IN ({marks})", [namespace, *wanted]).fetchone()[0]
            if left < len(wanted):
                return False
            self._consume(db, namespace, wanted)
            return True

    def _consume(self, db: Connection, namespace: str, keys: list[str]) -> set[str]:
        marks = ", ".join("?" for _ in keys)
        consumed = {
            r[0]
            for r in db.execute(
                f"DELETE FROM task_items WHERE namespace = ? AND ephemeral = 1 AND key IN ({marks}) RETURNING key",
                [namespace, *keys],
            ).fetchall()
        }
        if consumed:
            self._store.erase_later(db)
        return consumed

    @staticmethod
    def _snippet(task_id: str, row: Any, rank: int, terms: tuple[str, ...]) -> Snippet:
        owner, key, _seq, kind, shown, shown_tokens, ephemeral, offloaded, created_at, metadata, tokens = row
        lexical = ranking.overlap(terms, shown)
        return Snippet(
            tier="task",
            id=key,
            text=shown,
            score=ranking.score(kind, rank, lexical, one_shot=bool(ephemeral)),
            tokens=shown_tokens,
            source=f"task {owner}" if owner == task_id else f"sub-task {owner}",
            updated_at=created_at,
            key=key,
            # The renderer labels task lines by kind (`[plan] ...`); the item's kind wins over a same-named key.
            metadata=MappingProxyType({**_metadata(metadata), "kind": kind}),
            why=MappingProxyType({
                "kind": kind, "task_id": owner, "offloaded": bool(offloaded), "ephemeral": bool(ephemeral),
                "total_tokens": tokens, "rank": rank, "overlap": lexical,
            }),
        )


def _item(row: Any) -> TaskItem:
    (namespace, task_id, key, kind, text, tokens, created_at, own_expiry, task_expiry, ephemeral, offloaded,
     parent, metadata) = row
    return TaskItem(
        namespace=namespace, task_id=task_id, key=key, kind=kind, text=text, tokens=tokens, created_at=created_at,
        expires_at=min(own_expiry, task_expiry) if own_expiry is not None else task_expiry,
        ephemeral=bool(ephemeral), offloaded=bool(offloaded), parent_task_id=parent,
        metadata=_metadata(metadata),
    )


def _metadata(stored: str) -> Mapping[str, Any]:
    return _NO_METADATA if stored == "{}" else parse_metadata(stored)


def _no_task(namespace: str, task_id: str) -> str:
    return (
        f"task {task_id!r} does not exist in namespace {namespace!r}; it may have ended or expired — "
        "add an item to start it"
    )
