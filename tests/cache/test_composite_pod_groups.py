"""The CompositePodGroup hierarchy in the scheduler's pod-group manager, ported from upstream
v1.37.2 ``backend/cache/cache_test.go`` (Test_AddCompositePodGroup, Test_RemoveCompositePodGroup,
TestCache_GetRootKeyForGroup) and ``podgroupstate_test.go`` (TestCompositePodGroupState_Children),
plus the scheduler feeding it from CompositePodGroup events.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cache.podgroups import CompositePodGroupStateImpl, HierarchyCycleError, PodGroupManagerImpl


def pg(name: str, parent: str | None = None, ns: str = "ns1") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"}, "spec": spec}


def cpg(name: str, parent: str | None = None, ns: str = "ns1") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def state_of(m: PodGroupManagerImpl) -> tuple[dict[str, str], dict[str, set[str]]]:
    """The observed CompositePodGroups (key → name) and every non-empty children set."""
    objs, children = {}, {}
    for (ns, name), st in m._composite.items():
        key = f"compositepodgroup/{ns}/{name}"
        if st.composite_pod_group is not None:
            objs[key] = st.composite_pod_group["metadata"]["name"]
        if st.children():
            children[key] = set(st.children())
    return objs, children


CPG1 = "compositepodgroup/ns1/cpg1"

ADD_CASES = [
    ("add multiple composite pod groups", [], [cpg("cpg1"), cpg("cpg2")],
     {CPG1: "cpg1", "compositepodgroup/ns1/cpg2": "cpg2"}, {}),
    ("add composite pod group with parent, parent already has other composite pod group child", [],
     [cpg("cpg3", "cpg1"), cpg("cpg4", "cpg1")],
     {"compositepodgroup/ns1/cpg3": "cpg3", "compositepodgroup/ns1/cpg4": "cpg4"},
     {CPG1: {"compositepodgroup/ns1/cpg3", "compositepodgroup/ns1/cpg4"}}),
    ("add composite pod group with parent, parent already has pod group child", [pg("pgChild", "cpg1")],
     [cpg("cpg3", "cpg1")], {"compositepodgroup/ns1/cpg3": "cpg3"},
     {CPG1: {"podgroup/ns1/pgChild", "compositepodgroup/ns1/cpg3"}}),
]


@pytest.mark.parametrize("case", ADD_CASES, ids=[c[0] for c in ADD_CASES])
def test_add_composite_pod_group(case: tuple) -> None:
    _, pgs, cpgs, want_objs, want_children = case
    m = PodGroupManagerImpl(composite_enabled=True)
    for g in pgs:
        m.set_pod_group(g)
    for c in cpgs:
        m.set_composite_pod_group(c)
    assert state_of(m) == (want_objs, want_children)


REMOVE_CASES = [
    ("delete composite pod group with parent, cleans up children map", [], [cpg("cpg3", "cpg1")],
     cpg("cpg3", "cpg1"), {}, {}),
    ("delete composite pod group with parent, parent has both other pg and cpg children",
     [pg("pgChild", "cpg1")], [cpg("cpg3", "cpg1"), cpg("cpg4", "cpg1")], cpg("cpg3", "cpg1"),
     {"compositepodgroup/ns1/cpg4": "cpg4"}, {CPG1: {"podgroup/ns1/pgChild", "compositepodgroup/ns1/cpg4"}}),
    ("delete mid cpg from root-mid-leaf hierarchy", [pg("pgLeaf", "cpgMid")], [cpg("cpg1"), cpg("cpgMid", "cpg1")],
     cpg("cpgMid", "cpg1"), {CPG1: "cpg1"}, {"compositepodgroup/ns1/cpgMid": {"podgroup/ns1/pgLeaf"}}),
]


@pytest.mark.parametrize("case", REMOVE_CASES, ids=[c[0] for c in REMOVE_CASES])
def test_remove_composite_pod_group(case: tuple) -> None:
    _, pgs, cpgs, delete, want_objs, want_children = case
    m = PodGroupManagerImpl(composite_enabled=True)
    for g in pgs:
        m.set_pod_group(g)
    for c in cpgs:
        m.set_composite_pod_group(c)
    m.remove_composite_pod_group(delete)
    assert state_of(m) == (want_objs, want_children)


def test_remove_pod_group_unlinks_it_from_its_parent() -> None:
    """cache.go RemovePodGroup (L1194-1203): the parent loses the child; an empty placeholder goes."""
    m = PodGroupManagerImpl(composite_enabled=True)
    m.set_pod_group(pg("a", "cpg1"))
    m.set_pod_group(pg("b", "cpg1"))
    m.remove_pod_group(pg("a", "cpg1"))
    assert state_of(m) == ({}, {CPG1: {"podgroup/ns1/b"}})
    m.remove_pod_group(pg("b", "cpg1"))
    assert m.composite_pod_group_state("ns1", "cpg1") is None


def root_key_manager(composite_enabled: bool) -> PodGroupManagerImpl:
    """setupCacheForRootKeyTest."""
    m = PodGroupManagerImpl(composite_enabled=composite_enabled)
    m.set_pod_group(pg("pg1", "cpg1"))
    for c in (cpg("cpg1", "cpg2"), cpg("cpg2"), cpg("cpg_cycle_1", "cpg_cycle_2"), cpg("cpg_cycle_2", "cpg_cycle_1")):
        m.set_composite_pod_group(c)
    m.set_pod_group(pg("pg_cycle", "cpg_cycle_1"))
    m.set_pod_group(pg("pg_missing_parent", "non-existent"))
    return m


ROOT_CASES = [
    ("from pg to root (GW=true, CPG=true)", True, "podgroup/ns1/pg1", CPG1.replace("cpg1", "cpg2")),
    ("from cpg to root (GW=true, CPG=true)", True, CPG1, "compositepodgroup/ns1/cpg2"),
    ("from root (GW=true, CPG=true)", True, "compositepodgroup/ns1/cpg2", "compositepodgroup/ns1/cpg2"),
    ("from pg (with parent set), compositePodGroup disabled", False, "podgroup/ns1/pg1", "podgroup/ns1/pg1"),
    ("missing intermediate", True, "podgroup/ns1/pg_missing_parent", None),
]


@pytest.mark.parametrize("case", ROOT_CASES, ids=[c[0] for c in ROOT_CASES])
def test_root_key_for_group(case: tuple) -> None:
    _, enabled, key, want = case
    assert root_key_manager(enabled).root_key_for_group(key) == want


def test_root_key_for_group_cycle_detected() -> None:
    with pytest.raises(HierarchyCycleError, match="cycle detected in the hierarchy"):
        root_key_manager(True).root_key_for_group("podgroup/ns1/pg_cycle")


def test_root_key_for_group_rejects_pod_keys() -> None:
    with pytest.raises(ValueError, match="pod key type not supported"):
        root_key_manager(True).root_key_for_group("pod/ns1/p")


def test_composite_pod_group_state_children() -> None:
    """TestCompositePodGroupState_Children (sorted here: upstream ranges over a set)."""
    st = CompositePodGroupStateImpl()
    assert st.children() == []
    st.add_child("podgroup/ns1/child1")
    st.add_child("compositepodgroup/ns1/child2")
    assert st.children() == ["compositepodgroup/ns1/child2", "podgroup/ns1/child1"]


def test_gate_off_keeps_no_hierarchy() -> None:
    """CompositePodGroup off: CompositePodGroups are ignored and parents are not followed."""
    m = PodGroupManagerImpl()
    m.set_pod_group(pg("pg1", "cpg1"))
    m.set_composite_pod_group(cpg("cpg1"))
    assert m.composite_pod_group_state("ns1", "cpg1") is None
    assert m.composite_pod_group("ns1", "cpg1") is None
    assert m.root_key_for_group("podgroup/ns1/pg1") == "podgroup/ns1/pg1"


def test_scheduler_feeds_composite_pod_groups() -> None:
    """eventhandlers.go add/update/deleteCompositePodGroup: the hierarchy follows the events."""
    from kubesched.features import default_feature_gate
    from kubesched.scheduler import Scheduler

    gates = default_feature_gate().with_overrides(GenericWorkload=True, TopologyAwareWorkloadScheduling=True,
                                                  CompositePodGroup=True)
    sched = Scheduler(features=gates)
    pgm = sched.pod_group_manager
    assert pgm is not None and pgm.composite_enabled
    sched.on_object_event("CompositePodGroup", None, cpg("root"))
    sched.on_object_event("CompositePodGroup", None, cpg("mid", "root"))
    sched.on_object_event("PodGroup", None, pg("leaf", "mid"))
    assert pgm.root_key_for_group("podgroup/ns1/leaf") == "compositepodgroup/ns1/root"
    root = pgm.composite_pod_group_state("ns1", "root")
    assert root is not None and root.children() == ["compositepodgroup/ns1/mid"]
    sched.on_object_event("CompositePodGroup", cpg("mid", "root"), None)
    assert pgm.root_key_for_group("podgroup/ns1/leaf") is None  # mid no longer observed
