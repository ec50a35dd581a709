"""Helpers for the live tests (polling with a bound, object builders)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any


async def eventually(cond: Callable[[], bool | Awaitable[bool]], timeout: float = 60.0, what: str = "") -> None:
    """Poll ``cond`` every 20 ms until true; fail after ``timeout`` seconds (a bound, not a speed
    assertion: generous, as the 2-core CI machine is often heavily loaded; it returns as soon as
    ``cond`` holds)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        r = cond()
        if asyncio.iscoroutine(r):
            r = await r
        if r:
            return
        if loop.time() > end:
            raise AssertionError(f"condition not met within {timeout}s: {what}")
        await asyncio.sleep(0.02)


def node_obj(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": pods},
                       "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod_obj(name: str, ns: str = "default", cpu: str = "100m", scheduler: str | None = None,
            node: str | None = None) -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox",
                                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if scheduler:
        spec["schedulerName"] = scheduler
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}
