"""Custom resource version conversion, the same requests against the real kube-apiserver and the
box (``server`` fixture): ``strategy: None`` serves a stored object at every served version by
rewriting ``apiVersion``; ``strategy: Webhook`` with an unreachable webhook answers 500 with
``conversion webhook for <group>/<version>, Kind=<kind> failed: Post "...": service "..." not
found`` (apiextensions-apiserver v0.37.2 ``conversion/webhook_converter.go``) for a read at
another version and for a create at a non-storage version, while the storage version works.
"""

from __future__ import annotations

import time
from typing import Any

from kubesched.testing.upstream import unique_name as unique

SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def _crd(plural: str, conversion: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.conv.example.com"},
            "spec": {"group": "conv.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "kind": plural.capitalize()[:-1]}, "conversion": conversion,
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": SCHEMA},
                                  {"name": "v2", "served": True, "storage": False, "schema": SCHEMA}]}}


def _ensure(server: Any, crd: dict[str, Any]) -> str:
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
    if server.request("GET", path)[0] == 404:
        status, _, body = server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert status == 201, body
    plural = crd["spec"]["names"]["plural"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if server.request("GET", f"/apis/conv.example.com/v2/{plural}")[0] == 200:
            time.sleep(0.5)
            break
        time.sleep(0.2)
    return plural


def _create(server: Any, path: str, obj: dict[str, Any]) -> tuple[int, Any]:
    for _ in range(20):
        status, _, body = server.request("POST", path, obj)
        if status != 404:
            return status, body
        time.sleep(0.3)
    return status, body


def test_none_strategy_rewrites_api_version(server: Any, ns: str) -> None:
    plural = _ensure(server, _crd("nconvs", {"strategy": "None"}))
    name = unique("a")
    status, body = _create(server, f"/apis/conv.example.com/v2/namespaces/{ns}/{plural}",
                           {"apiVersion": "conv.example.com/v2", "kind": "Nconv", "metadata": {"name": name},
                            "spec": {"x": 1}})
    assert status == 201, body
    status, _, body = server.request("GET", f"/apis/conv.example.com/v1/namespaces/{ns}/{plural}/{name}")
    assert status == 200 and body["apiVersion"] == "conv.example.com/v1" and body["spec"] == {"x": 1}


def test_unreachable_conversion_webhook_is_a_500(server: Any, ns: str) -> None:
    plural = _ensure(server, _crd("wconvs", {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "conv-webhook", "namespace": "default", "path": "/convert"}}}}))
    name = unique("a")
    status, body = _create(server, f"/apis/conv.example.com/v1/namespaces/{ns}/{plural}",
                           {"apiVersion": "conv.example.com/v1", "kind": "Wconv", "metadata": {"name": name}})
    assert status == 201, body
    why = 'failed: Post "https://conv-webhook.default.svc:443/convert?timeout=30s": service "conv-webhook" not found'
    status, _, body = server.request("GET", f"/apis/conv.example.com/v2/namespaces/{ns}/{plural}/{name}")
    assert status == 500, body
    assert body["message"].startswith("Internal error occurred: ")
    assert body["message"].endswith(f"conversion webhook for conv.example.com/v1, Kind=Wconv {why}")
    status, body = _create(server, f"/apis/conv.example.com/v2/namespaces/{ns}/{plural}",
                           {"apiVersion": "conv.example.com/v2", "kind": "Wconv", "metadata": {"name": unique("b")}})
    assert status == 500, body
    assert body["message"] == f"conversion webhook for conv.example.com/v2, Kind=Wconv {why}"
