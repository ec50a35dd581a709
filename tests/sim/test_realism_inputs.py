"""Issue 17 items 1 and 2 in ``simulate``: real manifests that kubectl accepts load.

- item 1: names are validated per kind (RBAC kinds need only a path-segment name,
  ``pkg/apis/rbac/validation/validation.go:33``), so the project's own ``deploy/`` loads.
- item 2: plain YAML scalars are read as kubectl reads them (sigs.k8s.io/yaml@v1.4.0
  ``goyaml.v2/resolve.go:87``): a bare ``=`` is a string, ``0644`` octal, ``y``/``n`` booleans,
  ``1:20`` a string. The case is kube-prometheus
  ``manifests/setup/0alertmanagerConfigCustomResourceDefinition.yaml`` (an ``enum`` holding
  ``=``), trimmed to the fields that matter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.sim.manifests import go_yaml_scalar, parse_manifest_text

REPO = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.output


def test_simulate_loads_the_projects_own_deploy_directory() -> None:
    # the rendered manifests at deploy/'s top level, as `kubectl apply -f deploy` reads them (not
    # recursively: deploy/helm holds the chart's templates)
    files = sorted(str(p) for p in (REPO / "deploy").glob("*.yaml"))
    code, out = run("simulate", *[a for f in files for a in ("-f", f)], "-o", "json")
    assert code == 0, out
    items = json.loads(out)["items"]
    names = {(o["kind"], o["metadata"]["name"]) for o in items}
    assert ("ClusterRole", "kubesched:kube-scheduler") in names


def test_simulate_rejects_an_rbac_name_with_a_slash(tmp_path: Path) -> None:
    f = tmp_path / "r.yaml"
    f.write_text("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: a/b\n")
    code, out = run("simulate", "-f", str(f))
    assert code == 2
    assert out.strip().endswith(
        'ClusterRole.rbac.authorization.k8s.io "a/b" is invalid: metadata.name: Invalid value: "a/b": '
        "may not contain '/'")
    assert ":4:" in out


ALERTMANAGER_CRD = """\
# from prometheus-operator/kube-prometheus manifests/setup/0alertmanagerConfigCustomResourceDefinition.yaml (trimmed)
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: alertmanagerconfigs.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  names: {kind: AlertmanagerConfig, plural: alertmanagerconfigs}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          matchType:
            enum:
            - '!='
            - =
            - =~
            - '!~'
            type: string
          defaultMode:
            type: integer
            default: 0644
"""


def test_kube_prometheus_crd_with_a_bare_equals_loads(tmp_path: Path) -> None:
    f = tmp_path / "crd.yaml"
    f.write_text(ALERTMANAGER_CRD)
    code, out = run("simulate", "-f", str(f), "-o", "json")
    assert code == 0, out
    props = json.loads(out)["items"][0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert props["matchType"]["enum"] == ["!=", "=", "=~", "!~"]
    assert props["defaultMode"]["default"] == 420


# go-yaml v2's resolve table (resolve.go:37-48) and its int/float rules (resolve.go:135-185)
@pytest.mark.parametrize("text,value", [
    ("=", "="), ("0644", 420), ("0o17", 15), ("0x1F", 31), ("0b101", 5), ("-0b11", -3), ("1_000", 1000),
    ("1e3", 1000.0), (".5", 0.5), ("+.5", 0.5), ("08", 8.0), ("1:20", "1:20"), ("y", True), ("N", False),
    ("yes", True), ("Off", False), ("~", None), ("null", None), ("2001-12-14", "2001-12-14"),
    ("0.1.2", "0.1.2"), ("-x", "-x"), ("abc", "abc"), ("18446744073709551615", 18446744073709551615),
    ("_1", "_1"),
])
def test_plain_scalars_resolve_as_go_yaml_v2(text: str, value: object) -> None:
    assert go_yaml_scalar(text)[1] == value
    assert go_yaml_scalar("")[1] is None
    doc = parse_manifest_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x}}\nv: {text}\nl: [{text}]\n")
    got = doc[0].data
    assert got["v"] == value and got["l"] == [value]


def test_a_name_that_is_a_yaml_boolean_is_kubectls_decode_error() -> None:
    # kubectl create -f of `metadata: {name: n}`: "unable to decode ...: json: cannot unmarshal
    # bool into Go struct field ObjectMeta.metadata.name of type string" (go-yaml v2 reads n as false)
    from kubesched.errors import ManifestError
    with pytest.raises(ManifestError) as e:
        parse_manifest_text("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "m.yaml")
    assert e.value.message == ("json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.name "
                               "of type string")


# ---- item 4 and 5: DefaultStorageClass admission, the PV controller's Available -------------------

HOST = "kubernetes.io/hostname"


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {HOST: name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _sc(name: str, default: bool = False, ts: str | None = None, beta: bool = False) -> dict:
    meta: dict = {"name": name}
    if default:
        key = ("storageclass.beta.kubernetes.io/is-default-class" if beta
               else "storageclass.kubernetes.io/is-default-class")
        meta["annotations"] = {key: "true"}
    if ts:
        meta["creationTimestamp"] = ts
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}


def _local_pv(name: str, host: str, status: bool) -> dict:
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
          "spec": {"storageClassName": "local", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                   "local": {"path": "/mnt/disk"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
                       {"matchExpressions": [{"key": HOST, "operator": "In", "values": [host]}]}]}}}}
    if status:
        pv["status"] = {"phase": "Available"}
    return pv


def _claim(name: str, cls: str | None = None, ann: dict | None = None) -> dict:
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if cls is not None:
        spec["storageClassName"] = cls
    meta: dict = {"name": name, "namespace": "default"}
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def _pod(name: str, claim: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}]}}


def _simulate(tmp_path: Path, docs: list[dict]) -> dict:
    f = tmp_path / "in.yaml"
    f.write_text("\n---\n".join(json.dumps(d) for d in docs))
    code, out = run("simulate", "-f", str(f), "-o", "json")
    assert code == 0, out
    return {(o["kind"], o["metadata"]["name"]): o for o in json.loads(out)["items"]}


@pytest.mark.parametrize("status", [True, False], ids=["pv-with-status", "pv-without-status"])
def test_hand_written_local_pv_binds_with_or_without_status(tmp_path: Path, status: bool) -> None:
    # item 5: the PV controller makes a PV naming no claim Available at once (pv_controller.go syncVolume)
    objs = _simulate(tmp_path, [_node("node-a"), _node("node-b"), _node("node-c"), _sc("local", default=True),
                                _local_pv("pv-c", "node-c", status), _claim("data"), _pod("app", "data")])
    assert objs[("Pod", "app")]["spec"]["nodeName"] == "node-c"
    assert objs[("PersistentVolumeClaim", "data")]["spec"]["volumeName"] == "pv-c"
    # item 4: the claim written without storageClassName got the default class
    assert objs[("PersistentVolumeClaim", "data")]["spec"]["storageClassName"] == "local"
    assert objs[("PersistentVolume", "pv-c")]["status"]["phase"] == "Bound"


def test_default_class_choice_as_get_default_class() -> None:
    # pkg/volume/util/storageclass.go:40 GetDefaultClass: newest first, then name; beta annotation counts
    from kubesched.controllers.pvcontroller import default_storage_class, with_default_class
    classes = [_sc("a", True, "2024-01-01T00:00:00Z"), _sc("b", True, "2024-06-01T00:00:00Z"), _sc("c"),
               _sc("d", True, "2024-06-01T00:00:00Z", beta=True)]
    assert default_storage_class(classes)["metadata"]["name"] == "b"
    assert default_storage_class([_sc("z", True), _sc("y", True)])["metadata"]["name"] == "y"
    assert default_storage_class([_sc("c")]) is None
    # PersistentVolumeClaimHasClass: an explicit "" or the beta annotation keeps the claim as it is
    assert with_default_class(_claim("x", ""), classes) is None
    assert with_default_class(_claim("x", ann={"volume.beta.kubernetes.io/storage-class": "slow"}), classes) is None
    assert with_default_class(_claim("x"), classes)["spec"]["storageClassName"] == "b"


def test_claim_without_class_and_no_default_stays_pending(tmp_path: Path) -> None:
    objs = _simulate(tmp_path, [_node("node-c"), _sc("local"), _local_pv("pv-c", "node-c", False), _claim("data"),
                                _pod("app", "data")])
    assert "storageClassName" not in objs[("PersistentVolumeClaim", "data")]["spec"]
    assert not objs[("Pod", "app")]["spec"].get("nodeName")


def test_non_string_keys_become_kubectls_json_keys() -> None:
    # sigs.k8s.io/yaml yaml.go:213: go-yaml's bool/int/float keys become "true", "80", "1.5"
    for text in ("data:\n  y: a\n  80: b\n  1.5: c\n  off: d\n", "data: {y: a, 80: b, 1.5: c, off: d}\n"):
        doc = parse_manifest_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" + text)[0].data
        assert doc["data"] == {"true": "a", "80": "b", "1.5": "c", "false": "d"}


def test_yaml_output_reads_back_as_written(tmp_path: Any) -> None:
    """Strings kubectl's go-yaml reads as booleans (``y``, ``n``) are quoted on output, as
    sigs.k8s.io/yaml's marshaller does, so ``simulate -o yaml`` output (and the diff harness's
    manifests) load back unchanged."""
    from kubesched.sim.manifests import dump_yaml_all, parse_manifest_text

    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1", "labels": {"flag": "y", "other": "N", "octal": "0644", "eq": "="}},
            "spec": {"taints": [{"key": "k", "value": "n", "effect": "NoSchedule"}]}}
    text = dump_yaml_all([node])
    assert "'y'" in text and "'n'" in text
    (back,) = parse_manifest_text(text, "<out>")
    assert back.data == node
