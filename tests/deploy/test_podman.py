"""The OCI image ``make image`` writes, run by a real container runtime: ``podman load`` of the
archive (it names the image ``localhost/kubesched:<version>``, docs/deploy.md), ``podman run
--read-only`` (the chart's ``readOnlyRootFilesystem: true``) of ``kubesched --version`` as the
image's user, then two ``kubesched run`` containers (host network, the chart's configuration
mounted read-only at /etc/kubesched) against the box: one leader, pods bound. Skipped when the
archive is not built, podman is not installed, or podman cannot start containers here (the
runtime's error is the skip reason); test_image.py runs the same image without a runtime.

Two things of this build machine (a Firecracker VM) are worked around, as docs/deploy.md's
"tested here" says: its processes lack CAP_SYS_RESOURCE, so podman's default rlimits
(``nofile=1048576``) above the hard limits fail in crun's ``setrlimit`` — every run passes the
caller's hard limits with ``--ulimit``; and its cgroups are hybrid (v1 controllers, a v2
``unified`` hierarchy holding ``hugetlb``), which crun 1.8 refuses ("cgroups in hybrid mode not
supported, drop all controllers from cgroupv2") — as root, podman then runs in a private mount
namespace with ``/sys/fs/cgroup/unified`` unmounted (crun sees cgroup v1 only)."""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from deployhelpers import ARCHIVE, IMAGE_NAME, RUN_ARGS, SYNCED, VERSION, replica_config, run_two_replicas

from kubesched.apiserver.launcher import run_server

_UNIFIED = Path("/sys/fs/cgroup/unified")


def podman_argv(*args: str) -> list[str]:
    """``podman ARGS`` with this machine's workaround: on hybrid cgroups whose v2 hierarchy holds
    a controller (crun refuses them) and as root, in a private mount namespace without it."""
    controllers = _UNIFIED / "cgroup.controllers"
    if os.geteuid() == 0 and controllers.exists() and controllers.read_text().split():
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                f'umount {_UNIFIED} && exec "$@"', "sh", "podman", *args]
    return ["podman", *args]


def podman(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(podman_argv(*args), capture_output=True, text=True, timeout=timeout)


def _ulimits() -> list[str]:
    """``--ulimit`` flags within what the runtime can set without CAP_SYS_RESOURCE: podman's
    defaults (1048576 for both) exceed the hard limits here, and crun cannot raise one. nofile:
    the caller's hard limit; nproc: that or ``kernel.pid_max``, whichever is lower (the runtime's
    own hard nproc limit here is pid_max, 32768, below the caller's 96364)."""
    def hard(kind: int) -> int | None:
        limit = resource.getrlimit(kind)[1]
        return None if limit == resource.RLIM_INFINITY else limit

    nofile = hard(resource.RLIMIT_NOFILE)
    nproc = min(n for n in (hard(resource.RLIMIT_NPROC), int(Path("/proc/sys/kernel/pid_max").read_text()))
                if n is not None)
    return [*(["--ulimit", f"nofile={nofile}:{nofile}"] if nofile is not None else []),
            "--ulimit", f"nproc={nproc}:{nproc}"]


RUN = ["run", "--rm", "--pull=never", *_ulimits()]


@pytest.fixture(scope="module")
def image() -> str:
    if not ARCHIVE.exists():
        pytest.skip(f"no image archive {ARCHIVE}: make image")
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (apt-get install podman)")
    load = podman("load", "-i", str(ARCHIVE))
    assert load.returncode == 0, load.stderr
    m = re.search(r"^Loaded image(?:\(s\))?: (\S+)", load.stdout, re.M)
    assert m, load.stdout
    return m.group(1)


@pytest.fixture(scope="module")
def runs(image: str) -> str:
    """``image`` once podman has run a container of it here (else the test skips with why)."""
    proc = podman(*RUN, "--network", "none", image, "--version", timeout=120)
    if proc.returncode in (125, 126, 127) and any(w in proc.stderr for w in ("OCI", "crun", "runc", "cgroup")):
        pytest.skip(f"podman cannot run containers here: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return image


def test_podman_load_names_the_image(image: str) -> None:
    assert image == IMAGE_NAME, f"{ARCHIVE} loads as {image}: built before the image was named; make image"


def test_podman_runs_the_image_read_only(runs: str) -> None:
    t0, ru0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = podman(*RUN, "--read-only", "--tmpfs", "/tmp", "--network", "none", runs, "--version", timeout=120)
    elapsed, ru1 = time.monotonic() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert VERSION in proc.stdout
    # podman's CLI only: conmon and the container are not its children
    cpu = ru1.ru_utime + ru1.ru_stime - ru0.ru_utime - ru0.ru_stime
    print(f"podman run {runs} --version: {elapsed:.2f}s wall, podman CLI {cpu:.2f}s CPU: {proc.stdout.strip()}")
    who = podman(*RUN, "--read-only", "--network", "none", "--entrypoint", "python3", runs,
                 "-c", "import os; print(os.getuid(), os.getgid())", timeout=120)
    assert who.stdout.split() == ["65532", "65532"], who.stdout + who.stderr


def test_podman_run_two_replicas_elect_one_leader_and_bind_pods(runs: str, tmp_path: Path) -> None:
    inside = tmp_path / "etc-kubesched"  # the chart's ConfigMap volume
    names = [f"kubesched-test-{os.getpid()}-{i}" for i in range(2)]

    def start(i: int) -> subprocess.Popen[str]:  # podman run proxies the SIGTERM that stops it to the container
        argv = podman_argv(*RUN, "--name", names[i], "--network", "host", "--read-only", "--tmpfs", "/tmp",
                           "-v", f"{inside}:/etc/kubesched:ro", runs, *RUN_ARGS)
        return subprocess.Popen(argv, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def pid_of(i: int, _: subprocess.Popen[str]) -> int | None:  # the container's process
        pid = podman("inspect", "--format", "{{.State.Pid}}", names[i]).stdout.strip()
        return int(pid) if pid.isdigit() and pid != "0" else None

    with run_server(tmp_path / "kubeconfig") as srv:
        replica_config(srv, inside)
        run = run_two_replicas(srv, start, pid_of, lambda: podman("rm", "--force", "--ignore", *names, timeout=120))
    run.check()
    print(f"podman: {SYNCED!r} {run.synced} s after podman run (container CPU then {run.cpu} s); leader elected "
          f"{run.leader_after:.2f}s after; holder {run.holder}")
    assert run.returncodes == [0, 0], run.outs  # SIGTERM: the lease released, exit 0
