"""Fixtures for the deployment tests: the helm binary ``make helm`` builds (tests needing it are
skipped with the build command when it is missing, as the upstream tests are without
``make upstream``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "kubesched"


def helm_bin() -> Path:
    out = subprocess.run([str(REPO / "tools" / "deploy" / "build-helm.sh"), "--print-bin"], capture_output=True,
                         text=True, check=True)
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def helm() -> Path:
    path = helm_bin()
    if not path.exists():
        pytest.skip(f"helm is not built ({path}): make helm")
    return path
