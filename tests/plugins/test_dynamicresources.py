"""DynamicResources: v1.34 behaviour for pods without claims (PreFilter writes state then Skips;
PostFilter "no new claims to deallocate"), missing claims, and the unsupported path."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_table import NodeTable
from kubesched.plugins import dynamicresources as dra
from kubesched.testing.wrappers import MakePod


class Lister:
    def __init__(self, *objs):
        self.objs = {(k, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for k, o in objs}

    def get(self, kind, namespace, name):
        return self.objs.get((kind, namespace or "", name))


def claim_pod(*claims, statuses=()):
    base = MakePod().name("my-pod").uid("uid").obj()
    spec = SimpleNamespace(**{f: getattr(base.spec, f) for f in base.spec.__struct_fields__},
                           resource_claims=list(claims))
    status = {"resourceClaimStatuses": list(statuses)}
    return SimpleNamespace(metadata=base.metadata, spec=spec, status=status)


def _pl(*objs):
    return dra.new(None, Handle(nodes=NodeTable(), lister=Lister(*objs)))


def test_pod_without_claims():
    pl = _pl()
    pod = MakePod().obj()
    state = CycleState()
    assert pl.pre_enqueue(pod) is None
    res, st = pl.pre_filter(state, pod, NodeTable())
    assert res is None and st.code == Code.SKIP
    assert isinstance(state.read(dra.STATE_KEY), dra.StateData)  # written before skipping
    _, pst = pl.post_filter(state, pod, {})
    assert pst.code == Code.UNSCHEDULABLE and pst.reasons == ("no new claims to deallocate",)
    assert pl.reserve(state, pod, "n") is None and pl.pre_bind(state, pod, "n") is None
    pl.unreserve(state, pod, "n")


def test_post_filter_without_pre_filter_state():
    _, st = _pl().post_filter(CycleState(), MakePod().obj(), {})
    assert st.code == Code.ERROR and st.reasons == ("not found",)


@pytest.mark.parametrize("claims,statuses,msg", [
    ([{"name": "r", "resourceClaimName": "my-claim"}], [], 'could not find ResourceClaim "default/my-claim"'),
    ([{"name": "r", "resourceClaimTemplateName": "t"}], [], 'pod "default/my-pod": ResourceClaim not created yet'),
    ([{"name": "r", "resourceClaimTemplateName": "t"}], [{"name": "r", "resourceClaimName": "gen"}],
     'could not find ResourceClaim "default/gen"'),
], ids=["claim-missing", "template-not-created", "generated-claim-missing"])
def test_missing_claims(claims, statuses, msg):
    pl = _pl()
    pod = claim_pod(*claims, statuses=statuses)
    st = pl.pre_enqueue(pod)
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == (msg,)
    state = CycleState()
    _, st = pl.pre_filter(state, pod, NodeTable())
    assert st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and st.reasons == (msg,)
    assert pl.post_filter(state, pod, {})[1].reasons == ("no new claims to deallocate",)


def test_existing_claims_are_unsupported():
    pl = _pl(("ResourceClaim", {"metadata": {"name": "my-claim", "namespace": "default"}}))
    pod = claim_pod({"name": "r", "resourceClaimName": "my-claim"})
    assert pl.pre_enqueue(pod) is None
    _, st = pl.pre_filter(CycleState(), pod, NodeTable())
    assert st.code == Code.ERROR and "not supported" in st.message()


def test_deleted_claim():
    pl = _pl(("ResourceClaim", {"metadata": {"name": "c", "namespace": "default",
                                             "deletionTimestamp": "2024-01-01T00:00:00Z"}}))
    st = pl.pre_enqueue(claim_pod({"name": "r", "resourceClaimName": "c"}))
    assert st.reasons == ('resourceclaim "c" is being deleted',)
