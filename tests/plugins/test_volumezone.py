"""VolumeZone: PreFilter messages and Skip, Filter (upstream volume_zone_test.go), batch == per-node."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.plugins import volumezone as vz
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

BZ, BR, GZ, GR = vz.BETA_ZONE, vz.BETA_REGION, vz.GA_ZONE, vz.GA_REGION


class Lister:
    def __init__(self, *objs):
        self.objs = {(k, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for k, o in objs}

    def get(self, kind, namespace, name):
        return self.objs.get((kind, namespace or "", name))


def pvc(name, volume_name="", sc=None):
    spec = {"volumeName": volume_name}
    if sc is not None:
        spec["storageClassName"] = sc
    return ("PersistentVolumeClaim", {"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def pv(name, **labels):
    return ("PersistentVolume", {"metadata": {"name": name, "labels": {k.replace("_", "/"): v for k, v in labels.items()}}})


def pv_l(name, labels):
    return ("PersistentVolume", {"metadata": {"name": name, "labels": labels}})


def sc(name, mode):
    o = {"metadata": {"name": name}}
    if mode is not None:
        o["volumeBindingMode"] = mode
    return ("StorageClass", o)


OBJS = [pvc("c-a", "pv-a"), pv_l("pv-a", {GZ: "us-west1-a"}),
        pvc("c-beta", "pv-beta"), pv_l("pv-beta", {BZ: "us-west1-a", BR: "us-west1"}),
        pvc("c-multi", "pv-multi"), pv_l("pv-multi", {GZ: "us-west1-a__us-west1-b"}),
        pvc("c-nolabel", "pv-nolabel"), pv_l("pv-nolabel", {}),
        pvc("c-wffc", sc="wffc"), sc("wffc", "WaitForFirstConsumer"),
        pvc("c-imm", sc="imm"), sc("imm", "Immediate"), pvc("c-nomode", sc="nm"), sc("nm", None),
        pvc("c-noclass"), pvc("c-nosc", sc="gone"), pvc("c-nopv", "missing")]


def _plugin(nodes):
    t = build_table(nodes)
    return t, vz.new(None, Handle(nodes=t, lister=Lister(*OBJS)))


UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize("claim,code,msg", [
    ("c-missing", UU, 'persistentvolumeclaim "c-missing" not found'),
    ("c-noclass", UU, "PersistentVolumeClaim had no pv name and storageClass name"),
    ("c-nosc", UU, 'storageclass.storage.k8s.io "gone" not found'),
    ("c-nomode", UU, 'VolumeBindingMode not set for StorageClass "nm"'),
    ("c-imm", UU, "PersistentVolume had no name"),
    ("c-nopv", UU, 'persistentvolume "missing" not found'),
    ("c-wffc", Code.SKIP, None),
    ("c-nolabel", Code.SKIP, None),
], ids=lambda x: str(x))
def test_pre_filter(claim, code, msg):
    t, pl = _plugin([MakeNode().name("n").obj()])
    _, st_ = pl.pre_filter(CycleState(), MakePod().pvc(claim).obj(), t)
    assert st_.code == code
    if msg:
        assert st_.reasons == (msg,)


def test_no_volumes_skip():
    t, pl = _plugin([MakeNode().name("n").obj()])
    assert pl.pre_filter(CycleState(), MakePod().obj(), t)[1].code == Code.SKIP


@pytest.mark.parametrize("claim,node_labels,fits", [
    ("c-a", {GZ: "us-west1-a"}, True),
    ("c-a", {GZ: "us-west1-b"}, False),
    ("c-a", {}, True),                                   # node without any zone label
    ("c-a", {"other": "x"}, True),
    ("c-a", {GR: "us-west1"}, False),                    # has a topology label but not the zone
    ("c-beta", {GZ: "us-west1-a", GR: "us-west1"}, True),  # beta PV labels match GA node labels
    ("c-beta", {BZ: "us-west1-a", GR: "us-west1"}, True),
    ("c-beta", {GZ: "us-west1-a", GR: "us-east1"}, False),
    ("c-multi", {GZ: "us-west1-b"}, True),
    ("c-multi", {GZ: "us-west1-c"}, False),
], ids=lambda x: str(x))
def test_filter(claim, node_labels, fits):
    t, pl = _plugin([MakeNode().name("n").labels(node_labels).obj()])
    pod = MakePod().pvc(claim).obj()
    state = CycleState()
    assert pl.pre_filter(state, pod, t) == (None, None)
    got = pl.filter(state, pod, t.get("n"))
    res = pl.filter_nodes(state, pod, t, t.order())
    if fits:
        assert got is None and res is None
    else:
        assert got.code == UU and got.reasons == (vz.ERR_REASON_CONFLICT,)
        assert res.failed.tolist() == [1] and res.codes == (UU,)


def test_label_zones_to_set():
    assert vz.label_zones_to_set("a__ b") == {"a", "b"}
    assert vz.label_zones_to_set("a____b") is None


_lbl = st.dictionaries(st.sampled_from([BZ, BR, GZ, GR, "x"]), st.sampled_from(["us-west1-a", "us-west1-b", "us-west1"]),
                       max_size=4)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(node_labels=st.lists(_lbl, min_size=1, max_size=8), claims=st.lists(
    st.sampled_from(["c-a", "c-beta", "c-multi", "c-nolabel", "c-wffc"]), min_size=1, max_size=3))
def test_batch_equals_per_node(node_labels, claims):
    t, pl = _plugin([MakeNode().name(f"n{i}").labels(l).obj() for i, l in enumerate(node_labels)])
    b = MakePod()
    for i, c in enumerate(claims):
        b.pvc(c, f"v{i}")
    pod = b.obj()
    state = CycleState()
    _, st_ = pl.pre_filter(state, pod, t)
    rows = t.order()
    res = pl.filter_nodes(state, pod, t, rows)
    batch = res.failed.tolist() if res is not None else [0] * len(rows)
    ref = [0 if pl.filter(state, pod, t.node_info(r)) is None else 1 for r in rows.tolist()]
    assert batch == ref
