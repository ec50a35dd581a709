"""``APIClient`` over libcurl (``kubesched.kube._curl``) keeps client-go's request semantics
(``rest/request.go``, ``rest/with_retry.go``): a ``Retry-After`` 429/5xx is retried, a GET whose
connection broke is retried and a POST is not, a request past the client timeout fails as
"timed out", a cancelled request stops its transfer and the client goes on, an unreachable
server is "connection refused". Each case runs through both transports (``KUBESCHED_HTTP_TRANSPORT``)
against a scripted aiohttp server on 127.0.0.1; faults are injected by the server."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from kubesched.kube.client import APIClient, APIConnectionError, APIError, ClientConfig

pytestmark = pytest.mark.asyncio

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@pytest.fixture(params=["curl", "aiohttp"])
def transport(request: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("KUBESCHED_HTTP_TRANSPORT", request.param)
    return str(request.param)


@pytest_asyncio.fixture
async def server() -> AsyncIterator[tuple[str, list[Handler]]]:
    """A server answering each request with the next scripted handler, taken off the list (the last
    one stays and repeats)."""
    script: list[Handler] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        return await (script.pop(0) if len(script) > 1 else script[0])(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", script
    finally:
        await runner.cleanup()


async def _ok(request: web.Request) -> web.StreamResponse:
    await request.read()
    return web.json_response({"kind": "Status", "status": "Success", "path": request.path})


async def _reset(request: web.Request) -> web.StreamResponse:
    assert request.transport is not None
    request.transport.abort()  # the connection breaks before any answer
    await asyncio.sleep(0.05)
    return web.Response()


def _client(url: str, timeout: float = 60.0) -> APIClient:
    return APIClient(ClientConfig(server=url, qps=-1, burst=0, timeout=timeout))


async def test_retry_after_429_and_503_are_retried(server: Any, transport: str, monkeypatch: Any) -> None:
    url, script = server
    monkeypatch.setattr("kubesched.kube.client._retry_after_seconds", lambda v: 0.0)
    busy = web.json_response({"kind": "Status", "code": 429, "reason": "TooManyRequests"}, status=429,
                             headers={"Retry-After": "1"})

    async def too_many(request: web.Request) -> web.StreamResponse:
        return busy

    async def unavailable(request: web.Request) -> web.StreamResponse:
        return web.Response(status=503, headers={"Retry-After": "1"})

    script += [too_many, unavailable, _ok]
    async with _client(url) as c:
        assert (await c.create("/api/v1/namespaces/a/pods", {"metadata": {"name": "p"}}))["status"] == "Success"
        assert c.requests == 3


async def test_errors_without_retry_after_are_raised_with_their_status(server: Any, transport: str) -> None:
    url, script = server

    async def conflict(request: web.Request) -> web.StreamResponse:
        return web.json_response({"kind": "Status", "code": 409, "reason": "Conflict", "message": "modified"},
                                 status=409)

    async def gone(request: web.Request) -> web.StreamResponse:
        return web.json_response({"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
                                 status=410)

    async def internal(request: web.Request) -> web.StreamResponse:
        return web.Response(status=500, text="boom")

    script += [conflict, gone, internal]
    async with _client(url) as c:
        with pytest.raises(APIError) as e1:
            await c.bind("a", "p", "", "n1")
        with pytest.raises(APIError) as e2:
            await c.get("/api/v1/pods")
        with pytest.raises(APIError) as e3:
            await c.patch("/api/v1/namespaces/a/pods/p/status", {"status": {}})
    assert (e1.value.status, e1.value.reason, e1.value.message) == (409, "Conflict", "modified")
    assert e2.value.is_expired
    assert (e3.value.status, e3.value.reason, e3.value.message) == (500, "InternalError", "boom")


async def test_a_broken_connection_retries_a_get_not_a_post(server: Any, transport: str, monkeypatch: Any) -> None:
    """The GET is answered on a second try (the client's own retry or the HTTP stack's replay of an
    idempotent request); the POST, on a fresh connection, is sent once and fails (libcurl, like
    aiohttp, replays only on a *reused* keep-alive connection that turns out closed)."""
    url, script = server
    real_sleep = asyncio.sleep
    monkeypatch.setattr("kubesched.kube.client.asyncio.sleep", lambda s: real_sleep(0))
    script += [_reset, _ok]
    async with _client(url) as c:
        assert (await c.get("/api/v1/nodes"))["path"] == "/api/v1/nodes"
    assert script == [_ok]  # the reset was served
    script[:] = [_reset]
    async with _client(url) as c:
        with pytest.raises(APIConnectionError, match="POST /api/v1/namespaces/a/pods/p/binding"):
            await c.bind("a", "p", "", "n1")
        assert c.requests == 1


async def test_timeout_and_cancellation(server: Any, transport: str) -> None:
    url, script = server

    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(2.0)
        return await _ok(request)

    script += [slow]
    async with _client(url, timeout=0.3) as c:
        with pytest.raises(APIConnectionError, match="timed out"):
            await c.get("/api/v1/nodes")
        task = asyncio.create_task(c.bind("a", "p", "", "n1"))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        script[:] = [_ok]
        assert (await c.get("/api/v1/pods"))["path"] == "/api/v1/pods"  # the client goes on
        if transport == "curl":
            assert c._curl is not None and not c._curl._active


async def test_connection_refused(transport: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with _client(f"http://127.0.0.1:{port}") as c:
        with pytest.raises(APIConnectionError) as e:
            await c.bind("a", "p", "", "n1")
    text = str(e.value).lower()
    assert "refused" in text or "cannot connect to host" in text


async def test_closed_client_refuses_requests(server: Any, transport: str) -> None:
    url, script = server
    script += [_ok]
    c = _client(url)
    await c.get("/api/v1/nodes")
    await c.close()
    with pytest.raises(APIConnectionError, match="closed"):
        await c.get("/api/v1/nodes")


async def test_a_post_after_the_server_restarted_on_the_same_port_is_sent_once(transport: str) -> None:
    """The client keeps connections to a server that then restarts on the same address (kube-apiserver
    rolled): every kept connection is dead. A POST must still reach the new server, exactly once —
    nothing was written to the old one (Go: transport.go shouldRetryRequest)."""
    posts: list[str] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        await request.read()
        if request.method == "POST":
            posts.append(request.path)
        await asyncio.sleep(0.02)  # keep requests overlapping: the client opens many connections
        return web.json_response({"kind": "Status", "status": "Success"})

    async def serve(port: int) -> web.AppRunner:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, reuse_address=True).start()
        return runner

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first = await serve(port)
    api = _client(f"http://127.0.0.1:{port}")
    try:
        await asyncio.gather(*(api.request_raw("GET", f"/api/v1/pods/{i}") for i in range(30)))
        await first.cleanup()
        second = await serve(port)
        try:
            await api.request_raw("POST", "/api/v1/namespaces/default/pods", body={"kind": "Pod"})
            assert posts == ["/api/v1/namespaces/default/pods"]
        finally:
            await second.cleanup()
    finally:
        await api.close()


async def test_post_nowait_then_resume_finishes_as_post(server: Any, transport: str, monkeypatch: Any) -> None:
    """The event recorder's first try (``post_nowait``) and its continuation (``post_resume``) end as
    one ``post`` would: a 429 Retry-After is retried, an error status is raised with its status, a
    broken connection is a connection error naming the request; 2xx needs no continuation."""
    url, script = server
    monkeypatch.setattr("kubesched.kube.client._retry_after_seconds", lambda v: 0.0)

    async def too_many(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.json_response({"kind": "Status", "code": 429}, status=429, headers={"Retry-After": "1"})

    async def conflict(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.json_response({"kind": "Status", "code": 409, "reason": "AlreadyExists", "message": "exists"},
                                 status=409)

    path, body = "/apis/events.k8s.io/v1/namespaces/a/events", b'{"kind":"Event"}'
    async with _client(url) as c:
        script += [_ok]
        fut = c.post_nowait(path, body)
        if transport == "aiohttp":  # nothing to start without a coroutine: the caller awaits post()
            assert fut is None
            return
        assert fut is not None
        status, payload, retry_after = await fut
        assert status == 200 and b'"path":"/apis/events.k8s.io/v1/namespaces/a/events"' in payload.replace(b" ", b"")
        script[:] = [too_many, _ok]
        fut = c.post_nowait(path, body)
        assert fut is not None
        first = await fut
        assert first[0] == 429 and first[2] == "1"
        await c.post_resume(path, body, first)  # retried once, answered 200
        assert c.requests == 3
        script[:] = [conflict]
        fut = c.post_nowait(path, body)
        assert fut is not None
        with pytest.raises(APIError) as e:
            await c.post_resume(path, body, await fut)
        assert (e.value.status, e.value.reason) == (409, "AlreadyExists")
        script[:] = [_reset]
        fut = c.post_nowait(path, body)
        assert fut is not None
        outcome = await asyncio.gather(fut, return_exceptions=True)
        with pytest.raises(APIConnectionError, match=f"POST {path}"):
            await c.post_resume(path, body, outcome[0])

        async def slow(request: web.Request) -> web.StreamResponse:
            await asyncio.sleep(2.0)
            return await _ok(request)

        script[:] = [slow]  # a try's own bound, shorter than the client's 60 s
        fut = c.post_nowait(path, body, timeout=0.2)
        assert fut is not None
        outcome = await asyncio.gather(fut, return_exceptions=True)
        with pytest.raises(APIConnectionError, match="timed out"):
            await c.post_resume(path, body, outcome[0])
        script[:] = [_ok]  # the handle's bound is the client's again for the next request
        fut = c.post_nowait(path, body)
        assert fut is not None and (await fut)[0] == 200


async def test_post_done_calls_back_once_and_resumes_as_post(server: Any, transport: str, monkeypatch: Any) -> None:
    """``post_done`` (the event recorder's first try without a future): ``done`` gets the answer or
    the transfer's error once, from the loop; ``post_resume`` finishes it as ``post``; a callback
    that raises goes to the loop's exception handler and the client goes on; ``close()`` calls
    back the transfers under way with an error."""
    url, script = server
    monkeypatch.setattr("kubesched.kube.client._retry_after_seconds", lambda v: 0.0)
    path, body = "/apis/events.k8s.io/v1/namespaces/a/events", b'{"kind":"Event"}'
    loop = asyncio.get_running_loop()

    async def too_many(request: web.Request) -> web.StreamResponse:
        await request.read()
        return web.json_response({"kind": "Status", "code": 429}, status=429, headers={"Retry-After": "1"})

    async def post_done(c: APIClient, **kw: Any) -> Any:
        fut: asyncio.Future[Any] = loop.create_future()
        calls: list[Any] = []

        def done(outcome: Any) -> None:
            calls.append(outcome)
            fut.set_result(outcome)

        assert c.post_done(path, body, done, **kw)
        outcome = await fut
        await asyncio.sleep(0.05)
        assert calls == [outcome]  # once
        return outcome

    async with _client(url) as c:
        script += [_ok]
        if transport == "aiohttp":  # nothing to start without a coroutine: the caller awaits post()
            assert not c.post_done(path, body, lambda outcome: None)
            return
        status, payload, retry_after = await post_done(c)
        assert status == 200 and b'"path":"/apis/events.k8s.io/v1/namespaces/a/events"' in payload.replace(b" ", b"")
        assert retry_after is None
        script[:] = [too_many, _ok]
        first = await post_done(c)
        assert first[0] == 429 and first[2] == "1"
        await c.post_resume(path, body, first)  # retried once, answered 200
        assert c.requests == 3
        script[:] = [_reset]
        outcome = await post_done(c)
        assert isinstance(outcome, Exception)
        with pytest.raises(APIConnectionError, match=f"POST {path}"):
            await c.post_resume(path, body, outcome)
        script[:] = [_ok]
        errors: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, ctx: errors.append(ctx))
        try:
            def boom(outcome: Any) -> None:
                raise RuntimeError("boom")

            assert c.post_done(path, body, boom)
            await until_true(lambda: bool(errors))
            assert isinstance(errors[0]["exception"], RuntimeError)
        finally:
            loop.set_exception_handler(None)
        assert (await post_done(c))[0] == 200  # the client goes on

        async def slow(request: web.Request) -> web.StreamResponse:
            await asyncio.sleep(2.0)
            return await _ok(request)

        script[:] = [slow]
        closed: list[Any] = []
        assert c.post_done(path, body, closed.append)
        await asyncio.sleep(0.1)
        await c.close()
        assert len(closed) == 1 and isinstance(closed[0], Exception)
        assert not c.post_done(path, body, closed.append)  # closed: the caller goes through post()


async def test_post_done_takes_a_token_or_leaves_it_to_post(server: Any, transport: str) -> None:
    """With a rate limit (kube-scheduler's clients: qps/burst), ``post_done`` starts only when a
    token is there now and takes it; with none left it starts nothing (the caller awaits ``post``,
    which waits its turn)."""
    url, script = server
    script += [_ok]
    path, body = "/apis/events.k8s.io/v1/namespaces/a/events", b'{"kind":"Event"}'
    answers: list[Any] = []
    async with APIClient(ClientConfig(server=url, qps=0.001, burst=2)) as c:
        if transport == "aiohttp":
            assert not c.post_done(path, body, answers.append)
            return
        assert c.post_done(path, body, answers.append) and c.post_done(path, body, answers.append)
        assert not c.post_done(path, body, answers.append)  # the burst is spent: nothing sent
        await until_true(lambda: len(answers) == 2)
        assert [a[0] for a in answers] == [200, 200] and c.requests == 2


async def until_true(cond: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``cond`` every 10 ms (a generous bound for a loaded machine, not a speed assertion)."""
    end = asyncio.get_running_loop().time() + timeout
    while not cond():
        assert asyncio.get_running_loop().time() < end, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_curl_url_is_the_url_aiohttp_gets() -> None:
    """libcurl's URL string, joined without yarl for paths that need no encoding, is the one
    ``str(_url(path))`` gives for every server form (trailing slash, prefix path, default port, case)."""
    paths = ["/api", "/api/v1/namespaces/e2e/pods/p-1/binding", "/apis/events.k8s.io/v1/namespaces/d/events",
             "/api/v1/namespaces/a/pods/x:y@z", "/api/v1/namespaces/a/pods/not encoded"]
    for server in ["https://127.0.0.1:6443", "http://h:80/prefix/", "https://H:443", "http://localhost:8080",
                   "https://[::1]:6443/a/b", "http://h/", "https://Example.COM:6443/x/"]:
        c = APIClient(ClientConfig(server=server))
        for path in paths:
            assert c._curl_url(path) == str(c._url(path)), (server, path)


async def test_reused_handles_send_each_request_as_asked(server: Any, transport: str) -> None:
    """One request at a time, so libcurl reuses one handle: every method, body and content type
    switch arrives as sent (a handle keeps its last options; only what changes is set again)."""
    url, script = server
    seen: list[tuple[str, bytes, str | None]] = []

    async def record(request: web.Request) -> web.StreamResponse:
        seen.append((request.method, await request.read(), request.headers.get("Content-Type")))
        return web.json_response({"kind": "Status", "status": "Success"})

    script += [record]
    sent = [("GET", None, None), ("POST", b'{"a":1}', None), ("POST", b'{"b":2}', None),
            ("PATCH", b'{"c":3}', "application/merge-patch+json"),
            ("PATCH", b'{"d":4}', "application/merge-patch+json"),
            ("DELETE", None, None), ("DELETE", b'{"e":5}', None), ("GET", None, None), ("POST", b"{}", None),
            ("PUT", b'{"f":6}', None), ("GET", None, None)]
    async with _client(url) as c:
        for method, body, ctype in sent:
            await c.request_raw(method, "/api/v1/namespaces/a/pods/p", body=body, content_type=ctype)
    assert [(m, b) for m, b, _ in seen] == [(m, b or b"") for m, b, _ in sent]
    assert [t for _, _, t in seen] == [t or ("application/json" if b is not None else None) for _, b, t in sent]


async def test_connections_of_a_burst_are_kept_for_the_next_burst(server: Any, transport: str) -> None:
    """A burst of concurrent requests opens as many HTTP/1.1 connections as it needs (up to 100); the
    quiet stretch after it must not shrink the pool, so the next bursts reuse them: no new TCP (and TLS)
    connection per burst."""
    url, script = server
    ports: set[int] = set()

    async def slow(request: web.Request) -> web.StreamResponse:
        assert request.transport is not None
        ports.add(request.transport.get_extra_info("peername")[1])
        await asyncio.sleep(0.05)  # the burst's requests overlap, so it needs ~40 connections
        return await _ok(request)

    script.append(slow)
    client = _client(url)
    try:
        after_first = 0
        for rnd in range(4):
            await asyncio.gather(*(client.get("/api/v1/pods") for _ in range(40)))
            for _ in range(20):  # one at a time: one connection busy, the rest idle
                await client.get("/api/v1/pods")
            if rnd == 0:
                after_first = len(ports)
        assert 20 <= after_first <= 40
        assert len(ports) <= after_first + 2, (after_first, len(ports))
    finally:
        await client.close()
