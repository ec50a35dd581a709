"""managedFields of plain writes, the same requests against the real kube-apiserver and the box
(``server`` fixture, see conftest.py): a POST records its manager's ``Update`` entry over the
fields it sent plus the defaults decoding adds (``handlers/create.go``: ``UpdateNoErrors`` before
admission), the manager named by ``fieldManager`` or the User-Agent's first segment
(``managerOrUserAgent``: ``kubectl-create``); a PUT moves the fields it changes to its manager
(``managedfieldsupdater.go``), and a later server-side apply conflicts with the creator.

Run with ``KUBESCHED_UPSTREAM_DIR=/work/main/.cache/upstream/v1.37.2`` to hold the box to the real
server; the box alone runs always.
"""

from __future__ import annotations

import json
from typing import Any

from kubesched.testing.upstream import unique_name as unique

UA = {"User-Agent": "kubectl-create/v1.37.2 (linux/amd64) kubernetes/0123456"}


def _managers(obj: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return sorted((e["manager"], e["operation"], e.get("fieldsV1")) for e in obj["metadata"]["managedFields"])


def test_post_and_put_record_update_managers(server: Any, ns: str) -> None:
    name = unique("cm")
    base = f"/api/v1/namespaces/{ns}/configmaps"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"app": "x"}},
          "data": {"a": "1", "b": "2"}}
    status, _, body = server.request("POST", base, cm, headers=UA)
    assert status == 201, body
    assert _managers(body) == [("kubectl-create", "Update", {
        "f:data": {".": {}, "f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})]
    body["data"]["b"] = "3"
    body["data"]["c"] = "4"
    status, _, body = server.request("PUT", f"{base}/{name}?fieldManager=editor", body)
    assert status == 200, body
    assert _managers(body) == [
        ("editor", "Update", {"f:data": {"f:b": {}, "f:c": {}}}),
        ("kubectl-create", "Update", {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {},
                                                                                                 "f:app": {}}}})]
    # a server-side apply of a field the creator set conflicts with the creator
    status, _, body = server.request("PATCH", f"{base}/{name}?fieldManager=alice", json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "9"}}).encode(),
        headers={"Content-Type": "application/apply-patch+yaml"})
    assert status == 409, body
    assert 'conflict with "kubectl-create"' in body["message"] and ".data.a" in body["message"]


def test_post_of_a_deployment_owns_its_defaults(server: Any, ns: str) -> None:
    name = unique("web")
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
         "spec": {"selector": {"matchLabels": {"app": name}},
                  "template": {"metadata": {"labels": {"app": name}},
                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    status, _, body = server.request("POST", f"/apis/apps/v1/namespaces/{ns}/deployments?fieldManager=maker", d,
                                     headers=UA)
    assert status == 201, body
    [(manager, op, fields)] = _managers(body)
    assert (manager, op) == ("maker", "Update")
    spec = fields["f:spec"]
    # defaults decoding adds are the creator's (replicas, strategy, progressDeadlineSeconds, …)
    assert {"f:replicas", "f:revisionHistoryLimit", "f:progressDeadlineSeconds", "f:strategy"} <= set(spec)
    c = spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert {"f:image", "f:imagePullPolicy", "f:terminationMessagePath"} <= set(c)
    assert "f:status" not in fields
