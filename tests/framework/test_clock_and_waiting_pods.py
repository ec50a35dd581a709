"""Clocks (timers, futures) and the waiting-pods map (upstream ``waiting_pods_map.go``)."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.framework.clock import AsyncioClock, ManualClock, SimFuture
from kubesched.framework.interface import Code
from kubesched.framework.waiting_pods import (
    WaitingPod,
    WaitingPodsMap,
    go_duration,
    waiting_pod_key,
)
from kubesched.sim.event_heap import Environment
from kubesched.testing.wrappers import MakePod


@pytest.mark.parametrize(("seconds", "want"), [
    (0, "0s"), (0.05, "50ms"), (0.0015, "1.5ms"), (1, "1s"), (1.5, "1.5s"), (10, "10s"), (60, "1m0s"),
    (90, "1m30s"), (900, "15m0s"), (3600, "1h0m0s"), (3661.25, "1h1m1.25s"), (2e-6, "2µs"), (5e-9, "5ns"),
])
def test_go_duration_matches_time_duration_string(seconds: float, want: str) -> None:
    assert go_duration(seconds) == want


def test_manual_clock_runs_due_timers_in_order_at_their_time() -> None:
    c = ManualClock(10.0)
    seen: list[tuple[str, float]] = []
    c.call_later(5, lambda: seen.append(("b", c.now())))
    c.call_later(2, lambda: seen.append(("a", c.now())))
    h = c.call_later(3, lambda: seen.append(("cancelled", c.now())))
    c.call_later(5, lambda: seen.append(("b2", c.now())))
    h.cancel()
    c.advance(4)
    assert seen == [("a", 12.0)] and c.now() == 14.0
    c.set(20)
    assert seen == [("a", 12.0), ("b", 15.0), ("b2", 15.0)] and c.pending_timers() == 0
    with pytest.raises(ValueError):
        c.call_later(-1, lambda: None)


def test_environment_owns_the_clock_timers() -> None:
    env = Environment(timer_priority=5)
    seen: list[float] = []
    env.clock.call_later(3, lambda: seen.append(env.now))
    h = env.clock.call_later(1, lambda: seen.append(-1))
    h.cancel()
    env.run()
    assert seen == [3.0] and env.processed == 1


def test_sim_future() -> None:
    f = SimFuture()
    got: list[int] = []
    f.add_done_callback(lambda x: got.append(x.result()))
    assert not f.done()
    with pytest.raises(asyncio.InvalidStateError):
        f.result()
    f.set_result(7)
    f.add_done_callback(lambda x: got.append(x.result() * 2))
    assert got == [7, 14]
    with pytest.raises(asyncio.InvalidStateError):
        f.set_result(8)


def test_waiting_pod_first_signal_wins_and_timers_stop() -> None:
    c = ManualClock()
    pod = MakePod().name("p").uid("u1").obj()
    wp = WaitingPod(pod, {"A": 10.0, "B": 20.0}, c)
    m = WaitingPodsMap()
    m.add(wp)
    assert m.get("u1") is wp and waiting_pod_key(pod) == "u1" and list(m) == [wp]
    wp.allow("A")
    assert wp.get_pending_plugins() == ["B"] and not wp.future.done()
    wp.reject("X", "no")
    st = wp.future.result()
    assert (st.code, st.reasons, st.plugin) == (Code.UNSCHEDULABLE, ("no",), "X")
    wp.allow("B")  # too late: the first signal stands
    assert wp.future.result() is st
    c.advance(30)  # timers were stopped by the rejection
    assert c.pending_timers() == 0 and wp.future.result() is st
    m.remove("u1")
    assert len(m) == 0


def test_waiting_pod_times_out_at_its_plugin() -> None:
    c = ManualClock()
    wp = WaitingPod(MakePod().name("p").obj(), {"A": 10.0, "B": 2.5}, c)
    assert waiting_pod_key(wp.get_pod()) == "default/p"  # no uid
    c.advance(3)
    st = wp.future.result()
    assert (st.code, st.message(), st.plugin) == (
        Code.UNSCHEDULABLE, "rejected due to timeout after waiting 2.5s at plugin B", "B")


def test_asyncio_clock_needs_and_uses_the_running_loop() -> None:
    async def main() -> float:
        c = AsyncioClock()
        fut = c.create_future()
        t0 = c.now()
        c.call_later(0.01, lambda: fut.set_result(c.now() - t0))
        return await fut

    assert asyncio.run(main()) >= 0.0
    with pytest.raises(RuntimeError):
        AsyncioClock().create_future()
