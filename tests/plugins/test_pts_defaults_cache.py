"""PodTopologySpread's default constraints are kept per (namespace, labels, controller) while the
lister's change counters (``revision``) of Service / RC / ReplicaSet / StatefulSet stand still:
on random objects, pods and lister changes the cached answer equals a fresh ``default_selector``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api import objects as o
from kubesched.framework.handle import EmptyLister, Handle, lister_revision
from kubesched.plugins.podtopologyspread import default_selector, new
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

SA = "ScheduleAnyway"
NAMESPACES = ("default", "web")
KEYS = ("app", "tier", "pod-template-hash")
VALUES = ("a", "b")

labels_st = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
owner_st = st.one_of(st.none(), st.tuples(
    st.sampled_from([("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("v1", "ReplicationController"),
                     ("extensions/v1beta1", "ReplicaSet"), ("batch/v1", "Job")]),
    st.sampled_from(("c1", "c2")), st.booleans()))


def _object(kind: str, ns: str, name: str, sel: dict[str, str]) -> object:
    meta = o.ObjectMeta(name=name, namespace=ns)
    if kind == "Service":
        return o.Service(metadata=meta, spec=o.ServiceSpec(selector=sel))
    if kind == "ReplicationController":
        return o.ReplicationController(metadata=meta, spec=o.ReplicationControllerSpec(selector=sel))
    if kind == "ReplicaSet":
        return o.ReplicaSet(metadata=meta, spec=o.ReplicaSetSpec(selector=o.LabelSelector(match_labels=sel)))
    return o.StatefulSet(metadata=meta, spec=o.StatefulSetSpec(selector=o.LabelSelector(match_labels=sel)))


change_st = st.tuples(st.sampled_from(("Service", "ReplicationController", "ReplicaSet", "StatefulSet")),
                      st.sampled_from(NAMESPACES), st.sampled_from(("c1", "c2", "s1")), labels_st, st.booleans())
step_st = st.one_of(st.tuples(st.just("pod"), st.sampled_from(NAMESPACES), labels_st, owner_st),
                    st.tuples(st.just("change"), change_st))


def _pod(ns: str, labels: dict[str, str], owner: tuple[tuple[str, str], str, bool] | None) -> o.Pod:
    p = MakePod().name("p").namespace(ns).labels(dict(labels)).obj()
    if owner is not None:
        (api, kind), name, controller = owner
        p.metadata.owner_references = [o.OwnerReference(api_version=api, kind=kind, name=name, controller=controller)]
    return p


@settings(max_examples=150, deadline=None)
@given(st.lists(step_st, min_size=1, max_size=40))
def test_cached_defaults_equal_fresh_default_selector(steps: list[tuple]) -> None:
    store = ClusterStore(keep_events=False)
    table = build_table([MakeNode().name("n1").label("topology.kubernetes.io/zone", "z").obj()])
    pl = new(None, Handle(table, lister=store))
    for step in steps:
        if step[0] == "change":
            kind, ns, name, sel, remove = step[1]
            if remove:
                store.remove_object(kind, ns, name)
            else:
                store.put_object(kind, _object(kind, ns, name, sel))
            continue
        pod = _pod(step[1], step[2], step[3])
        got = pl.get_constraints(pod, SA)
        want = default_selector(pod, store)
        if want.is_empty:
            assert got == []
        else:
            assert [c.selector for c in got] == [want, want]
            assert [c.topology_key for c in got] == ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
        # the same pod again (a cache hit) gives the same answer, as a fresh list
        again = pl.get_constraints(pod, SA)
        assert again == got and again is not got


def test_revision_counts_every_change() -> None:
    store = ClusterStore(keep_events=False)
    kinds = ("Service",)
    assert lister_revision(store, kinds) == 0
    store.put_object("Service", _object("Service", "default", "s", {"app": "a"}))
    r1 = lister_revision(store, kinds)
    store.put_object("Service", _object("Service", "default", "s", {"app": "b"}))  # a replace
    r2 = lister_revision(store, kinds)
    store.remove_object("Service", "default", "s")
    r3 = lister_revision(store, kinds)
    store.add_raw("Service", {"metadata": {"name": "t", "namespace": "default"}})
    r4 = lister_revision(store, kinds)
    assert 0 < r1 < r2 < r3 < r4
    assert lister_revision(store, ("ReplicaSet",)) == 0
    assert lister_revision(EmptyLister(), kinds) == 0

    class NoCounter:
        def list(self, kind: str, namespace: str | None = None) -> list[object]:
            return []

        def get(self, kind: str, namespace: str, name: str) -> None:
            return None

    assert lister_revision(NoCounter(), kinds) is None


def test_key_holds_the_controller_api_version() -> None:
    store = ClusterStore(keep_events=False)
    store.put_object("ReplicaSet", _object("ReplicaSet", "default", "c1", {"tier": "a"}))
    store.put_object("Service", _object("Service", "default", "s1", {"app": "a"}))
    pl = new(None, Handle(build_table([MakeNode().name("n1").obj()]), lister=store))
    for api in ("apps/v1", "extensions/v1beta1", "apps/v1"):
        pod = _pod("default", {"app": "a", "tier": "a"}, ((api, "ReplicaSet"), "c1", True))
        assert [c.selector for c in pl.get_constraints(pod, SA)] == [default_selector(pod, store)] * 2
