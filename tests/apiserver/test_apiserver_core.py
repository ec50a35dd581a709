"""The box API server over real HTTP: CRUD, errors, selectors, pagination, binding, deletion."""

from __future__ import annotations

import time
from typing import Any

from apiserver_helpers import Client, node, pod

from kubesched.apiserver.launcher import ServerHandle, run_server

PODS = "/api/v1/namespaces/default/pods"


def test_requests_without_credentials_are_anonymous_and_forbidden_but_version_is_public(
        srv: ServerHandle, client: Client) -> None:
    """kube-apiserver's defaults (``--anonymous-auth``, ``--authorization-mode=RBAC``): no credentials →
    ``system:anonymous``, 403 with upstream's message (the bootstrap policy lets it read /version and
    the health checks only); a wrong token → 401."""
    anon = Client.of(srv, None)
    code, body = anon.req("GET", "/api/v1/pods")
    assert code == 403
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group '
                               '"" at the cluster scope', "reason": "Forbidden", "details": {"kind": "pods"},
                    "code": 403}
    assert Client.of(srv, "wrong").req("GET", "/api/v1/pods")[0] == 401
    assert anon.req("GET", "/version")[0] == 200
    assert client.req("GET", "/api/v1/pods")[0] == 200


def test_without_anonymous_auth_or_with_always_allow_no_credentials_is_401(tmp_path: Any) -> None:
    """``--anonymous-auth=false`` → 401; AlwaysAllow turns anonymous authentication off (kube-apiserver:
    "AnonymousAuth is not allowed with the AlwaysAllow authorizer")."""
    for kw in ({"anonymous_auth": False}, {"authorization_mode": "AlwaysAllow"}):
        with run_server(tmp_path / "kc", **kw) as s:
            code, body = Client.of(s, None).req("GET", "/api/v1/pods")
            assert code == 401 and body["message"] == "Unauthorized", kw
            assert Client.of(s, s.token).req("GET", "/api/v1/pods")[0] == 200


def test_discovery_lists_groups_and_subresources(client: Client) -> None:
    assert client.get("/api")["versions"] == ["v1"]
    groups = {g["name"] for g in client.get("/apis")["groups"]}
    assert {"apps", "batch", "policy", "scheduling.k8s.io", "storage.k8s.io", "coordination.k8s.io",
            "events.k8s.io", "resource.k8s.io"} <= groups
    v1 = {r["name"]: r for r in client.get("/api/v1")["resources"]}
    assert v1["pods"]["namespaced"] and v1["pods"]["shortNames"] == ["po"]
    assert v1["pods/binding"]["kind"] == "Binding"
    assert v1["pods/eviction"]["group"] == "policy"
    assert not v1["nodes"]["namespaced"]
    assert client.get("/apis/apps/v1")["groupVersion"] == "apps/v1"
    code, body = client.req("GET", "/apis/example.com/v1/widgets")
    assert code == 404 and body["reason"] == "NotFound"
    assert body["message"] == "the server could not find the requested resource"


def test_create_fills_metadata_and_errors_have_upstream_shape(client: Client) -> None:
    p = client.create(PODS, pod("a"))
    md = p["metadata"]
    assert md["uid"] and md["creationTimestamp"].endswith("Z") and md["generation"] == 1
    assert int(md["resourceVersion"]) > 0 and p["status"]["phase"] == "Pending"
    code, body = client.req("POST", PODS, pod("a"))
    assert code == 409 and body["reason"] == "AlreadyExists"
    assert body["message"] == 'pods "a" already exists'
    assert body["details"] == {"name": "a", "kind": "pods"}
    code, body = client.req("GET", "/apis/apps/v1/namespaces/default/deployments/nope")
    assert code == 404 and body["message"] == 'deployments.apps "nope" not found'
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}
    code, body = client.req("POST", "/api/v1/namespaces/missing/pods", pod("x", "missing"))
    assert code == 404 and body["message"] == 'namespaces "missing" not found'
    code, body = client.req("POST", PODS, pod("x", "other"))
    assert code == 400
    g = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cm-"}}
    made = client.create("/api/v1/namespaces/default/configmaps", g)
    assert made["metadata"]["name"].startswith("cm-") and len(made["metadata"]["name"]) == 8
    code, body = client.req("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {}})
    assert code == 422 and body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "metadata.name"


def test_put_with_a_stale_resource_version_is_a_conflict(client: Client) -> None:
    cm = client.create("/api/v1/namespaces/default/configmaps",
                       {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    cm["data"]["a"] = "2"
    code, v2 = client.req("PUT", "/api/v1/namespaces/default/configmaps/c", cm)
    assert code == 200 and int(v2["metadata"]["resourceVersion"]) > int(cm["metadata"]["resourceVersion"])
    cm["data"]["a"] = "3"
    code, body = client.req("PUT", "/api/v1/namespaces/default/configmaps/c", cm)
    assert code == 409 and body["reason"] == "Conflict"
    assert "the object has been modified" in body["message"]
    # a no-op update keeps the resourceVersion
    code, v3 = client.req("PUT", "/api/v1/namespaces/default/configmaps/c", v2)
    assert code == 200 and v3["metadata"]["resourceVersion"] == v2["metadata"]["resourceVersion"]


def test_status_subresource_and_main_resource_update_their_own_parts(client: Client) -> None:
    client.create(PODS, pod("s"))
    code, p = client.req("PATCH", f"{PODS}/s/status", {"status": {"phase": "Running"}},
                         ctype="application/merge-patch+json")
    assert code == 200 and p["status"]["phase"] == "Running"
    # the main resource ignores status; a spec change bumps generation
    code, p2 = client.req("PATCH", f"{PODS}/s", {"status": {"phase": "Failed"}, "metadata": {"labels": {"a": "b"}}},
                          ctype="application/merge-patch+json")
    assert code == 200 and p2["status"]["phase"] == "Running" and p2["metadata"]["labels"] == {"a": "b"}
    assert p2["metadata"]["generation"] == 1
    code, p3 = client.req("PATCH", f"{PODS}/s", [{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 5}],
                          ctype="application/json-patch+json")
    assert code == 200 and p3["metadata"]["generation"] == 2


def test_list_selectors_pagination_and_resource_versions(srv: ServerHandle, client: Client) -> None:
    for i in range(7):
        client.create(PODS, {**pod(f"p{i}"), "metadata": {"name": f"p{i}", "labels": {"i": str(i % 2)}}})
    client.create("/api/v1/namespaces/kube-system/pods", pod("sys", "kube-system"))
    names = [p["metadata"]["name"] for p in client.get("/api/v1/pods")["items"]]
    assert names == ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "sys"]  # sorted by namespace/name
    assert len(client.get(f"{PODS}?labelSelector=i%3D1")["items"]) == 3
    assert len(client.get(f"{PODS}?labelSelector=i%20in%20(0,1),i!%3D0")["items"]) == 3
    assert [p["metadata"]["name"] for p in client.get("/api/v1/pods?fieldSelector=metadata.namespace%3Dkube-system")
            ["items"]] == ["sys"]
    code, body = client.req("GET", f"{PODS}?fieldSelector=spec.foo%3Dbar")
    assert code == 400 and body["reason"] == "BadRequest"
    first = client.get(f"{PODS}?limit=3")
    assert len(first["items"]) == 3 and first["metadata"]["remainingItemCount"] == 4
    rv = first["metadata"]["resourceVersion"]
    client.req("DELETE", f"{PODS}/p5")  # unscheduled: deleted at once
    client.create(PODS, pod("p9"))
    for drop_snapshots in (False, True):  # pages from the in-memory snapshot, then from SQLite history
        if drop_snapshots:
            srv.call(lambda s: s._snapshots.clear())
        seen = [p["metadata"]["name"] for p in first["items"]]
        token = first["metadata"]["continue"]
        while token:
            page = client.get(f"{PODS}?limit=3&continue={token}")
            assert page["metadata"]["resourceVersion"] == rv  # the list is consistent at the first page's RV
            seen += [p["metadata"]["name"] for p in page["items"]]
            token = page["metadata"].get("continue")
        assert seen == ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]
    code, body = client.req("GET", f"{PODS}?resourceVersion=999999")
    assert code == 504 and body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    exact = client.get(f"{PODS}?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert [p["metadata"]["name"] for p in exact["items"]] == ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]


def test_binding_sets_node_and_condition_and_refuses_rebinding(client: Client) -> None:
    client.create("/api/v1/nodes", node("n1"))
    p = client.create(PODS, pod("b"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b", "uid": p["metadata"]["uid"]},
               "target": {"kind": "Node", "name": "n1"}}
    code, body = client.req("POST", f"{PODS}/b/binding", binding)
    assert (code, body) == (201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                  "code": 201})
    got = client.get(f"{PODS}/b")
    assert got["spec"]["nodeName"] == "n1"
    assert next(c for c in got["status"]["conditions"] if c["type"] == "PodScheduled")["status"] == "True"
    code, body = client.req("POST", f"{PODS}/b/binding", binding)
    assert code == 409 and body["message"].endswith('pod b is already assigned to node "n1"')
    client.create(PODS, pod("c"))
    stale = {**binding, "metadata": {"name": "c", "uid": "not-the-uid"}}
    assert client.req("POST", f"{PODS}/c/binding", stale)[0] == 409
    assert client.req("POST", f"{PODS}/missing/binding", {**binding, "metadata": {"name": "missing"}})[0] == 404


def test_graceful_pod_deletion_then_removal(srv: ServerHandle, client: Client) -> None:
    client.create("/api/v1/nodes", node("n1"))
    client.create(PODS, pod("g", terminationGracePeriodSeconds=1))
    client.req("POST", f"{PODS}/g/binding", {"metadata": {"name": "g"}, "target": {"name": "n1"}})
    code, body = client.req("DELETE", f"{PODS}/g")
    assert code == 200 and body["metadata"]["deletionTimestamp"] and body["metadata"]["deletionGracePeriodSeconds"] == 1
    assert client.req("GET", f"{PODS}/g")[0] == 200
    deadline = time.monotonic() + 60  # a bound for a loaded machine; the loop ends when done
    while client.req("GET", f"{PODS}/g")[0] == 200:
        assert time.monotonic() < deadline, "pod was not removed after its grace period"
        time.sleep(0.1)
    # force: --grace-period=0 --force removes at once
    client.create(PODS, pod("h"))
    client.req("POST", f"{PODS}/h/binding", {"metadata": {"name": "h"}, "target": {"name": "n1"}})
    code, _ = client.req("DELETE", f"{PODS}/h", {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    assert code == 200 and client.req("GET", f"{PODS}/h")[0] == 404


def test_finalizers_hold_deletion_until_removed(client: Client) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    client.create(path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "f", "finalizers": ["x/y"]}})
    code, body = client.req("DELETE", f"{path}/f")
    assert code == 200 and body["metadata"]["deletionTimestamp"]
    assert client.req("GET", f"{path}/f")[0] == 200
    code, _ = client.req("PATCH", f"{path}/f", {"metadata": {"finalizers": None}}, ctype="application/merge-patch+json")
    assert code == 200
    assert client.req("GET", f"{path}/f")[0] == 404


def test_namespace_lifecycle(client: Client) -> None:
    code, body = client.req("DELETE", "/api/v1/namespaces/default")
    assert code == 403 and body["reason"] == "Forbidden"
    client.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    client.create("/api/v1/namespaces/team/pods", pod("p", "team"))
    code, body = client.req("DELETE", "/api/v1/namespaces/team")
    assert code == 200 and body["status"]["phase"] == "Terminating"
    deadline = time.monotonic() + 60  # a bound for a loaded machine; the loop ends when done
    while client.req("GET", "/api/v1/namespaces/team")[0] == 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert client.get("/api/v1/namespaces/team/pods")["items"] == []


def test_core_and_events_k8s_io_events_are_one_object(client: Client) -> None:
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "default"},
          "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
          "reportingInstance": "x", "action": "Binding", "reason": "Scheduled", "type": "Normal",
          "note": "Successfully assigned default/p to n1",
          "regarding": {"kind": "Pod", "namespace": "default", "name": "p", "apiVersion": "v1"}}
    client.create("/apis/events.k8s.io/v1/namespaces/default/events", ev)
    core = client.get("/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp,"
                      "involvedObject.kind%3DPod")["items"]
    assert len(core) == 1 and core[0]["message"] == ev["note"] and core[0]["involvedObject"]["name"] == "p"
    back = client.get("/apis/events.k8s.io/v1/namespaces/default/events/e1")
    assert back["note"] == ev["note"] and back["apiVersion"] == "events.k8s.io/v1"


def test_in_process_create_uses_the_same_pipeline(srv: ServerHandle, client: Client) -> None:
    import pytest

    from kubesched.apiserver.errors import APIError

    made = srv.create(pod("inproc"))
    assert made["metadata"]["uid"] and made["spec"]["schedulerName"] == "default-scheduler"
    assert client.get(f"{PODS}/inproc")["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    with pytest.raises(APIError) as e:
        srv.create(pod("inproc"))
    assert e.value.code == 409
    with pytest.raises(APIError) as e:
        srv.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert e.value.code == 404


def test_events_expire_after_the_event_ttl(srv: ServerHandle, client: Client) -> None:
    from datetime import UTC, datetime, timedelta

    path = "/api/v1/namespaces/default/events"
    for name, when in (("old", "2020-01-01T00:00:00Z"), ("new", None)):
        ev = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
              "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "X",
              "message": "m", "type": "Normal"}
        if when:
            ev["lastTimestamp"] = when
        client.create(path, ev)
    assert srv.call(lambda s: s.expire_events()) == 1
    assert [e["metadata"]["name"] for e in client.get(path)["items"]] == ["new"]
    later = datetime.now(UTC) + timedelta(hours=2)
    assert srv.call(lambda s: s.expire_events(later)) == 1
    assert client.get(path)["items"] == []


def test_scale_subresource(client: Client) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    client.create("/apis/apps/v1/namespaces/default/deployments", dep)
    path = "/apis/apps/v1/namespaces/default/deployments/web/scale"
    sc = client.get(path)
    assert sc["kind"] == "Scale" and sc["spec"]["replicas"] == 2 and sc["status"]["selector"] == "app=web"
    code, sc2 = client.req("PATCH", path, {"spec": {"replicas": 5}}, ctype="application/merge-patch+json")
    assert code == 200 and sc2["spec"]["replicas"] == 5
    d = client.get("/apis/apps/v1/namespaces/default/deployments/web")
    assert d["spec"]["replicas"] == 5 and d["metadata"]["generation"] == 2
    code, _ = client.req("PATCH", path, {"spec": {"replicas": -1}}, ctype="application/merge-patch+json")
    assert code == 422


def test_terminating_namespace_refuses_new_content(client: Client) -> None:
    client.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                         "metadata": {"name": "held", "finalizers": ["example.com/hold"]}})
    client.create("/api/v1/namespaces/held/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                         "metadata": {"name": "c"}})
    code, ns = client.req("DELETE", "/api/v1/namespaces/held")
    assert code == 200 and ns["status"]["phase"] == "Terminating"
    deadline = time.monotonic() + 60  # a bound for a loaded machine; the loop ends when done
    while client.get("/api/v1/namespaces/held/configmaps")["items"]:  # content is removed ...
        assert time.monotonic() < deadline
        time.sleep(0.05)
    code, body = client.req("POST", "/api/v1/namespaces/held/configmaps",
                            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}})
    assert code == 403 and body["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    assert "because it is being terminated" in body["message"]
    # ... and the namespace goes once its last finalizer is removed
    assert client.get("/api/v1/namespaces/held")["status"]["phase"] == "Terminating"
    code, _ = client.req("PATCH", "/api/v1/namespaces/held", {"metadata": {"finalizers": None}},
                         ctype="application/merge-patch+json")
    assert code == 200
    assert client.req("GET", "/api/v1/namespaces/held")[0] == 404
