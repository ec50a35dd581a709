"""NodeVolumeLimits (CSILimits): PreFilter Skip, CSINode limits (upstream csi_test.go shapes)."""

from __future__ import annotations

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.plugins import nodevolumelimits as nvl
from kubesched.testing.wrappers import MakeNode, MakePod, build_table


class Lister:
    def __init__(self, *objs):
        self.objs = {(k, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for k, o in objs}

    def get(self, kind, namespace, name):
        return self.objs.get((kind, namespace or "", name))


def pvc(name, volume_name="", sc=None):
    spec = {"volumeName": volume_name}
    if sc:
        spec["storageClassName"] = sc
    return ("PersistentVolumeClaim", {"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def csi_pv(name, driver="ebs.csi.aws.com"):
    return ("PersistentVolume", {"metadata": {"name": name}, "spec": {"csi": {"driver": driver, "volumeHandle": name}}})


def csinode(node, limit, driver="ebs.csi.aws.com"):
    return ("CSINode", {"metadata": {"name": node},
                        "spec": {"drivers": [{"name": driver, "allocatable": {"count": limit}}]}})


OBJS = [pvc(f"c{i}", f"pv{i}") for i in range(4)] + [csi_pv(f"pv{i}") for i in range(4)] + [
    pvc("unbound", sc="ebs"), ("StorageClass", {"metadata": {"name": "ebs"}, "provisioner": "ebs.csi.aws.com"})]


def _setup(existing, limit):
    t = build_table([MakeNode().name("n1").obj()], existing)
    objs = list(OBJS) + ([csinode("n1", limit)] if limit is not None else [])
    return t, nvl.new(None, Handle(nodes=t, lister=Lister(*objs)))


def test_pre_filter_skip_without_pvcs():
    t, pl = _setup([], None)
    assert pl.pre_filter(CycleState(), MakePod().obj(), t)[1].code == Code.SKIP
    assert pl.pre_filter(CycleState(), MakePod().pvc("c0").obj(), t) == (None, None)


@pytest.mark.parametrize("existing_claims,new_claims,limit,want", [
    ([], ["c0"], None, None),                       # no CSINode: no limit
    ([["c0"], ["c1"]], ["c2"], 3, None),             # 2 + 1 <= 3
    ([["c0"], ["c1"]], ["c2", "c3"], 3, Code.UNSCHEDULABLE),  # 2 + 2 > 3
    ([["c0"], ["c1"]], ["c1", "c2"], 3, None),       # shared volume counts once
    ([["c0"]], ["unbound"], 1, Code.UNSCHEDULABLE),  # unbound PVC counted via its StorageClass provisioner
    ([], ["missing"], 1, Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
], ids=["no-csinode", "fits", "exceeds", "shared", "unbound-sc", "missing-pvc"])
def test_filter(existing_claims, new_claims, limit, want):
    existing = []
    for i, claims in enumerate(existing_claims):
        b = MakePod().name(f"e{i}").node("n1")
        for c in claims:
            b.pvc(c)
        existing.append(b.obj())
    t, pl = _setup(existing, limit)
    b = MakePod()
    for c in new_claims:
        b.pvc(c)
    st = pl.filter(CycleState(), b.obj(), t.get("n1"))
    if want is None:
        assert st is None
    else:
        assert st.code == want
        if want == Code.UNSCHEDULABLE:
            assert st.reasons == (nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)
        else:
            assert st.reasons == ('looking up PVC default/missing: persistentvolumeclaim "missing" not found',)


def test_in_tree_pv_is_an_error():
    t = build_table([MakeNode().name("n1").obj()])
    objs = [pvc("c", "pv"), ("PersistentVolume", {"metadata": {"name": "pv"}, "spec": {"awsElasticBlockStore": {}}})]
    pl = nvl.new(None, Handle(nodes=t, lister=Lister(*objs)))
    assert pl.filter(CycleState(), MakePod().pvc("c").obj(), t.get("n1")).code == Code.ERROR
