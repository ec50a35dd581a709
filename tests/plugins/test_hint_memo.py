"""The QueueingHints given the queued pod's PodInfo (terms parsed once per pod version, cached in
``PodInfo.extra`` and shared with the scheduling cycle) answer exactly as given the bare pod, which
re-parses the terms on every call as upstream does (interpodaffinity/plugin.go
``isSchedulableAfterAssignedPodChange``), including after the queued pod is updated
(``PodInfo.update``: a new object, the cache cleared)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.plugins.test_interpodaffinity import NSS, labels_st, node, pod, terms_st

from kubesched.framework.events import QueueingHint
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.interpodaffinity import hints as ipa_hints
from kubesched.plugins.interpodaffinity.index import TERMS_KEY

VERSIONS = [(1, 34), (1, 35), (1, 36), (1, 37)]


@st.composite
def _other_st(draw):
    if not draw(st.booleans()):
        return None
    node_name = draw(st.sampled_from(["n1", None]))
    return pod("x", draw(labels_st), node_name, draw(st.sampled_from(NSS)),
               draw(terms_st()) if draw(st.booleans()) else None)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=labels_st, ns=st.sampled_from(NSS), terms=terms_st(), relabel=labels_st,
       events=st.lists(st.tuples(_other_st(), _other_st()), min_size=1, max_size=4),
       version=st.sampled_from(VERSIONS))
def test_pod_info_hints_equal_bare_pod(labels, ns, terms, relabel, events, version) -> None:
    target = pod("t", labels, None, ns, terms)
    # the target pod updated: a new object (new labels change matchLabelKeys merges too)
    updated = pod("t", relabel, None, ns, terms)
    updated.metadata.resource_version = "2"
    info = PodInfo(target)
    for p in (target, target, updated, updated, target):
        if info.pod is not p:
            info.update(p)
        for old, new in events:
            want = ipa_hints.is_schedulable_after_pod_change(p, old, new, version=version)
            assert ipa_hints.is_schedulable_after_pod_change(info, old, new, version=version) == want
            assert ipa_hints.pod_change_hint(version)(info, old, new) == want
        n = node("n", zone="z", region="r") if labels else node("n", zone="z")
        want = ipa_hints.is_schedulable_after_node_change(p, None, n)
        assert ipa_hints.is_schedulable_after_node_change(info, None, n) == want


def test_match_label_keys_follow_the_updated_object() -> None:
    """A term with matchLabelKeys depends on the pending pod's labels: after the update the new
    object's terms are used, not the ones cached for the old object."""
    t = {"topologyKey": "zone", "labelSelector": {}, "matchLabelKeys": ["app"]}
    before = pod("t", {"app": "a"}, None, "default", [("podAffinity", t, None)])
    after = pod("t", {"app": "b"}, None, "default", [("podAffinity", t, None)])
    other = pod("x", {"app": "b"}, "n1")
    h = ipa_hints.is_schedulable_after_pod_change
    info = PodInfo(before)
    assert h(info, None, other) == h(info, None, other) == QueueingHint.SKIP
    assert TERMS_KEY in info.extra  # parsed once, kept for the cycle
    info.update(after)
    assert h(info, None, other) == QueueingHint.QUEUE


def test_hints_marked_for_the_queue() -> None:
    """The queue passes the PodInfo only to hints marked ``pod_info_hint``; custom hints get the pod."""
    from kubesched.plugins import nodeaffinity as na
    from kubesched.plugins.podtopologyspread import PodTopologySpread
    marked = [ipa_hints.pod_change_hint((1, 37)), ipa_hints.is_schedulable_after_node_change,
              na.NodeAffinity.is_schedulable_after_node_change,
              PodTopologySpread.is_schedulable_after_pod_change, PodTopologySpread.is_schedulable_after_node_change,
              PodTopologySpread.is_schedulable_after_target_pod_change]
    assert all(getattr(h, "takes_pod_info", False) for h in marked)


# ───────────── PodTopologySpread / NodeAffinity hints: PodInfo == bare pod ─────────────

_LAB = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["a", "b"]), max_size=2)


def _spread_pod(labels, cons, uid, rv="1", node_name=None):
    from kubesched.testing.wrappers import MakePod
    b = MakePod().name("t").uid(uid).labels(labels)
    for skew, key, when, sel, mlk in cons:
        b = b.spread_constraint(skew, key, when, sel, **({"matchLabelKeys": mlk} if mlk else {}))
    if node_name:
        b = b.node(node_name)
    p = b.obj()
    p.metadata.resource_version = rv
    return p


_CONS = st.lists(st.tuples(st.integers(1, 2), st.sampled_from(["zone", "kubernetes.io/hostname"]),
                           st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
                           st.sampled_from([None, {}, {"matchLabels": {"app": "a"}},
                                            {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}]),
                           st.sampled_from([[], ["app"], ["tier", "app"]])), max_size=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=_LAB, relabel=_LAB, cons=_CONS,
       others=st.lists(st.tuples(st.one_of(st.none(), _LAB), st.one_of(st.none(), _LAB),
                                 st.sampled_from(["n1", ""])), min_size=1, max_size=4))
def test_spread_hint_pod_info_equals_bare_pod(labels, relabel, cons, others) -> None:
    from kubesched.framework.handle import Handle
    from kubesched.plugins.podtopologyspread import new
    from kubesched.testing.wrappers import build_table
    pl = new(None, Handle(build_table([node("n1", zone="z")], [])))
    target = _spread_pod(labels, cons, "u-t")
    updated = _spread_pod(relabel, cons, "u-t", rv="2")
    info = PodInfo(target)
    for p in (target, target, updated, updated):
        if info.pod is not p:
            info.update(p)
        for old_l, new_l, nn in others:
            old = None if old_l is None else _spread_pod(old_l, [], "u-x", node_name=nn)
            new_ = None if new_l is None else _spread_pod(new_l, [], "u-x", node_name=nn)
            want = pl.is_schedulable_after_pod_change(p, old, new_)
            assert pl.is_schedulable_after_pod_change(info, old, new_) == want
            if old is not None and new_ is not None:
                assert (pl.is_schedulable_after_target_pod_change(info, old, new_)
                        == pl.is_schedulable_after_target_pod_change(p, old, new_))
        n_old, n_new = node("n", zone="z"), node("n", zone="z", app="a")
        want = pl.is_schedulable_after_node_change(p, n_old, n_new)
        assert pl.is_schedulable_after_node_change(info, n_old, n_new) == want


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sel=_LAB, zones=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2),
       old=st.one_of(st.none(), _LAB), new_l=_LAB)
def test_node_affinity_hint_pod_info_equals_bare_pod(sel, zones, old, new_l) -> None:
    from kubesched.plugins import nodeaffinity as na
    from kubesched.testing.wrappers import MakeNode, MakePod
    pl = na.new(None, None)
    p = MakePod().name("t").node_selector(sel).node_affinity_in("app", zones).obj()
    info = PodInfo(p)
    old_n = None if old is None else MakeNode().name("n").labels(old).obj()
    new_n = MakeNode().name("n").labels(new_l).obj()
    for _ in range(2):
        want = pl.is_schedulable_after_node_change(p, old_n, new_n)
        assert pl.is_schedulable_after_node_change(info, old_n, new_n) == want
