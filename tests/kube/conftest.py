"""Fixtures for live tests: a box API server on 127.0.0.1:0 in the test's event loop, and an
APIClient configured from the kubeconfig it writes (bearer token auth, real HTTP)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient, load_config


@pytest_asyncio.fixture
async def box(tmp_path) -> AsyncIterator[Any]:
    async with start_server(tmp_path / "kubeconfig", data_dir=tmp_path / "data") as srv:
        yield srv


@pytest_asyncio.fixture
async def api(box) -> AsyncIterator[APIClient]:
    client = APIClient(load_config(str(box.kubeconfig_path), qps=-1))
    try:
        yield client
    finally:
        await client.close()
