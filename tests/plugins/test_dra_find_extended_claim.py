"""``find_extended_resource_claim`` (upstream ``findExtendedResourceClaim``, v1.37.2
``extendeddynamicresources.go`` L118-131): the claim annotated
``resource.kubernetes.io/extended-resource-claim: "true"`` whose controlling owner is the pod, by
name and UID; the first such claim in list order; claims are read once per object."""

from __future__ import annotations

from typing import Any

from kubesched.plugins.dra_extended import find_extended_resource_claim
from kubesched.plugins.helper.extendedresources import EXTENDED_RESOURCE_CLAIM_ANNOTATION
from kubesched.testing.wrappers import MakePod

POD = MakePod().name("p").namespace("ns").uid("uid-1").obj()


def claim(name: str, annotation: str | None = "true", owner: str = "p", uid: str | None = "uid-1",
          controller: bool | None = True) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "name": owner}
    if uid is not None:
        ref["uid"] = uid
    if controller is not None:
        ref["controller"] = controller
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "ownerReferences": [ref]}
    if annotation is not None:
        meta["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: annotation}
    return {"metadata": meta, "spec": {}}


def test_annotation_and_controlling_owner_are_required():
    for other in (claim("a", annotation=None), claim("b", annotation="false"), claim("c", controller=False),
                  claim("d", controller=None), claim("e", owner="q"), claim("f", uid="uid-2"), claim("g", uid=None)):
        assert find_extended_resource_claim(POD, [other]) is None, other["metadata"]["name"]
    assert find_extended_resource_claim(POD, [{"metadata": None}, {}]) is None


def test_first_match_in_list_order_and_replaced_objects():
    a, b = claim("a"), claim("b")
    assert find_extended_resource_claim(POD, [claim("x", owner="q"), a, b]) is a
    assert find_extended_resource_claim(POD, [b, a]) is b
    # an object replaced by one without the annotation (a new object: objects are not mutated)
    a2 = claim("a", annotation=None)
    assert find_extended_resource_claim(POD, [a2]) is None
    no_uid = MakePod().name("p").namespace("ns").obj()
    assert find_extended_resource_claim(no_uid, [claim("g", uid=None)])["metadata"]["name"] == "g"
