"""The OCI image ``make image`` writes (out/image/kubesched-<version>.oci.tar), run as a container
runtime would on this machine without one: the archive's image unpacked with umoci (its rootfs
and the runtime config generated from the image's config), its process started chrooted into
the rootfs with the config's args, env, working directory and user, under the chart's
``readOnlyRootFilesystem: true`` (its own mount namespace: the rootfs read-only, a tmpfs at /tmp,
the configuration bound read-only at /etc/kubesched). ``kubesched --version``,
then two ``kubesched run`` replicas with the chart's configuration against the box: one leader,
pods with ``schedulerName: kubesched`` bound. Skipped when the archive is not built, umoci is
missing or the test is not root (chroot, mounts)."""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from deployhelpers import ARCHIVE, REPO, VERSION

from kubesched.apiserver.launcher import ServerHandle, run_server
from kubesched.testing.upstream import http_request


def get(srv: ServerHandle, path: str) -> dict[str, Any] | None:
    status, _, body = http_request(srv.url + path, srv.token, srv.ssl_context(), "GET", None)
    return body if status == 200 else None


_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20000, 1, 32, 4096, 16384, 1 << 18


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(v: str | None) -> bytes | None:
        return v.encode() if v is not None else None

    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


class Container:
    """The unpacked image: ``rootfs`` and ``process`` (OCI runtime config: args, env, cwd, user),
    started as the chart's Deployment runs it: in its own mount namespace, the rootfs mounted
    read-only (``readOnlyRootFilesystem: true``), a tmpfs at /tmp (the chart's emptyDir) and
    a ``config_dir`` (the chart's ConfigMap volume) bound read-only at /etc/kubesched."""

    def __init__(self, bundle: Path) -> None:
        self.rootfs = bundle / "rootfs"
        self.process: dict[str, Any] = json.loads((bundle / "config.json").read_text())["process"]

    def popen(self, *args: str, entrypoint: list[str] | None = None, config_dir: Path | None = None,
              **kw: Any) -> subprocess.Popen[str]:
        user, cwd = self.process["user"], self.process.get("cwd", "/")
        env = dict(e.split("=", 1) for e in self.process["env"])
        root, config = str(self.rootfs), config_dir

        def enter() -> None:  # in the child, before exec: what a runtime does for the chart's pod
            if _libc.unshare(CLONE_NEWNS) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
            _mount(None, "/", None, MS_REC | MS_PRIVATE)
            _mount(root, root, None, MS_BIND | MS_REC)
            if config is not None:
                _mount(str(config), f"{root}/etc/kubesched", None, MS_BIND)
                _mount(None, f"{root}/etc/kubesched", None, MS_REMOUNT | MS_BIND | MS_RDONLY)
            _mount("tmpfs", f"{root}/tmp", "tmpfs", 0, "mode=1777,size=16m")
            _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
            os.chroot(root)
            os.chdir(cwd)
            os.setgroups(user.get("additionalGids") or [])
            os.setgid(user["gid"])
            os.setuid(user["uid"])

        argv = [*(entrypoint or self.process["args"]), *args]
        return subprocess.Popen(argv, env=env, preexec_fn=enter, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)

    def run(self, *args: str, entrypoint: list[str] | None = None, config_dir: Path | None = None,
            timeout: float = 120) -> tuple[int, str]:
        p = self.popen(*args, entrypoint=entrypoint, config_dir=config_dir)
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out


@pytest.fixture(scope="module")
def container(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Container]:
    if not ARCHIVE.exists():
        pytest.skip(f"no image archive {ARCHIVE}: make image")
    if shutil.which("umoci") is None or os.geteuid() != 0:
        pytest.skip("needs umoci and root (chroot and mounts for the unpacked rootfs)")
    wd = tmp_path_factory.mktemp("image")
    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(wd / "layout", filter="tar")
    index = json.loads((wd / "layout" / "index.json").read_text())
    [tag] = [m["annotations"]["org.opencontainers.image.ref.name"] for m in index["manifests"]]
    assert tag == VERSION
    subprocess.run(["umoci", "unpack", "--image", f"{wd / 'layout'}:{tag}", str(wd / "bundle")], check=True,
                   capture_output=True)
    (wd / "bundle" / "rootfs" / "etc" / "kubesched").mkdir(exist_ok=True)  # the mount point a runtime creates
    yield Container(wd / "bundle")


def test_image_config(container: Container) -> None:
    p = container.process
    assert p["args"] == ["kubesched"]
    assert (p["user"]["uid"], p["user"]["gid"]) == (65532, 65532)
    assert p["cwd"] == "/"
    env = dict(e.split("=", 1) for e in p["env"])
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and "/usr/local/bin" in env["PATH"].split(":")
    passwd = (container.rootfs / "etc" / "passwd").read_text()
    assert re.search(r"^kubesched:x:65532:65532:", passwd, re.M)


def test_the_root_filesystem_is_read_only(container: Container, tmp_path: Path) -> None:
    """The enforcement the replicas below run under: writes to the rootfs fail (EROFS), /tmp is
    writable (the chart's emptyDir), /etc/kubesched read-only."""
    probe = ("import errno, os\n"
             "for path in ('/probe', '/usr/local/lib/probe', '/tmp/probe', '/etc/kubesched/probe'):\n"
             "    try:\n"
             "        open(path, 'w').close(); print(path, 'ok')\n"
             "    except OSError as e:\n"
             "        print(path, errno.errorcode[e.errno])\n")
    os.chown(tmp_path, 65532, 65532)  # writable by the image's user were it not mounted read-only
    rc, out = container.run("-c", probe, entrypoint=["python3"], config_dir=tmp_path)
    assert rc == 0, out
    assert out.split("\n")[:4] == ["/probe EROFS", "/usr/local/lib/probe EROFS", "/tmp/probe ok",
                                    "/etc/kubesched/probe EROFS"], out


def test_version(container: Container) -> None:
    t0 = time.monotonic()
    rc, out = container.run("--version")
    elapsed = time.monotonic() - t0
    assert rc == 0, out
    assert VERSION in out
    print(f"kubesched --version in the image: {elapsed:.2f}s: {out.strip()}")


def test_two_replicas_elect_one_leader_and_bind_pods(container: Container, tmp_path: Path) -> None:


    cm = yaml.safe_load((REPO / "deploy" / "configmap.yaml").read_text())
    cfg = yaml.safe_load(cm["data"]["config.yaml"])
    inside = tmp_path / "etc-kubesched"  # mounted read-only at /etc/kubesched, as the chart's ConfigMap
    inside.mkdir()
    with run_server(tmp_path / "kubeconfig") as srv:
        assert srv.kubeconfig_path is not None
        shutil.copy(srv.kubeconfig_path, inside / "kubeconfig")
        cfg["clientConnection"]["kubeconfig"] = "/etc/kubesched/kubeconfig"
        cfg["leaderElection"].update(leaseDuration="3s", renewDeadline="2s", retryPeriod="500ms")
        (inside / "config.yaml").write_text(yaml.safe_dump(cfg))
        for f in [inside, *inside.iterdir()]:
            os.chown(f, 65532, 65532)
        srv.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
            "kubernetes.io/hostname": "n1"}}, "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                          "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                                                          "conditions": [{"type": "Ready", "status": "True"}]}})
        args = ["run", "--config=/etc/kubesched/config.yaml", "--secure-port=0", "--bind-address=127.0.0.1", "--v=2"]
        t0 = time.monotonic()
        procs = [container.popen(*args, config_dir=inside) for _ in range(2)]
        outs: list[str] = []
        try:
            holder, started, bound = _lead_and_bind(srv, procs, t0)
        finally:
            for p in procs:
                p.terminate()
            outs = [p.communicate(timeout=30)[0] for p in procs]
            tails = "\n".join(f"--- replica {i}:\n{o[-3000:]}" for i, o in enumerate(outs))
        assert holder, f"no leader after 90s\n{tails}"
        assert bound == {"p0": "n1", "p1": "n1", "p2": "n1"}, f"{bound}\n{tails}"
        print(f"leader elected {started:.2f}s after the two containers started; holder {holder}")
        assert any("successfully acquired lease" in o for o in outs), tails


def _lead_and_bind(srv: ServerHandle, procs: list[subprocess.Popen[str]],
                   t0: float) -> tuple[str, float, dict[str, str]]:
    """Wait for a Lease holder, then create three pods for kubesched and wait for their binding;
    returns (holder, seconds to a leader since ``t0``, pod → node)."""
    lease_path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched"
    holder = ""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not holder and all(p.poll() is None for p in procs):
        holder = (((get(srv, lease_path) or {}).get("spec") or {}).get("holderIdentity")) or ""
        time.sleep(0.2)
    started = time.monotonic() - t0
    bound: dict[str, str] = {}
    if not holder:
        return holder, started, bound
    for i in range(3):
        srv.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
                    "spec": {"schedulerName": "kubesched", "containers": [{"name": "c", "image": "x",
                             "resources": {"requests": {"cpu": "100m"}}}]}})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(bound) < 3:
        for i in range(3):
            pod = get(srv, f"/api/v1/namespaces/default/pods/p{i}")
            if pod and pod["spec"].get("nodeName"):
                bound[f"p{i}"] = pod["spec"]["nodeName"]
        time.sleep(0.2)
    assert all(p.poll() is None for p in procs), "a replica exited"
    # one leader all along: the same holder, never handed over
    spec = (get(srv, lease_path) or {}).get("spec") or {}
    assert spec.get("holderIdentity") == holder and not spec.get("leaseTransitions"), spec
    return holder, started, bound
