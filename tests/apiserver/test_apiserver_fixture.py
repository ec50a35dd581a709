"""The pytest fixture and the in-loop variant of the test server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from apiserver_helpers import Client

from kubesched.apiserver.launcher import ServerHandle, box_server, start_server

__all__ = ["box_server"]


def test_box_server_fixture(box_server: ServerHandle) -> None:
    assert box_server.kubeconfig_path is not None and box_server.kubeconfig_path.exists()
    assert Client.of(box_server).req("GET", "/api/v1/namespaces")[0] == 200


def test_start_server_in_the_callers_loop(tmp_path: Path) -> None:
    async def main() -> list[str]:
        async with start_server(tmp_path / "kc") as srv, aiohttp.ClientSession() as s:
            headers = {"Authorization": f"Bearer {srv.token}"}
            ctx = srv.pki.client_context()
            async with s.get(f"{srv.url}/api/v1/namespaces", headers=headers, ssl=ctx) as r:
                body = await r.json()
            return [n["metadata"]["name"] for n in body["items"]]

    assert asyncio.run(main()) == ["default", "kube-node-lease", "kube-public", "kube-system"]
