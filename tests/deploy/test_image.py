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
import resource
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deployhelpers import ARCHIVE, RUN_ARGS, SYNCED, VERSION, replica_config, run_two_replicas

from kubesched.apiserver.launcher import run_server

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
    # the name podman load gives it: localhost/kubesched:<version>
    assert tag == f"kubesched:{VERSION}", f"{ARCHIVE} names {tag!r}: built before the image was named; make image"
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
    t0, ru0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, out = container.run("--version")
    elapsed, ru1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    assert rc == 0, out
    assert VERSION in out
    cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    print(f"chroot: kubesched --version in the image: {elapsed:.2f}s wall, {cpu:.2f}s CPU: {out.strip()}")


def test_two_replicas_elect_one_leader_and_bind_pods(container: Container, tmp_path: Path) -> None:
    inside = tmp_path / "etc-kubesched"  # mounted read-only at /etc/kubesched, as the chart's ConfigMap
    with run_server(tmp_path / "kubeconfig") as srv:
        replica_config(srv, inside)
        run = run_two_replicas(srv, lambda i: container.popen(*RUN_ARGS, config_dir=inside),
                               lambda i, p: p.pid if p.poll() is None else None)
    run.check()
    print(f"chroot: {SYNCED!r} {run.synced} s after start (CPU {run.cpu} s); leader elected "
          f"{run.leader_after:.2f}s after the two containers started; holder {run.holder}")
