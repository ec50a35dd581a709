"""Fixtures for the box API server tests: a real server on 127.0.0.1:0 and a client for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from apiserver_helpers import Client

from kubesched.apiserver.launcher import ServerHandle, run_server


@pytest.fixture
def srv(tmp_path: Any) -> Iterator[ServerHandle]:
    with run_server(tmp_path / "kubeconfig") as s:
        yield s


@pytest.fixture
def client(srv: ServerHandle) -> Client:
    return Client.of(srv)


@pytest.fixture
def ksrv(tmp_path: Any) -> Iterator[ServerHandle]:
    """A server with simulated kubelets and the box's controllers (``--simulate-kubelets``)."""
    with run_server(tmp_path / "kc", simulate_kubelets=True) as s:
        yield s
