"""The event recorder over real HTTP against the box API server."""

from __future__ import annotations

import asyncio
import logging
import re
import socket
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import pytest_asyncio

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient
from kubesched.kube.events import EventRecorder, object_reference, truncate_note
from kubesched.testing.wrappers import MakePod

EVENTS = "/apis/events.k8s.io/v1/namespaces/ns/events"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


class Wall:
    def __init__(self) -> None:
        self.t = datetime(2026, 11, 24, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.t


@pytest_asyncio.fixture
async def box() -> AsyncIterator[Any]:
    async with start_server(token=None) as srv:
        yield srv


@pytest_asyncio.fixture
async def client(box: Any) -> AsyncIterator[APIClient]:
    async with APIClient.for_server(box.url, timeout=5) as c:
        await c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        yield c


def pod() -> Any:
    p = MakePod().name("web-1").namespace("ns").obj()
    return p.__class__(api_version=p.api_version, kind=p.kind,
                       metadata=p.metadata.__class__(name="web-1", namespace="ns", uid="u-1", resource_version="7"),
                       spec=p.spec, status=p.status)


async def until(cond: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Poll ``cond`` every 10 ms; fail after ``timeout`` seconds (a generous bound for a loaded
    machine, not a speed assertion: it returns as soon as ``cond`` holds)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.01)


async def settle(rec: EventRecorder) -> None:
    await until(lambda: rec._queue.empty() and not rec.in_flight, "recorder settled")


async def run(rec: EventRecorder) -> asyncio.Task[None]:
    """Start ``rec.run()`` and wait until its API discovery probe has decided (a fault injected
    before that would change the API the recorder picks)."""
    task = asyncio.create_task(rec.run())
    await until(lambda: rec.api != "auto" or task.done(), "discovery probe done")
    return task


async def events(client: APIClient, path: str = EVENTS) -> list[dict[str, Any]]:
    return (await client.list(path))["items"]


def test_truncate_note_and_reference() -> None:
    assert truncate_note("x" * 1024) == "x" * 1024
    cut = truncate_note("é" * 1000)  # 2000 bytes
    assert len(cut.encode()) <= 1024 and cut.endswith(" ...")
    assert object_reference(pod()) == {"apiVersion": "v1", "kind": "Pod", "namespace": "ns", "name": "web-1",
                                       "uid": "u-1", "resourceVersion": "7"}
    with pytest.raises(TypeError):
        object_reference({"kind": "Pod"})


@pytest.mark.asyncio
async def test_event_object_as_upstream(client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler", hostname="host-a")
    task = await run(rec)
    try:
        rec.emit(pod(), None, "Normal", "Scheduled", "Binding", "Successfully assigned ns/web-1 to n1")
        await settle(rec)
        assert rec.api == "events.k8s.io/v1"
        [ev] = await events(client)
        assert re.fullmatch(r"web-1\.[0-9a-f]+", ev["metadata"]["name"])
        assert ev["reportingController"] == "default-scheduler"
        assert ev["reportingInstance"] == "default-scheduler-host-a"
        assert (ev["type"], ev["reason"], ev["action"]) == ("Normal", "Scheduled", "Binding")
        assert ev["note"] == "Successfully assigned ns/web-1 to n1"
        assert ev["regarding"]["name"] == "web-1" and ev["regarding"]["uid"] == "u-1"
        assert MICRO.match(ev["eventTime"])
        assert ev.get("series") is None
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_series_aggregation_patch_then_final_count(client: APIClient) -> None:
    wall = Wall()
    rec = EventRecorder(client, "default-scheduler", wall=wall)
    task = await run(rec)
    try:
        for i in range(4):
            rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", f"0/1 nodes are available ({i})")
            await settle(rec)
            wall.t += timedelta(seconds=1)
        [ev] = await events(client)
        assert ev["note"] == "0/1 nodes are available (0)"  # the note is not part of the key, as upstream
        assert ev["series"]["count"] == 2 and MICRO.match(ev["series"]["lastObservedTime"])
        writes = rec.written
        assert writes == 2  # POST, then one PATCH; repeats 3 and 4 only bump the cache
        wall.t += timedelta(minutes=7)  # the series goes idle: the final count is written
        rec.finish_series()
        await settle(rec)
        [ev] = await events(client)
        assert ev["series"]["count"] == 4
        # a different reason is another event
        rec.emit(pod(), None, "Normal", "Scheduled", "Binding", "Successfully assigned ns/web-1 to n1")
        await settle(rec)
        assert len(await events(client)) == 2
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_series_patch_404_recreates(client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler")
    task = await run(rec)
    try:
        rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "no")
        await settle(rec)
        [ev] = await events(client)
        await client.delete(f"{EVENTS}/{ev['metadata']['name']}")
        rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "no")
        await settle(rec)
        [again] = await events(client)
        assert again["metadata"]["name"] == ev["metadata"]["name"] and again["series"]["count"] == 2
        assert rec.failed == 0
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_bounded_queue_drops_and_never_blocks(client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler", queue_size=5)
    for i in range(12):  # no consumer yet: the queue fills
        rec.emit({"kind": "Pod", "namespace": "ns", "name": f"p{i}"}, None, "Normal", "Scheduled", "Binding", "x")
    assert (rec.emitted, rec.dropped) == (5, 7)
    task = await run(rec)
    try:
        await settle(rec)
        assert len(await events(client)) == 5
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_a_slow_server_does_not_make_the_recorder_drop(box: Any, client: APIClient) -> None:
    """Upstream ``recordToSink`` writes each event from its own goroutine: the queue is emptied as
    fast as events come whatever the server's latency, so events are dropped only when the
    recorder itself falls behind. Here every write hangs (the server is paused) while 25 events are
    emitted, in two rounds through a queue of 10: none waits in the queue, none is dropped, all 25
    are written once the server answers."""
    rec = EventRecorder(client, "default-scheduler", queue_size=10)
    task = await run(rec)
    try:
        box.faults.pause()
        for batch in (range(10), range(10, 25)):
            for i in batch:
                rec.emit({"kind": "Pod", "namespace": "ns", "name": f"p{i}"}, None, "Normal", "Scheduled",
                         "Binding", "x")
                if i == 19:
                    await until(rec._queue.empty, "the queue emptied while every write hangs")
            await until(rec._queue.empty, "the queue emptied while every write hangs")
        assert (rec.emitted, rec.dropped, rec.written) == (25, 0, 0)
        box.faults.resume()
        await settle(rec)
        assert (rec.written, rec.failed) == (25, 0)
        assert len(await events(client)) == 25
    finally:
        box.faults.clear()
        task.cancel()


@pytest.mark.asyncio
async def test_error_status_is_dropped_without_retry(box: Any, client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler", retry_interval=0.05)
    task = await run(rec)
    try:
        box.faults.fail_writes("events", code=500)
        rec.emit(pod(), None, "Normal", "Scheduled", "Binding", "x")
        await settle(rec)
        assert (rec.failed, rec.written, box.faults.injected) == (1, 0, 1)
    finally:
        box.faults.clear()
        task.cancel()


@pytest.mark.asyncio
@pytest.mark.parametrize("api", ["auto", "v1"])
async def test_transport_errors_are_retried_and_written_once(box: Any, client: APIClient, caplog: Any,
                                                             api: str) -> None:
    # max_tries: on a loaded machine a retry after resume may time out too; what is asserted is
    # that transport errors are retried and the event is written exactly once
    rec = EventRecorder(client, "default-scheduler", api=api, retry_interval=0.1, request_timeout=0.3,
                        max_tries=1000)
    task = await run(rec)
    assert rec.api == ("events.k8s.io/v1" if api == "auto" else "v1")
    caplog.set_level(logging.INFO, logger="kubesched.events")
    try:
        box.faults.pause()  # requests hang: the client times out (a transport error) and retries
        rec.emit(pod(), None, "Normal", "Scheduled", "Binding", "x")
        await until(lambda: sum("may retry" in r.getMessage() for r in caplog.records) >= 2,
                    "two timed-out tries")
        assert rec.written == 0 and rec.failed == 0
        box.faults.resume()
        await settle(rec)
        evs = await events(client, EVENTS if api == "auto" else "/api/v1/namespaces/ns/events")
        assert len(evs) == 1  # held requests ran on resume, the retry hit AlreadyExists: one object
        assert (rec.written, rec.failed) == (1, 0)
    finally:
        box.faults.clear()
        task.cancel()


@pytest.mark.asyncio
async def test_retry_limit(client: APIClient) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with APIClient.for_server(f"http://127.0.0.1:{port}", timeout=1) as dead:
        rec = EventRecorder(dead, "default-scheduler", api="events.k8s.io/v1", retry_interval=0.01, max_tries=3)
        task = await run(rec)
        try:
            rec.emit(pod(), None, "Normal", "Scheduled", "Binding", "x")
            await settle(rec)
            assert (rec.failed, rec.written) == (1, 0)
        finally:
            task.cancel()
        # the discovery probe fails too: fall back to core/v1
        rec2 = EventRecorder(dead, "default-scheduler")
        await rec2._probe()
        assert rec2.api == "v1"


@pytest.mark.asyncio
async def test_core_v1_fallback_dedups_identical_events(client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler", api="v1", hostname="host-a")
    task = await run(rec)
    try:
        for _ in range(3):
            rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available")
            await settle(rec)
        rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "another message")
        await settle(rec)
        evs = {e["message"]: e for e in await events(client, "/api/v1/namespaces/ns/events")}
        assert evs["0/1 nodes are available"]["count"] == 3
        assert evs["another message"]["count"] == 1
        e = evs["0/1 nodes are available"]
        assert e["source"] == {"component": "default-scheduler", "host": "host-a"}
        assert e["involvedObject"]["name"] == "web-1"
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_stop_flushes_then_drops(client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler")
    task = await run(rec)
    for i in range(20):
        rec.emit({"kind": "Pod", "namespace": "ns", "name": f"p{i}"}, None, "Normal", "Scheduled", "Binding", "x")
    await rec.stop(flush_timeout=60)
    task.cancel()
    assert rec.written == 20 and len(await events(client)) == 20
    rec.emit(pod(), None, "Normal", "Scheduled", "Binding", "late")
    assert rec.dropped == 1


@pytest.mark.asyncio
async def test_refresh_resends_live_series(client: APIClient) -> None:
    rec = EventRecorder(client, "default-scheduler")
    task = await run(rec)
    try:
        for _ in range(3):
            rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "no")
            await settle(rec)
        [ev] = await events(client)
        assert ev["series"]["count"] == 2  # the third only bumped the cache
        rec.refresh_series()  # the 30-minute refresh of live series
        await settle(rec)
        [ev] = await events(client)
        assert ev["series"]["count"] == 3
        assert len(rec._cache) == 1  # still live: refresh does not end the series
    finally:
        task.cancel()


@pytest.mark.asyncio
async def test_a_failed_first_try_is_retried_with_its_own_body() -> None:
    """The first try of a new event is sent straight from the client (``post_done``); when it fails
    and the same event repeats before the retry (the cached event becomes a series), the retry
    POSTs the body of the first try, not the series, and the series goes as its own PATCH."""
    from kubesched.kube.client import APIConnectionError

    class Client:
        def __init__(self) -> None:
            self.sent: list[tuple[str, str, Any]] = []
            self.pending: list[Callable[[Any], None]] = []

        def post_done(self, path: str, data: bytes, done: Callable[[Any], None], *, timeout: float) -> bool:
            self.sent.append(("POST", path, data))
            self.pending.append(done)
            return True

        async def post_resume(self, path: str, data: bytes, outcome: Any) -> None:
            raise APIConnectionError(f"POST {path}: {outcome}")

        async def post(self, path: str, body: Any) -> None:
            self.sent.append(("POST", path, body))

        async def patch(self, path: str, body: Any, content_type: str) -> dict[str, Any]:
            self.sent.append(("PATCH", path, body))
            return {}

    fake = Client()
    wall = Wall()
    rec = EventRecorder(fake, "default-scheduler", api="events.k8s.io/v1", wall=wall, retry_interval=0.05)
    task = await run(rec)
    try:
        rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "no")
        await until(lambda: rec.in_flight == 1, "the first try sent")
        assert len(fake.sent) == 1
        first = fake.sent[0][2]
        assert isinstance(first, bytes) and b'"series"' not in first
        fake.pending.pop()(TimeoutError("timed out"))  # the first try failed: retried after retry_interval
        wall.t += timedelta(seconds=1)
        rec.emit(pod(), None, "Warning", "FailedScheduling", "Scheduling", "no")  # the series: PATCH
        await settle(rec)
        posts = [body for verb, _, body in fake.sent if verb == "POST"]
        patches = [body for verb, _, body in fake.sent if verb == "PATCH"]
        assert posts == [first, first]
        assert [p["series"]["count"] for p in patches] == [2]
        assert (rec.written, rec.failed) == (2, 0)
    finally:
        task.cancel()
