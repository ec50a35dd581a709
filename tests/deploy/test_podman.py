"""The OCI image ``make image`` writes, run by a real container runtime: ``podman load`` of the
archive, then ``podman run --read-only`` (the chart's ``readOnlyRootFilesystem: true``, a tmpfs
at /tmp) of ``kubesched --version`` as the image's user. Skipped when the archive is not built,
podman is not installed, or podman cannot start containers on this machine (the runtime's error
is the skip reason: in the build sandbox, a Firecracker VM without CAP_SYS_RESOURCE, crun fails
with "setrlimit `RLIMIT_NOFILE`: Operation not permitted"); test_image.py runs the same image
without a runtime."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from deployhelpers import ARCHIVE, VERSION


def podman(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)


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


def test_podman_runs_the_image_read_only(image: str) -> None:
    proc = podman("run", "--rm", "--read-only", "--tmpfs", "/tmp", "--network", "none", image, "--version",
                  timeout=120)
    if proc.returncode in (125, 126, 127) and ("OCI" in proc.stderr or "crun" in proc.stderr
                                               or "runc" in proc.stderr):
        pytest.skip(f"podman cannot run containers here: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert VERSION in proc.stdout
    who = podman("run", "--rm", "--read-only", "--network", "none", "--entrypoint", "python3", image,
                 "-c", "import os; print(os.getuid(), os.getgid())", timeout=120)
    assert who.stdout.split() == ["65532", "65532"], who.stdout + who.stderr
