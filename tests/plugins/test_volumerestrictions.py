"""VolumeRestrictions: PreFilter Skip paths, missing PVC, ReadWriteOncePod conflicts (upstream
volume_restrictions_test.go), PreFilterExtensions and hints."""

from __future__ import annotations

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.plugins import volumerestrictions as vr
from kubesched.testing.wrappers import MakeNode, MakePod, build_table


class Lister:
    def __init__(self, *objs):
        self.objs = {(k, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for k, o in objs}

    def get(self, kind, namespace, name):
        return self.objs.get((kind, namespace or "", name))


def pvc(name, volume_name="", access=("ReadWriteOnce",)):
    return ("PersistentVolumeClaim", {"metadata": {"name": name, "namespace": "default"},
                                      "spec": {"accessModes": list(access), "volumeName": volume_name}})

NODES = [MakeNode().name("n1").obj(), MakeNode().name("n2").obj()]
RWOP = pvc("rwop", "pv1", access=("ReadWriteOncePod",))
RWX = pvc("rwx", "pv2", access=("ReadWriteMany",))


def _setup(existing=(), objs=(RWOP, RWX)):
    t = build_table(NODES, list(existing))
    return t, vr.new(None, Handle(nodes=t, lister=Lister(*objs)))


def test_no_volumes_skip():
    t, pl = _setup()
    assert pl.pre_filter(CycleState(), MakePod().obj(), t)[1].code == Code.SKIP


def test_missing_pvc_is_unresolvable():
    t, pl = _setup()
    st = pl.pre_filter(CycleState(), MakePod().pvc("nope").obj(), t)[1]
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == ('persistentvolumeclaim "nope" not found',)


def test_unused_rwop_and_other_modes_skip():
    t, pl = _setup([MakePod().name("e").pvc("rwx").node("n1").obj()])
    assert pl.pre_filter(CycleState(), MakePod().pvc("rwop").obj(), t)[1].code == Code.SKIP
    assert pl.pre_filter(CycleState(), MakePod().pvc("rwx").obj(), t)[1].code == Code.SKIP


def test_rwop_conflict_on_every_node_and_extensions():
    existing = MakePod().name("e").pvc("rwop").node("n1").obj()
    t, pl = _setup([existing])
    pod = MakePod().pvc("rwop").obj()
    state = CycleState()
    assert pl.pre_filter(state, pod, t) == (None, None)
    for n in ("n1", "n2"):
        st = pl.filter(state, pod, t.get(n))
        assert st.code == Code.UNSCHEDULABLE and st.reasons == (vr.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)
    res = pl.filter_nodes(state, pod, t, t.order())
    assert res.failed.tolist() == [2, 2] and res.codes[1] == Code.UNSCHEDULABLE
    # preemption dry-run: removing the user of the claim clears the conflict
    pl.pre_filter_extensions().remove_pod(state, pod, PodInfo(existing), t.get("n1"))
    assert pl.filter(state, pod, t.get("n1")) is None and pl.filter_nodes(state, pod, t, t.order()) is None
    pl.pre_filter_extensions().add_pod(state, pod, PodInfo(existing), t.get("n1"))
    assert pl.filter(state, pod, t.get("n2")).code == Code.UNSCHEDULABLE


def test_usage_index_follows_table():
    t, pl = _setup()
    e = MakePod().name("e").pvc("rwop").node("n2").obj()
    pod = MakePod().pvc("rwop").obj()
    t.add_pod(PodInfo(e), t.row_of["n2"])
    assert pl.pre_filter(CycleState(), pod, t) == (None, None)
    t.remove_pod(PodInfo(e), t.row_of["n2"])
    assert pl.pre_filter(CycleState(), pod, t)[1].code == Code.SKIP
    t.add_pod(PodInfo(e), t.row_of["n2"])
    t.remove_node("n2")
    assert pl.pre_filter(CycleState(), pod, t)[1].code == Code.SKIP


def test_hints():
    pod = MakePod().pvc("rwop").obj()
    assert vr.is_schedulable_after_pod_deleted(pod, MakePod().name("d").pvc("rwop").obj(), None) == QueueingHint.QUEUE
    assert vr.is_schedulable_after_pod_deleted(pod, MakePod().name("d").pvc("x").obj(), None) == QueueingHint.SKIP
    assert vr.is_schedulable_after_pod_deleted(pod, MakePod().namespace("o").pvc("rwop").obj(), None) == QueueingHint.SKIP
    assert vr.is_schedulable_after_pvc_added(pod, None, RWOP[1]) == QueueingHint.QUEUE
    assert vr.is_schedulable_after_pvc_added(pod, None, RWX[1]) == QueueingHint.SKIP
