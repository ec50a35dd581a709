"""VolumeBinding: PreFilter/Filter reasons and codes (from upstream volume_binding_test.go),
PreScore Skip, Reserve/PreBind for the supported (bound) cases, hints."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.events import QueueingHint
from kubesched.plugins import volumebinding as vb
from kubesched.testing.wrappers import MakeNode, MakePod, build_table


class Lister:
    def __init__(self, *objs):
        self.objs = {}
        for kind, obj in objs:
            meta = obj["metadata"]
            self.objs[(kind, meta.get("namespace", ""), meta["name"])] = obj

    def get(self, kind, namespace, name):
        return self.objs.get((kind, namespace or "", name))

    def list(self, kind, namespace=None):
        return [o for (k, _, _), o in self.objs.items() if k == kind]


def pvc(name, volume_name="", sc=None, bound=True, phase="", deleting=False, access=("ReadWriteOnce",)):
    meta = {"name": name, "namespace": "default", "annotations": {}}
    if volume_name and bound:
        meta["annotations"][vb.ANN_BIND_COMPLETED] = "yes"
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec = {"accessModes": list(access)}
    if volume_name:
        spec["volumeName"] = volume_name
    if sc is not None:
        spec["storageClassName"] = sc
    return ("PersistentVolumeClaim", {"metadata": meta, "spec": spec, "status": {"phase": phase} if phase else {}})


def pv(name, affinity=None, labels=None, **spec):
    s = dict(spec)
    if affinity is not None:
        s["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    return ("PersistentVolume", {"metadata": {"name": name, "labels": labels or {}}, "spec": s})


def sc(name, mode="Immediate", provisioner="ebs.csi.aws.com"):
    obj = {"metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        obj["volumeBindingMode"] = mode
    return ("StorageClass", obj)


def zone_term(*zones):
    return [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zones)}]}]


def host_term(*hosts):
    return [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": list(hosts)}]}]


NODES = [MakeNode().name("n1").label("topology.kubernetes.io/zone", "a").obj(),
         MakeNode().name("n2").label("topology.kubernetes.io/zone", "b").obj()]


V134 = FeatureGate(emulated_version=(1, 34))
V137 = FeatureGate(emulated_version=(1, 37))


def _run(objs, pod, features=V137):
    t = build_table(NODES)
    pl = vb.new(None, Handle(nodes=t, lister=Lister(*objs), features=features))
    state = CycleState()
    res, st = pl.pre_filter(state, pod, t)
    return t, pl, state, res, st


UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
PREFILTER = [
    ("pvc not found", [], MakePod().pvc("c1").obj(), UU, 'persistentvolumeclaim "c1" not found'),
    ("pvc lost", [pvc("c1", "pv1", phase="Lost")], MakePod().pvc("c1").obj(), UU,
     'persistentvolumeclaim "c1" bound to non-existent persistentvolume "pv1"'),
    ("pvc deleted", [pvc("c1", "pv1", deleting=True)], MakePod().pvc("c1").obj(), UU,
     'persistentvolumeclaim "c1" is being deleted'),
    ("unbound, no class → immediate", [pvc("c1")], MakePod().pvc("c1").obj(), UU, vb.ERR_UNBOUND_IMMEDIATE),
    ("unbound, immediate class", [pvc("c1", sc="fast"), sc("fast")], MakePod().pvc("c1").obj(), UU,
     vb.ERR_UNBOUND_IMMEDIATE),
    ("unbound, class not found → immediate", [pvc("c1", sc="gone")], MakePod().pvc("c1").obj(), UU,
     vb.ERR_UNBOUND_IMMEDIATE),
    ("prebound, not bind-completed", [pvc("c1", "pv1", bound=False, sc="wffc"), sc("wffc", "WaitForFirstConsumer")],
     MakePod().pvc("c1").obj(), UU, vb.ERR_UNBOUND_IMMEDIATE),
    ("class without binding mode", [pvc("c1", sc="x"), sc("x", None)], MakePod().pvc("c1").obj(), Code.ERROR,
     'VolumeBindingMode not set for StorageClass "x"'),
]


@pytest.mark.parametrize("name,objs,pod,code,msg", PREFILTER, ids=[c[0] for c in PREFILTER])
def test_pre_filter_rejections(name, objs, pod, code, msg):
    _, _, _, res, st = _run(objs, pod)
    assert res is None and st.code == code
    if msg is not None:
        assert st.reasons == (msg,)


def test_no_pvc_skips_and_reserve_prebind_succeed():
    t, pl, state, res, st = _run([], MakePod().obj(), V134)
    assert st.code == Code.SKIP and res is None
    assert pl.reserve(state, MakePod().obj(), "n1") is None
    assert pl.pre_bind(state, MakePod().obj(), "n1") is None
    assert pl.pre_score(state, MakePod().obj(), t, t.order()).code == Code.SKIP


def test_no_pvc_is_scored_zero_with_storage_capacity_scoring():
    """v1.37.2 volume_binding.go L452-465: with the gate on PreScore does not Skip (the state
    PreFilter wrote has no static bindings, but the gate alone keeps Score on); Score finds no
    PodVolumes for the node and returns 0."""
    t, pl, state, res, st = _run([], MakePod().obj())
    assert st.code == Code.SKIP and res is None
    assert pl.pre_score(state, MakePod().obj(), t, t.order()) is None
    assert [pl.score(state, MakePod().obj(), t.get(n)) for n in ("n1", "n2")] == [(0, None), (0, None)]
    assert pl.score_nodes(state, MakePod().obj(), t, t.order()).tolist() == [0, 0]


@pytest.mark.parametrize("objs,want", [
    ([pvc("c1", "pv1"), pv("pv1")], [None, None]),
    ([pvc("c1", "pv1"), pv("pv1", zone_term("a"))], [None, (vb.ERR_REASON_NODE_CONFLICT,)]),
    ([pvc("c1", "pv1"), pv("pv1", zone_term("a", "b"))], [None, None]),
    ([pvc("c1", "pv1")], [(vb.ERR_REASON_PV_NOT_EXIST,), (vb.ERR_REASON_PV_NOT_EXIST,)]),
    ([pvc("c1", "pv1"), pv("pv1", [{"matchExpressions": [{"key": "k", "operator": "Bad", "values": []}]}])],
     [(vb.ERR_REASON_NODE_CONFLICT,), (vb.ERR_REASON_NODE_CONFLICT,)]),
], ids=["no-affinity", "zone-a", "zone-a-or-b", "pv-missing", "invalid-selector"])
def test_filter_bound_claims(objs, want):
    pod = MakePod().pvc("c1").obj()
    t, pl, state, res, st = _run(objs, pod)
    assert st is None and res is None
    got = []
    for n in ("n1", "n2"):
        s = pl.filter(state, pod, t.get(n))
        got.append(None if s is None else s.reasons)
        if s is not None:
            assert s.code == UU
    assert got == want
    assert pl.reserve(state, pod, "n1") is None and pl.pre_bind(state, pod, "n1") is None


def test_local_pvs_do_not_narrow_nodes_in_prefilter_but_filter_enforces_them():
    # upstream #127584 removed the PreFilterResult built from local PVs' hostname values (issue
    # #125336: a hostname label is not a node name); the PV node affinity is checked in Filter
    pod = MakePod().pvc("c1").pvc("c2").obj()
    objs = [pvc("c1", "pv1"), pv("pv1", host_term("n1", "n2")), pvc("c2", "pv2"), pv("pv2", host_term("n2"))]
    t, pl, state, res, st = _run(objs, pod)
    assert st is None and res is None
    assert pl.filter(state, pod, t.get("n2")) is None
    assert pl.filter(state, pod, t.get("n1")).reasons == (vb.ERR_REASON_NODE_CONFLICT,)


def test_pvc_hint():
    pod = MakePod().pvc("c1").obj()
    assert vb.is_schedulable_after_pvc_change(pod, None, pvc("c1")[1]) == QueueingHint.QUEUE
    assert vb.is_schedulable_after_pvc_change(pod, None, pvc("c2")[1]) == QueueingHint.SKIP


# ───────────── unbound claims (upstream volume_binding_test.go / binder_test.go shapes) ─────────────

import asyncio  # noqa: E402

from kubesched.errors import BindError  # noqa: E402
from kubesched.framework.clock import ManualClock  # noqa: E402


def wffc_pvc(name, cls="wffc", size="1Gi", access=("ReadWriteOnce",), uid=None, **spec):
    meta = {"name": name, "namespace": "default", "uid": uid or f"uid-{name}", "resourceVersion": "1"}
    s = {"storageClassName": cls, "accessModes": list(access), "resources": {"requests": {"storage": size}}, **spec}
    return ("PersistentVolumeClaim", {"metadata": meta, "spec": s})


def avail_pv(name, size="1Gi", cls="wffc", affinity=None, access=("ReadWriteOnce",), labels=None, phase="Available",
             **spec):
    s = {"storageClassName": cls, "capacity": {"storage": size}, "accessModes": list(access), **spec}
    if affinity is not None:
        s["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    return ("PersistentVolume", {"metadata": {"name": name, "labels": labels or {}, "resourceVersion": "1"},
                                 "spec": s, "status": {"phase": phase}})


def wffc(name="wffc", provisioner="kubernetes.io/no-provisioner", topologies=None):
    obj = {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer"}
    if topologies is not None:
        obj["allowedTopologies"] = topologies
    return ("StorageClass", obj)


def filter_all(objs, pod):
    t, pl, state, res, st = _run(objs, pod)
    assert st is None, st
    return t, pl, state, {n: pl.filter(state, pod, t.get(n)) for n in ("n1", "n2")}


BC, NS = vb.ERR_REASON_BIND_CONFLICT, vb.ERR_REASON_NOT_ENOUGH_SPACE
UNBOUND = [
    ("no PV, no provisioner", [wffc(), wffc_pvc("c1")], (BC,), (BC,)),
    ("PV matches everywhere", [wffc(), wffc_pvc("c1"), avail_pv("pv1")], None, None),
    ("PV pinned to zone a", [wffc(), wffc_pvc("c1"), avail_pv("pv1", affinity=zone_term("a"))], None, (BC,)),
    ("PV too small", [wffc(), wffc_pvc("c1", size="5Gi"), avail_pv("pv1", size="1Gi")], (BC,), (BC,)),
    ("PV of another class", [wffc(), wffc_pvc("c1"), avail_pv("pv1", cls="other")], (BC,), (BC,)),
    ("PV access modes do not cover", [wffc(), wffc_pvc("c1", access=("ReadWriteMany",)), avail_pv("pv1")],
     (BC,), (BC,)),
    ("PV volume mode differs", [wffc(), wffc_pvc("c1", volumeMode="Block"), avail_pv("pv1")], (BC,), (BC,)),
    ("PV not Available", [wffc(), wffc_pvc("c1"), avail_pv("pv1", phase="Released")], (BC,), (BC,)),
    ("PV bound to another claim", [wffc(), wffc_pvc("c1"),
                                   avail_pv("pv1", claimRef={"namespace": "default", "name": "x"})], (BC,), (BC,)),
    ("selector mismatch", [wffc(), wffc_pvc("c1", selector={"matchLabels": {"tier": "gold"}}),
                           avail_pv("pv1", labels={"tier": "silver"})], (BC,), (BC,)),
    ("selector match", [wffc(), wffc_pvc("c1", selector={"matchLabels": {"tier": "gold"}}),
                        avail_pv("pv1", labels={"tier": "gold"})], None, None),
    ("provisioner", [wffc(provisioner="ebs.csi.aws.com"), wffc_pvc("c1")], None, None),
    ("provisioner allowedTopologies zone b", [
        wffc(provisioner="ebs.csi.aws.com", topologies=[{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": ["b"]}]}]), wffc_pvc("c1")], (BC,), None),
    ("selected node n2 fails fast elsewhere", [
        wffc(provisioner="ebs.csi.aws.com"),
        ("PersistentVolumeClaim", {**wffc_pvc("c1")[1], "metadata": {**wffc_pvc("c1")[1]["metadata"],
                                                                    "annotations": {vb.ANN_SELECTED_NODE: "n2"}}})],
     (BC,), None),
    ("capacity tracked, none published", [
        wffc(provisioner="ebs.csi.aws.com"), wffc_pvc("c1"),
        ("CSIDriver", {"metadata": {"name": "ebs.csi.aws.com"}, "spec": {"storageCapacity": True}})], (NS,), (NS,)),
    ("capacity in zone a only", [
        wffc(provisioner="ebs.csi.aws.com"), wffc_pvc("c1", size="1Gi"),
        ("CSIDriver", {"metadata": {"name": "ebs.csi.aws.com"}, "spec": {"storageCapacity": True}}),
        ("CSIStorageCapacity", {"metadata": {"name": "cap-a", "namespace": "kube-system"}, "storageClassName": "wffc",
                                "capacity": "100Gi", "nodeTopology": {"matchLabels": {
                                    "topology.kubernetes.io/zone": "a"}}}),
        ("CSIStorageCapacity", {"metadata": {"name": "cap-b", "namespace": "kube-system"}, "storageClassName": "wffc",
                                "capacity": "100Gi", "maximumVolumeSize": "512Mi", "nodeTopology": {
                                    "matchLabels": {"topology.kubernetes.io/zone": "b"}}})], None, (NS,)),
]


@pytest.mark.parametrize("name,objs,want1,want2", UNBOUND, ids=[c[0] for c in UNBOUND])
def test_filter_unbound_claims(name, objs, want1, want2):
    _, _, _, got = filter_all(objs, MakePod().pvc("c1").obj())
    for n, want in (("n1", want1), ("n2", want2)):
        st = got[n]
        assert (None if st is None else st.reasons) == want, n
        if st is not None:
            assert st.code == UU


def test_bound_and_unbound_unsatisfied_report_both_reasons():
    # upstream "bound and unbound unsatisfied": checkBoundClaims and the matching both run
    objs = [wffc(), wffc_pvc("c2"), pvc("c1", "pv1"), pv("pv1", zone_term("b"))]
    _, _, _, got = filter_all(objs, MakePod().pvc("c1").pvc("c2").obj())
    assert got["n1"].reasons == (vb.ERR_REASON_NODE_CONFLICT, BC)


def test_smallest_fit_and_distinct_pvs_for_two_claims():
    objs = [wffc(), wffc_pvc("a", size="1Gi"), wffc_pvc("b", size="3Gi"),
            avail_pv("pv10", size="10Gi"), avail_pv("pv2", size="2Gi"), avail_pv("pv5", size="5Gi")]
    pod = MakePod().pvc("b").pvc("a").obj()
    _, pl, state, got = filter_all(objs, pod)
    assert got["n1"] is None
    pv_by_claim = {c["metadata"]["name"]: v["metadata"]["name"]
                   for v, c in state.read(vb.STATE_KEY).pod_volumes_by_node["n1"].static_bindings}
    assert pv_by_claim == {"a": "pv2", "b": "pv5"}  # sorted by request, smallest fit each


def test_prebound_pv_wins_over_a_smaller_one():
    objs = [wffc(), wffc_pvc("c1"), avail_pv("small"),
            avail_pv("mine", size="9Gi", claimRef={"namespace": "default", "name": "c1", "uid": "uid-c1"})]
    _, _, state, got = filter_all(objs, MakePod().pvc("c1").obj())
    (v, _), = state.read(vb.STATE_KEY).pod_volumes_by_node["n1"].static_bindings
    assert v["metadata"]["name"] == "mine"


def test_in_tree_pv_translated_when_migrated_on_node():
    # an EBS PV labelled zone a: translated (topology.ebs.csi.aws.com/zone) only where the CSINode
    # lists kubernetes.io/aws-ebs as migrated; elsewhere the in-tree PV has no node affinity
    objs = [pvc("c1", "pv1"),
            ("PersistentVolume", {"metadata": {"name": "pv1", "labels": {"topology.kubernetes.io/zone": "a"}},
                                  "spec": {"awsElasticBlockStore": {"volumeID": "aws://a/vol-1"}}}),
            ("CSINode", {"metadata": {"name": "n1", "annotations": {
                "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}}, "spec": {"drivers": []}})]
    _, _, _, got = filter_all(objs, MakePod().pvc("c1").obj())
    assert got["n1"].reasons == (vb.ERR_REASON_NODE_CONFLICT,)  # n1 lacks the CSI topology label
    assert got["n2"] is None


class Client:
    """Records PreBind writes; acts as the PV controller on the lister's objects like the store."""

    def __init__(self, lister, fail_on=None, controller=True):
        self.lister, self.fail_on, self.controller, self.writes = lister, fail_on, controller, []

    async def update_persistent_volume(self, pv):
        from kubesched.controllers import pvcontroller

        self.writes.append(("pv", pv["metadata"]["name"]))
        if self.fail_on == "pv":
            raise BindError('persistentvolumes "x" is forbidden', 403)
        pv = {**pv, "metadata": {**pv["metadata"], "resourceVersion": "2"}}
        self.lister.objs[("PersistentVolume", "", pv["metadata"]["name"])] = pv
        if self.controller:
            ref = pv["spec"]["claimRef"]
            claim = self.lister.objs[("PersistentVolumeClaim", ref["namespace"], ref["name"])]
            new_pv, new_pvc = pvcontroller.bind_claim(pv, claim)
            self.lister.objs[("PersistentVolume", "", pv["metadata"]["name"])] = new_pv
            self.lister.objs[("PersistentVolumeClaim", ref["namespace"], ref["name"])] = new_pvc
        return pv

    async def update_persistent_volume_claim(self, pvc):
        self.writes.append(("pvc", pvc["metadata"]["name"]))
        if self.fail_on == "pvc":
            raise BindError("conflict", 409)
        return pvc


def _bind_setup(objs, pod, **client_kw):
    t = build_table(NODES)
    lister = Lister(*objs, ("Pod", {"metadata": {"name": pod.metadata.name, "namespace": "default"}}))
    lister.objs[("Node", "", "n1")] = NODES[0]
    client = Client(lister, **client_kw)
    h = Handle(nodes=t, lister=lister, client=client, clock=ManualClock())
    pl = vb.new(None, h)
    state = CycleState()
    assert pl.pre_filter(state, pod, t)[1] is None
    assert pl.filter(state, pod, t.get("n1")) is None
    return pl, state, client, lister


def _drive(coro_or_status):
    if coro_or_status is None or isinstance(coro_or_status, vb.Status):
        return coro_or_status
    return asyncio.run(coro_or_status)


def test_reserve_assumes_and_prebind_binds_through_the_client():
    pod = MakePod().name("p").pvc("c1").obj()
    pl, state, client, lister = _bind_setup([wffc(), wffc_pvc("c1"), avail_pv("pv1")], pod)
    assert pl.reserve(state, pod, "n1") is None
    assumed = pl.pv_cache.get("pv1")
    assert assumed["spec"]["claimRef"]["name"] == "c1"
    assert assumed["metadata"]["annotations"][vb.ANN_BOUND_BY_CONTROLLER] == "yes"
    # a second pod's PreFilter sees the PV as taken (assumed), before any API write
    pod2 = MakePod().name("q").pvc("c2").obj()
    lister.objs[("PersistentVolumeClaim", "default", "c2")] = wffc_pvc("c2")[1]
    st2 = CycleState()
    pl.pre_filter(st2, pod2, pl.handle.nodes)
    assert pl.filter(st2, pod2, pl.handle.nodes.get("n1")).reasons == (BC,)
    assert _drive(pl.pre_bind(state, pod, "n1")) is None
    assert client.writes == [("pv", "pv1")]
    c1 = lister.get("PersistentVolumeClaim", "default", "c1")
    assert c1["spec"]["volumeName"] == "pv1" and vb.ANN_BIND_COMPLETED in c1["metadata"]["annotations"]


def test_unreserve_restores_the_assumed_pv():
    pod = MakePod().name("p").pvc("c1").obj()
    pl, state, _, _ = _bind_setup([wffc(), wffc_pvc("c1"), avail_pv("pv1")], pod)
    pl.reserve(state, pod, "n1")
    assert "claimRef" in pl.pv_cache.get("pv1")["spec"]
    pl.unreserve(state, pod, "n1")
    assert "claimRef" not in pl.pv_cache.get("pv1")["spec"] and len(pl.pv_cache) == 0


def test_prebind_api_failure_is_an_error_and_reverts_the_assumption():
    pod = MakePod().name("p").pvc("c1").obj()
    pl, state, client, lister = _bind_setup([wffc(), wffc_pvc("c1"), avail_pv("pv1")], pod, fail_on="pv")
    pl.reserve(state, pod, "n1")
    st = _drive(pl.pre_bind(state, pod, "n1"))
    assert st.code == Code.ERROR and "forbidden" in st.message()
    assert client.writes == [("pv", "pv1")]  # tried once, not repeated
    assert len(pl.pv_cache) == 0 and "claimRef" not in lister.get("PersistentVolume", "", "pv1")["spec"]


def test_prebind_provisioning_annotates_selected_node_and_fails_when_the_annotation_is_reset():
    pod = MakePod().name("p").pvc("c1").obj()
    pl, state, client, lister = _bind_setup([wffc(provisioner="ebs.csi.aws.com"), wffc_pvc("c1")], pod)
    pl.reserve(state, pod, "n1")
    assert pl.pvc_cache.get("default/c1")["metadata"]["annotations"][vb.ANN_SELECTED_NODE] == "n1"
    # the client writes the claim but nothing provisions it and the informer never shows the
    # annotation: checkBindings reports the provisioning failure
    st = _drive(pl.pre_bind(state, pod, "n1"))
    assert client.writes == [("pvc", "c1")]
    assert st.code == Code.ERROR
    assert st.message() in ('binding volumes: selectedNode annotation reset for PVC "c1"',
                            'binding volumes: provisioning failed for PVC "c1"')


def test_prebind_times_out_when_the_pv_controller_never_binds():
    pod = MakePod().name("p").pvc("c1").obj()
    pl, state, client, _ = _bind_setup([wffc(), wffc_pvc("c1"), avail_pv("pv1")], pod, controller=False)
    pl.bind_timeout_s = 3
    pl.reserve(state, pod, "n1")
    from kubesched.scheduler.schedule_one import drive

    task = drive(pl.pre_bind(state, pod, "n1"))
    clock = pl.handle.clock
    for _ in range(5):
        if task.done():
            break
        clock.advance(1.0)
    assert task.done()
    assert task.result().message() == "binding volumes: context deadline exceeded"
    assert client.writes == [("pv", "pv1")]


def test_find_matching_volume_invalid_selector_is_an_error():
    objs = [wffc(), wffc_pvc("c1", selector={"matchExpressions": [{"key": "a", "operator": "Bogus"}]}),
            avail_pv("pv1")]
    _, _, _, got = filter_all(objs, MakePod().pvc("c1").obj())
    assert got["n1"].code == Code.ERROR
    assert "error creating internal label selector for claim: default/c1" in got["n1"].message()


def test_storage_capacity_scoring_with_shape():
    """With the StorageCapacityScoring gate (on by default since 1.37) the static bindings are
    scored by the shape: utilization requested/capacity per class, averaged."""
    objs = [wffc(), wffc_pvc("c1", size="1Gi"),
            avail_pv("pv-n1", size="1Gi", affinity=zone_term("a")),
            avail_pv("pv-n2", size="4Gi", affinity=zone_term("b"))]
    t = build_table(NODES)

    class Args:
        bind_timeout_seconds = 600
        shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]

    pl = vb.new(Args(), Handle(nodes=t, lister=Lister(*objs), features=V137))
    pod = MakePod().pvc("c1").obj()
    state = CycleState()
    pl.pre_filter(state, pod, t)
    for n in ("n1", "n2"):
        assert pl.filter(state, pod, t.get(n)) is None
    assert pl.pre_score(state, pod, t, t.order()) is None
    assert pl.score(state, pod, t.get("n1"))[0] == 100  # 1Gi of 1Gi
    assert pl.score(state, pod, t.get("n2"))[0] == 25  # 1Gi of 4Gi


def test_scoring_is_skipped_without_the_gate():
    objs = [wffc(), wffc_pvc("c1"), avail_pv("pv1")]
    t, pl, state, _, _ = _run(objs, MakePod().pvc("c1").obj(), V134)
    assert pl.pre_score(state, MakePod().pvc("c1").obj(), t, t.order()).code == Code.SKIP


# ───────────────────── scoring at 1.37 (StorageCapacityScoring on): upstream TestVolumeBinding ─────────────────────
# v1.37.2 volume_binding_test.go score cases; scorer.go and Score (L467-520) are unchanged since
# v1.34, only the gate's default changed. Default args = shape {0→10, 100→0}.

NODE_KEY = "nodeKey"  # binder_test.go nodeLabelKey
WAIT, WAIT_HDD = "wait-sc", "wait-hdd-sc"
WAIT_CAP, DRIVER = "wait-sc-with-storage-capacity", "driver-with-storage-capacity"
SC_OBJS = [wffc(WAIT, provisioner=""), wffc(WAIT_HDD, provisioner=""), wffc(WAIT_CAP, provisioner=DRIVER),
           ("CSIDriver", {"metadata": {"name": DRIVER}, "spec": {"storageCapacity": True}})]


def _host(name):
    return host_term(name)


def _zone(region, zone):
    return [{"matchExpressions": [{"key": "topology.kubernetes.io/region", "operator": "In", "values": [region]},
                                  {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]


def _cap(node, size, cls=WAIT_CAP):
    return ("CSIStorageCapacity", {"metadata": {"name": node, "namespace": "default"}, "storageClassName": cls,
                                   "capacity": size, "nodeTopology": {"matchLabels": {NODE_KEY: node}}})


def _local_nodes(*names):
    return [MakeNode().name(n).label(NODE_KEY, n).obj() for n in names]


def _zonal_nodes():
    return [MakeNode().name(f"zone-{z}-node-{x}").label("topology.kubernetes.io/region", f"region-{z}")
            .label("topology.kubernetes.io/zone", f"zone-{z}").obj() for z in "abc" for x in "ab"]


ABC = ("node-a", "node-b", "node-c")
LOCAL_PVS = [avail_pv("pv-a-0", "200Gi", WAIT, _host("node-a")), avail_pv("pv-a-1", "200Gi", WAIT, _host("node-a")),
             avail_pv("pv-b-0", "100Gi", WAIT, _host("node-b")), avail_pv("pv-b-1", "100Gi", WAIT, _host("node-b"))]
ZONAL_PVS = [avail_pv("pv-a-0", "200Gi", WAIT, _zone("region-a", "zone-a")),
             avail_pv("pv-a-1", "200Gi", WAIT, _zone("region-a", "zone-a")),
             avail_pv("pv-b-0", "100Gi", WAIT, _zone("region-b", "zone-b")),
             avail_pv("pv-b-1", "100Gi", WAIT, _zone("region-b", "zone-b"))]
NO_PV = vb.ERR_REASON_BIND_CONFLICT
SCORE_CASES = [
    ("local volumes with close capacity are preferred", _local_nodes(*ABC), ["pvc-a"],
     [wffc_pvc("pvc-a", WAIT, "50Gi"), *LOCAL_PVS], None, [None, None, NO_PV], [75, 50, 0]),
    ("local volumes with close capacity are preferred (multiple pvcs)", _local_nodes(*ABC), ["pvc-0", "pvc-1"],
     [wffc_pvc("pvc-0", WAIT, "50Gi"), wffc_pvc("pvc-1", WAIT_HDD, "100Gi"), *LOCAL_PVS,
      avail_pv("pv-a-2", "200Gi", WAIT_HDD, _host("node-a")), avail_pv("pv-a-3", "200Gi", WAIT_HDD, _host("node-a")),
      avail_pv("pv-b-2", "100Gi", WAIT_HDD, _host("node-b")), avail_pv("pv-b-3", "100Gi", WAIT_HDD, _host("node-b"))],
     None, [None, None, NO_PV], [63, 25, 0]),
    ("zonal volumes with close capacity are preferred", _zonal_nodes(), ["pvc-a"],
     [wffc_pvc("pvc-a", WAIT, "50Gi"), *ZONAL_PVS], None, [None, None, None, None, NO_PV, NO_PV],
     [75, 75, 50, 50, 0, 0]),
    ("zonal volumes with close capacity are preferred (custom shape)", _zonal_nodes(), ["pvc-a"],
     [wffc_pvc("pvc-a", WAIT, "50Gi"), *ZONAL_PVS], [(0, 0), (50, 3), (100, 5)],
     [None, None, None, None, NO_PV, NO_PV], [15, 15, 30, 30, 0, 0]),
    ("storage capacity score", _local_nodes(*ABC), ["pvc-dynamic"],
     [wffc_pvc("pvc-dynamic", WAIT_CAP, "10Gi"), _cap("node-a", "100Gi"), _cap("node-b", "50Gi"),
      _cap("node-c", "10Gi")], None, [None, None, None], [90, 80, 0]),
    ("storage capacity score with static binds", _local_nodes(*ABC), ["pvc-dynamic", "pvc-static"],
     [wffc_pvc("pvc-dynamic", WAIT_CAP, "10Gi"), wffc_pvc("pvc-static", WAIT, "50Gi"),
      avail_pv("pv-static-a", "100Gi", WAIT, _host("node-a")), avail_pv("pv-static-b", "100Gi", WAIT, _host("node-b")),
      avail_pv("pv-static-c", "100Gi", WAIT, _host("node-c")),
      _cap("node-a", "100Gi"), _cap("node-b", "50Gi"), _cap("node-c", "10Gi")], None, [None, None, None], [50, 50, 50]),
    ("dynamic provisioning with multiple PVCs of the same StorageClass", _local_nodes("node-a"),
     ["pvc-dynamic-0", "pvc-dynamic-1"],
     [wffc_pvc("pvc-dynamic-0", WAIT_CAP, "50Gi"), wffc_pvc("pvc-dynamic-1", WAIT_CAP, "50Gi"),
      _cap("node-a", "100Gi")], None, [None], [0]),
    ("prefer node with least allocatable", _local_nodes(*ABC), ["pvc-dynamic"],
     [wffc_pvc("pvc-dynamic", WAIT_CAP, "10Gi"), _cap("node-a", "100Gi"), _cap("node-b", "20Gi"),
      _cap("node-c", "10Gi")], [(0, 0), (100, 10)], [None, None, None], [10, 50, 100]),
    ("prefer node with maximum allocatable", _local_nodes(*ABC), ["pvc-dynamic"],
     [wffc_pvc("pvc-dynamic", WAIT_CAP, "10Gi"), _cap("node-a", "100Gi"), _cap("node-b", "20Gi"),
      _cap("node-c", "10Gi")], [(0, 10), (100, 0)], [None, None, None], [90, 50, 0]),
]


@pytest.mark.parametrize(("nodes", "claims", "objs", "shape", "want_filter", "want_scores"),
                         [pytest.param(*c[1:], id=c[0]) for c in SCORE_CASES])
def test_score_v137(nodes, claims, objs, shape, want_filter, want_scores):
    t = build_table(nodes)

    class Args:
        bind_timeout_seconds = 300

    args = None
    if shape is not None:
        args = Args()
        args.shape = [{"utilization": u, "score": sc_} for u, sc_ in shape]
    pl = vb.new(args, Handle(nodes=t, lister=Lister(*SC_OBJS, *objs), features=V137))
    mp = MakePod().name("pod-a")
    for c in claims:
        mp.pvc(c)
    pod = mp.obj()
    state = CycleState()
    _, st = pl.pre_filter(state, pod, t)
    assert st is None
    names = [n.metadata.name for n in nodes]
    got_filter = []
    for n in names:
        fst = pl.filter(state, pod, t.get(n))
        got_filter.append(None if fst is None else fst.reasons[0])
        if fst is not None:
            assert fst.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert got_filter == want_filter
    assert pl.pre_score(state, pod, t, t.order()) is None
    assert [pl.score(state, pod, t.get(n))[0] for n in names] == want_scores
    rows = np.asarray([t.row_of[n] for n in names], np.int64)
    assert pl.score_nodes(state, pod, t, rows).tolist() == want_scores


@pytest.mark.parametrize("version", [(1, 34), (1, 36)])
def test_capacity_scoring_is_off_before_1_37(version):
    """The same dynamic-provisioning input is not scored before 1.37 (gate off: PreScore Skip)."""
    nodes = _local_nodes(*ABC)
    t = build_table(nodes)
    objs = [wffc_pvc("pvc-dynamic", WAIT_CAP, "10Gi"), _cap("node-a", "100Gi"), _cap("node-b", "50Gi"),
            _cap("node-c", "10Gi")]
    pl = vb.new(None, Handle(nodes=t, lister=Lister(*SC_OBJS, *objs), features=FeatureGate(emulated_version=version)))
    pod = MakePod().name("pod-a").pvc("pvc-dynamic").obj()
    state = CycleState()
    pl.pre_filter(state, pod, t)
    for n in ABC:
        assert pl.filter(state, pod, t.get(n)) is None
    assert pl.pre_score(state, pod, t, t.order()).code == Code.SKIP
