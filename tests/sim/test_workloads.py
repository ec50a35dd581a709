"""Workload controllers (``kubesched.controllers.workloads``) and their use by ``kubesched simulate``."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.controllers.workloads import (
    ALPHANUMS,
    Controllers,
    WorkloadError,
    compute_hash,
    daemon_pod_tolerations,
    fnv32a,
    generate_name,
    safe_encode_string,
)


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def write(tmp_path: Path, docs: list[dict], name: str = "in.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return p


def node(name: str, cpu: str = "4", labels: dict | None = None, taints: list | None = None) -> dict:
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                         "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
                         "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}
    if taints:
        d["spec"]["taints"] = taints
    return d


def template(app: str, cpu: str = "100m", **spec: Any) -> dict:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}], **spec}}


def workload(kind: str, name: str, spec: dict, ns: str = "default") -> dict:
    api = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec}


def deployment(name: str = "web", replicas: int = 3, **kw: Any) -> dict:
    return workload("Deployment", name, {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                                         "template": template(name, **kw)})


def statefulset(name: str = "db", replicas: int = 3, policy: str | None = None, **spec: Any) -> dict:
    s = {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
         "template": template(name), **spec}
    if policy:
        s["podManagementPolicy"] = policy
    return workload("StatefulSet", name, s)


def daemonset(name: str = "agent", **tspec: Any) -> dict:
    return workload("DaemonSet", name, {"selector": {"matchLabels": {"app": name}},
                                        "template": template(name, **tspec)})


def job(name: str = "pi", **spec: Any) -> dict:
    t = template(name, restartPolicy="Never")
    t["metadata"] = {}
    return workload("Job", name, {"template": t, **spec})


def created(res: Any, kind: str = "Pod") -> list[dict]:
    return [o for o, _ in res.created if o["kind"] == kind]


def bind(pods: list[dict], node_name: str = "n1") -> list[dict]:
    out = copy.deepcopy(pods)
    for p in out:
        p["spec"]["nodeName"] = node_name
    return out


# ----------------------------------------------------------------------------- names and hashes

def test_fnv32a_and_safe_encode_follow_go() -> None:
    # Go hash/fnv New32a test vectors
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968
    # rand.SafeEncodeString: byte % 27 into the alphabet ('0' is 48 → 48 % 27 = 21)
    assert safe_encode_string("0") == ALPHANUMS[21]
    assert safe_encode_string("12") == ALPHANUMS[49 % 27] + ALPHANUMS[50 % 27]


def test_compute_hash_depends_on_template_and_collision_count() -> None:
    t = template("web")
    h = compute_hash(t)
    assert set(h) <= set(ALPHANUMS) and 1 <= len(h) <= 10
    assert compute_hash(copy.deepcopy(t)) == h
    assert compute_hash(t, 1) != h and compute_hash(t, 1) != compute_hash(t, 2)
    assert compute_hash(template("web", cpu="200m")) != h


def test_generate_name_cuts_prefix_to_58_and_adds_5_chars() -> None:
    import random

    name = generate_name("x" * 70, random.Random(0))
    assert len(name) == 63 and name.startswith("x" * 58) and set(name[58:]) <= set(ALPHANUMS)


# ----------------------------------------------------------------------------- Deployment / ReplicaSet

def test_deployment_creates_replicaset_then_pods_with_hash_and_owner_refs() -> None:
    c = Controllers([deployment(replicas=3)], seed=7)
    res = c.sync([], [])
    [rs] = created(res, "ReplicaSet")
    pods = created(res)
    h = rs["metadata"]["labels"]["pod-template-hash"]
    assert h == compute_hash(template("web"))
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["replicas"] == 3
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    [dref] = rs["metadata"]["ownerReferences"]
    assert dref == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": dref["uid"],
                    "controller": True, "blockOwnerDeletion": True}
    assert len(pods) == 3 and len({p["metadata"]["name"] for p in pods}) == 3
    for p in pods:
        m = p["metadata"]
        assert m["generateName"] == f"web-{h}-"
        assert m["name"].startswith(f"web-{h}-") and len(m["name"]) == len(f"web-{h}-") + 5
        assert set(m["name"][-5:]) <= set(ALPHANUMS)
        assert m["labels"] == {"app": "web", "pod-template-hash": h}
        assert m["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"],
                                         "uid": rs["metadata"]["uid"], "controller": True,
                                         "blockOwnerDeletion": True}]
    # level-triggered: the next pass sees the pods and creates nothing
    assert c.sync(pods, []).created == []


def test_same_seed_same_names_other_seed_other_names() -> None:
    def names(seed: int) -> list[str]:
        return [p["metadata"]["name"] for p in created(Controllers([deployment()], seed=seed).sync([], []))]

    assert names(1) == names(1)
    assert names(1) != names(2)


def test_existing_owned_and_orphan_pods_count_terminal_ones_do_not() -> None:
    rs = workload("ReplicaSet", "front", {"replicas": 4, "selector": {"matchLabels": {"app": "front"}},
                                          "template": template("front")})
    owned = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "front-aaaaa", "namespace": "default", "labels": {"app": "front"},
                          "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "front",
                                               "uid": "u1", "controller": True}]},
             "spec": {"nodeName": "n1"}}
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "adopt-me", "namespace": "default",
                                                              "labels": {"app": "front"}}, "spec": {}}
    done = copy.deepcopy(owned)
    done["metadata"]["name"] = "front-done1"
    done["status"] = {"phase": "Succeeded"}
    other_ns = copy.deepcopy(orphan)
    other_ns["metadata"]["namespace"] = "other"
    c = Controllers([rs])
    res = c.sync([owned, orphan, done, other_ns], [])
    assert len(created(res)) == 2  # 4 - (owned + adopted orphan)
    assert c.sync([owned, orphan, *created(res)], []).created == []
    rs["metadata"]["uid"] = "u2"  # another object of the same name: the pod is not its
    assert len(created(Controllers([rs]).sync([owned], []))) == 4


def test_deployment_reuses_its_replicaset_and_scales_it() -> None:
    d = deployment(replicas=5)
    first = Controllers([d]).sync([], [])
    [rs] = created(first, "ReplicaSet")
    rs = copy.deepcopy(rs)
    rs["spec"]["replicas"] = 2
    pods = created(first)[:2]
    c = Controllers([d, rs])
    res = c.sync(pods, [])
    assert created(res, "ReplicaSet") == []
    [(scaled, idx)] = res.updated
    assert idx == 1 and scaled["spec"]["replicas"] == 5
    assert rs["spec"]["replicas"] == 2  # input not mutated
    assert len(created(res)) == 3


def test_rolling_update_surges_then_scales_the_old_replica_set_down() -> None:
    """rolling.go with the defaults (maxSurge 25 % of 2 → 1 rounded up, maxUnavailable → 0
    rounded down): the new ReplicaSet starts at 1; once its pod is available the old one is
    scaled to 1 and its surplus pod deleted (bound pods count as available in the simulator)."""
    first = Controllers([deployment(replicas=2, cpu="50m")]).sync([], [])
    [old] = created(first, "ReplicaSet")
    old_pods = bind(created(first))
    c = Controllers([deployment(replicas=2), old])
    r1 = c.sync(old_pods, [])
    [new] = created(r1, "ReplicaSet")
    assert new["spec"]["replicas"] == 1 and new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "3"
    assert r1.updated == [] and r1.deleted == []
    new_pods = bind(created(r1))
    assert len(new_pods) == 1
    r2 = c.sync(old_pods + new_pods, [])
    [(scaled, idx)] = r2.updated
    assert idx == 1 and scaled["spec"]["replicas"] == 1
    [(gone, _)] = r2.deleted
    assert gone["metadata"]["name"] in {p["metadata"]["name"] for p in old_pods}


def test_replication_controller_selector_defaults_to_template_labels() -> None:
    rc = workload("ReplicationController", "legacy", {"replicas": 2, "template": template("legacy")})
    pods = created(Controllers([rc]).sync([], []))
    assert len(pods) == 2
    assert pods[0]["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController"
    assert pods[0]["metadata"]["ownerReferences"][0]["apiVersion"] == "v1"


# ----------------------------------------------------------------------------- StatefulSet

def test_statefulset_ordered_ready_one_at_a_time_with_identity_and_claims() -> None:
    s = statefulset(replicas=3, volumeClaimTemplates=[
        {"metadata": {"name": "data", "labels": {"tier": "db"}},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}])
    c = Controllers([s])
    res = c.sync([], [])
    [pod] = created(res)
    [pvc] = created(res, "PersistentVolumeClaim")
    assert [o["kind"] for o, _ in res.created] == ["PersistentVolumeClaim", "Pod"]
    assert pvc["metadata"]["name"] == "data-db-0"
    assert pvc["metadata"]["labels"] == {"tier": "db", "app": "db"}
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1Gi"
    m = pod["metadata"]
    assert m["name"] == "db-0" and m["generateName"] == "db-"
    assert m["labels"]["statefulset.kubernetes.io/pod-name"] == "db-0"
    assert m["labels"]["apps.kubernetes.io/pod-index"] == "0"
    assert m["labels"]["controller-revision-hash"].startswith("db-")
    assert pod["spec"]["hostname"] == "db-0" and pod["spec"]["subdomain"] == "db"
    assert pod["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    # not bound yet: OrderedReady waits
    assert c.sync([pod], [], [pvc]).created == []
    # bound (the simulator's Running and Ready): the next ordinal
    res = c.sync(bind([pod]), [], [pvc])
    assert [o["metadata"]["name"] for o, _ in res.created] == ["data-db-1", "db-1"]


def test_statefulset_ready_condition_of_a_dumped_pod_decides() -> None:
    c = Controllers([statefulset(replicas=2)])
    [pod] = created(c.sync([], []))
    pod = bind([pod])[0]
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}]}
    assert c.sync([pod], []).created == []
    pod["status"]["conditions"][0]["status"] = "True"
    assert [p["metadata"]["name"] for p in created(c.sync([pod], []))] == ["db-1"]


def test_statefulset_without_kubelet_ready_waits_in_the_box_mode() -> None:
    c = Controllers([statefulset(replicas=2)], ready_when_bound=False)
    [pod] = created(c.sync([], []))
    bound = bind([pod])
    assert c.sync(bound, []).created == []  # bound, no Ready condition yet
    bound[0]["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    assert [p["metadata"]["name"] for p in created(c.sync(bound, []))] == ["db-1"]


def test_statefulset_parallel_creates_all_and_keeps_existing_claims_and_start_ordinal() -> None:
    s = statefulset(replicas=3, policy="Parallel", ordinals={"start": 5},
                    volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}])
    existing_pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data-db-6", "namespace": "default"}, "spec": {}}
    res = Controllers([s]).sync([], [], [existing_pvc])
    assert [p["metadata"]["name"] for p in created(res)] == ["db-5", "db-6", "db-7"]
    assert [p["metadata"]["name"] for p in created(res, "PersistentVolumeClaim")] == ["data-db-5", "data-db-7"]


# ----------------------------------------------------------------------------- DaemonSet

def test_daemonset_one_pod_per_eligible_node_with_affinity_and_tolerations() -> None:
    nodes = [node("n1"), node("n2", taints=[{"key": "gpu", "value": "x", "effect": "NoSchedule"}]),
             node("n3", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
             node("n4", taints=[{"key": "soft", "effect": "PreferNoSchedule"}]),
             node("n5", taints=[{"key": "evict", "effect": "NoExecute"}])]
    res = Controllers([daemonset()]).sync([], nodes)
    pods = created(res)
    targets = [p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
               ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0] for p in pods]
    assert targets == ["n1", "n3", "n4"]  # n2 NoSchedule and n5 NoExecute untolerated
    p = pods[0]
    assert "nodeName" not in p["spec"]
    assert p["metadata"]["generateName"] == "agent-"
    assert p["metadata"]["labels"]["pod-template-generation"] == "1"
    assert "controller-revision-hash" in p["metadata"]["labels"]
    keys = [(t["key"], t["effect"]) for t in p["spec"]["tolerations"]]
    assert keys == [("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
                    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
                    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
                    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
                    ("node.kubernetes.io/unschedulable", "NoSchedule")]
    # a pass after: every eligible node has its pod
    assert Controllers([daemonset()]).sync(pods, nodes).created == []


def test_daemonset_selector_affinity_replacement_and_user_tolerations() -> None:
    ds = daemonset(nodeSelector={"role": "edge"},
                   tolerations=[{"key": "gpu", "operator": "Exists"},
                                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                                 "tolerationSeconds": 300}],
                   affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                       "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                                    "values": ["a"]}]}]}}},
                   hostNetwork=True)
    nodes = [node("e1", labels={"role": "edge", "zone": "a"},
                  taints=[{"key": "gpu", "value": "1", "effect": "NoSchedule"}]),
             node("e2", labels={"role": "edge", "zone": "b"}), node("c1", labels={"zone": "a"})]
    [pod] = created(Controllers([ds]).sync([], nodes))
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                             "values": ["e1"]}]}]}
    tols = pod["spec"]["tolerations"]
    # the user's not-ready toleration is replaced by the controller's (no tolerationSeconds)
    assert {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"} in tols
    assert not any(t.get("tolerationSeconds") for t in tols)
    assert {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"} in tols


def test_daemon_pod_tolerations_keep_user_ones_first() -> None:
    tols = daemon_pod_tolerations({"tolerations": [{"key": "a", "operator": "Exists"}]})
    assert tols[0] == {"key": "a", "operator": "Exists"} and len(tols) == 7


# ----------------------------------------------------------------------------- Job

def test_job_parallelism_and_completions() -> None:
    c = Controllers([job(parallelism=3, completions=2)])
    pods = created(c.sync([], []))
    assert len(pods) == 2
    m = pods[0]["metadata"]
    assert m["generateName"] == "pi-"
    assert m["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    uid = m["ownerReferences"][0]["uid"]
    assert m["labels"] == {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
                           "controller-uid": uid, "job-name": "pi"}
    assert m["ownerReferences"][0]["kind"] == "Job" and m["ownerReferences"][0]["apiVersion"] == "batch/v1"
    done = copy.deepcopy(pods[0])
    done["status"] = {"phase": "Succeeded"}
    assert c.sync([done, pods[1]], []).created == []  # completions - succeeded = 1 = active
    assert created(Controllers([job(parallelism=2)]).sync([], [])).__len__() == 2  # work queue
    assert Controllers([job(parallelism=2, suspend=True)]).sync([], []).created == []
    failed = job(parallelism=2)
    failed["status"] = {"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}
    assert Controllers([failed]).sync([], []).created == []


def test_indexed_job_indexes_hostnames_and_completed_indexes() -> None:
    j = job(parallelism=3, completions=5, completionMode="Indexed")
    j["status"] = {"completedIndexes": "0,2"}
    pods = created(Controllers([j]).sync([], []))
    idx = [p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods]
    assert idx == ["1", "3", "4"]
    p = pods[0]
    assert p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1"
    assert p["metadata"]["generateName"] == "pi-1-" and p["metadata"]["name"].startswith("pi-1-")
    assert p["spec"]["hostname"] == "pi-1"
    assert {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}} \
        in p["spec"]["containers"][0]["env"]


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize(("obj", "message"), [
    (workload("Deployment", "web", {"template": template("web")}),
     'Deployment.apps "web" is invalid: spec.selector: Required value'),
    (workload("ReplicaSet", "web", {"replicas": -1, "selector": {"matchLabels": {"app": "web"}},
                                    "template": template("web")}),
     'ReplicaSet.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
    (workload("Job", "j", {"template": template("j")}),
     'Job.batch "j" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
])
def test_invalid_workload_gives_the_api_server_message(obj: dict, message: str) -> None:
    with pytest.raises(WorkloadError) as ei:
        Controllers([obj])
    assert ei.value.message == message


# ----------------------------------------------------------------------------- through simulate

def test_simulate_expands_workloads_and_shows_the_controller(tmp_path: Path) -> None:
    cron = workload("CronJob", "nightly", {"schedule": "0 0 * * *", "jobTemplate": {"spec": job()["spec"]}})
    docs = [node("n1"), node("n2"), deployment(replicas=3), daemonset(), cron]
    code, out, err = run("simulate", "-f", str(write(tmp_path, docs)), "-o", "table")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "# 5 pending pods: 5 scheduled, 0 unschedulable"
    assert "CONTROLLER" in lines[1]
    h = compute_hash(template("web"))
    assert sum(f"ReplicaSet/web-{h}" in ln for ln in lines) == 3
    assert sum("DaemonSet/agent" in ln for ln in lines) == 2
    assert any("notice: CronJob default/nightly: not expanded" in ln for ln in lines)

    code, out, err = run("simulate", "-f", str(write(tmp_path, docs)), "-o", "yaml")
    assert code == 0
    items = yaml.safe_load(out)["items"]
    kinds = [i["kind"] for i in items]
    assert kinds[:5] == ["Node", "Node", "Deployment", "DaemonSet", "CronJob"]
    assert kinds.count("ReplicaSet") == 1 and kinds.count("Pod") == 5
    dep = items[2]
    [rs] = [i for i in items if i["kind"] == "ReplicaSet"]
    assert rs["metadata"]["ownerReferences"][0]["uid"] == dep["metadata"]["uid"]
    # the output simulated again: the controllers see their objects and create nothing more
    again = write(tmp_path, [i for i in items if i["kind"] != "CronJob"], "again.yaml")
    code, out2, _ = run("simulate", "-f", str(again), "-o", "yaml")
    assert code == 0 and len(yaml.safe_load(out2)["items"]) == len(items) - 1
    ds_pods = [i for i in items if i["kind"] == "Pod" and i["metadata"]["name"].startswith("agent-")]
    assert sorted(p["spec"]["nodeName"] for p in ds_pods) == ["n1", "n2"]
    assert "notice: CronJob" in err


def test_simulate_ordered_ready_stops_at_the_first_pod_that_cannot_run(tmp_path: Path) -> None:
    docs = [node("n1", cpu="1"), statefulset(replicas=4, template=template("db", cpu="400m"))]
    code, out, _ = run("simulate", "-f", str(write(tmp_path, docs)), "-o", "yaml")
    assert code == 0
    pods = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"] if i["kind"] == "Pod"}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]  # db-3 is never created: db-2 does not fit
    assert pods["db-0"]["spec"]["nodeName"] == "n1" and pods["db-1"]["spec"]["nodeName"] == "n1"
    assert "nodeName" not in pods["db-2"]["spec"]

    docs[1] = statefulset(replicas=4, policy="Parallel", template=template("db", cpu="400m"))
    code, out, _ = run("simulate", "-f", str(write(tmp_path, docs)), "-o", "yaml")
    pods = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"] if i["kind"] == "Pod"}
    assert sorted(pods) == ["db-0", "db-1", "db-2", "db-3"]


def test_simulate_replaces_a_preempted_replicaset_pod(tmp_path: Path) -> None:
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
            "value": 1000}
    vip = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vip", "namespace": "default"},
           "spec": {"priorityClassName": "high", "containers": [
               {"name": "c", "image": "img", "resources": {"requests": {"cpu": "800m"}}}]}}
    rs = workload("ReplicaSet", "web", {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                                        "template": template("web", cpu="500m")})
    running = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "web-abcde", "namespace": "default", "labels": {"app": "web"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                                 "uid": "1", "controller": True}]},
               "spec": {"nodeName": "n1", **template("web", cpu="500m")["spec"]}}
    docs = [node("n1", cpu="1"), high, rs, running, vip]
    code, out, err = run("simulate", "-f", str(write(tmp_path, docs)), "-o", "yaml")
    assert code == 0, err
    pods = {i["metadata"]["name"]: i for i in yaml.safe_load(out)["items"] if i["kind"] == "Pod"}
    # vip preempts web-abcde; the ReplicaSet controller creates a replacement, which stays pending
    assert "web-abcde" not in pods
    assert pods["vip"]["spec"]["nodeName"] == "n1"
    [repl] = [n for n in pods if n.startswith("web-")]
    assert "nodeName" not in pods[repl]["spec"]
    assert pods[repl]["metadata"]["ownerReferences"][0]["name"] == "web"


def test_simulate_workload_of_an_unserved_version_is_not_silently_dropped(tmp_path: Path) -> None:
    old = deployment()
    old["apiVersion"] = "extensions/v1beta1"
    code, out, err = run("simulate", "-f", str(write(tmp_path, [node("n1"), old])), "-o", "yaml")
    if code == 0:  # no kubectl-style "no matches for kind" error: then a notice
        assert "notice: Deployment default/web" in err and "not expanded" in err
    else:
        assert code == 2 and 'no matches for kind "Deployment" in version "extensions/v1beta1"' in err


def test_simulate_invalid_deployment_exits_2_with_file_and_line(tmp_path: Path) -> None:
    bad = workload("Deployment", "web", {"template": template("web")})
    path = write(tmp_path, [node("n1"), bad])
    code, _, err = run("simulate", "-f", str(path))
    assert code == 2
    # the missing field's parent (spec:) is the line to fix
    assert err.strip() == f'error: {path}:19: Deployment.apps "web" is invalid: spec.selector: Required value'
