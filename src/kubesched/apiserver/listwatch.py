"""List and watch of the box: selectors, pagination (limit/continue), resourceVersion
semantics, NDJSON watch streams with bookmarks and initial events.

Follows ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go`` (ListResource) and
``watch.go``, with the watch cache's semantics (``pkg/storage/cacher``: ``waitUntilFreshAndBlock``,
bookmarks, ``sendInitialEvents``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import bisect
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from kubesched.apiserver.errors import APIError
from kubesched.apiserver.handlers import JSON_MEDIA_TYPE, Handlers, Route, json_response, matcher
from kubesched.apiserver.resources import ResourceInfo
from kubesched.apiserver.selectors import FieldSelector
from kubesched.apiserver.storage import Compacted, Entry, Event, FutureRevision

__all__ = ["ListWatch", "Watcher"]

_INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class Watcher:
    """A watch's subscription: events after revision ``after`` (its start), buffered for the stream."""

    __slots__ = ("after", "buf", "closed", "wake")

    def __init__(self, after: int = 0) -> None:
        self.after = after
        self.buf: list[Event] = []
        self.wake = asyncio.Event()
        self.closed = False

    def __call__(self, ev: Event) -> None:
        if ev.rv <= self.after:  # a write in the watch's initial state, published at its group commit
            return
        self.buf.append(ev)
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()


class ListWatch(Handlers):
    """LIST (label/field selectors, ``limit``/``continue`` over a kept snapshot, ``resourceVersion``
    and ``resourceVersionMatch``, 410 for compacted revisions, 504 for future ones) and WATCH
    (NDJSON; bookmarks every ``bookmark_interval`` s and before the deadline; selector transitions
    as DELETED/ADDED; ``sendInitialEvents``; ``timeoutSeconds``, else a random timeout in
    [``min_request_timeout``, 2 × ``min_request_timeout``) as kube-apiserver)."""

    def _init_list_watch(self, bookmark_interval: float, min_request_timeout: float) -> None:
        self.bookmark_interval = bookmark_interval
        self.min_request_timeout = min_request_timeout
        self._watchers: set[Watcher] = set()
        #: list snapshots behind continue tokens: (space, ns, rv) -> (created, keys, entries)
        self._snapshots: OrderedDict[tuple[str, str | None, int], tuple[float, list[Any], list[Entry]]] = \
            OrderedDict()

    def close_all_watches(self) -> int:
        n = len(self._watchers)
        for w in list(self._watchers):
            w.close()
        return n

    @staticmethod
    def _encode_continue(rv: int, key: tuple[str, str]) -> str:
        raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": [key[0], key[1]]})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            d = orjson.loads(raw)
            return int(d["rv"]), (str(d["start"][0]), str(d["start"][1]))
        except (binascii.Error, ValueError, KeyError, TypeError, IndexError, orjson.JSONDecodeError):
            raise APIError.bad_request("continue key is not valid: illegal base64 data") from None

    def _list(self, request: web.Request, r: Route) -> web.Response:
        info, q = r.info, request.query
        lsel, fsel = self._parse_selectors(request, info)
        match = matcher(lsel, fsel)
        limit_s = q.get("limit")
        limit = 0
        if limit_s:
            try:
                limit = max(0, int(limit_s))
            except ValueError:
                raise APIError.bad_request(f"limit: Invalid value: {limit_s!r}") from None
        ns = self._space_ns(info, r.ns) if r.ns is not None else None
        store = self.store
        cont = q.get("continue")
        try:
            if cont:
                list_rv, start = self._decode_continue(cont)
                snap = self._snapshots.get((info.key, ns, list_rv))
                try:
                    if snap is not None:
                        entries = snap[2][bisect.bisect_right(snap[1], start):]
                    else:
                        entries = store.list_at(info.key, list_rv, ns, start)
                except Compacted:
                    raise APIError.expired(
                        "The provided continue parameter is too old to display a consistent list result. You can "
                        "start a new list without the continue parameter.") from None
            else:
                rv = self._parse_rv(q.get("resourceVersion"))
                rv_match = q.get("resourceVersionMatch", "")
                if rv_match not in ("", "Exact", "NotOlderThan"):
                    raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                        "FieldValueNotSupported", "resourceVersionMatch",
                        (f'resourceVersionMatch: Unsupported value: "{rv_match}": supported values: "Exact", '
                        f'"NotOlderThan", ""'))])
                if rv_match and rv is None:
                    raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                        "FieldValueForbidden", "resourceVersionMatch",
                        ("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                        "resourceVersion is provided"))])
                if rv_match == "Exact" and rv == 0:
                    raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                        "FieldValueForbidden", "resourceVersionMatch",
                        ('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for '
                        'resourceVersion "0"'))])
                if rv_match == "Exact" and rv is not None and rv > 0:
                    try:
                        entries = store.list_at(info.key, rv, ns)
                    except Compacted:
                        # served by storage, not the watch cache: etcd3's interpretListError
                        raise APIError.expired("The resourceVersion for the provided list is too old.") from None
                    list_rv = rv
                else:
                    if rv is not None and rv > store.current_rev:
                        raise FutureRevision(rv, store.current_rev)
                    if limit:
                        keys, entries = store.list_keyed(info.key, ns)
                        if len(entries) > limit:
                            self._remember_snapshot((info.key, ns, store.current_rev), keys, entries)
                    else:
                        entries = store.list(info.key, ns)
                    list_rv = store.current_rev
        except Compacted as e:
            raise APIError.expired(f"too old resource version: {e.requested} ({e.compact_rev})") from None
        except FutureRevision as e:
            raise APIError.too_large_rv(e.requested, e.current) from None
        # name-only field selectors: one lookup instead of a scan
        if match is not None:
            entries = [e for e in entries if match(e)]
        meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if limit and len(entries) > limit:
            last = entries[limit - 1]
            lobj = orjson.loads(last.data)["metadata"]
            meta["continue"] = self._encode_continue(list_rv, (lobj.get("namespace", "") if info.namespaced else "",
                                                               lobj["name"]))
            if match is None:
                meta["remainingItemCount"] = len(entries) - limit
            entries = entries[:limit]
        if self._wants_table(request):
            items = [orjson.loads(self._out(info, e.data)) for e in entries]
            table = self._table(request, info, items, meta)
            if table is not None:
                return json_response(table)
        datas = [e.data for e in entries]
        if info.group == "events.k8s.io" or self.crds.of_info(info) is not None:
            datas = [self._out(info, d) for d in datas]
        head = orjson.dumps({"kind": f"{info.kind}List", "apiVersion": info.api_version, "metadata": meta})
        body = b"".join((head[:-1], b',"items":[', b",".join(datas), b"]}"))
        return web.Response(body=body, content_type=JSON_MEDIA_TYPE)

    def _remember_snapshot(self, key: tuple[str, str | None, int], keys: list[Any], entries: list[Entry]) -> None:
        """Keep a paginated list's snapshot (references only) so its continue pages are slices;
        at most 32, each for 5 minutes (then pages come from the SQLite history)."""
        now = time.monotonic()
        snaps = self._snapshots
        snaps[key] = (now, keys, entries)
        snaps.move_to_end(key)
        while snaps and (len(snaps) > 32 or next(iter(snaps.values()))[0] < now - 300):
            snaps.popitem(last=False)

    async def _wait_fresh(self, request: web.Request) -> None:
        """A list or watch from a resourceVersion the store has not reached yet waits up to 3 s
        for it, as the watch cache's ``waitUntilFreshAndBlock`` (``blockTimeout``) does; the
        handler then answers 504 ``ResourceVersionTooLarge`` if it is still ahead."""
        rv_s = request.query.get("resourceVersion")
        if not rv_s or request.query.get("continue") or request.query.get("resourceVersionMatch") == "Exact":
            return
        try:
            rv = int(rv_s)
        except ValueError:
            return  # the handler reports it
        deadline = asyncio.get_running_loop().time() + 3.0
        while rv > self.store.current_rev and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)

    async def _watch(self, request: web.Request, r: Route, name: str | None = None) -> web.StreamResponse:
        info, q = r.info, request.query
        lsel, fsel = self._parse_selectors(request, info)
        if name is not None:
            fsel = FieldSelector([*fsel.terms, ("metadata.name", "=", name)])
        match = matcher(lsel, fsel)
        ns = self._space_ns(info, r.ns) if r.ns is not None else None
        rv = self._parse_rv(q.get("resourceVersion"))
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
        sie_s = q.get("sendInitialEvents")
        rv_match = q.get("resourceVersionMatch", "")
        send_initial: bool
        if sie_s is not None:
            send_initial = sie_s in ("1", "true", "True")
            causes = []
            if rv_match != "NotOlderThan":
                causes.append(("FieldValueInvalid", "resourceVersionMatch",
                               (f'resourceVersionMatch: Invalid value: "{rv_match}": sendInitialEvents requires '
                                'setting resourceVersionMatch to NotOlderThan')))
            if send_initial and not bookmarks:
                causes.append(("FieldValueForbidden", "allowWatchBookmarks",
                               ("allowWatchBookmarks: Forbidden: sendInitialEvents requires setting "
                                "allowWatchBookmarks to true")))
            if causes:
                raise APIError.invalid("ListOptions", "meta.k8s.io", "", causes)
        else:
            if rv_match:
                raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                    "FieldValueForbidden", "resourceVersionMatch",
                    ("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                     "sendInitialEvents is provided"))])
            send_initial = rv is None or rv == 0
        timeout_s = q.get("timeoutSeconds")
        try:  # a Go *int64: "1e20" or "1.5" do not decode (400), nor values past int64
            timeout = float(int(timeout_s)) if timeout_s else 0.0
            if not -(1 << 63) <= timeout < (1 << 63):
                raise ValueError
        except ValueError:
            raise APIError.bad_request(f'invalid timeoutSeconds: strconv.ParseInt: parsing "{timeout_s}": '
                                       "invalid syntax") from None
        if timeout == 0:  # upstream: unset or 0 = random in [minRequestTimeout, 2*minRequestTimeout)
            timeout = self.min_request_timeout * (1 + random.random())
        elif timeout < 0:  # context.WithTimeout with a negative duration: the watch ends at once
            timeout = 1e-6

        store = self.store
        error: dict[str, Any] | None = None
        initial: list[Entry] = []
        backlog: list[Event] = []
        # registration, snapshot and backlog happen without awaiting: nothing can interleave
        if send_initial:
            if rv is not None and rv > store.current_rev:
                raise APIError.too_large_rv(rv, store.current_rev)
            initial = store.list(info.key, ns)
            start_rv = store.current_rev
        else:
            start_rv = store.current_rev if rv is None else rv
            try:
                backlog = store.events_since(info.key, start_rv)
            except Compacted as exc:
                error = APIError.expired(f"too old resource version: {exc.requested} ({exc.compact_rev})").status
            except FutureRevision as exc:
                raise APIError.too_large_rv(exc.requested, exc.current) from None
        w = Watcher(start_rv)
        if error is None:
            store.subscribe(info.key, w)
            self._watchers.add(w)
        resp = web.StreamResponse(status=200, headers={"Content-Type": JSON_MEDIA_TYPE,
                                                       "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        table = self._wants_table(request)
        try:
            if start_rv > store.synced_rev:  # initial state with writes still in their group commit
                await store.sync()
            await resp.prepare(request)
            if error is not None:
                await resp.write(orjson.dumps({"type": "ERROR", "object": error}) + b"\n")
                return resp
            render = self._renderer(request, info, ns, match, table)
            if initial:
                chunk = []
                for e in initial if match is None else (e for e in initial if match(e)):
                    chunk.append(self._line("ADDED", self._maybe_table(request, info, self._out(info, e.data), table)))
                    if len(chunk) >= 500:
                        await resp.write(b"".join(chunk))
                        chunk = []
                if chunk:
                    await resp.write(b"".join(chunk))
            if sie_s is not None and send_initial:
                await resp.write(self._bookmark(info, start_rv, initial_end=True))
            if backlog:
                out = [b for b in (render(ev) for ev in backlog) if b]
                if out:
                    await resp.write(b"".join(out))
            await self._stream(resp, w, info, render, timeout, bookmarks)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            store.unsubscribe(info.key, w)
            self._watchers.discard(w)
        return resp

    @staticmethod
    def _line(typ: str, data: bytes) -> bytes:
        return b'{"type":"' + typ.encode() + b'","object":' + data + b"}\n"

    def _bookmark(self, info: ResourceInfo, rv: int, initial_end: bool = False) -> bytes:
        md: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            md["annotations"] = {_INITIAL_EVENTS_END: "true"}
        obj = {"kind": info.kind, "apiVersion": info.api_version, "metadata": md}
        return orjson.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"

    def _maybe_table(self, request: web.Request, info: ResourceInfo, data: bytes, table: bool) -> bytes:
        if not table:
            return data
        t = self._table(request, info, [orjson.loads(data)], None)
        return data if t is None else orjson.dumps(t)

    def _renderer(self, request: web.Request, info: ResourceInfo, ns: str | None,
                  match: Callable[[Entry], bool] | None, table: bool) -> Callable[[Event], bytes | None]:
        conv = info.group == "events.k8s.io" or self.crds.of_info(info) is not None

        def data_of(b: bytes) -> bytes:
            if conv:
                b = self._out(info, b)
            if table:
                b = self._maybe_table(request, info, b, True)
            return b

        def render(ev: Event) -> bytes | None:
            if ns is not None and ev.ns != ns:
                return None
            typ = ev.type
            if match is None:
                return self._line(typ, data_of(ev.entry.data))
            if typ == "ADDED":
                return self._line("ADDED", data_of(ev.entry.data)) if match(ev.entry) else None
            if typ == "DELETED":
                return self._line("DELETED", data_of(ev.entry.data)) if match(ev.entry) else None
            cur = match(ev.entry)
            old = ev.prev is not None and match(ev.prev)
            if cur and old:
                return self._line("MODIFIED", data_of(ev.entry.data))
            if cur:
                return self._line("ADDED", data_of(ev.entry.data))
            if old:
                assert ev.prev is not None
                prev = orjson.loads(ev.prev.data)
                prev.setdefault("metadata", {})["resourceVersion"] = str(ev.rv)
                return self._line("DELETED", data_of(orjson.dumps(prev)))
            return None

        return render

    async def _stream(self, resp: web.StreamResponse, w: Watcher, info: ResourceInfo,
                      render: Callable[[Event], bytes | None], timeout: float, bookmarks: bool) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + timeout
        end = deadline  # the request's timeoutSeconds: the only end that gets a closing bookmark
        every = self.faults.watch_close_every
        if every is not None:  # fault: 0 ends every watch right after its backlog
            deadline = min(deadline, start + every)
        next_bm = start + self.bookmark_interval
        while not w.closed and not self._stopping:
            if w.buf:
                evs, w.buf = w.buf, []
                out = [b for b in (render(ev) for ev in evs) if b]
                if out:
                    await resp.write(b"".join(out))
                if len(w.buf) > 500_000:  # hopelessly slow client: end it, it will resume from its RV
                    break
                continue
            now = loop.time()
            if now >= deadline:
                break
            if bookmarks and now >= next_bm:
                await resp.write(self._bookmark(info, self.store.synced_rev))
                next_bm = now + self.bookmark_interval
                continue
            w.wake.clear()
            wait = min(deadline, next_bm if bookmarks else deadline) - now
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can drop a cancellation that
            # arrives with the wake-up, and the shutdown's cancel must end this handler
            try:
                async with asyncio.timeout(max(wait, 0.001)):
                    await w.wake.wait()
            except TimeoutError:
                pass
        if self._stopping or w.closed:
            return  # ended by a fault or the shutdown: no bookmark (an unexpected close)
        if w.buf:
            out = [b for b in (render(ev) for ev in w.buf) if b]
            if out:
                await resp.write(b"".join(out))
        if bookmarks and loop.time() >= end:
            # upstream's watch cache sends a bookmark shortly before a watch's deadline when
            # allowWatchBookmarks is set; a stream closed early (fault, slow client) gets none
            await resp.write(self._bookmark(info, self.store.synced_rev))
