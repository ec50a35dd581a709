"""Kubernetes' CEL libraries in CRD rules, the same requests against the real kube-apiserver
v1.37.2 and the box (``server`` fixture): k8s.io/apiserver@v0.37.2 ``pkg/cel/library``
(quantity, url, regex, lists, ip/cidr) and cel-go's strings extension, with their runtime errors
as ``<error> evaluating rule: <rule>`` (apiextensions-apiserver ``schema/cel/validation.go``).

Run with ``KUBESCHED_UPSTREAM_DIR=/work/main/.cache/upstream/v1.37.2`` to hold the box to the real
server; the box alone runs always.
"""

from __future__ import annotations

from typing import Any

from test_crd_cel import _causes, _create, _ensure_crd

from kubesched.testing.upstream import unique_name as unique

NAME = "cellibs.cel.example.com"
_S = {"type": "string", "maxLength": 64}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": NAME},
    "spec": {"group": "cel.example.com", "scope": "Namespaced",
             "names": {"plural": "cellibs", "kind": "CelLib"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object",
                 "properties": {"spec": {
                     "type": "object",
                     "x-kubernetes-validations": [
                         {"rule": "quantity(self.mem).isLessThan(quantity('1Gi'))", "message": "mem under 1Gi"},
                         {"rule": "isURL(self.endpoint) && url(self.endpoint).getScheme() == 'https'",
                          "message": "https endpoint"},
                         {"rule": "url(self.endpoint).getPort() != '8080'"},
                         {"rule": "self.nums.isSorted() && self.nums.sum() < 100"},
                         {"rule": "self.nums.max() < 50", "message": "nums under 50"},
                         {"rule": "self.tags.all(t, t.lowerAscii() == t)",
                          "messageExpression": "'tags must be lower case: ' + self.tags.join(',')"},
                         {"rule": "self.label.find('[0-9]+') == ''", "message": "no digits"},
                         {"rule": "self.label.split('-').size() <= 2"},
                         {"rule": "cidr(self.net).containsIP(self.addr)", "message": "addr outside net"},
                         {"rule": "self.nums.indexOf(7) == -1 && self.label.indexOf('x') == -1"},
                     ],
                     "properties": {
                         "mem": _S, "endpoint": _S, "label": _S, "net": _S, "addr": _S,
                         "nums": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
                         "tags": {"type": "array", "maxItems": 10, "items": _S},
                     }}}}}}]},
}
GOOD = {"mem": "512Mi", "endpoint": "https://example.com/api", "nums": [1, 2, 3], "tags": ["a", "b"],
        "label": "web-app", "net": "10.0.0.0/8", "addr": "10.1.2.3"}


def _new(server: Any, ns: str, **spec: Any) -> tuple[int, Any]:
    obj = {"apiVersion": "cel.example.com/v1", "kind": "CelLib", "metadata": {"name": unique("l")},
           "spec": {**GOOD, **spec}}
    return _create(server, ns, obj, "cellibs")


def test_library_functions_pass_and_fail_as_upstream(server: Any, ns: str) -> None:
    _ensure_crd(server, CRD)
    status, body = _new(server, ns)
    assert status == 201, body
    status, body = _new(server, ns, mem="2Gi", endpoint="http://example.com:8080/", nums=[3, 1, 99],
                           tags=["a", "B"], label="web1-x-y", addr="192.168.0.1")
    assert status == 422, body
    assert _causes(body) == sorted([
        "spec: Invalid value: mem under 1Gi",
        "spec: Invalid value: https endpoint",
        "spec: Invalid value: failed rule: url(self.endpoint).getPort() != '8080'",
        "spec: Invalid value: failed rule: self.nums.isSorted() && self.nums.sum() < 100",
        "spec: Invalid value: nums under 50",
        "spec: Invalid value: tags must be lower case: a,B",
        "spec: Invalid value: no digits",
        "spec: Invalid value: failed rule: self.label.split('-').size() <= 2",
        "spec: Invalid value: addr outside net",
        "spec: Invalid value: failed rule: self.nums.indexOf(7) == -1 && self.label.indexOf('x') == -1",
    ])


def test_library_runtime_errors_as_upstream(server: Any, ns: str) -> None:
    _ensure_crd(server, CRD)
    status, body = _new(server, ns, mem="lots", nums=[], endpoint="example.com", net="10.0.0.0")
    assert status == 422, body
    causes = _causes(body)
    assert ("spec: Invalid value: \"object\": quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: mem under 1Gi") in causes
    assert "spec: Invalid value: \"object\": max called on empty list evaluating rule: nums under 50" in causes
    assert "spec: Invalid value: https endpoint" in causes  # isURL is false: && short-circuits
    assert ('spec: Invalid value: "object": URL parse error during conversion from string: parse "example.com": '
            "invalid URI for request evaluating rule: url(self.endpoint).getPort() != '8080'") in causes
    assert ("spec: Invalid value: \"object\": network address parse error during conversion from string: "
            "network address parse error during conversion from string: "
            "netip.ParsePrefix(\"10.0.0.0\"): no '/' evaluating rule: addr outside net") in causes
