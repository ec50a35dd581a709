"""``simulate`` reads Workload and PodGroup manifests as kube-apiserver v1.37.2 would store them:
served only with GenericWorkload (else kubectl's ``no matches for kind``), validated as the box
validates them (one ``error: file:line: ...`` line at the offending field), defaulted and admitted
(``disruptionMode``, ``priority`` from the PriorityClass, the PodGroupProtection finalizer, status
cleared), kept in the store as raw dicts the engine reads with ``lister.get/list("PodGroup")`` and
announced through ``on_object_event`` before the pods, and written back by ``-o yaml``. With
WorkloadWithJob a Job's Workload and PodGroup are created as the Job controller creates them.

The scheduling profile here leaves out GangScheduling (the pod-group engine is tested with it
elsewhere): these tests are about the API objects, not about where the pods go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.config import decode_config, default_config
from kubesched.features import FeatureGate
from kubesched.scheduler import Scheduler
from kubesched.sim.manifests import parse_manifest_text
from kubesched.sim.simulate import simulate
from kubesched.sim.validate import validate_inputs

CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled: [{name: GangScheduling}]
"""

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}
PG = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
      "metadata": {"name": "pg1", "namespace": "default"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"},
       "spec": {"schedulingGroup": {"podGroupName": "pg1"},
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}


def run(tmp_path: Path, docs: list[dict[str, Any]], *args: str) -> tuple[int, str, str]:
    p = tmp_path / "in.yaml"
    p.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(CONFIG)
    r = CliRunner().invoke(main, ["simulate", "-f", str(p), "--config", str(cfg), "-o", "json", "--seed", "1", *args])
    return r.exit_code, r.stdout, r.stderr


def items(out: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"]["name"]): o for o in json.loads(out)["items"]}


def test_not_served_without_generic_workload(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, [NODE, PG, POD])
    assert code == 2 and out == ""
    line = (tmp_path / "in.yaml").read_text().splitlines().index("apiVersion: scheduling.k8s.io/v1beta1") + 1
    assert err == f'error: {tmp_path / "in.yaml"}:{line}: no matches for kind "PodGroup" in version ' \
                  '"scheduling.k8s.io/v1beta1"\n'


def test_loaded_admitted_and_written_back(tmp_path: Path) -> None:
    hi = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "hi"}, "value": 100}
    pg = json.loads(json.dumps(PG))
    pg["spec"]["priorityClassName"] = "hi"
    pg["status"] = {"conditions": [{"type": "X", "status": "True", "reason": "R", "message": "",
                                    "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    pod = json.loads(json.dumps(POD))
    pod["spec"]["priorityClassName"] = "hi"  # members share the group's priority (the pod-group cycle checks it)
    code, out, err = run(tmp_path, [NODE, hi, pg, pod], "--feature-gates", "GenericWorkload=true")
    assert code == 0, err
    got = items(out)[("PodGroup", "pg1")]
    assert got["spec"] == {"schedulingPolicy": {"gang": {"minCount": 2}}, "priorityClassName": "hi",
                           "disruptionMode": {"single": {}}, "priority": 100}
    # the input's status is cleared on create; only the scheduler's own condition may be there
    assert [c["type"] for c in got["status"].get("conditions") or []] in ([], ["PodGroupInitiallyScheduled"])
    assert got["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    assert items(out)[("Pod", "p1")]["spec"]["schedulingGroup"] == {"podGroupName": "pg1"}


def test_invalid_pod_group_is_one_line_at_the_field(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(PG))
    bad["spec"]["schedulingPolicy"]["gang"]["minCount"] = -1
    code, out, err = run(tmp_path, [NODE, bad], "--feature-gates", "GenericWorkload=true")
    assert code == 2
    lines = (tmp_path / "in.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "minCount" in t)
    assert err == (f'error: {tmp_path / "in.yaml"}:{line}: PodGroup.scheduling.k8s.io "pg1" is invalid: '
                   "spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1\n")


def test_priority_admission_refusal(tmp_path: Path) -> None:
    pg = json.loads(json.dumps(PG))
    pg["spec"]["priorityClassName"] = "missing"
    code, _, err = run(tmp_path, [NODE, pg], "--feature-gates", "GenericWorkload=true")
    assert code == 2
    assert err.endswith('podgroups.scheduling.k8s.io "pg1" is forbidden: no PriorityClass with name missing was '
                        "found\n")


def test_the_engine_sees_pod_groups_before_pods(monkeypatch: pytest.MonkeyPatch) -> None:
    """Raw dicts in the store (the lister), Add events through on_object_event, before the pods."""
    features = FeatureGate().with_overrides(GenericWorkload=True)
    raws = parse_manifest_text(yaml.safe_dump_all([NODE, PG, POD]))
    validate_inputs(raws, features=features)
    seen: list[tuple[str, Any]] = []
    orig_obj, orig_pod = Scheduler.on_object_event, Scheduler.on_pod_add

    def on_object_event(self: Any, kind: str, old: Any, new: Any) -> None:
        seen.append((kind, new))
        orig_obj(self, kind, old, new)

    def on_pod_add(self: Any, pod: Any) -> None:
        seen.append(("Pod", pod.metadata.name))
        orig_pod(self, pod)

    monkeypatch.setattr(Scheduler, "on_object_event", on_object_event)
    monkeypatch.setattr(Scheduler, "on_pod_add", on_pod_add)
    res = simulate(raws, decode_config(CONFIG, features=features), features=features)
    kinds = [k for k, _ in seen]
    assert kinds.index("PodGroup") < kinds.index("Pod")
    group = next(v for k, v in seen if k == "PodGroup")
    assert isinstance(group, dict) and group["metadata"]["name"] == "pg1"
    stored = res.store.get("PodGroup", "default", "pg1")  # the same object, or the scheduler's status write of it
    assert isinstance(stored, dict) and stored["spec"] == group["spec"]
    assert [o["metadata"]["name"] for o in res.store.list("PodGroup")] == ["pg1"]


def test_job_creates_workload_and_pod_group(tmp_path: Path) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
           "spec": {"parallelism": 3, "completions": 3, "scheduling": {"schedulingPolicy": {"gang": {}}},
                    "template": {"spec": {"restartPolicy": "Never", "containers": [
                        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}}}
    code, out, err = run(tmp_path, [NODE, job], "--feature-gates", "GenericWorkload=true,WorkloadWithJob=true")
    assert code == 0, err
    objs = json.loads(out)["items"]
    (wl,) = [o for o in objs if o["kind"] == "Workload"]
    (pg,) = [o for o in objs if o["kind"] == "PodGroup"]
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert wl["spec"]["podGroupTemplates"] == [{"name": "train-pgt-0", "schedulingPolicy": {"gang": {"minCount": 3}}}]
    assert pg["spec"]["workloadRef"] == {"workloadName": wl["metadata"]["name"], "templateName": "train-pgt-0"}
    assert pg["spec"]["priority"] == 0 and pg["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    assert {r["uid"] for r in pg["metadata"]["ownerReferences"] if r["kind"] == "Workload"} == {wl["metadata"]["uid"]}
    assert len(pods) == 3 and {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pg["metadata"]["name"]}
    # without WorkloadWithJob the Job's pods are plain
    code, out, err = run(tmp_path, [NODE, {**job, "spec": {k: v for k, v in job["spec"].items() if k != "scheduling"}}],
                         "--feature-gates", "GenericWorkload=true")
    assert code == 0, err
    assert not [o for o in json.loads(out)["items"] if o["kind"] in ("Workload", "PodGroup")]


def test_default_config_unchanged_without_gates() -> None:
    """Nothing of the above is on by default (the 1.37 default configuration has no GangScheduling)."""
    names = [p.name for p in default_config(FeatureGate()).profiles[0].plugins.multi_point.enabled]
    assert "GangScheduling" not in names
