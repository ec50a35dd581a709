"""VolumeBinding: PreFilter/Filter reasons and codes (from upstream volume_binding_test.go),
PreScore Skip, Reserve/PreBind for the supported (bound) cases, hints."""

from __future__ import annotations

import pytest

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


def _run(objs, pod):
    t = build_table(NODES)
    pl = vb.new(None, Handle(nodes=t, lister=Lister(*objs)))
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
    ("delayed binding unsupported", [pvc("c1", sc="wffc"), sc("wffc", "WaitForFirstConsumer")],
     MakePod().pvc("c1").obj(), Code.ERROR, None),
]


@pytest.mark.parametrize("name,objs,pod,code,msg", PREFILTER, ids=[c[0] for c in PREFILTER])
def test_pre_filter_rejections(name, objs, pod, code, msg):
    _, _, _, res, st = _run(objs, pod)
    assert res is None and st.code == code
    if msg is not None:
        assert st.reasons == (msg,)


def test_no_pvc_skips_and_reserve_prebind_succeed():
    t, pl, state, res, st = _run([], MakePod().obj())
    assert st.code == Code.SKIP and res is None
    assert pl.reserve(state, MakePod().obj(), "n1") is None
    assert pl.pre_bind(state, MakePod().obj(), "n1") is None
    assert pl.pre_score(state, MakePod().obj(), t, t.order()).code == Code.SKIP


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


def test_in_tree_pv_is_an_error():
    pod = MakePod().pvc("c1").obj()
    t, pl, state, _, st = _run([pvc("c1", "pv1"), pv("pv1", gcePersistentDisk={"pdName": "d"})], pod)
    assert st is None and pl.filter(state, pod, t.get("n1")).code == Code.ERROR


def test_pvc_hint():
    pod = MakePod().pvc("c1").obj()
    assert vb.is_schedulable_after_pvc_change(pod, None, pvc("c1")[1]) == QueueingHint.QUEUE
    assert vb.is_schedulable_after_pvc_change(pod, None, pvc("c2")[1]) == QueueingHint.SKIP


def test_field_reads_mappings_and_objects():
    assert vb.field({"spec": {"volumeName": "x"}}, "spec", "volumeName") == "x"
    node = MakeNode().name("n").obj()
    assert vb.field(node, "metadata", "name") == "n"
    assert vb.field(None, "a") is None
