"""``kubesched run`` as a subprocess against the real kube-apiserver (etcd + kube-apiserver
of the default version, v1.37, from ``make upstream``), with upstream kube-scheduler as the oracle on
the same cluster.

Each test gives its schedulers their own ``schedulerName`` so that the two (and the session's
other tests) leave each other's pods alone while they see the same nodes. Skipped with the
fixture's build hint when the binaries are absent.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.testing.upstream import ControlPlane

SRC = str(Path(__file__).resolve().parents[2] / "src")


def node(name: str, cpu: str = "2", labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"taints": taints or []},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, scheduler: str, cpu: str = "100m", selector: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": scheduler, "nodeSelector": selector or {}, "containers": [{
                "name": "c", "image": "registry.k8s.io/pause:3.10.1",
                "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}]}}


def create(cp: ControlPlane, path: str, obj: dict[str, Any]) -> None:
    status, _, body = cp.request("POST", path, obj)
    assert status == 201, body


def eventually(cond: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def pods(cp: ControlPlane, ns: str) -> dict[str, dict[str, Any]]:
    status, _, body = cp.request("GET", f"/api/v1/namespaces/{ns}/pods")
    assert status == 200, body
    return {p["metadata"]["name"]: p for p in body["items"]}


def events(cp: ControlPlane, ns: str) -> list[dict[str, Any]]:
    status, _, body = cp.request("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")
    assert status == 200, body
    return list(body["items"])


def scheduled_cond(p: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in p["status"].get("conditions") or [] if c["type"] == "PodScheduled"), None)


def spawn_run(cp: ControlPlane, tmp: Path, user: str, scheduler: str, *args: str,
              leader_election: dict[str, Any] | None = None) -> subprocess.Popen[bytes]:
    """``kubesched run --config`` as ``user`` with one profile named ``scheduler``."""
    cfg = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "clientConnection": {"kubeconfig": str(cp.kubeconfig_for(user)), "qps": 5000, "burst": 5000,
                                "contentType": "application/json"},
           "leaderElection": leader_election or {"leaderElect": False},
           "profiles": [{"schedulerName": scheduler}]}
    path = tmp / "kubesched-config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log = open(tmp / "run.log", "ab")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(
        [sys.executable, "-m", "kubesched.cli.main", "run", "--config", str(path), "--secure-port=0",
         "--bind-address=127.0.0.1", "-v=2", *args], stdout=log, stderr=log, env=env)


def finish(proc: subprocess.Popen[bytes], timeout: float = 30) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        raise


def log_tail(tmp: Path) -> str:
    p = tmp / "run.log"
    return "\n".join(p.read_text().splitlines()[-40:]) if p.exists() else "(no log)"


@pytest.mark.parametrize("user", ["kubesched", "system:kube-scheduler"])
def test_run_binds_once_and_reports_like_kube_scheduler(
        upstream_control_plane: ControlPlane, tmp_path: Path, user: str) -> None:
    """Pods created through the API are bound exactly once; an unschedulable pod gets the same
    PodScheduled condition and FailedScheduling event as upstream kube-scheduler gives a twin
    pod on the same nodes at the same time. As ``system:kube-scheduler`` it runs with only
    upstream's bootstrap RBAC (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go)."""
    cp = upstream_control_plane
    tag = secrets.token_hex(3)
    ours, theirs = f"kubesched-{tag}", f"upstream-{tag}"
    ns = f"run-{tag}"
    create(cp, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    zone = {"zone": f"z-{tag}"}
    create(cp, "/api/v1/nodes", node(f"n0-{tag}", labels=zone))
    create(cp, "/api/v1/nodes", node(f"n1-{tag}"))
    create(cp, "/api/v1/nodes", node(f"n2-{tag}", labels=zone,
                                     taints=[{"key": "dedicated", "value": tag, "effect": "NoSchedule"}]))
    base = f"/api/v1/namespaces/{ns}/pods"
    names = [f"p{i}" for i in range(6)]
    for n in names:
        create(cp, base, pod(n, ours))
    create(cp, base, pod("huge", ours, cpu="64"))
    create(cp, base, pod("huge-upstream", theirs, cpu="64"))
    # mixed reasons: taint on n2, selector elsewhere, cpu on n0
    create(cp, base, pod("picky", ours, cpu="3", selector=zone))
    create(cp, base, pod("picky-upstream", theirs, cpu="3", selector=zone))
    create(cp, base, pod("other", "nobody-" + tag))
    cp.start_kube_scheduler({"profiles": [{"schedulerName": theirs}]})
    proc = spawn_run(cp, tmp_path, user, ours)
    try:
        eventually(lambda: all(pods(cp, ns)[n]["spec"].get("nodeName") for n in names), "pods bound")
        create(cp, base, pod("late", ours))  # followed through the watch
        names.append("late")
        eventually(lambda: bool(pods(cp, ns)["late"]["spec"].get("nodeName")), "late pod bound")
        pairs = [("huge", "huge-upstream"), ("picky", "picky-upstream")]
        eventually(lambda: all(scheduled_cond(pods(cp, ns)[n]) for pair in pairs for n in pair),
                   "PodScheduled on the unschedulable pods")
        ps = pods(cp, ns)
        for a, b in pairs:
            mine, oracle = scheduled_cond(ps[a]), scheduled_cond(ps[b])
            assert mine is not None and oracle is not None
            assert oracle["reason"] == "Unschedulable"
            assert oracle.get("observedGeneration") == ps[b]["metadata"]["generation"] == 1  # v1.34: tracked
            assert (mine["status"], mine["reason"], mine["message"], mine.get("observedGeneration")) == \
                (oracle["status"], oracle["reason"], oracle["message"], oracle.get("observedGeneration")), a
        assert "untolerated taint" in str(scheduled_cond(ps["picky"]))
        assert "nodeName" not in ps["other"]["spec"] and not ps["other"]["status"].get("conditions")

        def failed(name: str) -> list[dict[str, Any]]:
            return [e for e in events(cp, ns)
                    if e["reason"] == "FailedScheduling" and e["regarding"]["name"] == name]

        eventually(lambda: all(failed(n) for pair in pairs for n in pair), "FailedScheduling events")
        for a, b in pairs:
            e_mine, e_oracle = failed(a)[0], failed(b)[0]
            for k in ("type", "action", "note"):
                assert e_mine[k] == e_oracle[k], (a, k)
            assert e_mine["note"] == scheduled_cond(ps[a])["message"]  # type: ignore[index]
            # upstream names the reporting controller after the profile's schedulerName
            assert (e_mine["reportingController"], e_oracle["reportingController"]) == (ours, theirs)
        # bound exactly once: one Scheduled event and one "bound" log line per pod
        ps = pods(cp, ns)
        sched = [e for e in events(cp, ns) if e["reason"] == "Scheduled"]
        for n in names:
            mine_ev = [e for e in sched if e["regarding"]["name"] == n]
            assert len(mine_ev) == 1, (n, mine_ev)
            assert mine_ev[0]["note"] == f"Successfully assigned {ns}/{n} to {ps[n]['spec']['nodeName']}"
        log = (tmp_path / "run.log").read_text()
        for n in names:
            assert log.count(f'"Successfully bound pod to node" pod="{ns}/{n}"') == 1, n
        assert "forbidden" not in log.lower(), "a request was forbidden (see log)"
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- kubesched run log (tail) ---\n{log_tail(tmp_path)}") from None
    finally:
        cp.stop_kube_scheduler()
        code = finish(proc)
    assert code == 0


def test_run_leader_election_on_real_lease(upstream_control_plane: ControlPlane, tmp_path: Path) -> None:
    """With leader election on, ``kubesched run`` takes a coordination.k8s.io Lease in
    kube-system before scheduling, binds, and releases the Lease on SIGTERM (exit 0), as
    cmd/kube-scheduler/app/server.go does with ReleaseOnCancel."""
    cp = upstream_control_plane
    tag = secrets.token_hex(3)
    ours, ns, lease = f"kubesched-{tag}", f"le-{tag}", f"kubesched-{tag}"
    create(cp, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    create(cp, "/api/v1/nodes", node(f"le-{tag}"))
    le = {"leaderElect": True, "leaseDuration": "4s", "renewDeadline": "3s", "retryPeriod": "500ms",
          "resourceLock": "leases", "resourceName": lease, "resourceNamespace": "kube-system"}
    proc = spawn_run(cp, tmp_path, "kubesched", ours, leader_election=le)
    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{lease}"

    def holder() -> str:
        status, _, body = cp.request("GET", lease_path)
        return str((body.get("spec") or {}).get("holderIdentity") or "") if status == 200 else ""

    try:
        eventually(lambda: bool(holder()), "lease acquired")
        for i in range(3):
            create(cp, f"/api/v1/namespaces/{ns}/pods", pod(f"x{i}", ours))
        eventually(lambda: all(p["spec"].get("nodeName") for p in pods(cp, ns).values()), "bound by the leader")
        log = (tmp_path / "run.log").read_text()
        assert f'"Started leading" identity="{holder()}"' in log
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- kubesched run log (tail) ---\n{log_tail(tmp_path)}") from None
    finally:
        code = finish(proc)
    assert code == 0
    eventually(lambda: not holder(), "lease released", timeout=10)
