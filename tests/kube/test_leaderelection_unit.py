"""The lease state machine (client-go ``tryAcquireOrRenew``) step by step, with a fake clock."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

import pytest
from fakeapi import FakeAPI

from kubesched.kube.leaderelection import LeaderElector, default_identity

PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def elector(api: FakeAPI, clock: Clock, ident: str) -> LeaderElector:
    # wall time follows the fake clock; whole seconds, so the MicroTime fraction is .000000
    def wall() -> datetime:
        return datetime.fromtimestamp(1_700_000_000 + int(clock.t), tz=UTC)
    return LeaderElector(api, identity=ident, clock=clock, wall=wall)


def test_default_identity_is_hostname_uuid() -> None:
    ident = default_identity()
    host, _, uid = ident.rpartition("_")
    assert host and re.fullmatch(r"[0-9a-f-]{36}", uid)


@pytest.mark.parametrize("kw, msg", [
    ({"lease_duration": 10, "renew_deadline": 10}, "leaseDuration must be greater than renewDeadline"),
    ({"renew_deadline": 2.4, "retry_period": 2}, "renewDeadline must be greater than retryPeriod"),
    ({"identity": ""}, "Lock identity is empty"),
])
def test_constructor_checks(kw: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        LeaderElector(FakeAPI(), **kw)


@pytest.mark.asyncio
async def test_create_then_renew_keeps_acquire_time_and_transitions() -> None:
    api, clock = FakeAPI(), Clock()
    a = elector(api, clock, "a")
    assert await a.try_acquire_or_renew()
    spec = api.objects[PATH]["spec"]
    assert spec["holderIdentity"] == "a" and spec["leaseDurationSeconds"] == 15
    assert MICRO.match(spec["acquireTime"]) and MICRO.match(spec["renewTime"])
    assert spec["leaseTransitions"] == 0
    clock.t += 2
    api.calls.clear()
    assert await a.try_acquire_or_renew()
    assert api.calls == [("PUT", PATH)]  # fast path: no GET
    assert api.objects[PATH]["spec"]["leaseTransitions"] == 0


@pytest.mark.asyncio
async def test_other_waits_for_local_expiry_not_remote_renew_time() -> None:
    api, clock = FakeAPI(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()  # b observes the record now
    clock.t += 14.9
    assert not await b.try_acquire_or_renew()
    clock.t += 0.2  # 15.1 s since b first saw this record: expired
    assert await b.try_acquire_or_renew()
    spec = api.objects[PATH]["spec"]
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert b.transitions == 1


@pytest.mark.asyncio
async def test_renewals_restart_the_observers_clock() -> None:
    api, clock = FakeAPI(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    assert await a.try_acquire_or_renew()
    for _ in range(10):
        clock.t += 10
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()


@pytest.mark.asyncio
async def test_conflict_on_fast_path_falls_back_and_loses_to_new_holder() -> None:
    api, clock = FakeAPI(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    assert await a.try_acquire_or_renew()
    # someone else rewrote the lease (e.g. b after a long pause of a)
    obj = api.objects[PATH]
    obj["spec"]["holderIdentity"] = "b"
    obj["metadata"]["resourceVersion"] = "999"
    assert not await a.try_acquire_or_renew()  # PUT 409 → GET → held by b, valid → no
    assert not a._holds_observed()
    assert b is not None


@pytest.mark.asyncio
async def test_takeover_race_409_is_a_lost_try() -> None:
    api, clock = FakeAPI(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    clock.t += 16  # expired as seen by b; a was paused
    seen_by_a = dict(api.objects[PATH])

    async def a_renews_meanwhile() -> None:  # a wakes up between b's GET and b's PUT
        a._lease = seen_by_a
        assert await a._try_acquire_or_renew() is True

    api.after_get = a_renews_meanwhile
    a._observed_time = clock.t  # a's own view: still valid, so it takes the fast path
    assert not await b.try_acquire_or_renew()  # b's PUT carries the stale resourceVersion → 409
    assert api.objects[PATH]["spec"]["holderIdentity"] == "a"
    assert api.objects[PATH]["spec"]["leaseTransitions"] == 0
    assert not b._holds_observed()


@pytest.mark.asyncio
async def test_release_writes_empty_holder_and_one_second() -> None:
    api, clock = FakeAPI(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    assert await a.release()
    spec = api.objects[PATH]["spec"]
    assert "holderIdentity" not in spec or spec["holderIdentity"] == ""
    assert spec["leaseDurationSeconds"] == 1
    clock.t += 1.01
    assert await b.try_acquire_or_renew()
    assert api.objects[PATH]["spec"]["leaseTransitions"] == 1


@pytest.mark.asyncio
async def test_release_does_not_clear_a_new_holders_lease() -> None:
    api, clock = FakeAPI(), Clock()
    a, b = elector(api, clock, "a"), elector(api, clock, "b")
    await a.try_acquire_or_renew()
    await b.try_acquire_or_renew()
    clock.t += 16
    assert await b.try_acquire_or_renew()  # a was paused: b took over
    assert await a.release()
    assert api.objects[PATH]["spec"]["holderIdentity"] == "b"


@pytest.mark.asyncio
async def test_watchdog_fails_only_when_held_and_not_renewed() -> None:
    api, clock = FakeAPI(), Clock()
    a = elector(api, clock, "a")
    assert a.check() is None
    await a.try_acquire_or_renew()
    clock.t += 34
    assert a.check() is None
    clock.t += 2  # 36 > 15 + 20
    assert a.check() == "failed election to renew leadership on lease kube-scheduler"
    api.fail_writes = 500
    assert not await a.try_acquire_or_renew()
    assert a.check() is not None
    api.fail_writes = None
    assert await a.try_acquire_or_renew()
    assert a.check() is None


@pytest.mark.asyncio
async def test_api_errors_are_a_failed_try_not_an_exception() -> None:
    api, clock = FakeAPI(), Clock()
    api.fail_writes = 500
    a = elector(api, clock, "a")
    assert not await a.try_acquire_or_renew()
    assert PATH not in api.objects


@pytest.mark.asyncio
async def test_metrics_master_status_and_slowpath() -> None:
    from kubesched.kube.metrics import SchedulerMetrics

    api, clock = FakeAPI(), Clock()
    m = SchedulerMetrics()
    a = LeaderElector(api, identity="a", clock=clock, metrics=m)
    assert await a.try_acquire_or_renew()
    api.objects[PATH]["metadata"]["resourceVersion"] = "77"  # the cached copy is now stale: PUT 409
    assert await a.try_acquire_or_renew()  # slow path: GET, then PUT
    assert m.leader_election_slowpath.labels(name="kube-scheduler")._value.get() == 1


@pytest.mark.asyncio
async def test_cancel_arriving_as_a_request_completes_is_not_lost() -> None:
    """A cancellation (SIGTERM → the runner cancels the elector) delivered in the same loop
    iteration as a lease request's answer must end ``run()``. With ``asyncio.wait_for`` on
    Python 3.11 the answer won and the cancellation was dropped (CPython gh-86296): the elector
    then kept trying/renewing forever — a hung shutdown, seen under load."""
    api, clock = FakeAPI(), Clock()
    holder = elector(api, clock, "x")
    assert await holder.try_acquire_or_renew()  # "x" holds a fresh lease: "a" stands by
    a = LeaderElector(api, identity="a", clock=clock, retry_period=0.05, renew_deadline=1, lease_duration=2)
    stopped: list[bool] = []

    async def lead() -> None:
        raise AssertionError("a must not lead")

    task = asyncio.create_task(a.run(lead, lambda: stopped.append(True)))

    async def cancel_the_elector() -> None:  # runs inside a's GET, just before it answers
        task.cancel()

    api.after_get = cancel_the_elector
    done, _ = await asyncio.wait({task}, timeout=10)  # a bound for a hang, not a speed figure
    assert task in done and task.cancelled()
    assert stopped == [True] and not a.is_leader()
    assert api.objects[PATH]["spec"]["holderIdentity"] == "x"
