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

import pytest
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.sim.manifests import go_yaml_scalar, parse_manifest_text

REPO = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.output


def test_simulate_loads_the_projects_own_deploy_directory() -> None:
    code, out = run("simulate", "-f", str(REPO / "deploy"), "-o", "json")
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
