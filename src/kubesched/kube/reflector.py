"""List/watch reflector, store and tombstones (client-go ``tools/cache``: ``reflector.go``,
``the_real_fifo.go``, ``store.go``, ``tools/pager/pager.go``; ``util/wait`` backoff).

A :class:`Reflector` keeps a :class:`Store` (objects keyed ``namespace/name``) in step with one
resource on the API server and reports every change, in order, to a :class:`DeltaSink`:

1. **List**, paginated (``limit=500`` + ``continue``; a ``continue`` page drops the
   resourceVersion; an expired continue token ⇒ one unpaginated list at the original RV).
   The first list asks for RV ``"0"``, relists for the last synced RV, and after a list
   answered 410 Expired / TooLarge, ``""`` (a consistent read) — client-go
   ``relistResourceVersion``. The list result replaces the store: keys the store knows but the
   list lacks are delivered first as deletes carrying a :class:`DeletedFinalStateUnknown`
   tombstone (the last known object), then every listed item as an add or an update
   (RealFIFO ``Replace``). Updates whose resourceVersion did not change are applied to the
   store but not delivered (the scheduler registers no resync period; ``shared_informer.go``).
   A list into an empty store (the initial LIST) is all adds: a sink with ``on_adds`` gets
   them as one list, in the same order, after the store holds all of them.
2. **Watch** from the list's ``metadata.resourceVersion`` (never an item's), with
   ``allowWatchBookmarks=true`` and ``timeoutSeconds`` random in [300, 600); every event,
   BOOKMARKs included, advances the last synced RV.
3. A clean close (the server's timeout, or a dropped connection) ⇒ rewatch at once from the
   last RV, no relist. A watch that closes in under 1 s without an event is an error
   ("very short watch"). An ``ERROR`` event (HTTP 200 + Status) or a failing watch start ⇒
   back off, then relist — except connection refused and 429, which back off and rewatch
   (``isWatchErrorRetriable``), and 429/InternalError inside the stream (bounded retries).
4. Backoff between list-and-watch rounds: 0.8 s doubling to 30 s, jitter 1.0 (a delay ``d`` is
   drawn in ``[d, 2d)``), reset when the previous backoff is more than 2 minutes old
   (``NewReflectorWithOptions``: ``wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)``).

Objects are decoded straight from the response bytes into the resource's msgspec type
(:mod:`kubesched.api.objects` views for pods and nodes: unknown fields such as
``metadata.managedFields`` are dropped on decode) or into plain dicts (with
``metadata.managedFields`` removed) for kinds without a typed view.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import msgspec

from kubesched.kube.client import APIClient, APIConnectionError, APIError

__all__ = [
    "Backoff",
    "DeletedFinalStateUnknown",
    "DeltaSink",
    "Reflector",
    "ResourceSpec",
    "Store",
    "object_key",
]

log = logging.getLogger("kubesched.kube.reflector")

PAGE_SIZE = 500
MIN_WATCH_TIMEOUT_S = 300  # client-go: timeoutSeconds = minWatchTimeout * (1 + rand)
VERY_SHORT_WATCH_S = 1.0
INTERNAL_ERROR_RETRIES = 3


class DeletedFinalStateUnknown(NamedTuple):
    """A delete missed while the watch was down (client-go ``DeletedFinalStateUnknown``):
    ``key`` = ``namespace/name``, ``obj`` = the last state the store knew (may be stale)."""

    key: str
    obj: Any


@dataclass(frozen=True)
class ResourceSpec:
    """One watched resource: ``kind`` (``"Pod"``), collection ``path`` for all namespaces
    (``/api/v1/pods``), ``group_version`` (``v1``, ``apps/v1``), ``resource`` (plural),
    ``type`` (a msgspec Struct with ``metadata``, or ``dict``) and ``field_selector``."""

    kind: str
    group_version: str
    resource: str
    type: Any = dict
    field_selector: str | None = None
    label_selector: str | None = None

    @property
    def path(self) -> str:
        prefix = "/api/" if self.group_version == "v1" else "/apis/"
        return f"{prefix}{self.group_version}/{self.resource}"


class _ListMeta(msgspec.Struct):
    resourceVersion: str = ""
    # ``continue`` is a keyword: renamed below
    continue_: str = msgspec.field(default="", name="continue")


class _Meta(msgspec.Struct):
    resourceVersion: str = ""


class _MetaOnly(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)


class _RawEvent(msgspec.Struct):
    type: str = ""
    object: msgspec.Raw = msgspec.Raw(b"null")


def object_key(obj: Any) -> str:
    """``namespace/name`` (just ``name`` for cluster-scoped objects), typed views or dicts."""
    if isinstance(obj, dict):
        meta = obj.get("metadata") or {}
        ns, name = meta.get("namespace") or "", meta.get("name") or ""
    else:
        ns, name = obj.metadata.namespace, obj.metadata.name
    return f"{ns}/{name}" if ns else name


def resource_version(obj: Any) -> str:
    if isinstance(obj, dict):
        return str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return obj.metadata.resource_version


class Store:
    """Objects by ``namespace/name`` (client-go ``cache.Store``); read-only for handlers.
    ``revision`` grows whenever the reflector changes ``items`` (a relist, an add, update or delete)."""

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}
        self.revision = 0

    def get(self, key: str) -> Any | None:
        return self.items.get(key)

    def get_by(self, namespace: str, name: str) -> Any | None:
        return self.items.get(f"{namespace}/{name}" if namespace else name)

    def list(self) -> builtins.list[Any]:
        return builtins.list(self.items.values())

    def keys(self) -> builtins.list[str]:
        return builtins.list(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Any]:
        return iter(builtins.list(self.items.values()))


class DeltaSink(Protocol):
    """Receives the changes a reflector applied to its store, in order (RealFIFO semantics)."""

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Any, new: Any) -> None: ...

    def on_delete(self, obj: Any) -> None:
        """``obj`` is the object, or a :class:`DeletedFinalStateUnknown` after a relist."""
        ...

    # optional: ``on_adds(objs: list, is_in_initial_list: bool)`` — the adds of a list into an
    # empty store as one batch (same order; must leave what ``on_add`` per object would)

    def on_synced(self) -> None:
        """The initial list has been delivered."""
        ...


class Backoff:
    """Exponential backoff with jitter and reset (client-go ``ExponentialBackoffManager``).

    ``next()`` returns the delay in seconds: the current step jittered into ``[d, d*(1+jitter))``,
    then the step doubles up to ``cap``; when more than ``reset_after`` seconds passed since the
    previous ``next()`` the step starts again at ``initial``.
    """

    def __init__(self, initial: float = 0.8, cap: float = 30.0, factor: float = 2.0, jitter: float = 1.0,
                 reset_after: float = 120.0, clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None) -> None:
        self.initial, self.cap, self.factor, self.jitter, self.reset_after = initial, cap, factor, jitter, reset_after
        self._clock = clock
        self._rng = rng or random.Random()
        self._step = initial
        self._last: float | None = None

    def next(self) -> float:
        now = self._clock()
        if self._last is not None and now - self._last > self.reset_after:
            self._step = self.initial
        self._last = now
        d = self._step
        self._step = min(self.cap, self._step * self.factor)
        return d + self._rng.random() * self.jitter * d if self.jitter > 0 else d


class _WatchEnded(Exception):
    """Internal: how a watch ended. ``relist``: the next step is a relist."""

    def __init__(self, message: str, *, relist: bool, retry_watch: bool = False) -> None:
        super().__init__(message)
        self.relist = relist
        self.retry_watch = retry_watch


class Reflector:
    """Keeps ``store`` in step with ``spec`` on the server and feeds ``sink``.

    ``run()`` loops until cancelled; ``has_synced`` turns true after the first list has been
    delivered. Counters (``lists``, ``watches``, ``relists_after_expired``, ``watch_errors``)
    are for tests and logs. ``page_size``: list page size (0 = no pagination).
    """

    def __init__(self, client: APIClient, spec: ResourceSpec, sink: DeltaSink, *, store: Store | None = None,
                 page_size: int = PAGE_SIZE, backoff: Backoff | None = None,
                 rng: random.Random | None = None) -> None:
        self.client = client
        self.spec = spec
        self.sink = sink
        self.store = store if store is not None else Store()
        self.page_size = page_size
        self.backoff = backoff or Backoff()
        self._rng = rng or random.Random()
        self.last_sync_rv = ""
        self._rv_unavailable = False  # a list answered Expired/TooLarge: next list uses RV ""
        self._paginated_result = False
        self.has_synced = False
        self.lists = 0
        self.watches = 0
        self.relists_after_expired = 0
        self.watch_errors = 0
        self.tombstones = 0
        t = spec.type
        self._obj_decoder = msgspec.json.Decoder(t)
        self._list_decoder = msgspec.json.Decoder(
            msgspec.defstruct(f"{spec.kind}List", [("metadata", _ListMeta, msgspec.field(default_factory=_ListMeta)),
                                                   ("items", list[t],  # type: ignore[valid-type]
                                                    msgspec.field(default_factory=list))]))
        self._event_decoder = msgspec.json.Decoder(_RawEvent)
        self._meta_decoder = msgspec.json.Decoder(_MetaOnly)
        self._dict_decoder = msgspec.json.Decoder(dict)
        self._is_dict = t is dict

    # ───────────────────────────── main loop ─────────────────────────────

    async def run(self) -> None:
        """List and watch until cancelled, backing off between rounds (``wait.BackoffUntil``)."""
        first = True
        while True:
            if not first:
                await asyncio.sleep(self.backoff.next())
            first = False
            try:
                await self.list_and_watch()
            except asyncio.CancelledError:
                raise
            except (APIError, APIConnectionError, _WatchEnded) as e:
                log.warning("%s reflector: %s", self.spec.kind, e)
            except Exception:
                log.exception("%s reflector failed", self.spec.kind)

    async def list_and_watch(self) -> None:
        """One round: list (replace the store), then watch until an error needs a relist."""
        await self.relist()
        internal_retries = 0
        while True:
            try:
                await self.watch_once()
                internal_retries = 0
            except _WatchEnded as e:
                if e.retry_watch:
                    await asyncio.sleep(self.backoff.next())
                    continue
                raise
            except APIError as e:
                self.watch_errors += 1
                if e.status == 429:
                    await asyncio.sleep(self.backoff.next())
                    continue
                if e.status == 500 and e.reason == "InternalError" and internal_retries < INTERNAL_ERROR_RETRIES:
                    internal_retries += 1
                    await asyncio.sleep(self.backoff.next())
                    continue
                if e.is_expired:
                    self.relists_after_expired += 1
                raise
            except APIConnectionError:
                # watch start failed (connection refused, …): back off, rewatch without relist
                self.watch_errors += 1
                await asyncio.sleep(self.backoff.next())

    # ───────────────────────────── list ─────────────────────────────

    def _relist_rv(self) -> str:
        if self._rv_unavailable:
            return ""
        return self.last_sync_rv or "0"

    async def relist(self) -> None:
        """Paginated list and store replacement (reflector ``list`` + pager + RealFIFO ``Replace``)."""
        rv = self._relist_rv()
        try:
            items, list_rv = await self._list_all(rv)
        except APIError as e:
            if e.is_expired or e.is_too_large_resource_version:
                # client-go: relist at once with a consistent read
                self._rv_unavailable = True
                items, list_rv = await self._list_all("")
            else:
                raise
        self._rv_unavailable = False
        self.lists += 1
        self.replace(items, list_rv)

    async def _list_all(self, rv: str) -> tuple[builtins.list[Any], str]:
        base: dict[str, Any] = {}
        if self.spec.field_selector:
            base["fieldSelector"] = self.spec.field_selector
        if self.spec.label_selector:
            base["labelSelector"] = self.spec.label_selector
        paginate = self.page_size > 0 and (rv in ("", "0") or self._paginated_result)
        params = dict(base, resourceVersion=rv)
        if paginate:
            params["limit"] = self.page_size
        out: builtins.list[Any] = []
        list_rv = ""
        first = True
        while True:
            try:
                payload = await self.client.get_raw(self.spec.path, params)
            except APIError as e:
                if e.is_expired and not first:
                    # pager: an expired continue token ⇒ one full list at the original RV
                    return await self._list_unpaginated(base, rv)
                raise
            lst = self._decode_list(payload)
            if first:
                list_rv = lst.metadata.resourceVersion
                self._paginated_result = bool(lst.metadata.continue_) and rv in ("", "0")
            first = False
            out.extend(self._transform(o) for o in lst.items)
            if not lst.metadata.continue_ or not paginate:
                break
            params = dict(base, limit=self.page_size)
            params["continue"] = lst.metadata.continue_
        return out, list_rv

    async def _list_unpaginated(self, base: dict[str, Any], rv: str) -> tuple[builtins.list[Any], str]:
        payload = await self.client.get_raw(self.spec.path, dict(base, resourceVersion=rv))
        lst = self._decode_list(payload)
        return [self._transform(o) for o in lst.items], lst.metadata.resourceVersion

    def _decode_list(self, payload: bytes) -> Any:
        try:
            return self._list_decoder.decode(payload)
        except msgspec.DecodeError as e:
            raise APIError(500, "InternalError", f"list {self.spec.path}: cannot decode: {e}") from None

    def _transform(self, obj: Any) -> Any:
        if self._is_dict:
            meta = obj.get("metadata")
            if isinstance(meta, dict):
                meta.pop("managedFields", None)
        return obj

    def replace(self, items: builtins.list[Any], rv: str) -> None:
        """Replace the store's content with ``items`` and deliver the difference (deletes first,
        as tombstones; then adds / updates; same-RV updates are not delivered)."""
        items_by_key = {object_key(o): o for o in items}
        known = self.store.items
        self.store.revision += 1
        initial = not self.has_synced
        on_adds = getattr(self.sink, "on_adds", None) if not known else None
        if on_adds is not None:
            # an empty store (the initial LIST): every item is an add, delivered as one batch
            known.update(items_by_key)
            if items_by_key:
                on_adds(list(items_by_key.values()), initial)
            self._synced_at(rv)
            return
        for key in [k for k in known if k not in items_by_key]:
            old = known.pop(key)
            self.tombstones += 1
            self.sink.on_delete(DeletedFinalStateUnknown(key, old))
        for key, obj in items_by_key.items():
            old = known.get(key)
            known[key] = obj
            if old is None:
                self.sink.on_add(obj, initial)
            elif resource_version(old) != resource_version(obj):
                self.sink.on_update(old, obj)
        self._synced_at(rv)

    def _synced_at(self, rv: str) -> None:
        self.last_sync_rv = rv
        if not self.has_synced:
            self.has_synced = True
            self.sink.on_synced()

    # ───────────────────────────── watch ─────────────────────────────

    async def watch_once(self) -> None:
        """One watch from ``last_sync_rv``; returns on a clean close (rewatch), raises
        :class:`APIError` (ERROR event or failed start), :class:`APIConnectionError` (start
        failed: rewatch after backoff) or ``_WatchEnded``."""
        timeout_s = int(MIN_WATCH_TIMEOUT_S * (1 + self._rng.random()))
        params: dict[str, Any] = {"resourceVersion": self.last_sync_rv, "allowWatchBookmarks": True,
                                  "timeoutSeconds": timeout_s}
        if self.spec.field_selector:
            params["fieldSelector"] = self.spec.field_selector
        if self.spec.label_selector:
            params["labelSelector"] = self.spec.label_selector
        self.watches += 1
        started = time.monotonic()
        events = 0
        stream = self.client.stream_watch_raw(self.spec.path, params, deadline_s=timeout_s + 30)
        try:
            try:
                first = await anext(stream)
            except StopAsyncIteration:
                first = None
            # the watch is established (or ended cleanly): errors from here on are stream errors
            if first is not None:
                events += 1
                self._handle_line(first)
                async for line in stream:
                    events += 1
                    self._handle_line(line)
        except APIConnectionError as e:
            if events == 0 and time.monotonic() - started < VERY_SHORT_WATCH_S:
                raise  # could not start: back off and rewatch
            log.info("%s watch closed: %s", self.spec.kind, e)  # like an unexpected EOF: rewatch
            return
        finally:
            await stream.aclose()
        if events == 0 and time.monotonic() - started < VERY_SHORT_WATCH_S:
            self.watch_errors += 1
            raise _WatchEnded(f"very short watch: {self.spec.path}: unexpected watch close - "
                              "watch lasted less than a second and no items received", relist=True)

    def _handle_line(self, line: bytes) -> None:
        try:
            ev = self._event_decoder.decode(line)
        except msgspec.DecodeError as e:
            raise APIError(500, "InternalError", f"watch {self.spec.path}: undecodable event: {e}") from None
        typ = ev.type
        if typ == "ERROR":
            status = self._dict_decoder.decode(ev.object)
            raise APIError.from_status(status if isinstance(status, dict) else {})
        if typ == "BOOKMARK":
            meta = self._meta_decoder.decode(ev.object).metadata
            if meta.resourceVersion:
                self.last_sync_rv = meta.resourceVersion
            return
        try:
            obj = self._transform(self._obj_decoder.decode(ev.object))
        except msgspec.ValidationError as e:
            log.warning("%s watch: skipping an object that does not decode: %s", self.spec.kind, e)
            return
        key = object_key(obj)
        store = self.store.items
        self.store.revision += 1
        if typ == "ADDED" or typ == "MODIFIED":
            old = store.get(key)
            store[key] = obj
            if old is None:
                self.sink.on_add(obj, False)
            elif resource_version(old) != resource_version(obj):
                self.sink.on_update(old, obj)
        elif typ == "DELETED":
            store.pop(key, None)
            self.sink.on_delete(obj)
        else:
            log.warning("%s watch: unknown event type %r", self.spec.kind, typ)
            return
        rv = resource_version(obj)
        if rv:
            self.last_sync_rv = rv
