"""A kine-style revision log on SQLite: etcd's model (one global revision per write) for the box.

Design (after k3s-io/kine ``pkg/logstructured/sqllog`` and ``pkg/drivers/generic``; no code
taken): one append-only table ``log``; each write (create, update, delete) is a new row whose
``id`` is the new global revision = the object's ``resourceVersion``. The current state of a
key is its row with the highest id (unless that row is a deletion); the state at revision R is
the same restricted to ``id <= R``. Compaction removes rows superseded at or below a target
revision and tombstones at or below it; reading or watching below the compacted revision
raises :class:`Compacted` (the server answers ``410 Gone``/``Expired``).

For speed the store keeps, in memory:

- the current state: ``{space: {(namespace, name): Entry}}`` with the object's JSON bytes,
  its labels and its selectable fields (so lists and selectors never touch SQL);
- a ring of recent :class:`Event` s (all key spaces, in revision order) that serves watches;
  older history is read back from SQLite.

Revisions are assigned here (single writer: the server's event loop). Each write is inserted and
applied to the in-memory state at once (so the next write's checks see it); its event is published
(ring, subscribers) only once its transaction is committed, in revision order, so revision k+1 is
never visible before k. Without group commit every write is its own transaction. With
``group_commit`` (the server's on-disk store) concurrent writes share one: the first write of a
batch opens it and schedules the commit on the running event loop (``call_soon``); every write
made before that callback runs — the other requests the loop is handling in the meantime — joins
the batch, and the commit's one fsync covers them all, as etcd's raft loop saves all the entries
proposed during the previous fsync in one WAL sync (``etcdserver/raft.go``, ``wal.Save``). The
server answers no request before :meth:`Store.sync` says the writes it may reflect are committed
(see ``APIServer._middleware``), so a write is acknowledged only after the fsync that covers it,
and no client sees state a crash could take back. Being
the only writer, compare-and-swap is checked against the in-memory state (kine needs a
UNIQUE(name, prev_revision) index for that; here ``prev_revision`` only links an update or
deletion to the row it supersedes, 0 for a creation).
``path=None`` uses ``:memory:``; a directory path persists ``<dir>/state.db`` (WAL) and a
restart continues from the last revision. In memory, nothing is durable, so a write does not
wait for SQLite at all: its row joins a buffer written in one ``executemany`` transaction
(every :data:`LOG_BUFFER_ROWS` rows, and before anything reads the log back — history beyond
the ring, compaction, close); the in-memory state, the ring and the events are unchanged.

Not thread-safe: call from one thread (the server's loop) only.
"""

from __future__ import annotations

import asyncio
import bisect
import builtins
import fcntl
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import orjson

from kubesched.apiserver.encryption import DecryptError, Transformers

log = logging.getLogger("kubesched.apiserver")

__all__ = [
    "Compacted",
    "Conflict",
    "CorruptStore",
    "MAX_REQUEST_BYTES",
    "RequestTooLarge",
    "DataDirLocked",
    "Entry",
    "Event",
    "FutureRevision",
    "KeyExists",
    "KeyNotFound",
    "StorageError",
    "Store",
]

Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
AttrsFn = Callable[[str, dict[str, Any]], dict[str, str]]


class StorageError(Exception):
    """Base of the store's errors."""


class KeyExists(StorageError):
    """Create of a key whose latest row is not a deletion."""


class KeyNotFound(StorageError):
    """Update/delete of a key with no live object."""


class Conflict(StorageError):
    """Compare-and-swap failed: ``current`` is the live revision."""

    def __init__(self, current: int) -> None:
        super().__init__(f"current revision {current}")
        self.current = current


class DataDirLocked(StorageError):
    """Another process serves this data directory (the store must be its only writer)."""


class RequestTooLarge(StorageError):
    """A value larger than etcd accepts (``--max-request-bytes``, default 1.5 MiB); upstream's
    kube-apiserver passes etcd's ``etcdserver: request is too large`` through as a 500."""


#: etcd's default ``--max-request-bytes`` (``embed.DefaultMaxRequestBytes``, 1.5 MiB): the largest
#: write request etcd takes; kubesched compares the stored object's bytes plus its key with it.
MAX_REQUEST_BYTES = 1536 * 1024


#: in-memory stores: log rows buffered before one ``executemany`` writes them (see the module docstring)
LOG_BUFFER_ROWS = 512

_INSERT = ("INSERT INTO log(id, space, namespace, name, created, deleted, prev_revision, value) "
           "VALUES (?,?,?,?,?,?,?,?)")


class CorruptStore(StorageError):
    """The data directory's database cannot be read (not SQLite, truncated, malformed)."""


class Compacted(StorageError):
    """Requested revision is older than the compacted revision (``410 Expired``)."""

    def __init__(self, requested: int, compact_rev: int) -> None:
        super().__init__(f"too old resource version: {requested} ({compact_rev})")
        self.requested = requested
        self.compact_rev = compact_rev


class FutureRevision(StorageError):
    """Requested revision is newer than the current revision (``ResourceVersionTooLarge``)."""

    def __init__(self, requested: int, current: int) -> None:
        super().__init__(f"Too large resource version: {requested}, current: {current}")
        self.requested = requested
        self.current = current


class Entry:
    """A stored object version: revision, JSON bytes (with ``resourceVersion`` set), labels, fields."""

    __slots__ = ("data", "fields", "labels", "rv")

    def __init__(self, rv: int, data: bytes, labels: dict[str, str], fields: dict[str, str]) -> None:
        self.rv = rv
        self.data = data
        self.labels = labels
        self.fields = fields

    def obj(self) -> dict[str, Any]:
        """A fresh decoded copy of the object."""
        out: dict[str, Any] = orjson.loads(self.data)
        return out


class Event:
    """One write: ``type`` ADDED/MODIFIED/DELETED, the new state (for DELETED: the last state
    carrying the deletion's revision) and the previous state (``prev``, None for ADDED)."""

    __slots__ = ("entry", "name", "ns", "prev", "rv", "space", "type")

    def __init__(self, type_: str, space: str, ns: str, name: str, entry: Entry, prev: Entry | None) -> None:
        self.type = type_
        self.space = space
        self.ns = ns
        self.name = name
        self.entry = entry
        self.prev = prev
        #: the entry's revision (an attribute: read by every watcher of every event)
        self.rv = entry.rv


_SCHEMA = """
CREATE TABLE IF NOT EXISTS log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    space TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS log_key ON log(space, namespace, name, id);
CREATE INDEX IF NOT EXISTS log_space_id ON log(space, id);
CREATE INDEX IF NOT EXISTS log_prev ON log(prev_revision);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


def _default_attrs(space: str, obj: dict[str, Any]) -> dict[str, str]:
    md = obj.get("metadata") or {}
    return {"metadata.name": md.get("name", ""), "metadata.namespace": md.get("namespace", "")}



def _event_bytes(ev: Event) -> int:
    """Object bytes an event in the watch ring keeps alive (its object and the one it replaced)."""
    prev = ev.prev
    return len(ev.entry.data) + (len(prev.data) if prev is not None and prev is not ev.entry else 0)


class Store:
    """The revision log. ``attrs(space, obj)`` computes an object's selectable fields.

    ``ring_size`` events are kept in memory for watches; ``path`` None → in memory.

    Durability: with ``fsync=True`` (the default) every write is on disk before it is acknowledged
    (SQLite WAL with ``synchronous=FULL``: the WAL is fsynced at each commit), as etcd syncs its WAL
    before answering. ``fsync=False`` is etcd's ``--unsafe-no-fsync``: ``synchronous=NORMAL``, the
    WAL is synced only at checkpoints, so a power loss or kernel crash loses the last acknowledged
    writes (a crash of the process alone loses nothing).

    Group commit (``group_commit=True``, effective on disk inside a running event loop): concurrent
    writes share one transaction and one fsync; events are published and :meth:`sync` returns
    when their batch is committed (see the module docstring). A failed commit is fatal to the store,
    as a failed WAL save is to etcd: it closes, and every later write and :meth:`sync` raises.

    Privacy: the directory is created (or tightened to) 0700 and ``state.db`` (and with it SQLite's
    ``-wal``/``-shm`` files, which take the database's mode) and ``lock`` are created 0600, as etcd
    keeps its data dir (``fileutil.PrivateDirMode``/``PrivateFileMode``).

    Raises :class:`DataDirLocked` when another process holds the directory and
    :class:`CorruptStore` when its database cannot be read.
    """

    def __init__(self, path: str | None = None, *, attrs: AttrsFn = _default_attrs, ring_size: int = 20000,
                 fsync: bool = True, ring_bytes: int = 64 << 20, transformers: Transformers | None = None,
                 group_commit: bool = False) -> None:
        self.path = path
        #: encryption at rest (:class:`kubesched.apiserver.encryption.Transformers`): what goes to and
        #: comes from SQLite; objects in memory stay plaintext
        self._transformers = transformers
        self.fsync = fsync
        self._attrs = attrs
        self._lock_fd: int | None = None
        self.closed = False
        #: why the store closed itself (a failed commit), None otherwise
        self.failure: str | None = None
        self._group = group_commit and path is not None
        #: in memory: log rows not yet in SQLite, oldest first (see :meth:`_flush_log`)
        self._log_buffer: list[tuple[int, str, str, str, int, int, int, bytes]] | None = [] if path is None else None
        #: events of the open transaction's writes, oldest first (None: no transaction open)
        self._batch: list[Event] | None = None
        #: futures of :meth:`sync` callers waiting for the open transaction
        self._waiters: list[asyncio.Future[None]] = []
        #: test hook: called with ("before" | "after", batch events) around each group commit
        self.commit_hook: Callable[[str, list[Event]], None] | None = None
        if path is None:
            db = ":memory:"
        else:
            os.makedirs(path, mode=0o700, exist_ok=True)
            if os.stat(path).st_mode & 0o077:
                os.chmod(path, 0o700)
            self._lock_fd = os.open(os.path.join(path, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(self._lock_fd)
                self._lock_fd = None
                raise DataDirLocked(f"data directory {path} is in use by another kubesched apiserver") from None
            db = os.path.join(path, "state.db")
            os.close(os.open(db, os.O_RDWR | os.O_CREAT, 0o600))  # created private; SQLite's -wal/-shm follow
        self._db = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={'FULL' if fsync else 'NORMAL'}")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='log'").fetchone()
            self.current_rev: int = int(row[0]) if row else 0
            row = self._db.execute("SELECT value FROM meta WHERE key='compact_rev'").fetchone()
            self.compact_rev: int = int(row[0]) if row else 0
        except sqlite3.DatabaseError as e:
            self._abandon()
            raise CorruptStore(f"cannot read the store {db}: {e} (restore it from a backup, or move it away to "
                               "start empty)") from None
        self._objects: dict[str, dict[Key, Entry]] = {}
        self._sorted: dict[str, list[Key] | None] = {}
        self._space_rev: dict[str, int] = {}
        self._ring: list[Event] = []
        #: when each ring event was published (time.monotonic), for :meth:`expire_ring`
        self._ring_times: list[float] = []
        self._ring_head = 0
        self._ring_size = ring_size
        #: the ring also holds at most this many bytes of object data (an event keeps its object and
        #: the previous one alive): a large object updated often cannot grow memory without bound;
        #: older events are read back from SQLite, as the count bound already makes them
        self._ring_bytes_max = ring_bytes
        self._ring_bytes = 0
        self._ring_start = self.current_rev  # the ring holds every event with rv > _ring_start
        self._watchers: dict[str, set[Callable[[Event], None]]] = {}
        #: revision up to which every write is committed (== current_rev outside a batch)
        self.synced_rev = self.current_rev
        try:
            self._load()
        except (sqlite3.DatabaseError, ValueError, DecryptError) as e:
            # malformed pages, a row that is not JSON, or one no configured provider can decrypt
            self._abandon()
            raise CorruptStore(f"cannot read the store {db}: {e} (restore it from a backup, or move it away to "
                               "start empty)") from None

    def _read(self, space: str, value: Any) -> bytes:
        """A stored value as plaintext (decrypted when encryption at rest is configured)."""
        data = bytes(value)
        return data if self._transformers is None else self._transformers.decrypt(space, data)

    def _abandon(self) -> None:
        """Close what __init__ opened (the database, the directory lock) after a failure."""
        self._db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------------ state
    def _entry(self, space: str, rv: int, data: bytes, obj: dict[str, Any] | None = None) -> Entry:
        if obj is None:
            obj = orjson.loads(data)
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return Entry(rv, data, labels, self._attrs(space, obj))

    def _load(self) -> None:
        q = (
            "SELECT l.space, l.namespace, l.name, l.id, l.value FROM log l JOIN "
            "(SELECT MAX(id) AS mid FROM log GROUP BY space, namespace, name) m ON l.id = m.mid "
            "WHERE l.deleted = 0"
        )
        for space, ns, name, rv, value in self._db.execute(q):
            self._objects.setdefault(space, {})[(ns, name)] = self._entry(space, rv, self._read(space, value))
            self._sorted[space] = None
            self._space_rev[space] = max(self._space_rev.get(space, 0), rv)

    def get(self, space: str, ns: str, name: str) -> Entry | None:
        """The live entry of a key, or None."""
        objs = self._objects.get(space)
        return objs.get((ns, name)) if objs else None

    def count(self, space: str) -> int:
        return len(self._objects.get(space, ()))

    def space_rev(self, space: str) -> int:
        """Revision of the last write to ``space`` (0 if none since start)."""
        return self._space_rev.get(space, 0)

    def _keys(self, space: str) -> list[Key]:
        keys = self._sorted.get(space)
        if keys is None:
            keys = sorted(self._objects.get(space, ()))
            self._sorted[space] = keys
        return keys

    def list(self, space: str, ns: str | None = None, start_after: Key | None = None) -> list[Entry]:
        """Live entries sorted by (namespace, name); ``ns`` restricts to one namespace;
        ``start_after`` skips keys up to and including it."""
        objs = self._objects.get(space)
        if not objs:
            return []
        keys = self._keys(space)
        lo, hi = 0, len(keys)
        if ns is not None:
            lo = bisect.bisect_left(keys, (ns, ""))
            hi = bisect.bisect_left(keys, (ns + "\x00", ""))
        if start_after is not None:
            lo = max(lo, bisect.bisect_right(keys, start_after))
        return [objs[k] for k in keys[lo:hi]]

    def list_keyed(self, space: str, ns: str | None = None) -> tuple[builtins.list[Key], builtins.list[Entry]]:
        """Live (keys, entries), both sorted by key (for paginated snapshots)."""
        objs = self._objects.get(space)
        if not objs:
            return [], []
        keys = self._keys(space)
        if ns is not None:
            keys = keys[bisect.bisect_left(keys, (ns, "")):bisect.bisect_left(keys, (ns + "\x00", ""))]
        return keys, [objs[k] for k in keys]

    def list_at(
        self, space: str, rev: int, ns: str | None = None, start_after: Key | None = None
    ) -> builtins.list[Entry]:
        """Entries as of revision ``rev`` (from SQLite unless nothing changed since).

        Raises :class:`Compacted` when ``rev`` < the compacted revision and
        :class:`FutureRevision` when ``rev`` > the current one.
        """
        if rev > self.current_rev:
            raise FutureRevision(rev, self.current_rev)
        if rev >= self._space_rev.get(space, 0):
            return self.list(space, ns, start_after)
        if rev < self.compact_rev:
            raise Compacted(rev, self.compact_rev)
        self._flush_log()
        cond, args = "space = ? AND id <= ?", [space, rev]
        if ns is not None:
            cond += " AND namespace = ?"
            args.append(ns)
        q = (
            "SELECT l.namespace, l.name, l.id, l.value FROM log l JOIN "
            f"(SELECT MAX(id) AS mid FROM log WHERE {cond} GROUP BY namespace, name) m ON l.id = m.mid "
            "WHERE l.deleted = 0"
        )
        rows: builtins.list[tuple[Key, Entry]] = []
        for rns, rname, rv, value in self._db.execute(q, args):
            if start_after is not None and (rns, rname) <= start_after:
                continue
            rows.append(((rns, rname), self._entry(space, rv, self._read(space, value))))
        rows.sort(key=lambda r: r[0])
        return [e for _, e in rows]

    # ----------------------------------------------------------------- writes
    def _insert(self, space: str, ns: str, name: str, created: int, deleted: int, prev: int, data: bytes) -> int:
        if self.closed:
            raise StorageError(f"the store failed: {self.failure}" if self.failure else "the store is closed")
        rv = self.current_rev + 1
        if self._transformers is not None:
            data = self._transformers.encrypt(space, data)
        buf = self._log_buffer
        if buf is not None:  # in memory: written in bulk, before the log is read back
            buf.append((rv, space, ns, name, created, deleted, prev, data))
            if len(buf) >= LOG_BUFFER_ROWS:
                self._flush_log()
            self.current_rev = rv
            return rv
        if self._group and self._batch is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not on a loop (start-up, tools): this write is its own transaction
                pass
            else:
                self._db.execute("BEGIN")
                self._batch = []
                loop.call_soon(self._commit_batch)
        self._db.execute(_INSERT, (rv, space, ns, name, created, deleted, prev, data))
        self.current_rev = rv
        return rv

    def _flush_log(self) -> None:
        """Write the in-memory store's buffered log rows (one transaction). A failure closes the
        store, as a failed commit does: SQLite is out of memory and history reads would lie."""
        buf = self._log_buffer
        if not buf:
            return
        self._log_buffer = []
        try:
            self._db.execute("BEGIN")
            self._db.executemany(_INSERT, buf)
            self._db.execute("COMMIT")
        except sqlite3.Error as e:
            self._fail(f"writing the log failed: {e}", "")
            raise StorageError(f"the store failed: {self.failure}") from None

    def _fail(self, failure: str, note: str) -> None:
        """A failed write transaction: roll it back and close the store for good (``failure``)."""
        self.failure = failure
        log.error("store: %s; closing the store%s", failure, note)
        try:
            self._db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        self.closed = True

    @staticmethod
    def _with_rv(obj: dict[str, Any], rv: int, key_len: int = 0) -> bytes:
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        md["resourceVersion"] = str(rv)
        # orjson's result keeps its (>= 4 KiB) build buffer; stored data is long-lived: keep an exact copy
        data = bytes(memoryview(orjson.dumps(obj)))
        if len(data) + key_len > MAX_REQUEST_BYTES:
            raise RequestTooLarge("etcdserver: request is too large")
        return data

    def create(self, space: str, ns: str, name: str, obj: dict[str, Any]) -> Entry:
        """Store a new object; sets ``obj.metadata.resourceVersion``. Raises :class:`KeyExists`."""
        objs = self._objects.setdefault(space, {})
        if (ns, name) in objs:
            raise KeyExists(f"{space} {ns}/{name}")
        rv = self.current_rev + 1
        data = self._with_rv(obj, rv, len(space) + len(ns) + len(name) + 3)
        self._insert(space, ns, name, 1, 0, 0, data)
        entry = self._entry(space, rv, data, obj)
        objs[(ns, name)] = entry
        self._sorted[space] = None
        self._written(Event("ADDED", space, ns, name, entry, None))
        return entry

    def _live(self, space: str, ns: str, name: str,
              expect_rv: int | None) -> tuple[dict[Key, Entry], Entry]:
        """The space's live objects and the current entry of ``ns/name``, whose revision must be
        ``expect_rv`` when given. Raises :class:`KeyNotFound` or :class:`Conflict`."""
        objs = self._objects.get(space) or {}
        old = objs.get((ns, name))
        if old is None:
            raise KeyNotFound(f"{space} {ns}/{name}")
        if expect_rv is not None and expect_rv != old.rv:
            raise Conflict(old.rv)
        return objs, old

    def update(self, space: str, ns: str, name: str, obj: dict[str, Any], expect_rv: int | None = None) -> Entry:
        """Replace a live object (compare-and-swap on ``expect_rv`` when given).

        Raises :class:`KeyNotFound` or :class:`Conflict`.
        """
        objs, old = self._live(space, ns, name, expect_rv)
        rv = self.current_rev + 1
        data = self._with_rv(obj, rv, len(space) + len(ns) + len(name) + 3)
        self._insert(space, ns, name, 0, 0, old.rv, data)
        entry = self._entry(space, rv, data, obj)
        objs[(ns, name)] = entry
        self._written(Event("MODIFIED", space, ns, name, entry, old))
        return entry

    def delete(self, space: str, ns: str, name: str, expect_rv: int | None = None) -> Entry:
        """Delete a live object; returns its last state carrying the deletion's revision."""
        objs, old = self._live(space, ns, name, expect_rv)
        rv = self.current_rev + 1
        obj = orjson.loads(old.data)
        data = self._with_rv(obj, rv)
        self._insert(space, ns, name, 0, 1, old.rv, data)
        entry = Entry(rv, data, old.labels, old.fields)
        del objs[(ns, name)]
        self._sorted[space] = None
        self._written(Event("DELETED", space, ns, name, entry, old))
        return entry

    # ----------------------------------------------------------- group commit
    def _written(self, ev: Event) -> None:
        """A write is in the database and the in-memory state: publish it now (its own
        transaction, already committed) or when its batch commits."""
        self._space_rev[ev.space] = ev.rv
        if self._batch is not None:
            self._batch.append(ev)
        else:
            self.synced_rev = ev.rv
            self._publish(ev)

    def _commit_batch(self) -> None:
        """Commit the open transaction (one fsync with ``fsync=True``), then publish its events
        and wake the :meth:`sync` waiters. On failure the store closes (etcd treats a failed WAL
        save as fatal) and the waiters get the error: none of the batch's writes is acknowledged."""
        batch, self._batch = self._batch, None
        waiters, self._waiters = self._waiters, []
        if batch is None:
            return
        try:
            if self.commit_hook is not None:
                self.commit_hook("before", batch)
            self._db.execute("COMMIT")
        except sqlite3.Error as e:
            self._fail(f"commit failed: {e}", " (writes of the failed batch were not acknowledged)")
            for w in waiters:
                if not w.done():
                    w.set_exception(StorageError(f"the store failed: {self.failure}"))
            return
        if self.commit_hook is not None:
            self.commit_hook("after", batch)
        if batch:
            self.synced_rev = batch[-1].rv
        for ev in batch:
            try:
                self._publish(ev)
            except Exception:  # a subscriber's bug must not stop the others' events
                log.exception("store: a watch subscriber failed on revision %d", ev.rv)
        for w in waiters:
            if not w.done():
                try:
                    w.set_result(None)
                except RuntimeError:  # its loop is closed (close() after the server's loop ended)
                    pass

    @property
    def unsynced(self) -> bool:
        """True while writes are waiting for their group commit."""
        return self._batch is not None

    async def sync(self) -> None:
        """Return once every write made so far is committed (at once when none is pending).

        Raises :class:`StorageError` when the store failed (a commit failed)."""
        if self._batch is not None:
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            await fut
        elif self.failure is not None:
            raise StorageError(f"the store failed: {self.failure}")

    # ---------------------------------------------------------------- watches
    def _publish(self, ev: Event) -> None:
        self._ring.append(ev)
        self._ring_times.append(time.monotonic())
        self._ring_bytes += _event_bytes(ev)
        while len(self._ring) - self._ring_head > self._ring_size or (
                self._ring_bytes > self._ring_bytes_max and len(self._ring) - self._ring_head > 1):
            self._drop_oldest()
        self._shrink_ring()
        for fn in tuple(self._watchers.get(ev.space, ())):
            fn(ev)

    def _drop_oldest(self) -> None:
        """Take the oldest event out of the ring (watches from before it read SQLite)."""
        oldest = self._ring[self._ring_head]
        self._ring_start = oldest.rv
        self._ring_bytes -= _event_bytes(oldest)
        self._ring_head += 1

    def _shrink_ring(self) -> None:
        if self._ring_head > 1024 or self._ring_head * 2 > len(self._ring):  # amortised: drop what is out
            del self._ring[: self._ring_head]
            del self._ring_times[: self._ring_head]
            self._ring_head = 0

    def expire_ring(self, max_age: float, now: float | None = None) -> int:
        """Drop the ring's events published more than ``max_age`` seconds ago (``now``: a
        ``time.monotonic()`` value); returns how many. Watches from before them read their events
        back from SQLite, as past the ring's other bounds. Without it an idle server would keep
        the last ``ring_size`` events — deleted objects and replaced versions — for good: its
        memory would grow with every write until the ring is full. Upstream's watch cache keeps
        history by age the same way (``pkg/storage/cacher/watch_cache_history.go``,
        ``eventFreshDuration``, 75 s by default)."""
        limit = (time.monotonic() if now is None else now) - max_age
        n = 0
        while self._ring_head < len(self._ring) and self._ring_times[self._ring_head] < limit:
            self._drop_oldest()
            n += 1
        self._shrink_ring()
        return n

    def subscribe(self, space: str, fn: Callable[[Event], None]) -> None:
        """Call ``fn(event)`` synchronously after every committed write to ``space`` (with group
        commit: when its batch commits, so an event can carry a revision the caller already saw
        in :meth:`list` — filter on ``event.rv``)."""
        self._watchers.setdefault(space, set()).add(fn)

    def unsubscribe(self, space: str, fn: Callable[[Event], None]) -> None:
        self._watchers.get(space, set()).discard(fn)

    def watcher_count(self) -> int:
        return sum(len(s) for s in self._watchers.values())

    def events_since(self, space: str, rev: int) -> builtins.list[Event]:
        """Events of ``space`` with revision > ``rev``, oldest first (ring, then SQLite).

        Raises :class:`Compacted` (rev < compacted revision) or :class:`FutureRevision`.
        """
        if rev < self.compact_rev:
            raise Compacted(rev, self.compact_rev)
        if rev > self.current_rev:
            raise FutureRevision(rev, self.current_rev)
        out: builtins.list[Event] = []
        if rev < self._ring_start:
            self._flush_log()
            q = (
                "SELECT l.id, l.namespace, l.name, l.created, l.deleted, l.value, p.id, p.value, p.deleted "
                "FROM log l LEFT JOIN log p ON p.id = l.prev_revision "
                "WHERE l.space = ? AND l.id > ? AND l.id <= ? ORDER BY l.id"
            )
            for rv, ns, name, created, deleted, value, prv, pvalue, pdeleted in self._db.execute(
                q, (space, rev, self._ring_start)
            ):
                entry = self._entry(space, rv, self._read(space, value))
                prev = None
                if pvalue is not None and not created and not pdeleted:
                    prev = self._entry(space, prv, self._read(space, pvalue))
                if deleted:
                    prev = prev or entry
                    out.append(Event("DELETED", space, ns, name, entry, prev))
                else:
                    out.append(Event("ADDED" if created else "MODIFIED", space, ns, name, entry, prev))
            start = max(self._ring_start, rev)
        else:
            start = rev
        ring = self._ring
        i = bisect.bisect_right(ring, start, lo=self._ring_head, key=lambda e: e.rv)
        out.extend(e for e in ring[i:] if e.space == space)
        return out

    # ------------------------------------------------------------- compaction
    def compact(self, target: int | None = None) -> int:
        """Compact up to ``target`` (default: the current revision); returns the compacted revision.

        Rows superseded by a row at or below ``target`` and tombstones at or below it are
        removed; watches/lists from revisions below ``target`` then raise :class:`Compacted`.
        """
        t = self.current_rev if target is None else min(target, self.current_rev)
        if t <= self.compact_rev:
            return self.compact_rev
        self._commit_batch()  # its own transaction follows the open batch's
        if self.closed:
            raise StorageError(f"the store failed: {self.failure}" if self.failure else "the store is closed")
        self._flush_log()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "DELETE FROM log WHERE id IN (SELECT prev_revision FROM log WHERE id <= ? AND prev_revision > 0)",
                (t,),
            )
            db.execute("DELETE FROM log WHERE deleted = 1 AND id <= ?", (t,))
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('compact_rev', ?)", (t,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.compact_rev = t
        return t

    def compact_window(self, keep: int) -> int:
        """Compact all but the last ``keep`` revisions (the periodic compactor)."""
        return self.compact(self.current_rev - keep) if self.current_rev - keep > self.compact_rev else self.compact_rev

    def close(self) -> None:
        """Commit what is pending, close the database and release the data directory; later
        writes raise :class:`StorageError`."""
        if not self.closed:
            self._commit_batch()
            try:
                self._flush_log()
            except StorageError:
                pass
        self.closed = True
        try:
            self._db.close()
        except sqlite3.Error:
            pass
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
