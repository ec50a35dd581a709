"""Pure parts of the reflector: store replacement diffs, watch-event handling, backoff."""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from kubesched.api.objects import Pod
from kubesched.kube.client import APIClient, APIError
from kubesched.kube.informer import RESOURCES
from kubesched.kube.reflector import Backoff, DeletedFinalStateUnknown, Reflector


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.synced = 0

    def on_add(self, obj, initial) -> None:
        self.events.append(("add", _name(obj), initial))

    def on_update(self, old, new) -> None:
        self.events.append(("update", _name(new), old.metadata.resource_version, new.metadata.resource_version))

    def on_delete(self, obj) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.events.append(("tombstone", obj.key, obj.obj.metadata.resource_version))
        else:
            self.events.append(("delete", _name(obj)))

    def on_synced(self) -> None:
        self.synced += 1


def _name(o) -> str:
    return o.metadata.name


def pod(name: str, rv: str, ns: str = "ns") -> Pod:
    return msgspec.convert({"metadata": {"name": name, "namespace": ns, "resourceVersion": rv}}, Pod)


def line(typ: str, obj: dict) -> bytes:
    return json.dumps({"type": typ, "object": obj}).encode()


def pod_json(name: str, rv: str) -> dict:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv,
                                                            "managedFields": [{"manager": "x"}]}}


@pytest.fixture
def refl() -> tuple[Reflector, Sink]:
    sink = Sink()
    return Reflector(APIClient.for_server("http://127.0.0.1:1"), RESOURCES["Pod"], sink), sink


def test_replace_delivers_difference_with_tombstones_first(refl) -> None:
    r, sink = refl
    r.replace([pod("a", "1"), pod("b", "2"), pod("c", "3")], "3")
    assert sink.events == [("add", "a", True), ("add", "b", True), ("add", "c", True)]
    assert sink.synced == 1 and r.has_synced and r.last_sync_rv == "3"
    sink.events.clear()
    # relist: b deleted during the gap, c unchanged (same RV: not delivered), a updated, d new
    r.replace([pod("a", "7"), pod("c", "3"), pod("d", "8")], "9")
    assert sink.events == [("tombstone", "ns/b", "2"), ("update", "a", "1", "7"), ("add", "d", False)]
    assert sorted(r.store.items) == ["ns/a", "ns/c", "ns/d"]
    assert sink.synced == 1 and r.last_sync_rv == "9"


def test_watch_events_in_order_and_rv_tracking(refl) -> None:
    r, sink = refl
    r.replace([], "5")
    r._handle_line(line("ADDED", pod_json("a", "6")))
    r._handle_line(line("MODIFIED", pod_json("a", "6")))  # same RV: dropped
    r._handle_line(line("MODIFIED", pod_json("a", "7")))
    r._handle_line(line("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "12"}}))
    assert r.last_sync_rv == "12"
    r._handle_line(line("DELETED", pod_json("a", "13")))
    r._handle_line(line("ADDED", pod_json("a", "14")))  # recreated under the same name
    assert sink.events == [("add", "a", False), ("update", "a", "6", "7"), ("delete", "a"), ("add", "a", False)]
    assert r.last_sync_rv == "14"
    assert r.store.get("ns/a").metadata.resource_version == "14"


def test_watch_error_event_raises_expired(refl) -> None:
    r, _ = refl
    with pytest.raises(APIError) as ei:
        r._handle_line(line("ERROR", {"kind": "Status", "status": "Failure", "reason": "Expired", "code": 410,
                                      "message": "too old resource version: 1 (50)"}))
    assert ei.value.is_expired


def test_dict_kinds_drop_managed_fields() -> None:
    sink = Sink()
    r = Reflector(APIClient.for_server("http://127.0.0.1:1"), RESOURCES["PersistentVolumeClaim"], sink)
    r.replace([], "1")
    seen = []
    sink.on_add = lambda o, i: seen.append(o)  # type: ignore[method-assign]
    r._handle_line(line("ADDED", {"metadata": {"name": "c", "namespace": "ns", "resourceVersion": "2",
                                               "managedFields": [{}]}, "spec": {"volumeName": "pv"}}))
    assert seen[0]["metadata"] == {"name": "c", "namespace": "ns", "resourceVersion": "2"}
    assert r.store.get("ns/c")["spec"]["volumeName"] == "pv"


def test_backoff_doubles_with_jitter_caps_and_resets() -> None:
    now = [0.0]
    b = Backoff(clock=lambda: now[0], rng=random.Random(1))
    delays = []
    for _ in range(8):
        delays.append(b.next())
        now[0] += 1
    steps = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30]
    for d, s in zip(delays, steps, strict=True):
        assert s <= d < 2 * s
    now[0] += 121  # healthy for more than two minutes
    assert 0.8 <= b.next() < 1.6
