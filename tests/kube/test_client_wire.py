"""What ``APIClient`` puts on the wire (issue 18 §3: the per-request cost was cut, the requests
must stay the same): method, path, query, the headers client-go sends (``User-Agent``,
``Accept: application/json``, no compression, ``Content-Type`` of the body, the bearer token), the
JSON body, and no cookies kept between requests (client-go has no cookie jar). A recording aiohttp
server on 127.0.0.1 answers each request; the same requests through libcurl (the default) and
through aiohttp (``KUBESCHED_HTTP_TRANSPORT=aiohttp``, which also carries watches)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from kubesched.kube.client import STRATEGIC_MERGE_PATCH, APIClient, APIError, load_config

HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type", "Authorization", "Cookie")


async def _recording_server() -> tuple[web.AppRunner, str, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        body = await request.read()
        seen.append({"method": request.method, "path": request.path, "query": dict(request.query),
                     "headers": {h: request.headers.get(h) for h in HEADERS},
                     "body": json.loads(body) if body else None})
        if request.path.endswith("/missing"):
            return web.json_response({"kind": "Status", "code": 404, "reason": "NotFound", "message": "gone"},
                                     status=404)
        resp = web.json_response({"kind": "Status", "status": "Success"}, status=201 if request.method == "POST"
                                 else 200)
        resp.set_cookie("session", "s1")  # a server setting a cookie: it is never sent back
        return resp

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}", seen


@pytest.mark.asyncio
@pytest.mark.parametrize("transport", ["curl", "aiohttp"])
async def test_requests_on_the_wire(tmp_path, monkeypatch, transport: str) -> None:
    monkeypatch.setenv("KUBESCHED_HTTP_TRANSPORT", transport)
    runner, url, seen = await _recording_server()
    kc = tmp_path / "kubeconfig"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: k\n  cluster:\n    server: {url}\n"
        "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
        "users:\n- name: u\n  user:\n    token: tok-1\n")
    client = APIClient(load_config(str(kc), qps=-1), user_agent_suffix="/scheduler")
    assert client._use_curl == (transport == "curl")
    try:
        await client.bind("ns1", "p1", "uid-1", "n1")
        await client.bind("ns1", "p2", "", "n2")
        await client.post("/apis/events.k8s.io/v1/namespaces/ns1/events", {"metadata": {"name": "e1"}})
        assert await client.create("/api/v1/namespaces/ns1/pods", {"metadata": {"name": "p3"}}) == {
            "kind": "Status", "status": "Success"}
        await client.patch("/api/v1/namespaces/ns1/pods/p1/status", {"status": {}})
        await client.get("/api/v1/nodes", {"limit": 500, "allowWatchBookmarks": True})
        with pytest.raises(APIError) as err:
            await client.get("/api/v1/namespaces/ns1/pods/missing")
        assert (err.value.status, err.value.reason, err.value.message) == (404, "NotFound", "gone")
    finally:
        await client.close()
        await runner.cleanup()

    base = {"User-Agent": client.user_agent, "Accept": "application/json", "Accept-Encoding": "identity",
            "Authorization": "Bearer tok-1", "Cookie": None}
    json_h = {**base, "Content-Type": "application/json"}
    assert client.user_agent.startswith("kubesched/v") and client.user_agent.endswith("/scheduler")
    assert seen == [
        {"method": "POST", "path": "/api/v1/namespaces/ns1/pods/p1/binding", "query": {}, "headers": json_h,
         "body": {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p1", "namespace": "ns1", "uid": "uid-1"},
                  "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}},
        {"method": "POST", "path": "/api/v1/namespaces/ns1/pods/p2/binding", "query": {}, "headers": json_h,
         "body": {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p2", "namespace": "ns1"},
                  "target": {"apiVersion": "v1", "kind": "Node", "name": "n2"}}},
        {"method": "POST", "path": "/apis/events.k8s.io/v1/namespaces/ns1/events", "query": {}, "headers": json_h,
         "body": {"metadata": {"name": "e1"}}},
        {"method": "POST", "path": "/api/v1/namespaces/ns1/pods", "query": {}, "headers": json_h,
         "body": {"metadata": {"name": "p3"}}},
        {"method": "PATCH", "path": "/api/v1/namespaces/ns1/pods/p1/status", "query": {},
         "headers": {**base, "Content-Type": STRATEGIC_MERGE_PATCH}, "body": {"status": {}}},
        {"method": "GET", "path": "/api/v1/nodes", "query": {"limit": "500", "allowWatchBookmarks": "true"},
         "headers": {**base, "Content-Type": None}, "body": None},
        {"method": "GET", "path": "/api/v1/namespaces/ns1/pods/missing", "query": {},
         "headers": {**base, "Content-Type": None}, "body": None},
    ]
