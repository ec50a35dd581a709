"""Admission and validation through the HTTP API (the modules are unit-tested on their own)."""

from __future__ import annotations

from apiserver_helpers import Client, node, pod

PODS = "/api/v1/namespaces/default/pods"
PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"


def test_priority_class_resolves_priority_and_missing_ones_are_forbidden(client: Client) -> None:
    names = [p["metadata"]["name"] for p in client.get(PCS)["items"]]
    assert names == ["system-cluster-critical", "system-node-critical"]
    client.create(PCS, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"})
    p = client.create(PODS, pod("a", priorityClassName="high"))
    assert p["spec"]["priority"] == 1000 and p["spec"]["preemptionPolicy"] == "Never"
    assert p["spec"]["schedulerName"] == "default-scheduler"
    crit = client.create(PODS, pod("c", priorityClassName="system-node-critical"))
    assert crit["spec"]["priority"] == 2000001000
    code, body = client.req("POST", PODS, pod("b", priorityClassName="nope"))
    assert code == 403 and body["reason"] == "Forbidden"
    assert "no PriorityClass with name nope was found" in body["message"]


def test_invalid_objects_get_422_with_field_causes(client: Client) -> None:
    bad = pod("neg")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "-1"}}
    code, body = client.req("POST", PODS, bad)
    assert code == 422 and body["reason"] == "Invalid"
    assert body["message"].startswith('Pod "neg" is invalid: spec.containers[0].resources.requests[cpu]')
    assert body["details"]["causes"][0]["field"] == "spec.containers[0].resources.requests[cpu]"
    code, body = client.req("POST", PODS, pod("Upper_Case"))
    assert code == 422 and body["details"]["causes"][0]["field"] == "metadata.name"


def test_node_allocatable_defaults_from_capacity(client: Client) -> None:
    n = node("n1")
    n["status"].pop("allocatable", None)
    made = client.create("/api/v1/nodes", n)
    assert made["status"]["allocatable"] == made["status"]["capacity"]


def test_strict_field_validation_rejects_unknown_fields_and_warn_reports_them(client: Client) -> None:
    p = pod("u")
    p["spec"]["containers"][0]["imagee"] = "x"
    code, body = client.req("POST", f"{PODS}?fieldValidation=Strict", p)
    assert code == 400 and 'unknown field "spec.containers[0].imagee"' in body["message"]
    code, body = client.req("POST", f"{PODS}?fieldValidation=Ignore", p)
    assert code == 201


def test_status_patch_as_the_scheduler_sends_it(client: Client) -> None:
    """util.PatchPodStatus: strategic merge patch with $setElementOrder/conditions."""
    client.create(PODS, pod("s"))
    patch = {"status": {"$setElementOrder/conditions": [{"type": "PodScheduled"}],
                        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                        "message": "0/1 nodes are available", "lastProbeTime": None,
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                        "nominatedNodeName": "n1"}}
    code, body = client.req("PATCH", f"{PODS}/s/status", patch, ctype="application/strategic-merge-patch+json")
    assert code == 200, body
    assert body["status"]["conditions"][0]["reason"] == "Unschedulable"
    assert body["status"]["nominatedNodeName"] == "n1"
    assert client.get(f"{PODS}?fieldSelector=status.nominatedNodeName%3Dn1")["items"][0]["metadata"]["name"] == "s"


def test_pod_spec_is_immutable_except_upstreams_list(client: Client) -> None:
    client.create(PODS, pod("m", tolerations=[{"key": "a", "operator": "Exists"}],
                            schedulingGates=[{"name": "g1"}, {"name": "g2"}]))
    mp = "application/merge-patch+json"
    code, body = client.req("PATCH", f"{PODS}/m", {"spec": {"restartPolicy": "Never"}}, ctype=mp)
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec"
    assert "pod updates may not change fields other than" in body["message"]
    code, body = client.req("PATCH", f"{PODS}/m", {"spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                            ctype="application/strategic-merge-patch+json")
    assert code == 200 and body["spec"]["containers"][0]["image"] == "nginx"
    code, body = client.req("PATCH", f"{PODS}/m", {"spec": {"schedulingGates": [{"name": "g1"}]}}, ctype=mp)
    assert code == 200 and body["spec"]["schedulingGates"] == [{"name": "g1"}]
    code, body = client.req("PATCH", f"{PODS}/m", {"spec": {"schedulingGates": [{"name": "g1"}, {"name": "new"}]}},
                            ctype=mp)
    assert code == 422 and body["details"]["causes"][0]["field"].startswith("spec.schedulingGates")
    live = client.get(f"{PODS}/m")
    n = len(live["spec"]["tolerations"])  # ours + DefaultTolerationSeconds' not-ready/unreachable
    live["spec"]["tolerations"].append({"key": "b", "operator": "Exists"})
    code, body = client.req("PUT", f"{PODS}/m", live)
    assert code == 200 and len(body["spec"]["tolerations"]) == n + 1
    code, body = client.req("PATCH", f"{PODS}/m", {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
                            ctype=mp)
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.tolerations"
    # while gated, node affinity may be added (mutable scheduling directives)
    code, body = client.req("PATCH", f"{PODS}/m", {"spec": {"nodeSelector": {"zone": "a"}}}, ctype=mp)
    assert code == 200 and body["spec"]["nodeSelector"] == {"zone": "a"}
