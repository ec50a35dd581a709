"""Paths and the helm binary for the deployment tests (a uniquely named module: the test
directories' conftest modules share one name)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "kubesched"
_VERSION = re.search(r'^version = "(.+)"', (REPO / "pyproject.toml").read_text(), re.M)
assert _VERSION is not None
VERSION = _VERSION.group(1)
ARCHIVE = REPO / "out" / "image" / f"kubesched-{VERSION}.oci.tar"  # what ``make image`` writes


def helm_bin() -> Path:
    """Where ``tools/deploy/build-helm.sh`` (``make helm``) puts helm."""
    out = subprocess.run([str(REPO / "tools" / "deploy" / "build-helm.sh"), "--print-bin"], capture_output=True,
                         text=True, check=True)
    return Path(out.stdout.strip())
