"""NodePorts: cases ported from upstream node_ports_test.go, hints, and batch == per-node."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_table import NodeTable
from kubesched.framework.interface import Code
from kubesched.framework.events import QueueingHint
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import nodeports
from kubesched.plugins.nodeports import ERR_REASON, pod_host_ports
from kubesched.testing.wrappers import MakeNode, MakePod, build_table


def _pod(*ports, name="p", node=""):
    b = MakePod().name(name)
    for proto, ip, port in ports:
        b.host_port(port, proto, ip)
    if node:
        b.node(node)
    return b.obj()


def _setup(existing_ports, nodes=1):
    ns = [MakeNode().name(f"n{i}").obj() for i in range(nodes)]
    pods = [_pod(*existing_ports, name="e0", node="n0")] if existing_ports else []
    t = build_table(ns, pods)
    pl = nodeports.new(None, Handle(nodes=t))
    return t, pl


CASES = [
    ("nothing running", [], [], None),
    ("other port", [("UDP", "127.0.0.1", 8080)], [("UDP", "127.0.0.1", 9090)], True),
    ("same udp port", [("UDP", "127.0.0.1", 8080)], [("UDP", "127.0.0.1", 8080)], False),
    ("same tcp port", [("TCP", "127.0.0.1", 8080)], [("TCP", "127.0.0.1", 8080)], False),
    ("different host ip", [("TCP", "127.0.0.1", 8080)], [("TCP", "127.0.0.2", 8080)], True),
    ("different protocol", [("UDP", "127.0.0.1", 8080)], [("TCP", "127.0.0.1", 8080)], True),
    ("second udp port conflict", [("UDP", "127.0.0.1", 8000), ("UDP", "127.0.0.1", 8080)],
     [("UDP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8080)], False),
    ("first tcp port conflict", [("TCP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8080)],
     [("TCP", "127.0.0.1", 8001), ("UDP", "127.0.0.1", 8081)], False),
    ("first tcp port conflict due to 0.0.0.0 hostIP", [("TCP", "0.0.0.0", 8001)], [("TCP", "127.0.0.1", 8001)], False),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", [("TCP", "10.0.10.10", 8001), ("TCP", "0.0.0.0", 8001)],
     [("TCP", "127.0.0.1", 8001)], False),
    ("second tcp port conflict to 0.0.0.0 hostIP", [("TCP", "127.0.0.1", 8001)], [("TCP", "0.0.0.0", 8001)], False),
    ("second different protocol", [("UDP", "127.0.0.1", 8001)], [("TCP", "0.0.0.0", 8001)], True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", [("UDP", "127.0.0.1", 8001)],
     [("TCP", "0.0.0.0", 8001), ("UDP", "0.0.0.0", 8001)], False),
    ("empty hostIP means 0.0.0.0", [("TCP", "", 8001)], [("TCP", "127.0.0.1", 8001)], False),
]


@pytest.mark.parametrize("name,want_ports,used_ports,fits", CASES, ids=[c[0] for c in CASES])
def test_filter(name, want_ports, used_ports, fits):
    t, pl = _setup(used_ports)
    pod = _pod(*want_ports)
    state = CycleState()
    _, st_ = pl.pre_filter(state, pod, t)
    if fits is None:
        assert st_ is not None and st_.code == Code.SKIP
        return
    assert st_ is None
    status = pl.filter(state, pod, t.node_info(0))
    res = pl.filter_nodes(state, pod, t, t.order())
    if fits:
        assert status is None and res is None
    else:
        assert status.code == Code.UNSCHEDULABLE and status.reasons == (ERR_REASON,)
        assert res is not None and res.reasons == (ERR_REASON,) and res.codes == (Code.UNSCHEDULABLE,)
        assert res.failed.tolist() == [1]


def test_sidecar_init_container_ports_are_wanted():
    pod = MakePod().container(init=True, restart_policy="Always",
                              ports=[{"containerPort": 80, "hostPort": 80}]).container(
        init=True, ports=[{"containerPort": 81, "hostPort": 81}]).obj()
    assert pod_host_ports(pod) == (("0.0.0.0", "TCP", 80),)


def test_index_follows_pod_add_remove_and_node_remove():
    t, pl = _setup([], nodes=3)
    pod = _pod(("TCP", "", 80))
    e = _pod(("TCP", "", 80), name="e", node="n1")
    pi = PodInfo(e)
    t.add_pod(pi, t.row_of["n1"])
    state = CycleState()
    pl.pre_filter(state, pod, t)
    res = pl.filter_nodes(state, pod, t, t.order())
    assert res.failed.tolist() == [0, 1, 0]
    t.remove_pod(pi, t.row_of["n1"])
    assert pl.filter_nodes(state, pod, t, t.order()) is None
    t.add_pod(PodInfo(e), t.row_of["n1"])
    t.remove_node("n1")
    assert pl.filter_nodes(state, pod, t, t.order()) is None


def test_index_follows_a_row_edit_undone_over_a_shared_port():
    """The nominated-pods pass (upstream RunFilterPluginsWithNominatedPods) filters against a
    *copy* of the node with the nominated pods added; kubesched edits the row and undoes the edit
    (RowEdit). Undoing the addition of a pod whose host port a running pod also holds drops the
    port from the row's set (HostPortInfo is a set), and the edit puts the set back: the index
    must follow, or a later pod wanting that port passes Filter next to the running holder."""
    from kubesched.framework.node_table import RowEdit

    t, pl = _setup([("TCP", "", 80)])
    row = t.row_of["n0"]
    with RowEdit(t, row) as edit:
        edit.add(PodInfo(_pod(("TCP", "", 80), name="nominated")))
    assert t.used_ports[row] == {("TCP", 80): {"0.0.0.0"}}
    pod = _pod(("TCP", "", 80))
    state = CycleState()
    pl.pre_filter(state, pod, t)
    res = pl.filter_nodes(state, pod, t, t.order())
    assert res is not None and res.failed.tolist() == [1]
    st = pl.filter(state, pod, t.node_info(row))
    assert st is not None and st.code == Code.UNSCHEDULABLE


@pytest.mark.parametrize("deleted,target,want", [
    (_pod(("TCP", "", 80), name="d"), _pod(("TCP", "", 80)), QueueingHint.SKIP),  # unscheduled
    (_pod(name="d", node="n0"), _pod(("TCP", "", 80)), QueueingHint.SKIP),  # no ports
    (_pod(("TCP", "", 81), name="d", node="n0"), _pod(("TCP", "", 80)), QueueingHint.SKIP),
    (_pod(("TCP", "", 80), name="d", node="n0"), _pod(("TCP", "", 80)), QueueingHint.QUEUE),
    (_pod(("TCP", "127.0.0.1", 80), name="d", node="n0"), _pod(("TCP", "0.0.0.0", 80)), QueueingHint.QUEUE),
], ids=["unscheduled", "no-ports", "other-port", "same-port", "any-ip"])
def test_hint_pod_deleted(deleted, target, want):
    assert nodeports.NodePorts.is_schedulable_after_pod_deleted(target, deleted, None) == want


def test_events():
    ev = nodeports.new(None, None).events_to_register()
    assert [str(e.event.resource.value) for e in ev] == ["AssignedPod", "Node"]  # 1.37
    ev = nodeports.new(None, Handle(NodeTable(), features=FeatureGate(emulated_version=(1, 34)))).events_to_register()
    assert [str(e.event.resource.value) for e in ev] == ["Pod", "Node"]


_port = st.tuples(st.sampled_from(["TCP", "UDP"]), st.sampled_from(["", "0.0.0.0", "127.0.0.1", "10.0.0.1"]),
                  st.integers(8000, 8003))


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(existing=st.lists(st.lists(_port, max_size=3), min_size=1, max_size=8), want=st.lists(_port, min_size=1, max_size=3))
def test_batch_equals_per_node(existing, want):
    nodes = [MakeNode().name(f"n{i}").obj() for i in range(len(existing))]
    pods = [_pod(*ports, name=f"e{i}", node=f"n{i}") for i, ports in enumerate(existing)]
    t = build_table(nodes, pods)
    pl = nodeports.new(None, Handle(nodes=t))
    pod = _pod(*want)
    state = CycleState()
    pl.pre_filter(state, pod, t)
    rows = t.order()
    res = pl.filter_nodes(state, pod, t, rows)
    batch = res.failed.tolist() if res is not None else [0] * len(rows)
    ref = [0 if pl.filter(state, pod, t.node_info(r)) is None else 1 for r in rows.tolist()]
    assert batch == ref


# ───────────── quirk B: HostPortInfo is a set (staging framework/types.go L588-624, v0.34.12 = v0.37.2) ─────────────

def _b_raws(objs: list[dict]) -> list:
    from kubesched.sim.manifests import RawObject

    return [RawObject(o["kind"], o["apiVersion"], o, f"test:{i}", i) for i, o in enumerate(objs)]


def _b_pod(name: str, prio: int, cpu: str, node: str | None = None) -> dict:
    b = MakePod().name(name).uid(f"uid-{name}").namespace("default").priority(prio).req(cpu=cpu).host_port(8080)
    return (b.node(node) if node else b).raw()


@pytest.mark.parametrize("version", [(1, 34), (1, 37)])
def test_quirk_b1_preemption_dry_run_frees_a_port_a_surviving_pod_holds(version):
    """node-a (cpu 4) runs keeper (prio 100000, hostPort 8080, 100m) and lowprio (prio 10, hostPort
    8080, cpu 3); p (prio 100000, hostPort 8080, cpu 2) is pending. Removing lowprio in the dry run
    deletes (TCP, 8080) from the node's set although keeper holds it, so p fits there: upstream
    nominates node-a, evicts lowprio, and — the running cache's set having lost the port with
    lowprio's deletion — binds p next to keeper."""
    from kubesched.features import FeatureGate
    from kubesched.framework.clock import ManualClock
    from kubesched.scheduler import Scheduler
    from kubesched.sim.simulate import build_store

    objs = [MakeNode().name("node-a").capacity(cpu="4", memory="8Gi", pods="110").raw(),
            _b_pod("keeper", 100000, "100m", "node-a"), _b_pod("lowprio", 10, "3", "node-a"),
            _b_pod("p", 100000, "2")]
    store, bound, pending, nodes = build_store(_b_raws(objs))
    sched = Scheduler(None, client=store, lister=store, clock=ManualClock(), seed=0,
                      features=FeatureGate(emulated_version=version))
    store.scheduler = sched
    for n, raw in nodes:
        store.add("Node", n, raw)
    for p, raw in bound + pending:
        store.add("Pod", p, raw)
    nominated: list[str] = []
    orig = store.update_pod_condition

    def spy(pod, status, reason, message, nominated_node_name=None):  # noqa: ANN001, ANN202
        if nominated_node_name:
            nominated.append(nominated_node_name)
        return orig(pod, status, reason, message, nominated_node_name)

    store.update_pod_condition = spy  # type: ignore[method-assign]
    sched.run_until_idle(after_each=store.flush)
    assert nominated[:1] == ["node-a"]
    assert sorted(e[2] for e in store.events if e[1] == "Preempted") == ["default/lowprio"]
    assert "default/lowprio" not in store.pods and "default/keeper" in store.pods
    assert store.pods["default/p"].spec.node_name == "node-a"


def test_quirk_b2_deleting_one_of_two_holders_frees_the_port():
    """The running cache: a and b both hold hostPort 8080 on node-a; deleting a removes the tuple
    from the node's set, so c (hostPort 8080) binds to node-a although b still holds the port.
    0.0.0.0 and a concrete IP are separate entries: deleting the 0.0.0.0 holder does not free
    10.0.0.1:8080, which still conflicts with a 0.0.0.0 request."""
    from kubesched.framework.clock import ManualClock
    from kubesched.scheduler import Scheduler
    from kubesched.sim.simulate import build_store

    def run(extra_holder_ip: str | None) -> str:
        objs = [MakeNode().name("node-a").capacity(cpu="4", memory="8Gi", pods="110").raw()]
        objs += [_b_pod("a", 0, "100m", "node-a"), _b_pod("b", 0, "100m", "node-a")]
        if extra_holder_ip:
            objs.append(MakePod().name("d").uid("uid-d").namespace("default").req(cpu="100m")
                        .host_port(8080, host_ip=extra_holder_ip).node("node-a").raw())
        store, bound, _, nodes = build_store(_b_raws(objs))
        sched = Scheduler(None, client=store, lister=store, clock=ManualClock(), seed=0)
        store.scheduler = sched
        for n, raw in nodes:
            store.add("Node", n, raw)
        for p, raw in bound:
            store.add("Pod", p, raw)
        store.remove_pod("default/a")
        c = _b_pod("c", 0, "100m")
        store.add("Pod", build_store(_b_raws([c]))[2][0][0], c)
        sched.run_until_idle(after_each=store.flush)
        return store.pods["default/c"].spec.node_name

    assert run(None) == "node-a"
    assert run("10.0.0.1") == ""
