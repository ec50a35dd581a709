"""kubesched.apiserver.openapi and .fieldvalidation against what kubectl and the API server do."""

from __future__ import annotations

import json
from typing import Any

from kubesched.apiserver import openapi
from kubesched.apiserver.fieldvalidation import (
    decode_error,
    decode_error_message,
    patch_strict_status,
    unknown_field_paths,
    unknown_fields,
    warning_headers,
)

POD = ("", "v1", "Pod")


def _supports_field_validation(doc: dict[str, Any], gvk: dict[str, str]) -> bool:
    """kubectl 1.32's supportsQueryParamV3: the first PATCH op whose GVK matches decides."""
    for item in doc["paths"].values():
        op = item.get("patch")
        if not op or op.get("x-kubernetes-group-version-kind") != gvk:
            continue
        return any(p["name"] == "fieldValidation" for p in op.get("parameters", []))
    return False


def test_v3_index_lists_group_versions_with_hashes() -> None:
    index = openapi.v3_index("https://127.0.0.1:6443")
    paths = index["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/scheduling.k8s.io/v1", "apis/coordination.k8s.io/v1"} <= set(paths)
    url = paths["api/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/api/v1?hash=") and len(url.split("=")[1]) == 128
    assert openapi.v3_index()["paths"]["api/v1"] == paths["api/v1"]  # stable hash


def test_v3_documents_satisfy_kubectl_field_validation_check() -> None:
    for group, version, kind, _plural, _ns in openapi.DEFAULT_SERVED:
        body = openapi.v3_group_version(group, version)
        assert body is not None, (group, version)
        doc = json.loads(body)
        assert doc["openapi"].startswith("3.")
        assert _supports_field_validation(doc, {"group": group, "version": version, "kind": kind}), kind
    assert openapi.v3_group_version("example.com", "v1") is None


def test_v3_pod_document_shape() -> None:
    doc = json.loads(openapi.v3_group_version("", "v1") or b"{}")
    schemas = doc["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["spec"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec",
                                         "description": pod["properties"]["spec"]["description"]}
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name" and containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["type"] == "array"
    assert schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert "enum" not in pod["properties"]["kind"]
    # every $ref resolves inside the document
    text = json.dumps(doc)
    for ref in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert ref in schemas, ref
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert set(patch["requestBody"]["content"]) == {"application/json-patch+json", "application/merge-patch+json",
                                                    "application/strategic-merge-patch+json",
                                                    "application/apply-patch+yaml"}  # server-side apply
    assert doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/status"]["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Pod"


def test_v2_document() -> None:
    doc = json.loads(openapi.v2_document())
    assert doc["swagger"] == "2.0"
    defs = doc["definitions"]
    assert defs["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert defs["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    assert defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "description": defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["description"], "type": "string", "format": "int-or-string"}
    for d in defs.values():
        assert not isinstance(d.get("type"), list)
    served = [("", "v1", "Pod", "pods", True)]
    small = json.loads(openapi.v2_document(served))
    assert "io.k8s.api.apps.v1.Deployment" not in small["definitions"]
    assert "/api/v1/namespaces/{namespace}/pods/{name}" in small["paths"]


def test_unknown_fields_paths_as_the_api_server_reports_them() -> None:
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "labels": {"any": "key"}, "annotations": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "d", "imagee": "typo", "resources": {"requests": {"cpu": "1"}}}],
                 "foo": 1, "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a"], "vals": ["b"]}]}]}}}},
        "status": {"phase": "Pending", "bogus": True},
        "extra": {"deep": 1},
    }
    assert unknown_field_paths(POD, pod) == [
        "spec.containers[1].imagee",
        "spec.foo",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].vals",
        "status.bogus",
        "extra",
    ]
    assert unknown_fields(POD, {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}) == ['unknown field "spec.containers[0].imagee"']
    assert unknown_field_paths(POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"managedFields": [{"fieldsV1": {"f:x": {}}}]}}) == []
    assert unknown_field_paths(("example.com", "v1", "Widget"), {"anything": 1}) == []


def test_messages() -> None:
    msgs = ['unknown field "spec.foo"', 'unknown field "spec.bar"']
    assert decode_error_message("Pod", "v1", msgs) == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.foo", unknown field "spec.bar"'
    )
    assert warning_headers(msgs[:1]) == ['299 - "unknown field \\"spec.foo\\""']


def test_patch_strict_status() -> None:
    st = patch_strict_status("application/strategic-merge-patch+json", b'{"spec":{"foo":1,"nodeName":"n"}}', {}, ['unknown field "spec.foo"'])
    assert st["code"] == 422 and st["reason"] == "Invalid"
    assert st["message"] == ' "" is invalid: patch: Invalid value: "map[spec:map[foo:1 nodeName:n]]": strict decoding error: unknown field "spec.foo"'
    assert st["details"]["causes"][0]["field"] == "patch"
    st = patch_strict_status("application/merge-patch+json", b'{"a":1}', {"a": 1}, ['unknown field "a"'])
    assert st["message"] == ' "" is invalid: patch: Invalid value: "{\\"a\\":1}": strict decoding error: unknown field "a"'


def test_decode_errors_as_encoding_json_reports_them() -> None:
    cases = [
        ({"spec": {"containers": "x"}},
         "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"),
        ({"spec": {"containers": ["x"]}},
         "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type v1.Container"),
        ({"metadata": {"labels": {"a": 1}}},
         "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"),
        ({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1.5}]}]}},
         "json: cannot unmarshal number 1.5 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"),
        ({"spec": {"containers": [{"name": "c", "resources": {"limits": "x"}}]}},
         "json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList"),
        ({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "12x"}}}]}},
         "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
        ({"spec": "x"}, "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"),
        ({"spec": {"hostNetwork": "yes"}}, "json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool"),
    ]
    for obj, expected in cases:
        assert decode_error(POD, obj) == expected
    ok = {"metadata": None, "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": 1}}}],
                                     "priority": None, "overhead": None}, "status": {"startTime": "2026-01-01T00:00:00Z"}}
    assert decode_error(POD, ok) is None
    assert decode_error_message("Pod", "v1", "json: x") == 'Pod in version "v1" cannot be handled as a Pod: json: x'


def test_known_kinds_and_shared_module() -> None:
    from kubesched.api import schemas as api_schemas
    from kubesched.apiserver import fieldvalidation

    assert api_schemas.known_kind("v1", "Pod") and api_schemas.known_kind("apps/v1", "Deployment")
    assert not api_schemas.known_kind("v1", "Pood") and not api_schemas.known_kind("apps/v1", "Pod")
    assert fieldvalidation.unknown_fields is api_schemas.unknown_fields


def _pb_fields(data: bytes) -> dict[int, bytes]:
    """A minimal protobuf reader for length-delimited fields (all this document uses)."""
    out: dict[int, bytes] = {}
    i = 0
    while i < len(data):
        tag = data[i]
        assert tag & 7 == 2  # length-delimited
        length = data[i + 1]
        out[tag >> 3] = data[i + 2 : i + 2 + length]
        i += 2 + length
    return out


def test_v2_protobuf_is_a_minimal_gnostic_document() -> None:
    doc = _pb_fields(openapi.v2_protobuf())
    assert doc[1] == b"2.0"  # Document.swagger
    assert _pb_fields(doc[2]) == {1: b"Kubernetes", 2: b"v1.37.0"}  # Document.info.title / version
    # the emulated release's (a real v1.34 API server's document says v1.34)
    assert _pb_fields(_pb_fields(openapi.v2_protobuf((1, 34)))[2]) == {1: b"Kubernetes", 2: b"v1.34.0"}
    assert "@" not in openapi.V2_PROTOBUF_CONTENT_TYPE and "@" in openapi.V2_PROTOBUF_MEDIA_TYPE


def test_duplicate_fields() -> None:
    from kubesched.apiserver.fieldvalidation import duplicate_fields, strict_errors

    body = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c","image":"x","image":"y"}],"foo":1}}'
    assert duplicate_fields(body) == ["metadata.name", "spec.containers[0].image"]
    assert strict_errors(POD, body, json.loads(body)) == [
        'duplicate field "metadata.name"', 'duplicate field "spec.containers[0].image"', 'unknown field "spec.foo"']
    assert duplicate_fields(b"{not json") == [] and duplicate_fields(b'{"a":1}') == []
