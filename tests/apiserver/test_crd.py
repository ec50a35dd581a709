"""CustomResourceDefinitions and custom resources in the box (issue 17).

Expected behaviour and messages come from k8s.io/apiextensions-apiserver@v0.37.2: the
validation table of ``test/integration/validation_test.go`` (``newNoxuValidationCRDs``,
``TestCustomResourceValidationErrors``), the CRD validation messages of
``pkg/apis/apiextensions/validation/validation.go``, the conditions the naming/establishing
controllers write, pruning and defaulting (``pkg/apiserver/schema/{pruning,defaulting}``), the
table convertor (``pkg/registry/customresource/tableconvertor``) and the scale subresource.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from apiserver_helpers import Client

from kubesched.apiserver.crd import go_regex
from kubesched.apiserver.launcher import ServerHandle, run_server

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NS = "not-the-default"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"

# upstream's newNoxuValidationCRDs schema (test/integration/validation_test.go)
NOXU_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["alpha", "beta"],
    "properties": {
        "alpha": {"type": "string", "pattern": "^[a-zA-Z0-9_]*$"},
        "beta": {"type": "number", "minimum": 10},
        "gamma": {"type": "string", "enum": ["foo", "bar", "baz"]},
    },
}
NOXU: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "noxus.mygroup.example.com"},
    "spec": {
        "group": "mygroup.example.com", "scope": "Namespaced",
        "names": {"plural": "noxus", "singular": "nonenglishnoxu", "kind": "WishIHadChosenNoxu",
                  "shortNames": ["foo", "bar", "abc", "def"], "listKind": "NoxuItemList"},
        "versions": [
            {"name": "v1beta1", "served": True, "storage": True, "schema": {"openAPIV3Schema": NOXU_SCHEMA}},
            {"name": "v1", "served": True, "storage": False, "schema": {"openAPIV3Schema": NOXU_SCHEMA}},
        ],
    },
}


def _instance(version: str = "v1beta1", name: str = "foo") -> dict[str, Any]:
    """upstream newNoxuValidationInstance"""
    return {"apiVersion": f"mygroup.example.com/{version}", "kind": "WishIHadChosenNoxu",
            "metadata": {"namespace": NS, "name": name},
            "alpha": "foo_123", "beta": 10, "gamma": "bar", "delta": "hello"}


WIDGETS: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                     "statusReplicasPath": ".status.replicas",
                                                     "labelSelectorPath": ".status.selector"}},
            "additionalPrinterColumns": [
                {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "required": ["size"], "properties": {
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "replicas": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
                    "port": {"x-kubernetes-int-or-string": True},
                    "tags": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 5},
                             "x-kubernetes-list-type": "set"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "nullable": {"type": "string", "nullable": True},
                    "plain": {"type": "string"},
                }},
                "status": {"type": "object", "properties": {
                    "replicas": {"type": "integer"}, "selector": {"type": "string"},
                    "conditions": {"type": "array", "items": {"type": "object", "properties": {
                        "type": {"type": "string"}, "status": {"type": "string"}}}},
                }},
            }}},
        }],
    },
}
W = "/apis/example.com/v1/namespaces/default/widgets"


@pytest.fixture
def srv(tmp_path: Path) -> Any:
    with run_server(tmp_path / "kubeconfig") as s:
        yield s


@pytest.fixture
def client(srv: ServerHandle) -> Client:
    return Client.of(srv)


def _create_crd(c: Client, crd: dict[str, Any]) -> dict[str, Any]:
    c.create(CRDS, crd)
    return c.get(f"{CRDS}/{crd['metadata']['name']}")


def _widget(name: str = "w1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": {"size": "small", **spec}}


def test_crd_is_established_and_served_in_discovery(client: Client) -> None:
    crd = _create_crd(client, NOXU)
    st = crd["status"]
    conds = {c["type"]: c for c in st["conditions"]}
    assert conds["NamesAccepted"]["status"] == "True" and conds["NamesAccepted"]["reason"] == "NoConflicts"
    assert conds["Established"]["status"] == "True" and conds["Established"]["reason"] == "InitialNamesAccepted"
    assert st["acceptedNames"] == {"plural": "noxus", "singular": "nonenglishnoxu", "kind": "WishIHadChosenNoxu",
                                   "listKind": "NoxuItemList", "shortNames": ["foo", "bar", "abc", "def"]}
    assert st["storedVersions"] == ["v1beta1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}  # v1 defaults
    group = client.get("/apis/mygroup.example.com")
    assert group["preferredVersion"]["version"] == "v1"  # v1 > v1beta1
    assert {v["version"] for v in group["versions"]} == {"v1", "v1beta1"}
    res = client.get("/apis/mygroup.example.com/v1")["resources"]
    assert res[0]["name"] == "noxus" and res[0]["kind"] == "WishIHadChosenNoxu" and res[0]["namespaced"]
    assert res[0]["shortNames"] == ["foo", "bar", "abc", "def"]
    assert "mygroup.example.com" in [g["name"] for g in client.get("/apis")["groups"]]


@pytest.mark.parametrize(("change", "errors"), [
    # TestCustomResourceValidationErrors
    ({"alpha": "foo_123!"}, ["alpha in body should match '^[a-zA-Z0-9_]*$'"]),
    ({"beta": 5}, ["beta in body should be greater than or equal to 10"]),
    ({"gamma": "qux"}, ['gamma: Unsupported value: "qux": supported values: "foo", "bar", "baz"']),
    ({"alpha": None, "beta": None}, ["alpha: Required value", "beta: Required value"]),
])
def test_custom_resource_validation_errors_as_upstream(client: Client, change: dict[str, Any],
                                                       errors: list[str]) -> None:
    _create_crd(client, NOXU)
    client.create("/api/v1/namespaces", {"metadata": {"name": NS}})
    for version in ("v1beta1", "v1"):
        obj = _instance(version)
        for k, v in change.items():
            if v is None:
                obj.pop(k)
            else:
                obj[k] = v
        code, body = client.req("POST", f"/apis/mygroup.example.com/{version}/namespaces/{NS}/noxus", obj)
        assert code == 422, body
        assert body["reason"] == "Invalid"
        assert body["message"].startswith('WishIHadChosenNoxu.mygroup.example.com "foo" is invalid: ')
        for e in errors:
            assert e in body["message"]


def test_valid_instance_is_pruned_and_served_in_every_version(client: Client) -> None:
    _create_crd(client, NOXU)
    client.create("/api/v1/namespaces", {"metadata": {"name": NS}})
    created = client.create(f"/apis/mygroup.example.com/v1beta1/namespaces/{NS}/noxus", _instance())
    assert "delta" not in created  # not in the schema: pruned
    assert created["metadata"]["generation"] == 1
    v1 = client.get(f"/apis/mygroup.example.com/v1/namespaces/{NS}/noxus/foo")
    assert v1["apiVersion"] == "mygroup.example.com/v1"  # strategy None: only apiVersion changes
    lst = client.get(f"/apis/mygroup.example.com/v1/namespaces/{NS}/noxus")
    assert lst["kind"] == "WishIHadChosenNoxuList" or lst["kind"].endswith("List")
    assert [i["apiVersion"] for i in lst["items"]] == ["mygroup.example.com/v1"]


def test_pruning_defaulting_types_and_field_validation(client: Client) -> None:
    _create_crd(client, WIDGETS)
    w = _widget(junk=1, extra={"anything": {"goes": True}}, nullable=None, plain=None, port="http")
    code, body = client.req("POST", W + "?fieldValidation=Strict", w)
    assert code == 400
    assert body["message"] == ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
                               'unknown field "spec.junk"')
    code, body = client.req("POST", W, w)  # the server default is Warn: pruned
    assert code == 201, body
    spec = body["spec"]
    assert "junk" not in spec
    assert spec["extra"] == {"anything": {"goes": True}}  # x-kubernetes-preserve-unknown-fields
    assert spec["replicas"] == 1  # default
    assert "nullable" in spec and spec["nullable"] is None  # nullable: kept
    assert "plain" not in spec  # a non-nullable null without default is dropped
    bad = _widget("w2", replicas="three", tags=["a", "a", "toolong"], labels={"k": 1}, port=1.5)
    code, body = client.req("POST", W, bad)
    assert code == 422
    msg = body["message"]
    assert 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"' in msg
    assert "spec.tags: Too many: 3: must have at most 2 items" in msg
    assert 'spec.tags[1]: Duplicate value: "a"' in msg
    assert "spec.tags[2]: Too long: may not be more than 5 bytes" in msg
    assert 'spec.labels.k: Invalid value: "integer": spec.labels.k in body must be of type string: "integer"' in msg
    assert "spec.port: Invalid value" in msg
    code, body = client.req("POST", W, _widget("w3", replicas=11))
    assert code == 422
    assert "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10" \
        in body["message"]
    causes = body["details"]["causes"]
    assert causes == [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                       "message": "Invalid value: 11: spec.replicas in body should be less than or equal to 10"}]


def test_status_subresource_and_generation(client: Client) -> None:
    _create_crd(client, WIDGETS)
    client.create(W, _widget())
    cur = client.get(W + "/w1")
    cur["status"] = {"replicas": 3}
    cur["spec"]["replicas"] = 2
    code, body = client.req("PUT", W + "/w1", cur)
    assert code == 200, body
    assert "status" not in body and body["spec"]["replicas"] == 2  # the main resource ignores status
    assert body["metadata"]["generation"] == 2
    body["status"] = {"replicas": 3, "conditions": [{"type": "Ready", "status": "True"}]}
    body["spec"]["replicas"] = 9
    code, st = client.req("PUT", W + "/w1/status", body)
    assert code == 200, st
    assert st["status"]["replicas"] == 3 and st["spec"]["replicas"] == 2  # status ignores spec
    assert st["metadata"]["generation"] == 2
    code, bad = client.req("PATCH", W + "/w1/status", {"status": {"replicas": "x"}},
                           ctype="application/merge-patch+json")
    assert code == 422 and "status.replicas" in bad["message"]


def test_scale_subresource(client: Client) -> None:
    _create_crd(client, WIDGETS)
    client.create(W, _widget(replicas=2))
    scale = client.get(W + "/w1/scale")
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2} and scale["status"]["replicas"] == 0
    scale["spec"]["replicas"] = 5
    code, out = client.req("PUT", W + "/w1/scale", scale)
    assert code == 200, out
    assert out["spec"]["replicas"] == 5
    assert client.get(W + "/w1")["spec"]["replicas"] == 5


def test_table_from_additional_printer_columns(client: Client) -> None:
    _create_crd(client, WIDGETS)
    client.create(W, _widget(replicas=3))
    cur = client.get(W + "/w1")
    cur["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    client.req("PUT", W + "/w1/status", cur)
    code, table = client.req("GET", W, accept=TABLE)
    assert code == 200
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size", "Replicas", "Ready", "Age"]
    assert table["columnDefinitions"][1]["description"] == \
        "Custom resource definition column (in JSONPath format): .spec.size"
    cells = table["rows"][0]["cells"]
    assert cells[:4] == ["w1", "small", 3, "True"]
    assert cells[4].endswith("s")
    code, crds = client.req("GET", CRDS, accept=TABLE)  # the default table convertor
    assert [c["name"] for c in crds["columnDefinitions"]] == ["Name", "Created At"]


def test_crd_validation_messages(client: Client) -> None:
    bad = copy.deepcopy(WIDGETS)
    bad["metadata"]["name"] = "gadgets.example.com"
    bad["spec"]["group"] = "example"
    bad["spec"]["scope"] = "Global"
    bad["spec"]["versions"][0]["storage"] = False
    code, body = client.req("POST", CRDS, bad)
    assert code == 422
    msg = body["message"]
    assert msg.startswith('CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: ')
    assert 'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group' in msg
    assert 'spec.group: Invalid value: "example": should be a domain with at least one dot' in msg
    assert 'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"' in msg
    assert "spec.versions: Invalid value: " in msg and "must have exactly one version marked as storage version" \
        in msg
    nested = copy.deepcopy(WIDGETS)
    props = nested["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    del props["spec"]["type"]
    del nested["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"]
    code, body = client.req("POST", CRDS, nested)
    assert code == 422
    assert "spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root" \
        in body["message"]
    assert ("spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for "
            "specified object fields") in body["message"]
    noschema = copy.deepcopy(WIDGETS)
    del noschema["spec"]["versions"][0]["schema"]
    code, body = client.req("POST", CRDS, noschema)
    assert code == 422
    assert ("spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned"
            in body["message"])


def test_deleting_a_crd_deletes_its_objects_and_stops_serving(client: Client) -> None:
    _create_crd(client, WIDGETS)
    client.create(W, _widget())
    code, body = client.req("DELETE", f"{CRDS}/widgets.example.com")
    assert code == 200
    assert body["metadata"].get("deletionTimestamp")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and client.req("GET", f"{CRDS}/widgets.example.com")[0] != 404:
        time.sleep(0.05)
    assert client.req("GET", f"{CRDS}/widgets.example.com")[0] == 404
    assert client.req("GET", W)[0] == 404
    _create_crd(client, WIDGETS)  # created again: empty
    assert client.get(W)["items"] == []


def test_cluster_scoped_custom_resource_and_restart(tmp_path: Path) -> None:
    crd = copy.deepcopy(WIDGETS)
    crd["spec"]["scope"] = "Cluster"
    with run_server(tmp_path / "kc", data_dir=tmp_path / "data") as s:
        c = Client.of(s)
        _create_crd(c, crd)
        c.create("/apis/example.com/v1/widgets", _widget())
        assert c.req("GET", W)[0] == 404  # not namespaced
    with run_server(tmp_path / "kc2", data_dir=tmp_path / "data") as s:  # served again after a restart
        c = Client.of(s)
        got = c.get("/apis/example.com/v1/widgets/w1")
        assert got["spec"]["replicas"] == 1 and "namespace" not in got["metadata"]


def test_go_regex_inline_flags() -> None:
    """Go RE2 patterns as CRDs carry them (kube-prometheus' muteTimeIntervals)."""
    p = go_regex(r"^((?i)sun|mon|tues)day$")
    assert p.search("SUNday") and p.search("MONday") and not p.search("SUNDAY")
    assert go_regex(r"^[a-z]+\z").search("abc")


KUBECTL = shutil.which("kubectl")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on the PATH")
def test_kubectl_get_api_resources_explain_apply(srv: ServerHandle, tmp_path: Path) -> None:
    assert KUBECTL is not None and srv.kubeconfig_path is not None
    env = {**os.environ, "KUBECONFIG": str(srv.kubeconfig_path), "HOME": str(tmp_path)}

    def k(*args: str, stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess[str]:
        p = subprocess.run([KUBECTL, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60,
                           check=False)
        assert (p.returncode == 0) == ok, p.stdout + p.stderr
        return p

    k("apply", "-f", "-", stdin=json.dumps(WIDGETS))
    k("apply", "-f", "-", stdin=json.dumps(_widget()))
    k("apply", "-f", "-", stdin=json.dumps(_widget(replicas=4)))  # client-side apply: a JSON merge patch
    out = k("get", "wd").stdout.splitlines()
    assert out[0].split() == ["NAME", "SIZE", "REPLICAS", "READY", "AGE"]
    assert out[1].split()[:3] == ["w1", "small", "4"]
    assert "w1" in k("get", "all").stdout  # categories: all
    res = k("api-resources", "--api-group=example.com").stdout.splitlines()
    assert res[1].split() == ["widgets", "wd", "example.com/v1", "true", "Widget"]
    explain = k("explain", "widgets.spec.size").stdout
    assert "FIELD: size <string>" in explain and "ENUM:\n    small\n    large" in explain
    bad = k("apply", "-f", "-", stdin=json.dumps(_widget("w2", bogus=1)), ok=False).stderr
    assert 'strict decoding error: unknown field "spec.bogus"' in bad
    k("scale", "widget", "w1", "--replicas=6")
    assert k("get", "widget", "w1", "-o", "jsonpath={.spec.replicas}").stdout == "6"
    k("delete", "crd", "widgets.example.com")
    assert "NotFound" in k("get", "widgets", ok=False).stderr  # (kubectl's discovery cache still names it)


def test_generation_follows_every_change_but_metadata_and_status(client: Client) -> None:
    """customresource/strategy.go PrepareForUpdate: top-level fields besides spec count too."""
    crd = copy.deepcopy(WIDGETS)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["data"] = {
        "type": "object", "additionalProperties": {"type": "string"}}
    _create_crd(client, crd)
    client.create(W, _widget())
    code, body = client.req("PATCH", W + "/w1", {"metadata": {"labels": {"a": "b"}}},
                            ctype="application/merge-patch+json")
    assert code == 200 and body["metadata"]["generation"] == 1
    code, body = client.req("PATCH", W + "/w1", {"data": {"k": "v"}}, ctype="application/merge-patch+json")
    assert code == 200 and body["metadata"]["generation"] == 2
