"""A pre-auth flood on ``kubesched run``'s ``/metrics`` (issue 16 item 5), the real runner in-process
against the box: every unknown bearer token costs one TokenReview, sent through the delegated
authentication's own client (apiserver ``options/authentication.go`` getClient: QPS 200, burst
400), never the scheduler's (here QPS 5: 100 reviews through it would stall binding for 20 s), and
cached (``cached_token_authenticator.go``: the same tokens again cost nothing)."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from livehelpers import eventually, node_obj, pod_obj

from kubesched.apiserver.launcher import start_server
from kubesched.config import decode_config
from kubesched.kube.client import APIClient, load_config
from kubesched.kube.runner import Runner, RunOptions

pytestmark = pytest.mark.asyncio

INSECURE = ssl.create_default_context()
INSECURE.check_hostname = False
INSECURE.verify_mode = ssl.CERT_NONE  # the runner's own self-signed certificate


def spy(client: APIClient, seen: list[str]) -> None:
    """Record the path of every request ``client`` sends."""
    orig = client.request_raw

    async def request_raw(method: str, path: str, *a: Any, **kw: Any) -> tuple[int, bytes]:
        seen.append(path)
        return await orig(method, path, *a, **kw)

    client.request_raw = request_raw  # type: ignore[method-assign]


async def test_flood_of_unknown_tokens_goes_through_the_auth_client_and_is_cached(tmp_path: Path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc):
        api = APIClient(load_config(kc, qps=-1))
        await api.create("/api/v1/nodes", node_obj("n1"))
        cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"})
        runner = Runner(RunOptions(config=cfg, kubeconfig=kc, leader_elect=False, secure_port=0,
                                   bind_address="127.0.0.1", kube_api_qps=5, kube_api_burst=5, shutdown_grace_s=5.0))
        task = asyncio.create_task(runner.run())
        try:
            await eventually(lambda: runner.synced or task.done(), what="runner synced")
            assert not task.done()
            assert runner.endpoints is not None
            auth, authz, sched = runner._auth_client, runner._authz_client, runner.client
            assert (auth.limiter.qps, auth.limiter.burst) == (200.0, 400)
            assert (authz.limiter.qps, authz.limiter.burst) == (200.0, 400)
            assert len({id(auth.limiter), id(authz.limiter), id(sched.limiter)}) == 3
            seen_auth: list[str] = []
            seen_sched: list[str] = []
            spy(auth, seen_auth)
            spy(sched, seen_sched)
            url = f"https://127.0.0.1:{runner.endpoints.port}/metrics"
            conn = aiohttp.TCPConnector(limit=20, ssl=INSECURE)
            async with aiohttp.ClientSession(connector=conn) as s:

                async def scrape(token: str) -> int:
                    async with s.get(url, headers={"Authorization": f"Bearer {token}"}) as r:
                        return r.status

                tokens = [f"flood-{i}" for i in range(100)]
                assert set(await asyncio.gather(*(scrape(t) for t in tokens))) == {401}
                assert seen_auth.count("/apis/authentication.k8s.io/v1/tokenreviews") == 100
                assert not [p for p in seen_sched if "review" in p]
                # the same tokens within the 10 s TTL: answered from the cache
                assert set(await asyncio.gather(*(scrape(t) for t in tokens))) == {401}
                assert len(seen_auth) == 100 and runner.endpoints.token_reviews == 100
                # the box's own token is a system:masters admin: TokenReview, no SubjectAccessReview
                token = api.config.user.token if api.config.user else ""
                assert token and await scrape(token) == 200

            await api.create("/api/v1/namespaces/default/pods", pod_obj("p"))

            async def bound() -> bool:
                return bool((await api.get("/api/v1/namespaces/default/pods/p"))["spec"].get("nodeName"))

            await eventually(bound, what="the pod bound after the flood")
        finally:
            runner.request_stop()
            await asyncio.wait_for(task, 30)
            await api.close()
