"""The simulator's resourceclaim controller and PodGroups (DRAWorkloadResourceClaims): claims from
a PodGroup's templates (owned by the group, recorded in its ``status.resourceClaimStatuses``),
members resolving shared entries to the group's claim, and releases — after upstream v1.37.2
``pkg/controller/resourceclaim/controller.go`` (``handlePodGroupClaim``, ``handleClaim``,
``syncClaim``) and ``test/integration/dra/workload_resource_claims.go``."""

from __future__ import annotations

import random
from typing import Any

import msgspec

from kubesched.api import objects as o
from kubesched.sim.resourceclaims import (
    POD_CLAIM_NAME_ANNOTATION,
    create_pod_claims,
    create_pod_group_claims,
    release_pod_claims,
    release_pod_group_claims,
)
from kubesched.sim.store import ClusterStore

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"metadata": {"labels": {"team": "ml"}},
                     "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}}


def pod_group(template: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": "shared"}
    entry["resourceClaimTemplateName" if template else "resourceClaimName"] = "gpu"
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "default", "uid": "pg-uid"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "resourceClaims": [entry]}}


def member(name: str, *entries: dict[str, Any]) -> o.Pod:
    raw = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
           "spec": {"containers": [{"name": "c", "image": "i"}], "resourceClaims": list(entries),
                    "schedulingGroup": {"podGroupName": "pg"}}}
    return o.decode(o.Pod, msgspec.json.decode(msgspec.json.encode(raw)))


SHARED = {"name": "shared", "resourceClaimTemplateName": "gpu"}
OWN = {"name": "own", "resourceClaimTemplateName": "gpu"}


def store_with(*objs: tuple[str, dict]) -> ClusterStore:
    s = ClusterStore()
    for kind, obj in objs:
        s.put_object(kind, obj)
    return s


def test_pod_group_template_claim():
    s = store_with(("ResourceClaimTemplate", TEMPLATE))
    pg = create_pod_group_claims(s, pod_group(), random.Random(0))
    (st,) = pg["status"]["resourceClaimStatuses"]
    assert st["name"] == "shared" and st["resourceClaimName"].startswith("pg-shared-")
    claim = s.get("ResourceClaim", "default", st["resourceClaimName"])
    assert claim["metadata"]["ownerReferences"] == [{"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                                                     "name": "pg", "controller": True, "uid": "pg-uid"}]
    assert claim["metadata"]["annotations"] == {POD_CLAIM_NAME_ANNOTATION: "shared"}
    assert claim["metadata"]["labels"] == {"team": "ml"}
    assert claim["spec"] == TEMPLATE["spec"]["spec"]
    assert create_pod_group_claims(s, pg) is pg  # recorded: nothing more to do


def test_pod_group_without_template_or_claims():
    s = store_with()
    pg = pod_group()
    assert create_pod_group_claims(s, pg) is pg  # the template is missing: retried later
    pg = pod_group(template=False)
    assert create_pod_group_claims(s, pg) is pg  # a named claim is the user's


def test_orphaned_pod_group_claim_is_adopted():
    s = store_with(("ResourceClaimTemplate", TEMPLATE))
    pg = create_pod_group_claims(s, pod_group())
    name = pg["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    again = create_pod_group_claims(s, pod_group())  # the status write was lost
    assert again["status"]["resourceClaimStatuses"] == [{"name": "shared", "resourceClaimName": name}]
    assert len(s.list("ResourceClaim")) == 1


def test_members_share_the_group_claim():
    s = store_with(("ResourceClaimTemplate", TEMPLATE))
    pg = create_pod_group_claims(s, pod_group())
    s.put_object("PodGroup", pg)
    shared_name = pg["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    p1 = create_pod_claims(s, member("p1", SHARED, OWN), workload_claims=True)
    p2 = create_pod_claims(s, member("p2", SHARED), workload_claims=True)
    st1 = {x.name: x.resource_claim_name for x in p1.status.resource_claim_statuses}
    assert st1["shared"] == shared_name and st1["own"].startswith("p1-own-")
    assert [x.resource_claim_name for x in p2.status.resource_claim_statuses] == [shared_name]
    assert len(s.list("ResourceClaim")) == 2  # the group's and p1's own


def test_member_waits_for_group_claim():
    s = store_with(("ResourceClaimTemplate", TEMPLATE), ("PodGroup", pod_group()))
    p = create_pod_claims(s, member("p1", SHARED), workload_claims=True)
    assert p.status.resource_claim_statuses == []
    assert s.list("ResourceClaim") == []


def test_gate_off_member_gets_its_own_claim():
    s = store_with(("ResourceClaimTemplate", TEMPLATE), ("PodGroup", pod_group()))
    p = create_pod_claims(s, member("p1", SHARED))
    (st,) = p.status.resource_claim_statuses
    assert st.resource_claim_name.startswith("p1-shared-")


def test_releases():
    s = store_with(("ResourceClaimTemplate", TEMPLATE))
    pg = create_pod_group_claims(s, pod_group())
    s.put_object("PodGroup", pg)
    name = pg["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = dict(s.get("ResourceClaim", "default", name))
    claim["status"] = {"allocation": {"devices": {"results": []}},
                       "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg",
                                        "uid": "pg-uid"}]}
    s.put_object("ResourceClaim", claim)
    p = create_pod_claims(s, member("p1", SHARED), workload_claims=True)
    release_pod_claims(s, p)  # the group still holds its claim after a member is gone
    assert s.get("ResourceClaim", "default", name)["status"]["reservedFor"][0]["name"] == "pg"
    release_pod_group_claims(s, pg)
    assert s.get("ResourceClaim", "default", name) is None
