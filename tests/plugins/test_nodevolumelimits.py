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


def _limits_filter(objs, pod, node=None, existing=()):
    node = node or MakeNode().name("n1").obj()
    t = build_table([node], existing)
    pl = nvl.new(None, Handle(nodes=t, lister=Lister(*objs)))
    return pl.filter(CycleState(), pod, t.get("n1"))


def aws_pv(name):
    return ("PersistentVolume", {"metadata": {"name": name}, "spec": {"awsElasticBlockStore": {"volumeID": name}}})


MIGRATED = ("CSINode", {"metadata": {"name": "n1", "annotations": {
    "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}},
    "spec": {"drivers": [{"name": "ebs.csi.aws.com", "allocatable": {"count": 1}}]}})


def test_in_tree_pvs_are_counted_under_their_csi_driver():
    # upstream csi_test.go "should count in-tree volumes if migration is enabled": the EBS PVs count
    # against ebs.csi.aws.com's limit once translated
    objs = [pvc("c0", "v0"), pvc("c1", "v1"), aws_pv("v0"), aws_pv("v1"), MIGRATED]
    existing = [MakePod().name("old").node("n1").pvc("c0").obj()]
    st = _limits_filter(objs, MakePod().pvc("c1").obj(), existing=existing)
    assert st.code == Code.UNSCHEDULABLE and st.reasons == (nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)
    # the same in-tree volume shared with the existing pod counts once
    assert _limits_filter(objs, MakePod().pvc("c0").obj(), existing=existing) is None


def test_in_tree_without_csinode_is_not_counted():
    objs = [pvc("c0", "v0"), pvc("c1", "v1"), aws_pv("v0"), aws_pv("v1")]
    node = MakeNode().name("n1").capacity(**{"attachable-volumes-csi-ebs.csi.aws.com": "1"}).obj()
    existing = [MakePod().name("old").node("n1").pvc("c0").obj()]
    assert _limits_filter(objs, MakePod().pvc("c1").obj(), node=node, existing=existing) is None


def test_inline_in_tree_volume_and_csinode_limit_only():
    """Limits come from the CSINode only (upstream getVolumeLimits, csi.go L571-585 in v1.34.12 and
    v1.37.2; csi_test.go's getNodeWithPodAndVolumeLimits has no node-allocatable source): a node's
    ``attachable-volumes-csi-*`` allocatable is no limit."""
    from kubesched.api.objects import Pod, decode

    def inline(name, vol_id):
        return decode(Pod, {"metadata": {"name": name, "namespace": "default"},
                            "spec": {"nodeName": "n1" if name == "old" else "", "containers": [{"name": "c"}],
                                     "volumes": [{"name": "v", "awsElasticBlockStore": {"volumeID": vol_id}}]}})

    csinode_no_count = ("CSINode", {"metadata": {"name": "n1"}, "spec": {"drivers": []}})
    node = MakeNode().name("n1").capacity(**{"attachable-volumes-csi-ebs.csi.aws.com": "1"}).obj()
    assert _limits_filter([csinode_no_count], inline("new", "vol-2"), node=node,
                          existing=[inline("old", "vol-1")]) is None  # allocatable is no limit
    csinode_limit_1 = ("CSINode", {"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": "ebs.csi.aws.com", "allocatable": {"count": 1}}]}})
    st = _limits_filter([csinode_limit_1], inline("new", "vol-2"), node=node, existing=[inline("old", "vol-1")])
    assert st is not None and st.reasons == (nvl.ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,)
    assert _limits_filter([csinode_limit_1], inline("new", "aws://us-east-1a/vol-1"), node=node,
                          existing=[inline("old", "vol-1")]) is None  # same EBS volume id


def test_in_tree_provisioner_maps_to_csi_driver():
    objs = [pvc("c0", "v0"), aws_pv("v0"), pvc("u", sc="gp2"), MIGRATED,
            ("StorageClass", {"metadata": {"name": "gp2"}, "provisioner": "kubernetes.io/aws-ebs"})]
    existing = [MakePod().name("old").node("n1").pvc("c0").obj()]
    st = _limits_filter(objs, MakePod().pvc("u").obj(), existing=existing)
    assert st is not None and st.code == Code.UNSCHEDULABLE


def test_csi_attach_limit_key_hashes_long_driver_names():
    assert nvl.csi_attach_limit_key("ebs.csi.aws.com") == "attachable-volumes-csi-ebs.csi.aws.com"
    long = "a" * 50
    key = nvl.csi_attach_limit_key(long)
    assert key.startswith("attachable-volumes-csi-" + "a" * 23) and len(key) == len("attachable-volumes-csi-") + 39


def test_batch_filter_matches_per_node_filter_on_random_clusters():
    """filter_nodes (resolution once, limit cache, upper-bound shortcut) == filter per node."""
    import random

    import numpy as np

    rng = random.Random(7)
    seen = set()
    for trial in range(30):
        n_nodes = 6
        objs, pods_on = [], []
        for i in range(12):
            kind = rng.choice(["csi", "aws", "unbound"])
            if kind == "csi":
                objs += [pvc(f"c{i}", f"v{i}"), csi_pv(f"v{i}")]
            elif kind == "aws":
                objs += [pvc(f"c{i}", f"v{i}"), aws_pv(f"v{i}")]
            else:
                objs.append(pvc(f"c{i}", sc="ebs"))
        objs.append(("StorageClass", {"metadata": {"name": "ebs"}, "provisioner": "ebs.csi.aws.com"}))
        nodes = []
        for k in range(n_nodes):
            name = f"n{k}"
            b = MakeNode().name(name)
            if rng.random() < 0.3:
                b = b.capacity(**{"attachable-volumes-csi-ebs.csi.aws.com": str(rng.randint(1, 3))})
            nodes.append(b.obj())
            if rng.random() < 0.7:
                ann = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"} \
                    if rng.random() < 0.5 else {}
                objs.append(("CSINode", {"metadata": {"name": name, "annotations": ann}, "spec": {"drivers": [
                    {"name": "ebs.csi.aws.com", "allocatable": {"count": rng.randint(1, 3)}}]}}))
            for j in range(rng.randint(0, 3)):
                p = MakePod().name(f"p{k}-{j}").node(name)
                for c in rng.sample(range(12), rng.randint(0, 2)):
                    p = p.pvc(f"c{c}")
                pods_on.append(p.obj())
        t = build_table(nodes, pods_on)
        pl = nvl.new(None, Handle(nodes=t, lister=Lister(*objs)))
        new = MakePod().name("new")
        for c in rng.sample(range(12), rng.randint(1, 3)):
            new = new.pvc(f"c{c}")
        if trial % 7 == 0:
            new = new.pvc("missing")
        pod = new.obj()
        rows = np.array([t.row_of[f"n{k}"] for k in range(n_nodes)], dtype=np.int64)
        batch = pl.filter_nodes(CycleState(), pod, t, rows)
        for i in range(len(rows)):
            st = pl.filter(CycleState(), pod, t.get(f"n{i}"))
            want = None if st is None else (st.reasons, st.code)
            got = None if batch is None or batch.failed[i] == 0 else batch.entry(int(batch.failed[i]))
            assert got == want, (trial, i)
            seen.add(None if want is None else want[1])
    assert seen == {None, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE}  # every outcome exercised


# ─── VolumeLimitScaling (upstream v1.37.2 csi_test.go TestVolumeLimitScalingGate) ───
def _csi_driver(name: str, prevent: bool | None):
    spec = {} if prevent is None else {"preventPodSchedulingIfMissing": prevent}
    return ("CSIDriver", {"metadata": {"name": name}, "spec": spec})


def _scaling_setup(gate: bool, csinode_obj, driver_obj):
    from kubesched.features import FeatureGate

    fg = FeatureGate() if gate else FeatureGate(emulated_version=(1, 36))  # beta on 1.37, alpha off 1.36
    assert fg.enabled("VolumeLimitScaling") == gate
    t = build_table([MakeNode().name("n1").obj()])
    objs = list(OBJS) + [o for o in (csinode_obj, driver_obj) if o is not None]
    return t, nvl.new(None, Handle(nodes=t, lister=Lister(*objs), features=fg))


NOT_INSTALLED = (Code.UNSCHEDULABLE, ("ebs.csi.aws.com CSI driver is not installed on the node",))
EMPTY_CSINODE = ("CSINode", {"metadata": {"name": "n1"}, "spec": {"drivers": []}})


@pytest.mark.parametrize("gate,csinode_obj,driver_obj,want", [
    (True, EMPTY_CSINODE, _csi_driver("ebs.csi.aws.com", None), None),
    (True, EMPTY_CSINODE, _csi_driver("ebs.csi.aws.com", True), NOT_INSTALLED),
    (False, EMPTY_CSINODE, _csi_driver("ebs.csi.aws.com", True), None),
    (True, csinode("n1", 2), _csi_driver("ebs.csi.aws.com", True), None),
    (True, EMPTY_CSINODE, None, None),
    (True, None, _csi_driver("ebs.csi.aws.com", True), NOT_INSTALLED),  # no CSINode at all
    (True, EMPTY_CSINODE, _csi_driver("ebs.csi.aws.com", False), None),
    (True, csinode("n1", 2, driver="other.csi"), _csi_driver("ebs.csi.aws.com", True), NOT_INSTALLED),
], ids=["gate enabled - allow scheduling when CSIDriver exists but PreventPodSchedulingIfMissing is not set",
        "gate enabled - fail when driver not installed and PreventPodSchedulingIfMissing is true",
        "gate disabled - skip driver presence check (regardless of CSIDriver presence)",
        "gate enabled - driver installed within limit",
        "gate enabled - allow scheduling when CSIDriver object missing",
        "gate enabled - no CSINode object",
        "gate enabled - PreventPodSchedulingIfMissing false",
        "gate enabled - CSINode lists only another driver"])
def test_volume_limit_scaling(gate, csinode_obj, driver_obj, want):
    t, pl = _scaling_setup(gate, csinode_obj, driver_obj)
    pod = MakePod().pvc("c0").obj()
    state = CycleState()
    assert pl.pre_filter(state, pod, t) == (None, None)
    st = pl.filter(state, pod, t.get("n1"))
    assert (None if st is None else (st.code, st.reasons)) == want
    res = pl.filter_nodes(state, pod, t, t.order())
    got = None if res is None or not res.failed[0] else res.status_for(int(res.failed[0]))
    assert (None if got is None else (got.code, got.reasons)) == want
