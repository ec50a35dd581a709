"""DRAManager's index of extended-resource claims by owner (``find_extended_claim``) against
upstream's scan (v1.37.2 ``findExtendedResourceClaim``, extendeddynamicresources.go L118-131, over
``draManager.ResourceClaims().List()``, dra_manager.go L289-300: the assume cache — the claims the
informer delivered, an assumed object in place of its informer one).

The lister here runs ahead of the delivered events, as the simulator's store does (a write changes
the store at once, its informer event is delivered later) and as the live informer's store does
while a scheduling cycle runs on its worker thread: the index answers as the scan of what the
scheduler has seen (upstream), and as the scan of the lister whenever no event is pending.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dra_extended import find_extended_resource_claim
from kubesched.plugins.dynamicresources import DRAManager
from kubesched.plugins.helper.extendedresources import EXTENDED_RESOURCE_CLAIM_ANNOTATION
from kubesched.testing.wrappers import MakePod

PODS = [MakePod().name(n).namespace("ns").uid(u).obj() for n, u in (("p", "u1"), ("p", "u2"), ("q", "u3"))]
NAMES = ["c0", "c1", "c2", "c3"]


class Lister:
    """The store: ahead of the events it queues."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return list(self.objects.values()) if kind == "ResourceClaim" else []

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        return self.objects.get(name) if kind == "ResourceClaim" else None


def claim(name: str, rv: int, annotated: bool, owner: int | None, controller: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "resourceVersion": str(rv)}
    if annotated:
        meta["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    if owner is not None:
        pod = PODS[owner]
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": pod.metadata.name,
                                    "uid": pod.metadata.uid, "controller": controller}]
    return {"metadata": meta, "spec": {}}


op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.booleans(), st.sampled_from([None, 0, 1, 2]),
              st.booleans()),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("deliver"), st.integers(1, 4)),
    st.tuples(st.just("assume"), st.sampled_from(NAMES), st.booleans(), st.sampled_from([None, 0, 1, 2])),
    st.tuples(st.just("restore"), st.sampled_from(NAMES)),
)


def matches(pod: Any, claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    while (c := find_extended_resource_claim(pod, claims)) is not None:
        out.append(c)
        claims = [x for x in claims if x is not c]
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(op, max_size=30), st.booleans())
def test_index_answers_as_the_scan_of_the_claims_the_scheduler_has_seen(ops, live_events):
    lister = Lister()
    mgr = DRAManager(lister)
    mgr.live_events = live_events
    mgr.sync()
    pending: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
    delivered: dict[str, dict[str, Any]] = {}  # what the informer delivered, in its order
    rv = 0
    for o in ops:
        if o[0] == "write":
            rv += 1
            old, new = lister.objects.get(o[1]), claim(o[1], rv, o[2], o[3], o[4])
            lister.objects[o[1]] = new
            pending.append((old, new))
        elif o[0] == "delete" and o[1] in lister.objects:
            pending.append((lister.objects.pop(o[1]), None))
        elif o[0] == "deliver":
            for old, new in pending[:o[1]]:
                if new is None:
                    delivered.pop(old["metadata"]["name"], None)  # type: ignore[index]
                else:
                    delivered[new["metadata"]["name"]] = new
                if live_events:
                    mgr.on_event("ResourceClaim", old, new)
            del pending[:o[1]]
        elif o[0] == "assume" and o[1] in delivered:
            rv += 1
            mgr.assume(claim(o[1], rv, o[2], o[3], True))
        elif o[0] == "restore":
            mgr.restore(claim(o[1], 0, False, None, False))
        if not live_events:
            mgr.sync()  # no informer: every PreFilter reads the lister (which is then what was seen)
            delivered = dict(lister.objects)
            pending.clear()
        seen = [mgr.assumed.get(f"ns/{k}", c) for k, c in delivered.items()]
        seen += [c for k, c in mgr.assumed.items() if k[3:] not in delivered]
        for pod in PODS:
            got, want = mgr.find_extended_claim(pod), matches(pod, seen)
            if not want:
                assert got is None
            else:  # upstream lists a map: with several claims of the pod, any one of them
                assert any(got is c for c in want)
            if not pending and not mgr.assumed:
                assert (got is None) == (find_extended_resource_claim(pod, lister.list("ResourceClaim")) is None)
                if len(want) == 1:
                    assert got is find_extended_resource_claim(pod, lister.list("ResourceClaim"))


def test_a_claim_the_informer_has_not_delivered_is_not_seen():
    """The lister ahead of the events: the scheduler finds the pod's claim once the informer
    delivered it (upstream's assume cache), not when the store already holds it."""
    lister = Lister()
    mgr = DRAManager(lister)
    mgr.live_events = True
    mgr.sync()
    c = claim("c0", 1, True, 0, True)
    lister.objects["c0"] = c
    assert find_extended_resource_claim(PODS[0], lister.list("ResourceClaim")) is c
    assert mgr.find_extended_claim(PODS[0]) is None
    mgr.on_event("ResourceClaim", None, c)
    assert mgr.find_extended_claim(PODS[0]) is c
    assert mgr.find_extended_claim(PODS[1]) is None  # same name, another UID
    c2 = claim("c0", 2, False, 0, True)  # the annotation removed
    mgr.on_event("ResourceClaim", c, c2)
    assert mgr.find_extended_claim(PODS[0]) is None
