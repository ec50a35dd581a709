"""Leader election over real HTTP against the box API server (127.0.0.1, ephemeral port), with
short durations (lease 2 s, renew deadline 1.5 s, retry 0.25 s) so every test ends in seconds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient
from kubesched.kube.events import EventRecorder
from kubesched.kube.leaderelection import LeaderElector

LEASE, RENEW, RETRY = 2.0, 1.5, 0.25
PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
WAIT = 60.0
"""Bound on waits for a condition (generous for a loaded machine; they end as soon as it holds)."""


class Candidate:
    """One replica: an elector, a leading task that counts, and its run() task."""

    def __init__(self, url: str, name: str, release: bool = True, recorder: EventRecorder | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = APIClient.for_server(url, user_agent_suffix="/leader-election")
        self.el = LeaderElector(self.client, identity=name, lease_duration=LEASE, renew_deadline=RENEW,
                                retry_period=RETRY, release_on_cancel=release, recorder=recorder, stop_timeout=2,
                                clock=clock)
        self.started = 0
        self.leading_cancelled = 0
        self.stopped = 0
        self.started_at: float | None = None
        self.task: asyncio.Task[None] | None = None

    async def _lead(self) -> None:
        self.started += 1
        self.started_at = time.monotonic()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.leading_cancelled += 1
            raise

    def _stop(self) -> None:
        self.stopped += 1

    def start(self) -> None:
        self.task = asyncio.create_task(self.el.run(self._lead, self._stop))

    async def kill(self) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            await self.kill()
        await self.client.close()


class LagMeter:
    """Total time this event loop ran late while entered (``late``, seconds): on a loaded machine
    the process is kept from running, which delays the elector's timers as much. A wall-clock
    bound plus ``late`` checks the elector, not the machine; on an idle machine ``late`` ≈ 0."""

    TICK = 0.01

    def __init__(self) -> None:
        self.late = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(self.TICK)
            self.late += max(0.0, loop.time() - t - self.TICK - 0.005)  # 5 ms: normal wake-up jitter

    async def __aenter__(self) -> LagMeter:
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def until(cond: Any, timeout: float = 60.0) -> float:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)
    return time.monotonic() - t0


@pytest_asyncio.fixture
async def box() -> AsyncIterator[Any]:
    async with start_server(token=None) as srv:
        yield srv


async def lease(srv: Any) -> dict[str, Any]:
    async with APIClient.for_server(srv.url) as c:
        return await c.get(PATH)


@pytest.mark.asyncio
async def test_two_candidates_exactly_one_leads_and_failover_after_kill(box: Any) -> None:
    a, b = Candidate(box.url, "a", release=False), Candidate(box.url, "b", release=False)
    try:
        a.start()
        b.start()  # both race to create the lease: one POST wins, the other gets 409
        await until(lambda: a.el.is_leader() or b.el.is_leader())
        await asyncio.sleep(3 * LEASE)  # several lease durations of renewals
        assert a.el.is_leader() != b.el.is_leader()
        assert a.started + b.started == 1
        leader, standby = (a, b) if a.el.is_leader() else (b, a)
        spec = (await lease(box))["spec"]
        assert spec["holderIdentity"] == leader.el.identity and spec["leaseTransitions"] == 0
        # kill the leader without release (a crash): the standby takes over once the lease expired
        # in its own view — never earlier (a wall-clock upper bound would only measure the load)
        await leader.kill()
        last_seen_change = standby.el._observed_time  # its local time of the last renewal it saw
        await until(standby.el.is_leader, timeout=WAIT)
        await until(lambda: standby.started == 1, timeout=WAIT)
        assert standby.started_at is not None and standby.started_at >= last_seen_change + LEASE
        spec = (await lease(box))["spec"]
        assert spec["holderIdentity"] == standby.el.identity and spec["leaseTransitions"] == 1
        assert standby.started == 1 and leader.stopped == 1
    finally:
        await a.close()
        await b.close()


@pytest.mark.asyncio
async def test_release_on_shutdown_lets_the_other_take_over_at_once(box: Any) -> None:
    # b's clock stands still: a's lease never expires in b's view, so b can only take over
    # through the release (deterministic on a loaded machine, unlike timing the takeover)
    a, b = Candidate(box.url, "a"), Candidate(box.url, "b", clock=lambda: 1000.0)
    try:
        a.start()
        await until(a.el.is_leader, timeout=WAIT)
        b.start()
        await until(lambda: b.el.leader == "a", timeout=WAIT)  # b stands by, having read a's lease
        assert not b.el.is_leader()
        await a.kill()  # SIGTERM path: cancel → stop leading task → release
        assert a.leading_cancelled == 1 and a.stopped == 1
        released = (await lease(box))["spec"]
        assert released.get("holderIdentity", "") == "" and released["leaseDurationSeconds"] == 1
        await until(b.el.is_leader, timeout=WAIT)
        spec = (await lease(box))["spec"]
        assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    finally:
        await a.close()
        await b.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("fault", ["fail-writes", "pause"])
async def test_leader_whose_renewals_fail_stops_leading_within_renew_deadline(box: Any, fault: str) -> None:
    a = Candidate(box.url, "a")
    try:
        a.start()
        await until(a.el.is_leader)
        async with LagMeter() as lag:
            if fault == "fail-writes":
                box.faults.fail_writes("leases", code=500)
            else:
                box.faults.pause()
            lost_after = await until(lambda: not a.el.is_leader(), timeout=WAIT)
            # lost within the time to the next renewal + the renew deadline (+ scheduling slack, + the
            # time a loaded machine kept this process from running)
            assert a.el.lost and lost_after <= RETRY + RENEW + 0.5 + lag.late, (lost_after, lag.late)
            # the leading task is cancelled at once, on_stopped_leading runs after the bounded release try
            cancelled_after = await until(lambda: a.leading_cancelled == 1, timeout=WAIT)
            assert cancelled_after <= 1 + lag.late, (cancelled_after, lag.late)
            stopped_after = await until(lambda: a.stopped == 1, timeout=WAIT)
            assert stopped_after <= RENEW + 1 + lag.late, (stopped_after, lag.late)
        box.faults.clear()
        assert a.task is not None and a.task.done()
        # the lease was not released (the write failed), so it still names a until it expires
        assert (await lease(box))["spec"]["holderIdentity"] == "a"
    finally:
        box.faults.clear()
        await a.close()


@pytest.mark.asyncio
async def test_takeover_race_between_two_standbys_is_won_once(box: Any) -> None:
    a = Candidate(box.url, "a", release=False)
    b, c = Candidate(box.url, "b"), Candidate(box.url, "c")
    try:
        a.start()
        await until(a.el.is_leader, timeout=WAIT)
        b.start()
        c.start()
        # both standbys have read a's record (both will see it expire and race for it)
        await until(lambda: b.el.leader == "a" and c.el.leader == "a", timeout=WAIT)
        await a.kill()
        await until(lambda: b.el.is_leader() or c.el.is_leader(), timeout=WAIT)
        winner, loser = (b, c) if b.el.is_leader() else (c, b)
        # the loser's PUT (same resourceVersion) got 409 and it has read the winner's record: from
        # here it could only take over after the winner stopped renewing for a whole lease
        await until(lambda: loser.el.leader == winner.el.identity, timeout=WAIT)
        await until(lambda: winner.started == 1, timeout=WAIT)
        assert winner.el.is_leader() and not loser.el.is_leader()
        assert loser.started == 0
        spec = (await lease(box))["spec"]
        assert spec["holderIdentity"] == winner.el.identity and spec["leaseTransitions"] == 1
    finally:
        for x in (a, b, c):
            await x.close()


@pytest.mark.asyncio
async def test_leader_election_events_and_microtime(box: Any) -> None:
    client = APIClient.for_server(box.url)
    rec = EventRecorder(client, "default-scheduler", api="v1")
    rec_task = asyncio.create_task(rec.run())
    a = Candidate(box.url, "a", recorder=rec)
    try:
        a.start()
        await until(a.el.is_leader)
        spec = (await lease(box))["spec"]
        for k in ("acquireTime", "renewTime"):
            assert len(spec[k]) == len("2026-01-01T00:00:00.000000Z") and spec[k].endswith("Z")
        await a.kill()
        await rec.stop(flush_timeout=60)
        evs = (await client.list("/api/v1/namespaces/kube-system/events"))["items"]
        notes = sorted(e["message"] for e in evs if e["reason"] == "LeaderElection")
        assert notes == ["a became leader", "a stopped leading"]
        assert all(e["involvedObject"]["kind"] == "Lease" for e in evs)
    finally:
        rec_task.cancel()
        await asyncio.gather(rec_task, return_exceptions=True)
        await a.close()
        await client.close()
