"""``kubesched apiserver`` as a process: flags, kubeconfig, signals, bad input."""

from __future__ import annotations

import base64
import os
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import yaml
from apiserver_helpers import Client, pod

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], Client]:
    kc = tmp_path / "kc"
    kc.unlink(missing_ok=True)
    p = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0",
                          "--write-kubeconfig", str(kc), *args],
                         env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not kc.exists():
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    cfg = yaml.safe_load(kc.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    return p, Client(cluster["server"], cfg["users"][0]["user"]["token"], ctx)


def test_cli_serves_writes_kubeconfig_and_stops_on_sigterm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    p, c = _start(tmp_path, "--data-dir", str(data), "--simulate-kubelets")
    try:
        assert c.req("GET", "/api/v1/namespaces")[0] == 200
        assert Client(f"https://{c.host}:{c.port}", None, c.ctx).req("GET", "/api/v1/pods")[0] == 403  # anonymous
        c.create("/api/v1/namespaces/default/pods", pod("a"))
        rv = c.get("/api/v1/namespaces/default/pods")["metadata"]["resourceVersion"]
        c.create("/api/v1/namespaces/default/pods", pod("b"))
        p.send_signal(signal.SIGUSR1)  # compact now
        deadline = time.monotonic() + 60
        while True:
            w = c.watch(f"/api/v1/namespaces/default/pods?watch=1&resourceVersion={int(rv) - 1}")
            ev = w.next()
            w.close()
            if ev is not None and ev["type"] == "ERROR":
                assert ev["object"]["code"] == 410
                break
            assert time.monotonic() < deadline, "SIGUSR1 did not compact"
            time.sleep(0.1)
    finally:
        p.send_signal(signal.SIGTERM)
        _out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert "listening on https://127.0.0.1:" in err and "stopped" in err
    assert (data / "state.db").exists() and (data / "pki" / "ca.crt").exists()
    # restart on the same data dir: the same CA (old kubeconfigs keep working), same objects
    ca = (data / "pki" / "ca.crt").read_bytes()
    p, c = _start(tmp_path, "--data-dir", str(data))
    try:
        assert [x["metadata"]["name"] for x in c.get("/api/v1/namespaces/default/pods")["items"]] == ["a", "b"]
        assert (data / "pki" / "ca.crt").read_bytes() == ca
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)


def test_cli_fault_flags_and_bad_input(tmp_path: Path) -> None:
    p, c = _start(tmp_path, "--fault-fail-writes", "pods/binding=1:409")
    try:
        c.create("/api/v1/namespaces/default/pods", pod("a"))
        code, _ = c.req("POST", "/api/v1/namespaces/default/pods/a/binding",
                           {"metadata": {"name": "a"}, "target": {"name": "n1"}})
        assert code == 409
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
    r = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--fault-fail-writes", "pods=2"],
                       env=ENV, capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 2 and r.stderr.strip().startswith("error: --fault-fail-writes:")
    assert "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--data-dir", str(tmp_path / "d"),
                        "--in-memory"], env=ENV, capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 2 and "mutually exclusive" in r.stderr


def test_sigkill_loses_no_acknowledged_write_and_the_data_dir_is_locked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    p, c = _start(tmp_path, "--data-dir", str(data))
    try:
        made = [c.create("/api/v1/namespaces/default/configmaps",
                         {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"i": str(i)}})
                for i in range(50)]
        r = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0", "--data-dir",
                            str(data)], env=ENV, capture_output=True, text=True, timeout=30, check=False)
        assert r.returncode == 2 and "in use by another kubesched apiserver" in r.stderr
    finally:
        p.kill()  # SIGKILL: no clean shutdown
        p.communicate(timeout=30)
    p, c = _start(tmp_path, "--data-dir", str(data))
    try:
        got = c.get("/api/v1/namespaces/default/configmaps")["items"]
        assert [(x["metadata"]["name"], x["metadata"]["resourceVersion"]) for x in got] == sorted(
            ((m["metadata"]["name"], m["metadata"]["resourceVersion"]) for m in made), key=lambda t: t[0])
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)


def test_cli_emulated_version_serves_that_release(tmp_path: Path) -> None:
    p, c = _start(tmp_path, "--in-memory", "--emulated-version", "1.34")
    try:
        assert c.get("/version")["emulationMinor"] == "34"
        body = pod("sg")
        body["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
        code, out = c.req("POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", body)
        assert code == 400 and out["message"].endswith('strict decoding error: unknown field "spec.schedulingGroup"')
    finally:
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
    bad = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--in-memory",
                          "--feature-gates", "NoSuchGate=true"], env=ENV, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr == "error: --feature-gates: unrecognized feature gate: NoSuchGate\n"
