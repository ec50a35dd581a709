"""Informers over real HTTP against the box API server: sync, follow, watch drops, 410 relist."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj

from kubesched.apiserver.resources import RESOURCES
from kubesched.kube import informer as kinformer
from kubesched.kube.informer import InformerFactory, InformerLister
from kubesched.kube.reflector import Backoff, DeletedFinalStateUnknown, Reflector

pytestmark = pytest.mark.asyncio

NODE_SPEC = kinformer.RESOURCES["Node"]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    @staticmethod
    def _key(o: Any) -> str:
        if isinstance(o, DeletedFinalStateUnknown):
            return o.key
        return f"{o.metadata.namespace}/{o.metadata.name}" if o.metadata.namespace else o.metadata.name

    def on_add(self, obj: Any, initial: bool) -> None:
        self.events.append(("add", self._key(obj), obj.metadata.resource_version))

    def on_update(self, old: Any, new: Any) -> None:
        assert old.metadata.resource_version != new.metadata.resource_version
        self.events.append(("update", self._key(new), new.metadata.resource_version))

    def on_delete(self, obj: Any) -> None:
        kind = "tombstone" if isinstance(obj, DeletedFinalStateUnknown) else "delete"
        self.events.append((kind, self._key(obj), ""))

    def on_synced(self) -> None:
        """The initial list was delivered (nothing to record)."""

    def of(self, key: str) -> list[str]:
        return [e[0] for e in self.events if e[1] == key]


async def test_informers_sync_paginated_and_follow_changes(box, api) -> None:
    for i in range(7):
        await api.create("/api/v1/nodes", node_obj(f"n{i}"))
    for i in range(12):
        await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
    factory = InformerFactory(api, page_size=5)  # 12 pods: 3 pages
    pods, nodes = factory.informer("Pod"), factory.informer("Node")
    rec = Recorder()
    pods.add_event_handler(rec)
    factory.start()
    try:
        assert await factory.wait_for_cache_sync(10)
        assert len(pods.store) == 12 and len(nodes.store) == 7
        assert pods.reflector.lists == 1
        lister = InformerLister(factory)
        assert lister.get("Pod", "default", "p3").metadata.name == "p3"
        assert len(lister.list("Pod", "default")) == 12 and lister.list("Pod", "other") == []
        assert lister.list("Service") == []

        await api.create("/api/v1/namespaces/default/pods", pod_obj("late"))
        await api.patch("/api/v1/namespaces/default/pods/p0", {"metadata": {"labels": {"a": "b"}}})
        await api.delete("/api/v1/namespaces/default/pods/p1", {"gracePeriodSeconds": 0})
        # a pod that completes leaves the informer (phase field selector): DELETED on the transition
        await api.patch("/api/v1/namespaces/default/pods/p2/status", {"status": {"phase": "Succeeded"}},
                        "application/merge-patch+json")
        await eventually(lambda: rec.of("default/late") == ["add"] and rec.of("default/p0") == ["add", "update"]
                         and rec.of("default/p1") == ["add", "delete"] and rec.of("default/p2") == ["add", "delete"],
                         what=str(rec.events[-5:]))
        assert pods.store.get("default/p0").metadata.labels == {"a": "b"}
        assert pods.store.get("default/p1") is None and pods.store.get("default/p2") is None
    finally:
        await factory.stop()


async def test_watch_drops_lose_nothing(box, api) -> None:
    factory = InformerFactory(api)
    pods = factory.informer("Pod")
    rec = Recorder()
    pods.add_event_handler(rec)
    factory.start()
    drops = 0
    try:
        assert await factory.wait_for_cache_sync(10)
        for i in range(60):
            await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
            if i % 6 == 5:
                drops += box.faults.close_watches()
                await asyncio.sleep(0.05)
        await eventually(lambda: len(pods.store) == 60, what=f"{len(pods.store)} pods")
        # every pod was seen exactly once, no relist was needed (rewatch from the last RV)
        assert all(rec.of(f"default/p{i}") == ["add"] for i in range(60))
        assert drops >= 5 and pods.reflector.watches > drops // 2
        assert pods.reflector.lists == 1
    finally:
        await factory.stop()


async def test_compaction_410_relist_delivers_missed_delete_as_tombstone(box, api) -> None:
    for i in range(3):
        await api.create("/api/v1/namespaces/default/pods", pod_obj(f"p{i}"))
    factory = InformerFactory(api)
    pods = factory.informer("Pod")
    rec = Recorder()
    pods.add_event_handler(rec)
    factory.start()
    try:
        assert await factory.wait_for_cache_sync(10)
        await eventually(lambda: pods.reflector.watches >= 1)
        # a watch cut in its first second with no event is a "very short watch" (relist after a
        # backoff, as client-go): let it run past that, so its cut means a plain rewatch
        await asyncio.sleep(1.1)
        # hold every request, drop the watch (the informer's rewatch is now held), delete a pod and
        # change another behind its back, compact: the held rewatch starts from a compacted RV
        box.faults.pause()
        box.faults.close_watches()
        await eventually(lambda: pods.reflector.watches >= 2)  # the rewatch was sent (and is held)
        await asyncio.sleep(0.1)
        info = next(r for r in RESOURCES if r.plural == "pods")
        box.delete_object(info, "default", "p1", {"gracePeriodSeconds": 0})
        entry = box.store.get(info.key, "default", "p0")
        obj = entry.obj()
        obj["metadata"].setdefault("labels", {})["changed"] = "yes"
        box.store.update(info.key, "default", "p0", obj)
        box.compact_now()
        box.faults.resume()
        await eventually(lambda: "tombstone" in rec.of("default/p1"), what=str(rec.events))
        assert rec.of("default/p1") == ["add", "tombstone"]
        assert pods.reflector.relists_after_expired >= 1 and pods.reflector.lists == 2
        assert sorted(pods.store.keys()) == ["default/p0", "default/p2"]
        # the missed update arrives as an update; the unchanged pod is not re-delivered
        assert rec.of("default/p0") == ["add", "update"]
        assert rec.of("default/p2") == ["add"]
        # and it keeps following changes after the relist
        await api.create("/api/v1/namespaces/default/pods", pod_obj("p9"))
        await eventually(lambda: rec.of("default/p9") == ["add"])
    finally:
        await factory.stop()


class _CountingBackoff(Backoff):
    def __init__(self) -> None:
        super().__init__(initial=0.05, cap=0.4, jitter=0.0)
        self.delays: list[float] = []

    def next(self) -> float:
        d = super().next()
        self.delays.append(d)
        return d


async def test_very_short_watches_back_off_and_relist_over_http(box, api) -> None:
    """The server ends every watch at once with no event and no bookmark (fault
    ``watch_close_every = 0``): client-go's "very short watch" path — an error, a backoff that
    grows, a relist — and nothing written meanwhile is lost."""
    for i in range(3):
        await api.create("/api/v1/nodes", node_obj(f"n{i}"))
    rec = Recorder()
    backoff = _CountingBackoff()
    refl = Reflector(api, NODE_SPEC, rec, backoff=backoff)
    task = asyncio.create_task(refl.run())
    try:
        await eventually(lambda: refl.has_synced, what="synced")
        box.faults.watch_close_every = 0.0
        box.faults.close_watches()  # the open watch ends; every rewatch ends at once
        await api.create("/api/v1/nodes", node_obj("during"))
        await eventually(lambda: refl.watch_errors >= 3 and refl.lists >= 3, what="very short watches")
        # exponential: each very short watch is followed by a longer pause, up to the cap
        assert backoff.delays[:3] == [0.05, 0.1, 0.2]
        assert set(backoff.delays[3:]) <= {0.4}
        # the relists deliver what the watches could not
        assert rec.of("during") == ["add"]
        box.faults.watch_close_every = None
        lists = refl.lists
        await asyncio.sleep(1.0)  # a watch now lasts: it delivers changes without relisting
        await api.create("/api/v1/nodes", node_obj("after"))
        await eventually(lambda: rec.of("after") == ["add"], what="watch delivers again")
        assert refl.lists <= lists + 1
        assert sorted(k for k in refl.store.keys()) == ["after", "during", "n0", "n1", "n2"]
    finally:
        box.faults.clear()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
