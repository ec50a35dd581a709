"""The envtest-style fixture itself: binaries lookup, start failures, kubectl, tokens, RBAC."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kubesched.testing.upstream import (
    VERSIONS,
    ControlPlane,
    UpstreamBinaries,
    UpstreamNotBuilt,
    UpstreamStartError,
    find_binaries,
    format_feature_gates,
    parse_feature_gates,
    pinned_version,
    resolve_version,
)
from kubesched.testing.upstream import unique_name as unique

# --------------------------------------------------------------------------- no binaries needed


def test_missing_binaries_say_how_to_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBESCHED_UPSTREAM_DIR", str(tmp_path))
    with pytest.raises(UpstreamNotBuilt) as e:
        find_binaries()
    assert "make upstream" in str(e.value)
    assert str(tmp_path / "bin") in str(e.value)


def test_env_dir_may_hold_the_binaries_directly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in ("kube-apiserver", "kube-scheduler", "etcd"):
        p = tmp_path / n
        p.write_text("#!/bin/sh\n")
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("KUBESCHED_UPSTREAM_DIR", str(tmp_path))
    assert find_binaries().bin_dir == tmp_path


def _fake_versioned_bins(d: Path, version: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    for n in ("kube-apiserver", "kube-scheduler", "etcd"):
        p = d / n
        p.write_text(f"#!/bin/sh\necho 'Kubernetes {version}'\n")
        p.chmod(0o755)


def test_versions_have_their_own_go_module_and_default_to_1_37(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UPSTREAM_VERSION", raising=False)
    assert resolve_version() == "1.37"
    assert resolve_version("v1.34") == resolve_version("1.34.12") == "1.34"
    monkeypatch.setenv("UPSTREAM_VERSION", "1.34")
    assert resolve_version() == "1.34"
    with pytest.raises(ValueError, match="1.35"):
        resolve_version("1.35")
    assert (pinned_version("1.37") or "").startswith("v1.37.")
    assert (pinned_version("1.34") or "").startswith("v1.34.")
    assert set(VERSIONS) == {"1.37", "1.34"}


def test_env_dir_of_another_version_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_versioned_bins(tmp_path / "bin", "v1.34.12")
    monkeypatch.setenv("KUBESCHED_UPSTREAM_DIR", str(tmp_path))
    got = find_binaries("1.34")
    assert (got.bin_dir, got.version, got.minor) == (tmp_path / "bin", "v1.34.12", (1, 34))
    with pytest.raises(UpstreamNotBuilt) as e:
        find_binaries("1.37")
    assert "v1.34.12, not 1.37" in str(e.value)
    assert "--version 1.37" in str(e.value)


def test_missing_version_names_its_build_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBESCHED_UPSTREAM_DIR", raising=False)
    for v in VERSIONS:
        try:
            find_binaries(v)
        except UpstreamNotBuilt as e:
            assert f"build.sh --version {v}" in str(e)
            assert f"/{pinned_version(v)}/bin" in str(e)


def test_feature_gates_flag_round_trips() -> None:
    assert parse_feature_gates("B=false, A=true,") == {"A": True, "B": False}
    assert parse_feature_gates({"A": 1}) == {"A": True}
    assert parse_feature_gates(None) == {}
    assert format_feature_gates({"B": False, "A": True}) == "A=true,B=false"
    with pytest.raises(ValueError, match="Name=true"):
        parse_feature_gates("A")


def _fake_bins(tmp_path: Path, etcd_script: str) -> UpstreamBinaries:
    d = tmp_path / "bin"
    d.mkdir()
    for n, body in (("etcd", etcd_script), ("kube-apiserver", "exit 1"), ("kube-scheduler", "exit 1")):
        p = d / n
        p.write_text(f"#!/bin/sh\n{body}\n")
        p.chmod(0o755)
    return UpstreamBinaries(bin_dir=d, version="test")


def test_a_process_that_exits_is_reported_with_its_log_and_cleaned_up(tmp_path: Path) -> None:
    bins = _fake_bins(tmp_path, 'echo "etcd: cannot open data dir" >&2; exit 7')
    work = tmp_path / "work"
    with pytest.raises(UpstreamStartError) as e:
        ControlPlane.start(binaries=bins, workdir=work, ready_timeout=5)
    assert "etcd exited with code 7" in str(e.value)
    assert "cannot open data dir" in str(e.value)
    assert work.exists()  # a workdir given by the caller is kept for inspection


def test_a_process_that_never_gets_ready_is_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    bins = _fake_bins(tmp_path, f'echo $$ >> {pid_file}; exec sleep 30')
    with pytest.raises(UpstreamStartError) as e:
        ControlPlane.start(binaries=bins, ready_timeout=1)
    assert "not ready" in str(e.value)
    pids = [int(x) for x in pid_file.read_text().split()]
    assert len(pids) == 2  # one retry on fresh ports
    for pid in pids:  # both were stopped and reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# --------------------------------------------------------------------------- real control plane


def test_kubectl_apply_node_and_pod_and_get_them_back(upstream_control_plane: ControlPlane, need_kubectl: None) -> None:
    cp = upstream_control_plane
    node, pod = unique("node"), unique("pod")
    manifest = f"""
apiVersion: v1
kind: Node
metadata:
  name: {node}
  labels: {{zone: a}}
status:
  capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
  allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: {pod}
  namespace: default
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources: {{requests: {{cpu: 500m}}}}
"""
    out = cp.kubectl("apply", "-f", "-", input=manifest)
    assert f"node/{node} created" in out.stdout
    assert f"pod/{pod} created" in out.stdout

    got_node = json.loads(cp.kubectl("get", "node", node, "-o", "json").stdout)
    assert got_node["metadata"]["labels"]["zone"] == "a"
    # status sent on create is kept for nodes (no kubelet overwrites it here)
    assert got_node["status"]["allocatable"]["cpu"] == "4"

    got_pod = json.loads(cp.kubectl("get", "pod", pod, "-o", "json").stdout)
    assert got_pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    assert "nodeName" not in got_pod["spec"]
    assert got_pod["status"]["phase"] == "Pending"
    # admission defaults a real server applies (DefaultTolerationSeconds, Priority)
    tolerations = {t["key"]: t for t in got_pod["spec"]["tolerations"]}
    assert tolerations["node.kubernetes.io/not-ready"]["tolerationSeconds"] == 300
    assert got_pod["spec"]["priority"] == 0
    assert "last-applied-configuration" in " ".join(got_pod["metadata"]["annotations"])

    # re-applying the same file is a no-op, as on any cluster
    again = cp.kubectl("apply", "-f", "-", input=manifest)
    assert f"pod/{pod} unchanged" in again.stdout


def test_scheduler_token_has_exactly_the_default_scheduler_rbac(upstream_control_plane: ControlPlane) -> None:
    cp = upstream_control_plane
    me = "system:kube-scheduler"
    status, _, _ = cp.request("GET", "/api/v1/nodes", user=me)
    assert status == 200
    status, _, _ = cp.request("GET", "/api/v1/pods?limit=1", user=me)
    assert status == 200
    # the bootstrap ClusterRole lets the scheduler bind but not create nodes
    status, _, body = cp.request("POST", "/api/v1/nodes",
                                 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": unique("n")}},
                                 user=me)
    assert status == 403, body
    assert body["reason"] == "Forbidden"
    assert 'User "system:kube-scheduler" cannot create resource "nodes"' in body["message"]
    # leases in kube-system (leader election) are allowed
    status, _, body = cp.request("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
                                 {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                  "metadata": {"name": "kube-scheduler"}}, user=me)
    assert status in (201, 409), body


def test_client_certificates_signed_by_the_ca_authenticate(upstream_control_plane: ControlPlane, need_kubectl: None) -> None:
    cp = upstream_control_plane
    crt, key = cp.client_cert("cert-admin", ["system:masters"])
    out = subprocess.run(
        ["kubectl", f"--server={cp.url}", f"--certificate-authority={cp.ca_file}",
         f"--client-certificate={crt}", f"--client-key={key}", "--kubeconfig=/dev/null",
         f"--cache-dir={cp.workdir / 'kubectl-cache-cert'}", "auth", "whoami", "-o", "json"],
        capture_output=True, text=True, timeout=60, check=True)
    info = json.loads(out.stdout)["status"]["userInfo"]
    assert info["username"] == "cert-admin"
    assert "system:masters" in info["groups"]


def test_unauthenticated_requests_are_rejected(upstream_control_plane: ControlPlane) -> None:
    cp = upstream_control_plane
    cp.tokens["nobody"] = "not-a-token"
    try:
        status, _, body = cp.request("GET", "/api/v1/nodes", user="nobody")
    finally:
        del cp.tokens["nobody"]
    assert status == 401
    assert body["reason"] == "Unauthorized"


# --------------------------------------------------------------------------- tools/upstream/build.sh

BUILD_SH = Path(__file__).resolve().parents[2] / "tools" / "upstream" / "build.sh"


def test_build_without_go_says_what_to_install(tmp_path: Path) -> None:
    env = dict(os.environ, GO=str(tmp_path / "no-go"), KUBESCHED_UPSTREAM_DIR=str(tmp_path / "up"))
    out = subprocess.run([str(BUILD_SH)], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 3
    assert "no Go toolchain found" in out.stderr
    assert "make upstream" in out.stderr
    assert not (tmp_path / "up").exists()  # nothing half-built


def test_build_versions_sit_side_by_side(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBESCHED_UPSTREAM_DIR", "UPSTREAM_VERSION")}
    dirs = {}
    for args in (["--version", "1.37"], ["--version=1.34"], []):
        out = subprocess.run([str(BUILD_SH), *args, "--print-dir"], env=env, capture_output=True, text=True,
                             timeout=30, check=True)
        dirs[" ".join(args)] = out.stdout.strip()
    assert dirs["--version 1.37"].endswith(f"/.cache/upstream/{pinned_version('1.37')}/bin")
    assert dirs["--version=1.34"].endswith(f"/.cache/upstream/{pinned_version('1.34')}/bin")
    assert dirs[""] == dirs["--version 1.37"]  # default 1.37
    out = subprocess.run([str(BUILD_SH), "--print-dir"], env={**env, "UPSTREAM_VERSION": "1.34"},
                         capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == dirs["--version=1.34"]
    mod = subprocess.run([str(BUILD_SH), "--version", "1.37", "--print-module-dir"], env=env, capture_output=True,
                         text=True, timeout=30, check=True).stdout.strip()
    assert Path(mod) == VERSIONS["1.37"]
    bad = subprocess.run([str(BUILD_SH), "--version", "1.35", "--print-dir"], env=env, capture_output=True,
                         text=True, timeout=30, check=False)
    assert bad.returncode == 2
    assert "unsupported --version 1.35" in bad.stderr


def test_build_dir_follows_the_environment(tmp_path: Path) -> None:
    env = dict(os.environ, KUBESCHED_UPSTREAM_DIR=str(tmp_path))
    out = subprocess.run([str(BUILD_SH), "--print-dir"], env=env, capture_output=True, text=True,
                         timeout=30, check=True)
    assert out.stdout.strip() == str(tmp_path / "bin")


def _wait_for(cp: ControlPlane, path: str, pred: Callable[[Any], Any], timeout: float = 30.0) -> dict[str, Any]:
    """GET ``path`` every 0.2 s until ``pred(body)`` holds; bounded by ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        status, _, last = cp.request("GET", path)
        if status == 200 and pred(last):
            return dict(last)
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting on {path}: {last}")


def test_upstream_kube_scheduler_binds_and_reports_unschedulable(versioned_control_plane: ControlPlane) -> None:
    cp = versioned_control_plane
    sched = unique("sched")
    zone = unique("zone")
    node = unique("node")
    status, _, body = cp.request("POST", "/api/v1/nodes", {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node, "labels": {"zone": zone, "kubernetes.io/hostname": node}},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    })
    assert status == 201, body
    proc = cp.start_kube_scheduler({"profiles": [{"schedulerName": sched}]})
    try:
        def pod(name: str, cpu: str) -> dict:
            return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                    "spec": {"schedulerName": sched, "nodeSelector": {"zone": zone},
                             "containers": [{"name": "c", "image": "i",
                                             "resources": {"requests": {"cpu": cpu}}}]}}
        assert cp.request("POST", "/api/v1/namespaces/default/pods", pod(f"{sched}-fits", "1"))[0] == 201
        assert cp.request("POST", "/api/v1/namespaces/default/pods", pod(f"{sched}-big", "5"))[0] == 201
        got = _wait_for(cp, f"/api/v1/namespaces/default/pods/{sched}-fits",
                        lambda p: p["spec"].get("nodeName"))
        assert got["spec"]["nodeName"] == node
        big = _wait_for(cp, f"/api/v1/namespaces/default/pods/{sched}-big",
                        lambda p: p["status"].get("conditions"))
        (cond,) = big["status"]["conditions"]
        assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "Unschedulable")
        n = len(cp.request("GET", "/api/v1/nodes")[2]["items"])
        # reasons are "<count> <reason>" sorted as strings (FitError.Error); 5 cpu > the
        # node's allocatable 4 is UnschedulableAndUnresolvable, so preemption cannot help;
        # DynamicResources' PostFilter runs before DefaultPreemption and, up to v1.36, adds its
        # own reason (v1.34.12 dynamicresources.go L1077); v1.37.2 returns Unschedulable
        # without one (dynamicresources.go L1169-1171)
        reasons = ["1 Insufficient cpu"]
        if n > 1:
            reasons.append(f"{n - 1} node(s) didn't match Pod's node affinity/selector")
        dra = "no new claims to deallocate, " if cp.binaries.minor < (1, 37) else ""
        expected = (f"0/{n} nodes are available: {', '.join(sorted(reasons))}. "
                    f"{dra}preemption: 0/{n} nodes are available: "
                    f"{n} Preemption is not helpful for scheduling.")
        assert cond["message"] == expected
        assert cond["lastTransitionTime"]  # the scheduler sets it

        # events.k8s.io/v1 Events: reportingController = the profile's schedulerName,
        # reportingInstance = "<schedulerName>-<hostname>", note = the condition message
        def events(p: dict[str, Any]) -> list[dict[str, Any]]:
            return [e for e in p["items"] if e["regarding"]["name"].startswith(sched)]
        evs = events(_wait_for(cp, "/apis/events.k8s.io/v1/namespaces/default/events",
                               lambda p: len(events(p)) >= 2))
        got_events = sorted((e["regarding"]["name"], e["type"], e["reason"], e["action"], e["note"],
                             e["reportingController"], e["reportingInstance"]) for e in evs)
        instance = f"{sched}-{socket.gethostname()}"
        assert got_events == [
            (f"{sched}-big", "Warning", "FailedScheduling", "Scheduling", expected, sched, instance),
            (f"{sched}-fits", "Normal", "Scheduled", "Binding",
             f"Successfully assigned default/{sched}-fits to {node}", sched, instance),
        ]
    except BaseException:
        cp.stop_kube_scheduler()
        raise
    code = cp.stop_kube_scheduler()
    # without leader election, SIGTERM ends kube-scheduler with exit code 1: Run returns
    # "finished without leader elect" (cmd/kube-scheduler/app/server.go)
    assert code == 1 == proc.popen.returncode
    assert "finished without leader elect" in proc.log_tail()


def test_kube_scheduler_gets_the_feature_gates_its_version_knows(versioned_control_plane: ControlPlane) -> None:
    """SchedulerQueueingHints and SidecarContainers are GA and locked to true in v1.34 and gone
    from v1.37 (upstream-v137 §1.2): v1.34 accepts them, v1.37 refuses to start, naming one of them."""
    cp = versioned_control_plane
    gates = {"SchedulerQueueingHints": True, "SidecarContainers": True}
    sched = unique("gates")
    if cp.binaries.minor < (1, 37):
        cp.start_kube_scheduler({"profiles": [{"schedulerName": sched}]}, feature_gates=gates)
        cp.stop_kube_scheduler()
        return
    with pytest.raises(UpstreamStartError) as e:
        cp.start_kube_scheduler({"profiles": [{"schedulerName": sched}]}, feature_gates=gates, ready_timeout=30)
    # featuregate SetFromMap walks a Go map: which removed gate is named first is random
    assert re.search(r"unrecognized feature gate: (SchedulerQueueingHints|SidecarContainers)", str(e.value))
