"""PodBoard (what ``kubesched up`` shows and its idle rule) and the creation order, without a server."""

from __future__ import annotations

from kubesched.api.objects import Pod, decode
from kubesched.box.apply import creation_order
from kubesched.box.board import GATED_MESSAGE, PodBoard
from kubesched.sim.manifests import parse_manifest_text


def pod(name: str, *, node: str = "", cond: tuple[str, str] | None = None, gates: bool = False,
        nominated: str = "", deleting: bool = False, scheduler: str = "") -> Pod:
    md: dict = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if deleting:
        md["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    spec: dict = {"containers": [{"name": "c", "image": "i"}]}
    if node:
        spec["nodeName"] = node
    if gates:
        spec["schedulingGates"] = [{"name": "example.com/gate"}]
    if scheduler:
        spec["schedulerName"] = scheduler
    status: dict = {"phase": "Pending"}
    if cond:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": cond[0], "message": cond[1]}]
    if nominated:
        status["nominatedNodeName"] = nominated
    return decode(Pod, {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status})


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_transitions_are_reported_once_and_pods_created_bound_are_only_counted() -> None:
    events: list[tuple[str, str, str]] = []
    clock = Clock()
    b = PodBoard(["default-scheduler"], lambda e, r: events.append((e, r.key, r.node or r.message)), clock)
    b.on_add(pod("running", node="n1"), True)
    b.on_add(pod("web"), True)
    b.on_add(pod("big"), True)
    assert events == [] and not b.settled()  # nobody attempted yet
    msg = "0/2 nodes are available: 2 Insufficient cpu."
    b.on_update(pod("big"), pod("big", cond=("Unschedulable", msg)))
    b.on_update(pod("big"), pod("big", cond=("Unschedulable", msg)))  # same reason: no new line
    b.on_update(pod("web"), pod("web", node="n2"))
    b.on_update(pod("web", node="n2"), pod("web", node="n2"))
    assert events == [("pending", "ns/big", msg), ("bound", "ns/web", "n2")]
    assert b.preexisting() == 1 and [r.key for r in b.scheduled()] == ["ns/web"]
    assert [r.key for r in b.pending()] == ["ns/big"]
    assert b.settled()
    clock.t += 3
    assert b.quiet_for() == 3
    b.on_delete(pod("big", cond=("Unschedulable", msg)))
    assert b.quiet_for() == 0 and b.pending() == []


def test_settled_waits_for_preemption_and_terminating_pods_and_counts_gated_pods() -> None:
    b = PodBoard(["default-scheduler"], None, Clock())
    b.on_add(pod("gated", gates=True), True)
    assert b.settled() and b.pending()[0].message == GATED_MESSAGE
    b.on_add(pod("preemptor", cond=("Unschedulable", "0/1 nodes are available"), nominated="n1"), False)
    assert not b.settled()  # its victims are going away: it will be retried
    b.on_update(pod("preemptor"), pod("preemptor", cond=("Unschedulable", "0/1 nodes are available")))
    assert b.settled()
    b.on_add(pod("victim", node="n1", deleting=True), False)
    assert not b.settled()
    b.on_delete(pod("victim", node="n1", deleting=True))
    assert b.settled()


def test_pods_of_another_scheduler_do_not_hold_idle_back() -> None:
    b = PodBoard(["default-scheduler"], None, Clock())
    b.on_add(pod("theirs", scheduler="other-scheduler"), True)
    assert b.settled() and [r.key for r in b.others()] == ["ns/theirs"] and b.pending() == []


def test_creation_order_namespaces_priorityclasses_nodes_others_pods() -> None:
    docs = [
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}",
        "apiVersion: v1\nkind: Service\nmetadata: {name: s}",
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: pc}\nvalue: 1",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p0}",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}",
    ]
    raws = parse_manifest_text("\n---\n".join(docs), "m.yaml")
    assert [r.name for r in creation_order(raws)] == ["ns", "pc", "n1", "s", "p1", "p0"]
