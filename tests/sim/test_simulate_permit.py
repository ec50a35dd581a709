"""``simulate`` with a Permit plugin that makes pods wait: they bind once allowed or fail at
their timeout in virtual time (``rejected due to timeout after waiting … at plugin …``)."""

from __future__ import annotations

from kubesched.config import decode_config
from kubesched.framework.interface import Code, Status
from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.manifests import RawObject
from kubesched.sim.simulate import simulate
from kubesched.testing.wrappers import MakeNode, MakePod


class Pair:
    """Permit: pods labelled ``pair`` wait (10 s) until a second one arrives, then both go."""

    name = "Pair"

    def __init__(self, handle) -> None:
        self.handle = handle

    def permit(self, state, pod, node_name):
        if "pair" not in pod.metadata.labels:
            return None, 0.0
        waiting = []
        self.handle.iterate_waiting_pods(waiting.append)
        mates = [wp for wp in waiting if "pair" in wp.get_pod().metadata.labels]
        if mates:
            for wp in mates:
                wp.allow(self.name)
            return None, 0.0
        return Status(Code.WAIT), 10.0


def _raws(objs: list[dict]) -> list[RawObject]:
    return [RawObject(o["kind"], o["apiVersion"], o, f"test:{i}", i) for i, o in enumerate(objs)]


def _run(objs: list[dict]):
    reg = dict(in_tree_registry())
    reg["Pair"] = lambda a, h: Pair(h)
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler",
                                       "plugins": {"permit": {"enabled": [{"name": "Pair"}]}}}]})
    return simulate(_raws(objs), cfg, registry=reg)


def test_pair_binds_together_and_a_lone_pod_times_out() -> None:
    node = MakeNode().name("n1").capacity(cpu="4", memory="8Gi", pods="10").raw()
    a = MakePod().name("a").uid("a").label("pair", "x").creation_timestamp("2024-01-01T00:00:01Z").raw()
    b = MakePod().name("b").uid("b").label("pair", "x").creation_timestamp("2024-01-01T00:00:02Z").raw()
    res = _run([node, a, b])
    assert {o.key: o.node for o in res.outcomes} == {"default/a": "n1", "default/b": "n1"}

    lone = MakePod().name("lone").uid("lone").label("pair", "x").raw()
    res = _run([node, lone])
    (o,) = res.outcomes
    assert o.node is None
    assert o.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Pair."
    assert res.scheduler.cache.assumed_count() == 0
