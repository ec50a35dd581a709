"""The equivalence cache (:mod:`kubesched.framework.equivalence`) changes no decision.

Upstream evaluates every Filter plugin on every sampled node for every pod; kubesched reuses the
passes of node-local Filter plugins between pods of the same spec. The same random cluster —
replicas of a few pod templates (resources, node selectors and affinity, pod (anti-)affinity,
topology spreading, host ports, tolerations, volumes, priorities that preempt), with pods
deleted, nodes updated and added between attempts — is scheduled twice, with the cache turned on
(``Framework.enable_equivalence_cache``; it is off by default) and without it: every attempt's
pod, result, node, FailedScheduling message and whole decision record (what ``--explain`` and
``-o wide`` show) must be the same.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import ObjectMeta, Service, ServiceSpec
from kubesched.framework.equivalence import pod_class_key
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

ZONES = ["z1", "z2", "z3"]
IMAGES = ["nginx:1.27", "redis:7.2", "postgres:16"]
APPS = ["web", "db", "cache"]


def _node(i: int, cpu: str, mem: str, pods: str, zone: str | None, disk: str, taint: tuple[str, str] | None,
          unschedulable: bool, images: list[str]) -> Any:
    b = MakeNode().name(f"n{i}").capacity(cpu=cpu, memory=mem, pods=pods).label("disk", disk)
    if zone:
        b.label("topology.kubernetes.io/zone", zone)
    if taint:
        b.taint("dedicated", taint[0], taint[1])
    if unschedulable:
        b.unschedulable()
    for image in images:
        b.image(300 * 1024 * 1024, image)
    return b.obj()


@st.composite
def node_specs(draw: Any) -> tuple:
    return (draw(st.sampled_from(["1", "2", "4"])), draw(st.sampled_from(["2Gi", "4Gi", "8Gi"])),
            str(draw(st.integers(2, 8))), draw(st.sampled_from([None, *ZONES])), draw(st.sampled_from(["ssd", "hdd"])),
            draw(st.sampled_from([None, None, None, ("a", "NoSchedule"), ("b", "PreferNoSchedule")])),
            draw(st.integers(0, 7)) == 0, draw(st.lists(st.sampled_from(IMAGES), max_size=2, unique=True)))


@st.composite
def templates(draw: Any) -> dict[str, Any]:
    return {"app": draw(st.sampled_from(APPS)), "ns": draw(st.sampled_from(["default", "default", "other"])),
            "prio": draw(st.sampled_from([0, 5, 100])), "cpu": draw(st.sampled_from(["100m", "700m", "1500m"])),
            "mem": draw(st.sampled_from(["128Mi", "1Gi"])), "kind": draw(st.integers(0, 12)),
            "image": draw(st.sampled_from([None, *IMAGES])), "replicas": draw(st.integers(1, 8)),
            "target": draw(st.sampled_from(APPS))}


def _pod(t: dict[str, Any], name: str) -> Any:
    b = (MakePod().name(name).uid(name).namespace(t["ns"]).label("app", t["app"]).priority(t["prio"])
         .req(cpu=t["cpu"], memory=t["mem"]))
    kind, target = t["kind"], t["target"]
    if kind == 0:
        b.node_selector({"disk": "ssd"})
    elif kind == 1:
        b.node_affinity_in("topology.kubernetes.io/zone", ["z1", "z2"])
    elif kind == 2:
        b.pod_affinity("podAntiAffinity", {"topologyKey": "kubernetes.io/hostname",
                                           "labelSelector": {"matchLabels": {"app": target}}})
    elif kind == 3:
        b.pod_affinity("podAffinity", {"topologyKey": "topology.kubernetes.io/zone",
                                       "labelSelector": {"matchLabels": {"app": target}}}, weight=50)
    elif kind == 4:
        b.spread_constraint(1, "topology.kubernetes.io/zone", "DoNotSchedule", {"matchLabels": {"app": target}})
    elif kind == 5:
        b.toleration("dedicated", "Exists")
    elif kind == 6:
        b.host_port(80)
    elif kind == 7:
        b.preferred_node_affinity(10, {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]})
    elif kind == 8:
        b.pvc(f"claim-{target}")  # no such claim: VolumeBinding rejects (a non-node-local plugin runs)
    elif kind == 9:
        b.req(**{"nvidia.com/gpu": "1"})
    elif kind == 10:
        b.spread_constraint(1, "kubernetes.io/hostname", "ScheduleAnyway", {"matchLabels": {"app": target}})
    elif kind == 11:
        b.node_selector({"topology.kubernetes.io/zone": "z3"}).host_port(8080)
    if t["image"]:
        b.container(t["image"])
    return b.obj()


@st.composite
def clusters(draw: Any) -> dict[str, Any]:
    nodes = draw(st.lists(node_specs(), min_size=2, max_size=12))
    running = [(draw(st.integers(0, len(nodes) - 1)), draw(st.sampled_from(APPS)), draw(st.sampled_from([0, 10])),
                draw(st.booleans())) for _ in range(draw(st.integers(0, 8)))]
    tpls = draw(st.lists(templates(), min_size=1, max_size=4))
    # between attempts: (after attempt k, what) — delete a pod, update a node, add a node
    changes = draw(st.lists(st.tuples(st.integers(0, 30), st.sampled_from(["delete", "relabel", "add", "fill"])),
                            max_size=4))
    services = draw(st.lists(st.sampled_from(APPS), max_size=2, unique=True))
    return {"nodes": nodes, "running": running, "templates": tpls, "changes": changes, "services": services,
            "extra": draw(node_specs())}


def run(c: dict[str, Any], *, equivalence: bool, seed: int) -> tuple[list[tuple], int]:
    store = ClusterStore(keep_events=False)
    for app in c["services"]:
        store.add("Service", Service(metadata=ObjectMeta(name=app, namespace="default"),
                                     spec=ServiceSpec(selector={"app": app})))
    sched = Scheduler(client=store, lister=store, seed=seed, record=True)
    store.scheduler = sched
    if equivalence:
        for fw in sched.profiles.values():
            fw.enable_equivalence_cache()
    for i, spec in enumerate(c["nodes"]):
        store.add("Node", _node(i, *spec))
    for j, (n, app, prio, port) in enumerate(c["running"]):
        b = (MakePod().name(f"r{j}").uid(f"r{j}").node(f"n{n}").label("app", app).priority(prio)
             .req(cpu="500m", memory="256Mi"))
        if port:
            b.host_port(80)
        store.add("Pod", b.obj())
    for ti, t in enumerate(c["templates"]):
        for r in range(t["replicas"]):
            store.add("Pod", _pod(t, f"t{ti}-{r}"))
    changes: dict[int, list[str]] = {}
    for k, what in c["changes"]:
        changes.setdefault(k, []).append(what)
    out: list[tuple] = []
    for k in range(300):
        for ci, what in enumerate(changes.get(k, ())):
            if what == "delete":
                bound = sorted(p for p, r in sched.table.pod_row.items())
                if bound:
                    store.remove_pod(bound[k % len(bound)])
            elif what == "relabel":
                spec = list(c["nodes"][k % len(c["nodes"])])
                spec[4] = "ssd" if spec[4] == "hdd" else "hdd"
                spec[3] = "z3"
                store.add("Node", _node(k % len(c["nodes"]), *spec))
            elif what == "add":
                store.add("Node", _node(100 + 10 * k + ci, *c["extra"]))
            else:  # a new running pod on a node
                store.add("Pod", MakePod().name(f"f{k}-{ci}").uid(f"f{k}-{ci}").node(f"n{k % len(c['nodes'])}")
                          .label("app", "web").req(cpu="300m", memory="128Mi").obj())
        a = sched.schedule_one()
        if a is None:
            break
        rec = a.record.to_dict() if a.record is not None else None
        out.append((a.pod_key, a.result, a.node, a.message, rec))
    hits = sum(fw.equivalence.hits for fw in sched.profiles.values() if fw.equivalence is not None)
    return out, hits


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters(), st.integers(0, 3))
def test_equivalence_cache_decides_like_the_plain_path(cluster, seed) -> None:  # noqa: ANN001
    with_cache, _ = run(cluster, equivalence=True, seed=seed)
    plain, _ = run(cluster, equivalence=False, seed=seed)
    assert with_cache == plain


def test_replicas_reuse_filter_passes_and_decide_alike() -> None:
    """300 nodes (so nodes are sampled: 100 feasible per pod), 3 templates × 40 replicas."""
    nodes = [(("2", "4", "8")[i % 3], "8Gi", "20", ZONES[i % 3], ("ssd", "hdd")[i % 2], None, False, [])
             for i in range(300)]
    tpls = [{"app": "web", "ns": "default", "prio": 0, "cpu": "100m", "mem": "128Mi", "kind": 7, "image": IMAGES[0],
             "replicas": 40, "target": "web"},
            {"app": "db", "ns": "default", "prio": 5, "cpu": "700m", "mem": "1Gi", "kind": 0, "image": None,
             "replicas": 40, "target": "db"},
            {"app": "cache", "ns": "other", "prio": 0, "cpu": "100m", "mem": "128Mi", "kind": 6, "image": None,
             "replicas": 40, "target": "cache"}]
    c = {"nodes": nodes, "running": [], "templates": tpls, "changes": [(5, "delete"), (50, "relabel"), (70, "add")],
         "services": ["web"], "extra": nodes[0]}
    with_cache, hits = run(c, equivalence=True, seed=1)
    plain, _ = run(c, equivalence=False, seed=1)
    assert with_cache == plain
    assert [r[1] for r in plain].count("scheduled") == 120
    assert hits > 5000  # most sampled nodes came from the cache


def test_class_key_ignores_names_not_specs() -> None:
    a = MakePod().name("a").uid("a").label("app", "x").req(cpu="1").obj()
    b = MakePod().name("b").uid("b").label("app", "y").req(cpu="1").obj()
    c = MakePod().name("c").uid("c").label("app", "x").req(cpu="2").obj()
    assert pod_class_key(a) == pod_class_key(b) != pod_class_key(c)


def test_off_by_default() -> None:
    sched = Scheduler(client=ClusterStore(keep_events=False))
    assert all(fw.equivalence is None for fw in sched.profiles.values())
