"""The QueueingHints' per-pod-object memo (plugins/helper/podmemo.py) gives exactly the answers of
the uncached path (upstream re-parses the pending pod's terms on every event,
interpodaffinity/plugin.go ``isSchedulableAfterAssignedPodChange``), including after the pending
pod is replaced by an updated object."""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.plugins.test_interpodaffinity import NSS, labels_st, node, pod, terms_st

from kubesched.plugins.helper.podmemo import PodMemo
from kubesched.plugins.interpodaffinity import hints as ipa_hints
from kubesched.plugins.interpodaffinity.terms import parse_pod_terms

VERSIONS = [(1, 34), (1, 35), (1, 36), (1, 37)]


def _uncached(fn, *args, **kw):
    with mock.patch.object(ipa_hints, "hint_pod_terms", parse_pod_terms):
        return fn(*args, **kw)


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
def test_memoised_hints_equal_uncached(labels, ns, terms, relabel, events, version) -> None:
    target = pod("t", labels, None, ns, terms)
    # the target pod updated: a new object (new labels change matchLabelKeys merges too)
    updated = pod("t", relabel, None, ns, terms)
    updated.metadata.resource_version = "2"
    for p in (target, target, updated, updated, target):
        for old, new in events:
            want = _uncached(ipa_hints.is_schedulable_after_pod_change, p, old, new, version=version)
            assert ipa_hints.is_schedulable_after_pod_change(p, old, new, version=version) == want
        n = node("n", zone="z", region="r") if labels else node("n", zone="z")
        want = _uncached(ipa_hints.is_schedulable_after_node_change, p, None, n)
        assert ipa_hints.is_schedulable_after_node_change(p, None, n) == want


def test_match_label_keys_follow_the_updated_object() -> None:
    """A term with matchLabelKeys depends on the pending pod's labels: the updated object's terms
    are used, not the memoised ones of the old object."""
    t = {"topologyKey": "zone", "labelSelector": {}, "matchLabelKeys": ["app"]}
    before = pod("t", {"app": "a"}, None, "default", [("podAffinity", t, None)])
    after = pod("t", {"app": "b"}, None, "default", [("podAffinity", t, None)])
    other = pod("x", {"app": "b"}, "n1")
    h = ipa_hints.is_schedulable_after_pod_change
    assert h(before, None, other) == h(before, None, other) == ipa_hints.QueueingHint.SKIP
    assert h(after, None, other) == ipa_hints.QueueingHint.QUEUE


def test_pod_memo_validity_and_bound() -> None:
    calls: list[str] = []

    def derive(p):
        calls.append(p.metadata.resource_version)
        return p.metadata.name

    memo: PodMemo[str] = PodMemo(derive, capacity=2)
    a = pod("a")
    assert memo.get(a) == memo.get(a) == "a" and len(calls) == 1
    a.metadata.resource_version = "7"  # an in-place bump invalidates
    memo.get(a)
    assert calls == ["", "7"]
    b, c = pod("b"), pod("c")
    memo.get(b)
    memo.get(c)  # evicts the oldest (a)
    assert len(memo) == 2
    memo.get(a)
    assert calls == ["", "7", "", "", "7"]


def test_pod_memo_does_not_keep_errors() -> None:
    n = {"calls": 0}

    def derive(p):
        n["calls"] += 1
        raise ValueError("bad")

    memo: PodMemo[str] = PodMemo(derive)
    a = pod("a")
    for _ in range(2):
        with pytest.raises(ValueError):
            memo.get(a)
    assert n["calls"] == 2 and len(memo) == 0


# ───────────── PodTopologySpread / NodeAffinity hints: memoised == uncached ─────────────

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
def test_spread_hint_memo_equals_uncached(labels, relabel, cons, others) -> None:
    from kubesched.framework.handle import Handle
    from kubesched.plugins.podtopologyspread import new
    from kubesched.testing.wrappers import build_table
    pl = new(None, Handle(build_table([node("n1", zone="z")], [])))
    target = _spread_pod(labels, cons, "u-t")
    updated = _spread_pod(relabel, cons, "u-t", rv="2")
    for p in (target, target, updated, updated):
        for old_l, new_l, nn in others:
            old = None if old_l is None else _spread_pod(old_l, [], "u-x", node_name=nn)
            new_ = None if new_l is None else _spread_pod(new_l, [], "u-x", node_name=nn)
            got = pl.is_schedulable_after_pod_change(p, old, new_)
            with mock.patch.object(pl, "_explicit_memo", SimpleNamespace(get=pl._parse_explicit)):
                assert got == pl.is_schedulable_after_pod_change(p, old, new_)
        n_old, n_new = node("n", zone="z"), node("n", zone="z", app="a")
        got = pl.is_schedulable_after_node_change(p, n_old, n_new)
        with mock.patch.object(pl, "_explicit_memo", SimpleNamespace(get=pl._parse_explicit)):
            assert got == pl.is_schedulable_after_node_change(p, n_old, n_new)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sel=_LAB, zones=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=2),
       old=st.one_of(st.none(), _LAB), new_l=_LAB)
def test_node_affinity_hint_memo_equals_uncached(sel, zones, old, new_l) -> None:
    from kubesched.api.nodeselector import RequiredNodeAffinity
    from kubesched.plugins import nodeaffinity as na
    from kubesched.testing.wrappers import MakeNode, MakePod
    pl = na.new(None, None)
    p = MakePod().name("t").node_selector(sel).node_affinity_in("app", zones).obj()
    old_n = None if old is None else MakeNode().name("n").labels(old).obj()
    new_n = MakeNode().name("n").labels(new_l).obj()
    for _ in range(2):
        got = pl.is_schedulable_after_node_change(p, old_n, new_n)
        with mock.patch.object(na, "_hint_required", RequiredNodeAffinity):
            assert got == pl.is_schedulable_after_node_change(p, old_n, new_n)
