"""Node selectors / node affinity per upstream component-helpers nodeaffinity."""

from __future__ import annotations

import pytest

from kubesched.api.nodeselector import NodeSelectorMatcher, PreferredSchedulingTerms, RequiredNodeAffinity
from kubesched.api.objects import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement as R,
    NodeSelectorTerm as Term,
    Pod,
    PodSpec,
    PreferredSchedulingTerm,
)
from kubesched.errors import SelectorError


def matcher(*terms):
    return NodeSelectorMatcher(NodeSelector(node_selector_terms=list(terms)))


def test_terms_are_ored_and_anded_inside():
    m = matcher(
        Term(match_expressions=[R("zone", "In", ["a"]), R("disk", "Exists")]),
        Term(match_fields=[R("metadata.name", "In", ["n9"])]),
    )
    assert m.match({"zone": "a", "disk": "ssd"}, "n1")
    assert not m.match({"zone": "a"}, "n1")
    assert m.match({}, "n9")
    assert not m.errors


def test_expressions_and_fields_are_anded():
    m = matcher(Term(match_expressions=[R("zone", "In", ["a"])], match_fields=[R("metadata.name", "NotIn", ["n2"])]))
    assert m.match({"zone": "a"}, "n1")
    assert not m.match({"zone": "a"}, "n2")
    assert not m.match({"zone": "b"}, "n1")


def test_empty_terms_match_nothing():
    assert not matcher().match({"a": "b"}, "n")
    assert not matcher(Term()).match({"a": "b"}, "n")
    assert not NodeSelectorMatcher(None).match({}, "n")


@pytest.mark.parametrize(
    "req, labels, expected",
    [
        (R("n", "Gt", ["5"]), {"n": "6"}, True),
        (R("n", "Gt", ["5"]), {"n": "5"}, False),
        (R("n", "Lt", ["5"]), {"n": "4"}, True),
        (R("n", "Lt", ["5"]), {"n": "abc"}, False),  # non-integer label: no match
        (R("n", "Lt", ["5"]), {}, False),
        (R("n", "NotIn", ["x"]), {}, True),
        (R("n", "DoesNotExist", []), {}, True),
        (R("n", "Exists", []), {"n": ""}, True),
        (R("n", "In", ["a", "b"]), {"n": "b"}, True),
    ],
)
def test_operators(req, labels, expected):
    assert matcher(Term(match_expressions=[req])).match(labels, "node") is expected


@pytest.mark.parametrize(
    "term, fragment",
    [
        (Term(match_expressions=[R("n", "Foo", ["1"])]), "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: 'Foo'"),
        (Term(match_expressions=[R("n", "Gt", ["1", "2"])]), "exactly one value"),
        (Term(match_expressions=[R("n", "Gt", ["x"])]), "must be an integer"),
        (Term(match_expressions=[R("n", "In", [])]), "values set can't be empty"),
        (Term(match_expressions=[R("n", "Exists", ["x"])]), "values set must be empty"),
        (Term(match_fields=[R("metadata.name", "In", ["a", "b"])]), "matchFields[0].values: Invalid value: ['a', 'b']: must have one element"),
        (Term(match_fields=[R("metadata.name", "Exists", [])]), "matchFields[0].operator: Unsupported value: 'Exists'"),
    ],
)
def test_lazy_errors(term, fragment):
    ok = Term(match_expressions=[R("zone", "Exists")])
    m = matcher(term, ok)
    assert any(fragment in e for e in m.errors), m.errors
    assert not m.match({}, "n")  # bad term never matches
    assert m.match({"zone": "a"}, "n")  # the other term still can
    assert m.match_with_errors({"zone": "a"}, "n") == (True, [])
    matched, errs = m.match_with_errors({}, "n")
    assert not matched and errs == m.errors


def test_field_quirks():
    m = matcher(Term(match_fields=[R("metadata.name", "In", ["n1"])]))
    assert m.match({}, "")  # upstream: no node fields when the name is empty -> not checked
    unknown = matcher(Term(match_fields=[R("spec.foo", "NotIn", ["x"])]))
    assert unknown.match({}, "n1")


def pod_with(node_selector=None, required=None):
    aff = None
    if required is not None:
        aff = Affinity(node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=required))
    return Pod(spec=PodSpec(node_selector=node_selector or {}, affinity=aff))


def test_required_node_affinity():
    assert RequiredNodeAffinity(pod_with()).match({}, "n")
    r = RequiredNodeAffinity(pod_with({"disk": "ssd"}, NodeSelector([Term(match_expressions=[R("zone", "In", ["a"])])])))
    assert r.match({"disk": "ssd", "zone": "a"}, "n")
    assert not r.match({"disk": "hdd", "zone": "a"}, "n")
    assert not r.match({"disk": "ssd", "zone": "b"}, "n")
    # a required NodeSelector with no terms matches no node
    assert not RequiredNodeAffinity(pod_with(required=NodeSelector())).match({"a": "b"}, "n")


def test_preferred_terms_score():
    terms = [
        PreferredSchedulingTerm(weight=5, preference=Term(match_expressions=[R("zone", "In", ["a"])])),
        PreferredSchedulingTerm(weight=3, preference=Term(match_fields=[R("metadata.name", "In", ["n1"])])),
        PreferredSchedulingTerm(weight=0, preference=Term(match_expressions=[R("zone", "Exists")])),  # skipped
        PreferredSchedulingTerm(weight=7, preference=Term()),  # empty: matches nothing
    ]
    p = PreferredSchedulingTerms(terms)
    assert p.score({"zone": "a"}, "n1") == 8
    assert p.score({"zone": "a"}, "n2") == 5
    assert p.score({}, "n2") == 0
    with pytest.raises(SelectorError, match="Unsupported value"):
        PreferredSchedulingTerms([PreferredSchedulingTerm(weight=1, preference=Term(match_expressions=[R("a", "Bad")]))])
    # a weight-0 term is not even parsed
    assert PreferredSchedulingTerms([PreferredSchedulingTerm(weight=0, preference=Term(match_expressions=[R("a", "Bad")]))]).score({}, "n") == 0
