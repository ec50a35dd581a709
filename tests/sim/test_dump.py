"""Real cluster dumps (issue 10 §3): a ``kubectl get ... -A -o yaml|json`` List loads as it is;
built-in PriorityClasses; dumped priorities kept; Succeeded/Failed pods hold nothing; the fast
YAML path reads a dump as PyYAML does; hostile YAML is bounded."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from kubesched.errors import ManifestError
from kubesched.sim import manifests as m
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate
from kubesched.sim.validate import validate_inputs
from kubesched.testing.dump import cluster_dump, write_dump


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_dump_loads_validates_and_simulates(tmp_path: Path, fmt: str) -> None:
    f = tmp_path / f"dump.{fmt}"
    write_dump(str(f), 6, 120, fmt=fmt, pending=4)
    raws = load_manifests([f])
    validate_inputs(raws)
    kinds = {r.kind for r in raws}
    assert {"Node", "Pod", "StorageClass", "PersistentVolume", "PersistentVolumeClaim",
            "PodDisruptionBudget"} <= kinds
    result = simulate(raws)
    assert len(result.outcomes) == 4 and all(o.node for o in result.outcomes)
    # every input object comes back, the completed ones included
    assert len(result.output_objects()) == len(raws)
    system = [r for r in raws if r.kind == "Pod" and r.data["spec"].get("priorityClassName") == "system-node-critical"]
    assert system and all(result.store.pods[f"kube-system/{r.name}"].spec.priority == 2_000_001_000 for r in system)


def test_fast_yaml_path_reads_a_dump_as_pyyaml_does(tmp_path: Path) -> None:
    text = yaml.dump(cluster_dump(3, 40, pending=2), Dumper=yaml.CSafeDumper, default_flow_style=False)
    assert m._parse_yaml_rs(text) is not None  # the dump takes the fast path

    def run(fn):
        col = m._Collector()
        fn(text, "d.yaml", col)
        return [(o.source, o.data) for o in col.out]

    assert run(m._parse_yaml) == run(m._parse_yaml_full)


def test_billion_laughs_fails_fast(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    bomb = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + "".join(f"  {x}\n" for x in lines)
    assert len(bomb) < 1100
    f = tmp_path / "bomb.yaml"
    f.write_text(bomb)
    t = time.monotonic()
    with pytest.raises(ManifestError) as exc:
        load_manifests([f])
    assert exc.value.message == "error converting YAML to JSON: yaml: document contains excessive aliasing"
    assert time.monotonic() - t < 30  # bounded (it would never finish, or exhaust memory, otherwise)


def test_modest_aliasing_is_fine(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
                 "  metadata: {name: c, labels: &l {a: b}}\n  data: {x: &x hello, z: *x}\n"
                 "- {apiVersion: v1, kind: ConfigMap, metadata: {name: d, labels: *l}}\n")
    a, b = load_manifests([f])
    assert b.data["metadata"]["labels"] == {"a": "b"} and a.data["data"]["z"] == "hello"


def _node(name: str, cpu: str = "1") -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"}}}


def _pod(name: str, cpu: str, node: str | None = None, phase: str | None = None, **meta: object) -> dict:
    d: dict = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", **meta},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}
    if node:
        d["spec"]["nodeName"] = node
    if phase:
        d["status"] = {"phase": phase}
    return d


def _run(tmp_path: Path, objs: list[dict]):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    raws = load_manifests([f])
    validate_inputs(raws)
    return simulate(raws)


def _vip() -> dict:
    p = _pod("vip", "800m")
    p["spec"]["priorityClassName"] = "high"
    return p


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_completed_pods_hold_no_resources(tmp_path: Path, phase: str) -> None:
    res = _run(tmp_path, [_node("n1"), _pod("done", "1", "n1", phase), _pod("new", "600m")])
    assert [(o.key, o.node) for o in res.outcomes] == [("default/new", "n1")]
    assert "default/done" not in res.store.pods  # the scheduler never saw it
    names = [o["metadata"]["name"] for o in res.output_objects()]
    assert "done" in names  # but it is in the output, unchanged
    done = next(o for o in res.output_objects() if o["metadata"]["name"] == "done")
    assert done["status"] == {"phase": phase}


def test_terminating_pods_keep_their_resources(tmp_path: Path) -> None:
    res = _run(tmp_path, [_node("n1"), _pod("going", "1", "n1", "Running", deletionTimestamp="2026-01-01T00:00:00Z"),
                          _pod("new", "600m")])
    assert res.outcomes[0].node is None and "Insufficient cpu" in res.outcomes[0].message


def test_completed_pods_are_never_preemption_victims(tmp_path: Path) -> None:
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    res = _run(tmp_path, [pc, _node("n1"), _pod("done", "1", "n1", "Succeeded"), _pod("low", "1", "n1", "Running"),
                          _vip()])
    out = {o["metadata"]["name"] for o in res.output_objects()}
    assert "done" in out and "low" not in out  # the running pod was preempted, the completed one untouched


def test_dumped_pods_keep_their_priority_and_system_classes_exist(tmp_path: Path) -> None:
    kept = _pod("kept", "100m", "n1", "Running", uid="u-1")
    kept["spec"].update(priorityClassName="gone-class", priority=77)
    system = _pod("sys", "100m", "n1", "Running", uid="u-2")
    system["spec"].update(priorityClassName="system-cluster-critical", priority=2_000_000_000)
    new = _pod("new", "100m")
    new["spec"]["priorityClassName"] = "system-node-critical"
    res = _run(tmp_path, [_node("n1", "4"), kept, system, new])
    pods = res.store.pods
    assert pods["default/kept"].spec.priority == 77
    assert pods["default/sys"].spec.priority == 2_000_000_000
    assert pods["default/new"].spec.priority == 2_000_001_000
