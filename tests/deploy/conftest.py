"""Fixtures for the deployment tests: the helm binary ``make helm`` builds (tests needing it are
skipped with the build command when it is missing, as the upstream tests are without
``make upstream``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deployhelpers import helm_bin


@pytest.fixture(scope="session")
def helm() -> Path:
    path = helm_bin()
    if not path.exists():
        pytest.skip(f"helm is not built ({path}): make helm")
    return path
