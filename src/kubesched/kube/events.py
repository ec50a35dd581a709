"""Best-effort Event recording: ``events.k8s.io/v1`` with series aggregation, core/v1 fallback.

Follows ``k8s.io/client-go/tools/events`` (``event_broadcaster.go``: ``recordToSink``,
``attemptRecording``, ``recordEvent``, ``finishSeries``, ``refreshExistingEventSeries``,
``NewEventBroadcasterAdapterWithContext``; ``event_recorder.go``: ``makeEvent``) and, for the
fallback, ``tools/record`` (``event.go``, ``events_cache.go``):

- :meth:`EventRecorder.emit` never blocks: it puts the event on a bounded queue (1000) and drops
  it when the queue is full (``watch.DropIfChannelFull``);
- the object: name ``<regarding.name>.<hex unixnano>`` (a UUID if that is not a DNS subdomain),
  namespace of the regarding object (or ``default``), ``eventTime`` as MicroTime,
  ``reportingController`` (the profile's schedulerName), ``reportingInstance``
  (``<controller>-<hostname>``), action, reason, ``regarding``/``related`` ObjectReferences,
  note cut to 1024 bytes;
- aggregation key (type, action, reason, reportingController, reportingInstance, regarding,
  related) — the note is not part of it, as upstream: the first event is POSTed; the second
  becomes ``series{count: 2, lastObservedTime}`` sent as a strategic-merge PATCH of that first
  Event (404 → POST again); later repeats only bump the cached count, which is written when the
  series goes idle for 6 minutes (``finishSeries``) or every 30 minutes while it lives
  (``refreshExistingEventSeries``); singletons older than 6 minutes leave the cache;
- writes: up to 12 tries, ``retry_interval`` (10 s) + up to 25 % jitter apart, only for transport
  errors (and AlreadyExists of a series re-create); any other error Status drops the event;
- which API: ``GET /apis/events.k8s.io/v1`` at :meth:`run`; any failure → core/v1 Events, with
  the legacy library's identical-event dedup (``count``/``lastTimestamp`` PATCH) and spam filter
  (per source+object token bucket, burst 25, one token per 5 minutes). Not ported: the legacy
  "(combined from similar events)" aggregation.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import socket
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import msgspec

from kubesched.kube._time import micro_time, parse_time, rfc3339, utcnow
from kubesched.kube.client import APIError

__all__ = ["NOTE_LENGTH_LIMIT", "EventRecorder", "object_reference", "truncate_note"]

log = logging.getLogger("kubesched.events")

NOTE_LENGTH_LIMIT = 1024
"""Bytes; events.k8s.io validation rejects longer notes."""
FINISH_TIME = timedelta(minutes=6)
REFRESH_TIME = timedelta(minutes=30)
STRATEGIC_MERGE = "application/strategic-merge-patch+json"
_EVENT_ENCODER = msgspec.json.Encoder()
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def truncate_note(note: str, limit: int = NOTE_LENGTH_LIMIT) -> str:
    """Cut ``note`` to at most ``limit`` UTF-8 bytes, ending in ``" ..."`` when cut (never
    splitting a character)."""
    if len(note) * 4 <= limit:  # at most 4 UTF-8 bytes per character: short notes need no encoding
        return note
    raw = note.encode()
    if len(raw) <= limit:
        return note
    return raw[:limit - 4].decode(errors="ignore") + " ..."


def object_reference(obj: Any) -> dict[str, str]:
    """An ObjectReference (``apiVersion, kind, namespace, name, uid, resourceVersion``) for a
    kubesched API Struct (``Pod``, ``Node``…), a Kubernetes object dict, or an ObjectReference
    dict (returned as is). Empty fields are left out.

    Raises:
        TypeError: ``obj`` has no name.
    """
    if isinstance(obj, dict):
        if "metadata" not in obj:
            ref = {k: str(v) for k, v in obj.items() if v}
        else:
            meta = obj.get("metadata") or {}
            ref = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""),
                   "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
                   "uid": meta.get("uid", ""), "resourceVersion": meta.get("resourceVersion", "")}
    else:
        meta = obj.metadata
        ref = {"apiVersion": getattr(obj, "api_version", "") or "v1", "kind": getattr(obj, "kind", "") or "",
               "namespace": meta.namespace, "name": meta.name, "uid": meta.uid,
               "resourceVersion": meta.resource_version}
    ref = {k: v for k, v in ref.items() if v}
    if not ref.get("name"):
        raise TypeError(f"cannot make an ObjectReference of {obj!r}: no name")
    return ref


def _event_name(ref: dict[str, str], now_ns: int) -> str:
    """client-go ``util.GenerateEventName``."""
    name = f"{ref['name']}.{now_ns:x}"
    if len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        return str(uuid.uuid4())
    return name


def _ref_key(ref: dict[str, str] | None) -> tuple[tuple[str, str], ...] | None:
    return None if ref is None else tuple(sorted(ref.items()))


def _key(ev: dict[str, Any]) -> tuple[Any, ...]:
    """The aggregation key (``getKey``): hashable, order-independent in the references."""
    return (ev.get("type"), ev.get("action"), ev.get("reason"), ev.get("reportingController"),
            ev.get("reportingInstance"), _ref_key(ev.get("regarding")), _ref_key(ev.get("related")))


def _snapshot(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of a cached event that later cache updates do not change: the cache only ever
    mutates its top-level fields and its ``series`` dict (``metadata``, ``regarding`` and
    ``related`` are never mutated after :meth:`EventRecorder._make_event`), so copying those
    two levels is enough (no deep copy per write)."""
    out = dict(event)
    series = out.get("series")
    if series is not None:
        out["series"] = dict(series)
    return out


class _Retry(Exception):
    """The write may succeed later (transport error, or a series re-create raced)."""


class EventRecorder:
    """Records Events about objects through a bounded queue, never blocking the caller.

    Args:
        client: a :class:`kubesched.kube.client.APIClient` (``get``, ``post``, ``patch``);
            upstream uses a separate client (no user-agent suffix) for events.
        reporting_controller: ``reportingController`` (and the legacy ``source.component``),
            kube-scheduler: the profile's schedulerName, ``default-scheduler``.
        reporting_instance: default ``<controller>-<hostname>``.
        api: ``"auto"`` (probe ``events.k8s.io/v1`` in :meth:`run`), ``"events.k8s.io/v1"`` or
            ``"v1"`` (core/v1 Events: the leader-election events use this).
        queue_size: pending events before new ones are dropped (1000).
        max_tries / retry_interval: write attempts per event and the pause between them
            (12, 10 s, + up to 25 % jitter).
        max_in_flight: concurrent writes (None: no bound — upstream ``recordToSink`` starts a goroutine
            per event, so the queue is drained as fast as events come; with a bound, a slow API
            server fills the queue while all writes are busy, and new events are dropped).
        request_timeout: bound on one API request (a timeout counts as a transport error).
        wall: UTC wall clock (eventTime, series times, idle checks).
        housekeeping_interval: seconds between ``finishSeries`` passes (6 min); series are
            re-sent every ``REFRESH_TIME`` (30 min).
    """

    def __init__(self, client: Any, reporting_controller: str = "default-scheduler",
                 reporting_instance: str | None = None, *, api: str = "auto", hostname: str | None = None,
                 queue_size: int = 1000, max_tries: int = 12, retry_interval: float = 10.0,
                 max_in_flight: int | None = None, request_timeout: float = 30.0,
                 wall: Callable[[], datetime] = utcnow, rng: Callable[[], float] = random.random,
                 housekeeping_interval: float = FINISH_TIME.total_seconds()) -> None:
        if api not in ("auto", "events.k8s.io/v1", "v1"):
            raise ValueError(f"api: must be auto, events.k8s.io/v1 or v1, not {api!r}")
        self.client = client
        self.hostname = hostname or socket.gethostname()
        self.reporting_controller = reporting_controller
        self.reporting_instance = reporting_instance or f"{reporting_controller}-{self.hostname}"
        self.api = api
        self.max_tries = max_tries
        self.retry_interval = retry_interval
        self.request_timeout = request_timeout
        self.housekeeping_interval = housekeeping_interval
        self._wall = wall
        self._rng = rng
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=queue_size)
        self._slots = asyncio.Semaphore(max_in_flight) if max_in_flight is not None else None
        self._tasks: set[asyncio.Future[Any]] = set()
        """Writes under way in Tasks."""
        self._first_tries = 0
        """First tries under way sent without a Task (:meth:`_post_fast`)."""
        self._abandoned = False
        """:meth:`stop` gave up on the writes under way: a first try that ends later is not continued."""
        self._cache: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._legacy_cache: dict[str, dict[str, Any]] = {}
        self._spam: dict[str, tuple[float, float]] = {}
        self._closed = False
        self._dispatching = False
        """run() waits on an empty queue after the API probe: emit() may record directly."""
        self._last_refresh = time.monotonic()
        self.emitted = 0
        self.dropped = 0
        """Events dropped because the queue was full, the recorder stopped, or the spam filter."""
        self.written = 0
        """Successful API writes (POSTs and PATCHes)."""
        self.failed = 0
        """Events given up on (error Status, or ``max_tries`` transport errors)."""

    @property
    def in_flight(self) -> int:
        """Writes under way (first tries sent straight from the client, and Tasks)."""
        return self._first_tries + len(self._tasks)

    # ───────────────────────────── producer side ─────────────────────────────

    def emit(self, regarding: Any, related: Any, type: str, reason: str, action: str, note: str) -> None:
        """Queue an Event about ``regarding`` (a Pod Struct, an object dict or an ObjectReference)
        with optional ``related``. ``type`` is ``Normal`` or ``Warning`` (others are logged and
        dropped, as upstream). Never blocks and never raises for a full queue.

        Raises:
            TypeError: ``regarding``/``related`` has no name (a programming error).
        """
        if type not in ("Normal", "Warning"):
            log.error("Unsupported event type: %r", type)
            self.dropped += 1
            return
        ref = object_reference(regarding)
        rel = object_reference(related) if related is not None else None
        now = self._wall()
        ev: dict[str, Any] = {
            "ref": ref, "related": rel, "type": type, "reason": reason, "action": action,
            "note": truncate_note(note), "time": now, "name": _event_name(ref, time.time_ns()),
        }
        if self._closed:
            self.dropped += 1
            return
        if self._dispatching and self._queue.empty():
            # the consumer is idle: hand the event over now, not through the queue and a wake-up of
            # run() (upstream's watcher goroutine takes each event off the channel as it comes)
            self.emitted += 1
            self._dispatch(ev)
            return
        try:
            self._queue.put_nowait(ev)
        except asyncio.QueueFull:
            self.dropped += 1
            log.debug("event queue full, dropping %s %s", reason, ref.get("name"))
            return
        self.emitted += 1

    # ───────────────────────────── consumer side ─────────────────────────────

    async def _probe(self) -> None:
        if self.api != "auto":
            return
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can drop a cancellation of run()
            async with asyncio.timeout(self.request_timeout):
                await self.client.get("/apis/events.k8s.io/v1")
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - upstream: any discovery error → legacy recorder
            log.info("events.k8s.io/v1 is not available (%s): recording core/v1 Events", err)
            self.api = "v1"
        else:
            self.api = "events.k8s.io/v1"

    async def run(self) -> None:
        """Probe the API, then write queued events until cancelled or :meth:`stop`."""
        await self._probe()
        house = asyncio.create_task(self._housekeeping())
        try:
            while True:
                # with no bound on writes, emit() records straight away whenever the queue is empty
                self._dispatching = self._slots is None
                ev = await self._queue.get()
                self._dispatching = False
                try:
                    self._dispatch(ev)
                finally:
                    self._queue.task_done()
                if self._slots is not None:
                    await self._slots.acquire()
                    self._slots.release()
        finally:
            self._dispatching = False
            house.cancel()

    def _dispatch(self, ev: dict[str, Any]) -> None:
        if self.api == "v1":
            self._record_legacy(ev)
        else:
            self._record(ev)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, fn: Callable[[], Any]) -> None:
        if self._slots is None:
            await fn()
            return
        async with self._slots:
            await fn()

    async def _guarded_attempt(self, event: dict[str, Any], first: Any = None) -> None:
        if self._slots is None:
            await self._attempt(event, first)
            return
        async with self._slots:
            await self._attempt(event, first)

    def _spawn_attempt(self, event: dict[str, Any]) -> None:
        self._spawn(self._guarded_attempt(event))

    def _post_fast(self, event: dict[str, Any]) -> bool:
        """The first try of a new event's POST straight from the client (``post_done``): no Task,
        future or ``call_soon``; True when sent. ``event`` is encoded here, so later updates of
        the dict (the cache's series) do not change what this write sends. A 2xx answer counts it
        written; any other outcome goes on in :meth:`_attempt` as if its first try had been made
        there. The try is bounded by ``request_timeout`` in the transfer itself (libcurl's), as
        :meth:`_call` bounds a try."""
        post_done = getattr(self.client, "post_done", None)
        meta = event["metadata"]
        if post_done is None or "resourceVersion" in meta:
            return False
        path = f"/apis/events.k8s.io/v1/namespaces/{meta['namespace']}/events"
        data = _EVENT_ENCODER.encode(event)

        def done(outcome: Any) -> None:
            self._post_fast_done(outcome, event, path, data)

        if not post_done(path, data, done, timeout=self.request_timeout):
            return False
        self._first_tries += 1
        return True

    def _post_fast_done(self, outcome: Any, event: dict[str, Any], path: str, data: bytes) -> None:
        """``outcome``: the first try's answer ``(status, body, Retry-After)`` or its error."""
        self._first_tries -= 1
        if self._abandoned:
            return
        if type(outcome) is tuple and 200 <= outcome[0] < 300:
            self.written += 1
            return
        self._spawn(self._guarded_attempt(event, (path, data, outcome)))

    # events.k8s.io/v1 ---------------------------------------------------------

    def _make_event(self, ev: dict[str, Any]) -> dict[str, Any]:
        """``makeEvent``."""
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": ev["name"], "namespace": ev["ref"].get("namespace") or "default"},
            "eventTime": micro_time(ev["time"]), "reportingController": self.reporting_controller,
            "reportingInstance": self.reporting_instance, "action": ev["action"], "reason": ev["reason"],
            "regarding": ev["ref"], "note": ev["note"], "type": ev["type"],
        }
        if ev["related"] is not None:
            body["related"] = ev["related"]
        return body

    def _record(self, ev: dict[str, Any]) -> None:
        """``recordToSink``: aggregate, then write the first and second occurrence."""
        event = self._make_event(ev)
        key = _key(event)
        cached = self._cache.get(key)
        if cached is not None:
            now = micro_time(self._wall())
            if cached.get("series") is not None:
                cached["series"]["count"] += 1
                cached["series"]["lastObservedTime"] = now
                return
            cached["series"] = {"count": 2, "lastObservedTime": now}
            to_record = _snapshot(cached)
        else:
            if self._slots is None and self._post_fast(event):
                self._cache[key] = event  # sent as bytes already: the cache may update this dict
                return
            to_record = event
            self._cache[key] = _snapshot(event)
        self._spawn(self._guarded_attempt(to_record))

    async def _attempt(self, event: dict[str, Any], first: Any = None) -> bool:
        """``attemptRecording``: True when written. ``first``: ``(path, body, outcome)`` of a first
        POST already sent by :meth:`_post_fast`, finished here as the first try; later tries POST
        the same body (``event`` may have become the cache's series since)."""
        tries = 0
        resume = first
        while True:
            try:
                if first is not None:
                    path, data, outcome = first
                    if resume is not None:
                        resume = None
                        await self._call(self.client.post_resume(path, data, outcome))
                    else:
                        await self._call(self.client.post(path, data))
                    self.written += 1
                else:
                    await self._write(event)
                return True
            except _Retry as err:
                tries += 1
                if tries >= self.max_tries:
                    log.error("Unable to write event (retry limit exceeded!): %s", err)
                    self.failed += 1
                    return False
                log.info("Unable to write event (may retry after sleeping): %s", err)
            except APIError as err:
                if err.status == 409 and tries > 0 and (first is not None or event.get("series") is None):
                    # AlreadyExists after a timed-out try: that try reached the server (same name)
                    self.written += 1
                    return True
                log.error("Server rejected event (will not retry!): %s", err)
                self.failed += 1
                return False
            await asyncio.sleep(self.retry_interval * (1.0 + self._rng() * 0.25))

    async def _call(self, coro: Any) -> dict[str, Any]:
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for wraps every write in an extra Task
            async with asyncio.timeout(self.request_timeout):
                return await coro
        except APIError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as err:
            raise _Retry(repr(err)) from err

    async def _write(self, event: dict[str, Any]) -> None:
        """``recordEvent``: series → PATCH (404 → POST); else POST."""
        ns, name = event["metadata"]["namespace"], event["metadata"]["name"]
        base = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
        series = event.get("series")
        if series is not None:
            try:
                await self._call(self.client.patch(f"{base}/{name}", {"series": series}, STRATEGIC_MERGE))
                self.written += 1
                return
            except APIError as err:
                if err.status != 404:
                    raise
        body = event
        if "resourceVersion" in event["metadata"]:  # never mutate ``event``: it may be shared
            body = {**event, "metadata": {k: v for k, v in event["metadata"].items() if k != "resourceVersion"}}
        try:
            await self._call(self.client.post(base, body))  # the answer is not needed
        except APIError as err:
            if err.status == 409 and series is not None:
                raise _Retry(str(err)) from err
            raise
        self.written += 1

    async def _housekeeping(self) -> None:
        while True:
            await asyncio.sleep(self.housekeeping_interval)
            self.finish_series()
            if time.monotonic() - self._last_refresh >= REFRESH_TIME.total_seconds():
                self._last_refresh = time.monotonic()
                self.refresh_series()

    def finish_series(self) -> None:
        """``finishSeries``: series idle for 6 minutes get a final write and leave the cache;
        singletons older than 6 minutes leave the cache."""
        cutoff = self._wall() - FINISH_TIME
        for key, event in list(self._cache.items()):
            series = event.get("series")
            if series is not None:
                if parse_time(series["lastObservedTime"]) < cutoff:
                    del self._cache[key]
                    self._spawn_attempt(_snapshot(event))
            elif parse_time(event["eventTime"]) < cutoff:
                del self._cache[key]

    def refresh_series(self) -> None:
        """``refreshExistingEventSeries``: re-send every live series."""
        for event in list(self._cache.values()):
            if event.get("series") is not None:
                self._spawn_attempt(_snapshot(event))

    # core/v1 -------------------------------------------------------------------

    def _spam_allowed(self, ref: dict[str, str]) -> bool:
        """``EventSourceObjectSpamFilter``: burst 25, one token per 300 s per source+object."""
        key = json.dumps([self.reporting_controller, self.hostname, ref], sort_keys=True)
        now = time.monotonic()
        tokens, last = self._spam.get(key, (25.0, now))
        tokens = min(25.0, tokens + (now - last) / 300.0)
        if tokens < 1.0:
            self._spam[key] = (tokens, now)
            return False
        self._spam[key] = (tokens - 1.0, now)
        return True

    def _record_legacy(self, ev: dict[str, Any]) -> None:
        ref = ev["ref"]
        if not self._spam_allowed(ref):
            self.dropped += 1
            return
        key = json.dumps([self.reporting_controller, self.hostname, ref, ev["type"], ev["reason"], ev["note"]],
                         sort_keys=True)
        ts = rfc3339(ev["time"])
        cached = self._legacy_cache.get(key)
        if cached is not None:
            cached["count"] += 1
            cached["lastTimestamp"] = ts
            to_record = dict(cached)  # only top-level fields of a legacy event are ever mutated
        else:
            to_record = {
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": ev["name"], "namespace": ref.get("namespace") or "default"},
                "involvedObject": ref, "reason": ev["reason"], "message": ev["note"], "type": ev["type"],
                "source": {"component": self.reporting_controller, "host": self.hostname},
                "firstTimestamp": ts, "lastTimestamp": ts, "count": 1,
                "reportingComponent": self.reporting_controller, "reportingInstance": self.hostname,
            }
            if len(self._legacy_cache) >= 4096:  # the legacy LRU holds 4096 entries
                self._legacy_cache.pop(next(iter(self._legacy_cache)))
            self._legacy_cache[key] = dict(to_record)
        self._spawn(self._guarded(lambda: self._attempt_legacy(to_record)))

    async def _attempt_legacy(self, event: dict[str, Any]) -> None:
        ns, name = event["metadata"]["namespace"], event["metadata"]["name"]
        base = f"/api/v1/namespaces/{ns}/events"

        async def write() -> None:
            if event["count"] > 1:
                try:
                    await self._call(self.client.patch(
                        f"{base}/{name}", {"count": event["count"], "lastTimestamp": event["lastTimestamp"],
                                           "message": event["message"]}, STRATEGIC_MERGE))
                    self.written += 1
                    return
                except APIError as err:
                    if err.status != 404:
                        raise
                    event["count"] = 1
                    event["firstTimestamp"] = event["lastTimestamp"]
            await self._call(self.client.post(base, event))
            self.written += 1

        tries = 0
        while True:
            try:
                await write()
                return
            except _Retry as err:
                tries += 1
                if tries >= self.max_tries:
                    log.error("Unable to write event (retry limit exceeded!): %s", err)
                    self.failed += 1
                    return
                log.info("Unable to write event (may retry after sleeping): %s", err)
            except APIError as err:
                if err.status == 409:  # AlreadyExists: not retried (upstream ``recordEvent``)
                    if tries > 0:  # after a timed-out try: that try reached the server (same name)
                        self.written += 1
                    return
                log.error("Server rejected event (will not retry!): %s", err)
                self.failed += 1
                return
            await asyncio.sleep(self.retry_interval * (1.0 + self._rng() * 0.25))

    # ───────────────────────────── shutdown ─────────────────────────────

    async def stop(self, flush_timeout: float = 5.0) -> None:
        """Stop accepting events, give queued and in-flight writes up to ``flush_timeout`` seconds,
        then cancel what is left (upstream ``Shutdown``). The :meth:`run` task is not cancelled
        here; the caller cancels it after this returns."""
        self._closed = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + flush_timeout
        while (not self._queue.empty() or self.in_flight) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        self._abandoned = True
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=1.0)
        while not self._queue.empty():
            self._queue.get_nowait()
            self.dropped += 1
