"""The pieces that let the live loop run scheduling cycles on a worker thread (with extenders):
``EngineGate`` (defer engine work during a cycle), ``gated`` (binding-cycle steps wait for the
gate), ``AsyncioClock`` used from the worker thread (timers, futures, deferred callbacks)."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.framework.clock import AsyncioClock
from kubesched.kube.adapter import EngineGate, gated

pytestmark = pytest.mark.asyncio


async def test_gate_defers_in_order_and_runs_on_open() -> None:
    gate = EngineGate()
    seen: list[int] = []
    gate.run_or_defer(seen.append, 1)
    gate.close()
    gate.run_or_defer(seen.append, 2)
    gate.run_or_defer(seen.append, 3)
    assert seen == [1] and gate.deferred_total == 2
    gate.open()
    assert seen == [1, 2, 3]


async def test_gated_coroutine_steps_wait_for_the_gate() -> None:
    gate = EngineGate()
    steps: list[str] = []
    fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def binding() -> str:
        steps.append("start")
        value = await fut
        steps.append(f"after {value}")  # would touch the cache: must not run during a cycle
        await asyncio.sleep(0)
        steps.append("end")
        return "done"

    task = asyncio.create_task(gated(binding(), gate))
    await asyncio.sleep(0)
    assert steps == ["start"]
    gate.close()
    fut.set_result("bound")
    for _ in range(5):
        await asyncio.sleep(0)
    assert steps == ["start"]  # resumed only once the gate opens
    gate.open()
    assert await asyncio.wait_for(task, 5) == "done"
    assert steps == ["start", "after bound", "end"]


async def test_gated_forwards_exceptions_and_cancellation() -> None:
    gate = EngineGate()
    caught: list[str] = []

    async def failing() -> None:
        await asyncio.sleep(0)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await gated(failing(), gate)

    async def waits() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            caught.append("cancelled")
            raise

    task = asyncio.create_task(gated(waits(), gate))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert caught == ["cancelled"]


async def test_asyncio_clock_from_a_worker_thread() -> None:
    loop = asyncio.get_running_loop()
    clock = AsyncioClock()
    clock.loop = loop
    gate = EngineGate()
    clock.defer = gate.run_or_defer
    fired: list[str] = []

    def in_thread() -> asyncio.Future[int]:
        clock.call_later(0.01, lambda: fired.append("timer"))
        cancelled = clock.call_later(0.01, lambda: fired.append("cancelled"))
        cancelled.cancel()
        return clock.create_future()

    gate.close()
    fut = await loop.run_in_executor(None, in_thread)
    for _ in range(500):  # bounded: until the timer is due and has been deferred
        if gate.deferred_total:
            break
        await asyncio.sleep(0.01)
    assert fired == [] and gate.deferred_total == 1  # due, but the gate is closed: deferred
    gate.open()
    assert fired == ["timer"]
    fut.set_result(7)
    assert await fut == 7
