"""CRD ``x-kubernetes-validations`` (CEL) rules and string ``format``s, the same requests against
the real kube-apiserver and the box (``server`` fixture, see conftest.py): messages as
apiextensions-apiserver v0.37.2 ``pkg/apiserver/schema/cel/validation.go`` writes them
(``message``, ``messageExpression``, ``failed rule: <rule>``, ``fieldPath``, ``reason``, the value
omitted for objects), transition rules (``oldSelf``) only on update, rules not run on an object
with type errors (``strategy.go`` ``hasBlockingErr``), and ``format`` (kube-openapi strfmt).

Run with ``KUBESCHED_UPSTREAM_DIR=/work/main/.cache/upstream/v1.37.2`` to hold the box to the real
server; the box alone runs always.
"""

from __future__ import annotations

import time
from typing import Any

from kubesched.testing.upstream import unique_name as unique

NAME = "celwidgets.cel.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": NAME},
    "spec": {"group": "cel.example.com", "scope": "Namespaced",
             "names": {"plural": "celwidgets", "kind": "CelWidget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object",
                 "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('w')",
                                               "message": "name must start with w"}],
                 "properties": {"spec": {
                     "type": "object",
                     "x-kubernetes-validations": [
                         {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                         {"rule": "self.min >= 0"},
                         {"rule": "self.max < 100", "messageExpression": "self.max > 1000 ? 'max is huge' : 'max is over 99'",
                          "fieldPath": ".max"},
                         {"rule": "!has(self.mode) || self.mode != 'legacy'", "reason": "FieldValueForbidden",
                          "message": "legacy mode is gone", "fieldPath": ".mode"},
                         {"rule": "self.max == oldSelf.max || self.max > oldSelf.max",
                          "message": "max may only grow"},
                     ],
                     "properties": {
                         "min": {"type": "integer"}, "max": {"type": "integer"},
                         "mode": {"type": "string", "maxLength": 20},
                         "owner": {"type": "string", "format": "email"},
                         "id": {"type": "string", "format": "uuid"},
                         "addr": {"type": "string", "format": "ipv4"},
                         "image": {"type": "string", "maxLength": 100, "x-kubernetes-validations": [
                             {"rule": "self == oldSelf", "message": "image is immutable"},
                             {"rule": "self.size() < 10"}]},
                     }}}}}}]},
}


def _ensure_crd(server: Any, crd: dict[str, Any] = CRD) -> None:
    """Create ``crd`` (group ``cel.example.com``, version v1) unless present; wait until it is served."""
    name, plural = crd["metadata"]["name"], crd["spec"]["names"]["plural"]
    if server.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")[0] == 404:
        status, _, body = server.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert status == 201, body["message"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        status, _, body = server.request("GET", "/apis/cel.example.com/v1")
        if status == 200 and any(r["name"] == plural for r in body.get("resources", ())):
            time.sleep(0.5)  # the real server's handler can lag discovery briefly
            return
        time.sleep(0.2)
    raise AssertionError("CRD not served")


def _w(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cel.example.com/v1", "kind": "CelWidget", "metadata": {"name": name},
            "spec": {"min": 1, "max": 5, **spec}}


def _create(server: Any, ns: str, obj: dict[str, Any], plural: str = "celwidgets") -> tuple[int, Any]:
    for _ in range(20):  # a fresh CRD may answer 404 for a moment on the real server
        status, _, body = server.request("POST", f"/apis/cel.example.com/v1/namespaces/{ns}/{plural}", obj)
        if status != 404:
            return status, body
        time.sleep(0.3)
    return status, body


def _causes(body: Any) -> list[str]:
    return sorted(f"{c.get('field')}: {c.get('message')}" for c in body["details"]["causes"])


def test_cel_rules_messages_and_transition_rules(server: Any, ns: str) -> None:
    _ensure_crd(server)
    good = unique("w")
    status, body = _create(server, ns, _w(good, image="nginx"))
    assert status == 201, body
    bad = unique("w")
    status, body = _create(server, ns, _w(bad, min=200, max=150, mode="legacy"))
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        f'CelWidget.cel.example.com "{bad}" is invalid: [spec: Invalid value: min must not exceed max, '
        'spec.max: Invalid value: max is over 99, spec.mode: Forbidden: legacy mode is gone]')
    # failed rule without a message; the root rule sees metadata.name
    status, body = _create(server, ns, _w("x" + unique("a"), min=-1))
    assert status == 422, body
    assert 'spec: Invalid value: failed rule: self.min >= 0' in body["message"]
    assert "<nil>: Invalid value: name must start with w" in body["message"]
    # a type error: the rules are not run
    status, body = _create(server, ns, _w(unique("w"), min="one"))
    assert status == 422, body
    assert body["message"].endswith('some validation rules were not checked because the object was invalid; '
                                    'correct the existing errors to complete validation]')
    # transition rules: oldSelf on update only
    path = f"/apis/cel.example.com/v1/namespaces/{ns}/celwidgets/{good}"
    _, _, cur = server.request("GET", path)
    cur["spec"].update(max=3, image="redis")
    status, _, body = server.request("PUT", path, cur)
    assert status == 422, body
    assert body["message"] == (f'CelWidget.cel.example.com "{good}" is invalid: [spec: Invalid value: max may only '
                               'grow, spec.image: Invalid value: "redis": image is immutable]')
    cur["spec"].update(max=9, image="nginx")
    status, _, body = server.request("PUT", path, cur)
    assert status == 200, body


def test_formats(server: Any, ns: str) -> None:
    _ensure_crd(server)
    name = unique("w")
    status, body = _create(server, ns, _w(name, owner="not-an-email", id="1234", addr="10.0.0.300"))
    assert status == 422, body
    msg = body["message"]
    assert 'spec.owner: Invalid value: "not-an-email": spec.owner in body must be of type email: "not-an-email"' in msg
    assert 'spec.id: Invalid value: "1234": spec.id in body must be of type uuid: "1234"' in msg
    assert 'spec.addr: Invalid value: "10.0.0.300": spec.addr in body must be of type ipv4: "10.0.0.300"' in msg
    status, body = _create(server, ns, _w(unique("w"), owner="a@example.com",
                                          id="0b6f4c2e-6a0e-4b57-9a44-3c2f0f3f1e7d", addr="10.0.0.3"))
    assert status == 201, body
