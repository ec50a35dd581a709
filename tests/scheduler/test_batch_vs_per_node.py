"""End to end, the vectorised engine decides exactly as the per-node reference path.

The same random cluster is scheduled twice with the default profile: once with the built-in
plugins as they are (batch ``filter_nodes``/``score_nodes`` over the NodeTable), once with every
plugin wrapped so that only its per-node ``filter``/``score`` (upstream's shape) is visible. Every
attempt — pod, result, node and FailedScheduling message — must be the same, preemption included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import ObjectMeta, Service, ServiceSpec
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

HIDDEN = frozenset({"filter_nodes", "score_nodes"})


class PerNodeOnly:
    """Delegates everything to the wrapped plugin except its batch methods."""

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "_inner", inner)

    def __getattr__(self, item: str) -> Any:
        if item in HIDDEN:
            raise AttributeError(item)
        return getattr(self._inner, item)


def per_node_registry() -> dict[str, Any]:
    reg = {}
    for name, factory in in_tree_registry().items():
        reg[name] = (lambda f: (lambda args, handle: PerNodeOnly(f(args, handle))))(factory)
    return reg


ZONES = ["z1", "z2", "z3"]
IMAGES = ["nginx:1.27", "redis:7.2", "postgres:16"]
APPS = ["web", "db", "cache"]


@st.composite
def clusters(draw: Any) -> tuple[list, list, list, list]:
    n_nodes = draw(st.integers(2, 9))
    nodes = []
    for i in range(n_nodes):
        b = MakeNode().name(f"n{i}").capacity(cpu=draw(st.sampled_from(["1", "2", "4"])),
                                              memory=draw(st.sampled_from(["2Gi", "4Gi", "8Gi"])),
                                              pods=str(draw(st.integers(2, 8))))
        if draw(st.booleans()):
            b.label("topology.kubernetes.io/zone", draw(st.sampled_from(ZONES)))
        if draw(st.integers(0, 4)) == 0:
            b.capacity(**{"nvidia.com/gpu": "2"})
        if draw(st.integers(0, 4)) == 0:
            b.taint("dedicated", draw(st.sampled_from(["a", "b"])), draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"])))
        if draw(st.integers(0, 7)) == 0:
            b.unschedulable()
        b.label("disk", draw(st.sampled_from(["ssd", "hdd"])))
        for image in draw(st.lists(st.sampled_from(IMAGES), max_size=2, unique=True)):
            b.image(draw(st.sampled_from([50, 300, 900])) * 1024 * 1024, image)
        nodes.append(b.obj())
    running = []
    for j in range(draw(st.integers(0, 8))):
        b = (MakePod().name(f"r{j}").uid(f"r{j}").node(f"n{draw(st.integers(0, n_nodes - 1))}")
             .label("app", draw(st.sampled_from(APPS))).priority(draw(st.sampled_from([0, 10])))
             .req(cpu=draw(st.sampled_from(["100m", "500m"])), memory="256Mi"))
        if draw(st.integers(0, 3)) == 0:
            b.host_port(80)
        running.append(b.obj())
    pending = []
    for k in range(draw(st.integers(1, 10))):
        b = (MakePod().name(f"p{k}").uid(f"p{k}").namespace(draw(st.sampled_from(["default", "default", "other"])))
             .label("app", draw(st.sampled_from(APPS)))
             .priority(draw(st.sampled_from([0, 5, 100])))
             .req(cpu=draw(st.sampled_from(["100m", "700m", "1500m"])),
                  memory=draw(st.sampled_from(["128Mi", "1Gi"])),
                  **({"nvidia.com/gpu": "1"} if draw(st.integers(0, 4)) == 0 else {})))
        kind = draw(st.integers(0, 9))
        if kind == 0:
            b.node_selector({"disk": "ssd"})
        elif kind == 1:
            b.node_affinity_in("topology.kubernetes.io/zone", draw(st.lists(st.sampled_from(ZONES), min_size=1, max_size=2)))
        elif kind == 2:
            b.pod_affinity("podAntiAffinity", {"topologyKey": "kubernetes.io/hostname",
                                               "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}}})
        elif kind == 3:
            b.pod_affinity("podAffinity", {"topologyKey": "topology.kubernetes.io/zone",
                                           "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}}},
                           weight=draw(st.sampled_from([None, 50])))
        elif kind == 4:
            b.spread_constraint(1, draw(st.sampled_from(["topology.kubernetes.io/zone", "kubernetes.io/hostname"])),
                                draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                                {"matchLabels": {"app": "web"}})
        elif kind == 5:
            b.toleration("dedicated", "Exists")
        elif kind == 6:
            b.host_port(80)
        elif kind == 7:
            b.preferred_node_affinity(10, {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]})
        elif kind == 8:
            b.pod_affinity("podAntiAffinity", {"topologyKey": "topology.kubernetes.io/zone",
                                               "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(APPS))}}},
                           weight=30)
        elif kind == 9:
            b.init_req(sidecar=draw(st.booleans()), cpu="200m")
        if draw(st.booleans()):
            b.container(draw(st.sampled_from(IMAGES)))
        pending.append(b.obj())
    services = [Service(metadata=ObjectMeta(name=app, namespace="default"), spec=ServiceSpec(selector={"app": app}))
                for app in draw(st.lists(st.sampled_from(APPS), max_size=2, unique=True))]
    return nodes, running, pending, services


def run(cluster: tuple[list, list, list, list], registry: dict[str, Any] | None, seed: int) -> list[tuple]:
    nodes, running, pending, services = cluster
    store = ClusterStore(keep_events=False)
    for svc in services:  # Services select pods for PodTopologySpread's system-default constraints
        store.add("Service", svc)
    sched = Scheduler(client=store, lister=store, seed=seed, registry=registry)
    store.scheduler = sched
    for n in nodes:
        store.add("Node", n)
    for p in running:
        store.add("Pod", p)
    for p in pending:
        store.add("Pod", p)
    out = []
    for _ in range(200):
        a = sched.schedule_one()
        if a is None:
            break
        out.append((a.pod_key, a.result, a.node, a.message))
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(clusters(), st.integers(0, 3))
def test_vectorised_engine_decides_like_the_per_node_reference(cluster, seed) -> None:  # noqa: ANN001
    assert run(cluster, None, seed) == run(cluster, per_node_registry(), seed)
