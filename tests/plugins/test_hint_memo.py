"""The QueueingHints' per-pod-object memo (plugins/helper/podmemo.py) gives exactly the answers of
the uncached path (upstream re-parses the pending pod's terms on every event,
interpodaffinity/plugin.go ``isSchedulableAfterAssignedPodChange``), including after the pending
pod is replaced by an updated object."""

from __future__ import annotations

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
