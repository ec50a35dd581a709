"""Label selectors per metav1.LabelSelectorAsSelector and labels.Requirement.Matches."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.labels import Selector, make_requirement, selector_from_label_selector, selector_from_set
from kubesched.api.objects import LabelSelector, LabelSelectorRequirement as R
from kubesched.errors import SelectorError


def sel(match_labels=None, *exprs):
    return selector_from_label_selector(LabelSelector(match_labels=match_labels or {}, match_expressions=list(exprs)))


def test_none_and_empty():
    assert not selector_from_label_selector(None).matches({})
    assert selector_from_label_selector(None) == Selector.nothing()
    assert not Selector.nothing().is_empty
    s = selector_from_label_selector(LabelSelector())
    assert s.is_empty and s.matches({}) and s.matches({"a": "b"}) and s == Selector.everything()


def test_match_labels_and_expressions():
    s = sel({"app": "web"}, R("tier", "In", ["fe", "be"]), R("canary", "DoesNotExist"), R("env", "NotIn", ["prod"]), R("zone", "Exists"))
    assert s.matches({"app": "web", "tier": "fe", "zone": "a"})
    assert s.matches({"app": "web", "tier": "be", "zone": "a", "env": "dev"})
    assert not s.matches({"app": "web", "tier": "fe", "zone": "a", "env": "prod"})
    assert not s.matches({"app": "web", "tier": "fe"})  # zone missing
    assert not s.matches({"app": "web", "tier": "fe", "zone": "a", "canary": ""})
    assert not s.matches({"app": "db", "tier": "fe", "zone": "a"})
    assert [r[0] for r in s.requirements] == ["app", "canary", "env", "tier", "zone"]
    assert s.requirements[0] == ("app", "=", frozenset({"web"}))
    assert not s.is_empty


def test_absent_key_semantics():
    assert sel(None, R("a", "NotIn", ["x"])).matches({})
    assert sel(None, R("a", "DoesNotExist")).matches({})
    assert not sel(None, R("a", "In", ["x"])).matches({})
    assert sel(None, R("a", "In", [""])).matches({"a": ""})


@pytest.mark.parametrize(
    "expr, fragment",
    [
        (R("a", "Foo", ["x"]), '"Foo" is not a valid label selector operator'),
        (R("a", "Gt", ["1"]), '"Gt" is not a valid label selector operator'),
        (R("a", "In", []), "values set can't be empty"),
        (R("a", "NotIn", []), "values set can't be empty"),
        (R("a", "Exists", ["x"]), "values set must be empty"),
        (R("a", "DoesNotExist", ["x"]), "values set must be empty"),
        (R("bad key!", "Exists"), "invalid label key"),
        (R("", "Exists"), "invalid label key"),
        (R("a", "In", ["bad value!"]), "invalid label value"),
    ],
)
def test_invalid(expr, fragment):
    with pytest.raises(SelectorError, match=fragment.replace("(", r"\(")):
        sel(None, expr)


def test_keys_with_prefix():
    s = sel({"app.kubernetes.io/name": "web"})
    assert s.matches({"app.kubernetes.io/name": "web"})
    with pytest.raises(SelectorError):
        sel({"Bad_Prefix/name": "x"})
    with pytest.raises(SelectorError):
        sel({"a" * 64: "x"})


def test_selector_from_set():
    assert selector_from_set({}) == Selector.everything()
    assert selector_from_set(None).matches({"x": "y"})
    s = selector_from_set({"app": "web", "tier": "fe"})
    assert s.matches({"app": "web", "tier": "fe", "other": "1"})
    assert not s.matches({"app": "web"})


def test_gt_lt_requirements():
    gt = Selector([make_requirement("n", "gt", ["5"])])
    assert gt.matches({"n": "6"}) and not gt.matches({"n": "5"}) and not gt.matches({"n": "x"}) and not gt.matches({})
    lt = Selector([make_requirement("n", "lt", ["5"])])
    assert lt.matches({"n": "-3"}) and lt.matches({"n": "+4"}) and not lt.matches({"n": " 4"}) and not lt.matches({"n": "4_0"})
    with pytest.raises(SelectorError, match="must be an integer"):
        make_requirement("n", "gt", ["1.5"])
    with pytest.raises(SelectorError, match="exactly one value"):
        make_requirement("n", "lt", ["1", "2"])


def test_hashable_and_str():
    a = sel({"app": "web"}, R("t", "In", ["b", "a"]))
    b = sel({"app": "web"}, R("t", "In", ["a", "b"]))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert str(a) == "app=web,t in (a,b)"


keys = st.sampled_from(["a", "b", "c"])
vals = st.sampled_from(["x", "y", "z"])
label_sets = st.dictionaries(keys, vals, max_size=3)


@given(
    label_sets,
    st.lists(st.tuples(keys, st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]), st.lists(vals, min_size=1, max_size=2)), max_size=3),
    st.dictionaries(keys, vals, max_size=2),
)
def test_property_matches_definition(labels, exprs, match_labels):
    reqs = [R(k, op, v if op in ("In", "NotIn") else []) for k, op, v in exprs]
    s = sel(match_labels, *reqs)

    def one(r):
        has = r.key in labels
        if r.operator == "In":
            return has and labels[r.key] in r.values
        if r.operator == "NotIn":
            return not has or labels[r.key] not in r.values
        if r.operator == "Exists":
            return has
        return not has

    expected = all(labels.get(k) == v for k, v in match_labels.items()) and all(one(r) for r in reqs)
    assert s.matches(labels) == expected
