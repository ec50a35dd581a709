"""The box's lean HTTP/1.1 path (``apiserver/lean.py``: a complete request on an idle connection
answered inside ``data_received``) against aiohttp's own request path (``KUBESCHED_BOX_HTTP=aiohttp``):
the same answers, byte for byte but the ``Date``, and HTTP/1.1's connection rules kept — pipelined
requests answered in order (also behind a request that suspends, and around a watch served by
aiohttp), keep-alive and ``Connection: close``, HTTP/1.0, a client closing mid-request, oversized
bodies, a client trickling its request, a reader too slow for its answers, malformed requests."""

from __future__ import annotations

import json
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.apiserver import lean
from kubesched.apiserver.handlers import MAX_REQUEST_BODY_BYTES
from kubesched.apiserver.launcher import ServerHandle, run_server

PODS = "/api/v1/namespaces/default/pods"


def _pod(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "x"}},
                       "spec": {"containers": [{"name": "c", "image": "pause"}]}}).encode()


@pytest.fixture
def inline_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many requests the lean path answered inline (its ``_serve_inline`` calls)."""
    calls = [0]
    orig = lean.LeanRequestHandler._serve_inline

    def counting(self: lean.LeanRequestHandler, msg: Any, payload: Any) -> None:
        calls[0] += 1
        orig(self, msg, payload)

    monkeypatch.setattr(lean.LeanRequestHandler, "_serve_inline", counting)
    return calls


def _server(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, path: str, **kw: Any) -> ServerHandle:
    monkeypatch.setenv(lean.LEAN_ENV, path)
    srv = run_server(tmp_path / f"kc-{path}", **kw)
    monkeypatch.delenv(lean.LEAN_ENV)
    runner = srv.server._runner
    assert runner is not None
    assert isinstance(runner.server, lean.LeanServer) == (path == "lean")
    return srv


@pytest.fixture
def lsrv(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerHandle]:
    """A box on the lean path, plain HTTP (the raw bytes are the test's)."""
    with _server(tmp_path, monkeypatch, "lean", tls=False) as s:
        yield s


def _connect(srv: ServerHandle, timeout: float = 20) -> socket.socket | ssl.SSLSocket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    ctx = srv.ssl_context()
    return ctx.wrap_socket(sock, server_hostname="127.0.0.1") if ctx is not None else sock


def _req(srv: ServerHandle, method: str, path: str, body: bytes | None = None, *, version: str = "1.1",
         extra: str = "", ctype: str = "application/json") -> bytes:
    head = f"{method} {path} HTTP/{version}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {srv.token}\r\n{extra}"
    if body is not None:
        head += f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + (body or b"")


class _Reader:
    """Responses read one at a time off a socket (Content-Length or chunked bodies)."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise EOFError(self.buf)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise EOFError(self.buf)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def response(self, head: bool = False) -> tuple[int, list[tuple[str, str]], bytes]:
        status = int(self._line().split(b" ", 2)[1])
        headers = []
        while line := self._line():
            k, v = line.decode().split(":", 1)
            headers.append((k, v.strip()))
        h = {k.lower(): v for k, v in headers}
        if head:
            body = b""
        elif h.get("transfer-encoding") == "chunked":
            body = b""
            while size := int(self._line(), 16):
                body += self._exactly(size)
                self._line()
            self._line()
        else:
            body = self._exactly(int(h.get("content-length", "0")))
        return status, headers, body

    def closed(self) -> bool:
        """The server closed the connection (nothing more to read)."""
        return not self.buf and not self._fill()


def _exchange(srv: ServerHandle, requests: list[bytes]) -> list[tuple[int, list[tuple[str, str]], bytes]]:
    """Each request in turn on one connection, each answer read before the next is sent."""
    with _connect(srv) as sock:
        r = _Reader(sock)
        out = []
        for req in requests:
            sock.sendall(req)
            out.append(r.response(head=req.startswith(b"HEAD ")))
        return out


def _mask(body: bytes) -> Any:
    """A response body with the values two servers make differently (uids, times) blanked."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: ("*" if k in ("uid", "creationTimestamp", "time") else walk(v)) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(doc)


def test_same_answers_on_both_paths(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, inline_count: list[int]) -> None:
    """Every header but ``Date`` (names, values, order) and every body equal, over TLS, for the hot
    verbs and their errors: create, get, list, binding, a Status PATCH, the Scheduled event, a 404,
    a 409, a malformed body's 400, a 405, a health check's text, a HEAD and an HTTP/1.0 request."""
    status_patch = json.dumps({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}).encode()
    binding = json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
                          "target": {"kind": "Node", "name": "n1"}}).encode()
    event = json.dumps({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                        "metadata": {"name": "a.1", "namespace": "default"},
                        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "default-scheduler",
                        "reportingInstance": "x", "action": "Binding", "reason": "Scheduled",
                        "regarding": {"kind": "Pod", "namespace": "default", "name": "a", "apiVersion": "v1"},
                        "note": "Successfully assigned default/a to n1", "type": "Normal"}).encode()
    answers = {}
    for path in ("aiohttp", "lean"):
        with _server(tmp_path / path, monkeypatch, path) as srv:
            srv.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
            answers[path] = _exchange(srv, [
                _req(srv, "GET", "/version"),
                _req(srv, "POST", PODS, _pod("a")),
                _req(srv, "POST", PODS, _pod("a")),
                _req(srv, "GET", f"{PODS}/a"),
                _req(srv, "GET", f"{PODS}?labelSelector=app%3Dx"),
                _req(srv, "PATCH", f"{PODS}/a/status", status_patch,
                     ctype="application/strategic-merge-patch+json"),
                _req(srv, "POST", f"{PODS}/a/binding", binding),
                _req(srv, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", event),
                _req(srv, "GET", f"{PODS}/missing"),
                _req(srv, "POST", PODS, b"{not json"),
                _req(srv, "POST", "/healthz", b"{}"),
                _req(srv, "GET", "/readyz"),
                _req(srv, "HEAD", "/version"),
                _req(srv, "GET", "/version", version="1.0", extra="Connection: keep-alive\r\n"),
            ])
    assert inline_count[0] == 14, "every request above is the lean path's (complete, idle connection)"
    for (s1, h1, b1), (s2, h2, b2) in zip(answers["aiohttp"], answers["lean"], strict=True):
        assert s1 == s2
        assert [h for h in h1 if h[0] != "Date"] == [h for h in h2 if h[0] != "Date"]
        assert _mask(b1) == _mask(b2)
    codes = [s for s, _, _ in answers["lean"]]
    assert codes == [200, 201, 409, 200, 200, 200, 201, 201, 404, 400, 405, 200, 200, 200]


def test_pipelined_requests_are_answered_in_order(lsrv: ServerHandle, inline_count: list[int]) -> None:
    reqs = [_req(lsrv, "POST", PODS, _pod("p")), _req(lsrv, "GET", f"{PODS}/p"), _req(lsrv, "GET", "/version"),
            _req(lsrv, "GET", f"{PODS}/nope"), _req(lsrv, "DELETE", f"{PODS}/p")]
    with _connect(lsrv) as sock:
        sock.sendall(b"".join(reqs))  # one write: the box parses them all in one data_received
        r = _Reader(sock)
        answers = [r.response() for _ in reqs]
    assert [s for s, _, _ in answers] == [201, 200, 200, 404, 200]
    assert json.loads(answers[1][2])["metadata"]["name"] == "p"
    assert "gitVersion" in json.loads(answers[2][2])
    assert inline_count[0] == 5


def test_pipelined_behind_a_request_that_suspends(lsrv: ServerHandle) -> None:
    """With injected latency every request suspends (its answer comes from a Task): the requests
    parsed meanwhile wait behind it, so the answers keep the order and see the earlier writes."""
    lsrv.faults.latency = 0.05
    reqs = [_req(lsrv, "POST", PODS, _pod("s")), _req(lsrv, "GET", f"{PODS}/s"),
            _req(lsrv, "POST", PODS, _pod("s")), _req(lsrv, "GET", "/version")]
    with _connect(lsrv) as sock:
        sock.sendall(b"".join(reqs))
        r = _Reader(sock)
        answers = [r.response() for _ in reqs]
        lsrv.faults.latency = 0.0
        sock.sendall(_req(lsrv, "GET", f"{PODS}/s"))  # the connection is still usable after
        assert r.response()[0] == 200
    assert [s for s, _, _ in answers] == [201, 200, 409, 200]


def test_pipelined_around_a_watch_served_by_aiohttp(lsrv: ServerHandle) -> None:
    """A watch goes to aiohttp's queue; what is pipelined after it is answered after its stream
    ends, on the same connection, in order."""
    reqs = [_req(lsrv, "POST", PODS, _pod("w")),
            _req(lsrv, "GET", f"{PODS}?watch=true&timeoutSeconds=1"),
            _req(lsrv, "GET", f"{PODS}/w")]
    with _connect(lsrv) as sock:
        sock.sendall(b"".join(reqs))
        r = _Reader(sock)
        created, watch, got = (r.response() for _ in reqs)
    assert created[0] == 201
    assert watch[0] == 200
    events = [json.loads(line) for line in watch[2].splitlines() if line.strip()]
    assert [e["type"] for e in events] == ["ADDED"]
    assert got[0] == 200 and json.loads(got[2])["metadata"]["name"] == "w"


def test_keep_alive_and_connection_close(lsrv: ServerHandle, inline_count: list[int]) -> None:
    with _connect(lsrv) as sock:
        r = _Reader(sock)
        for _ in range(20):
            sock.sendall(_req(lsrv, "GET", "/version"))
            status, headers, _ = r.response()
            assert status == 200 and ("Connection", "close") not in headers
        sock.sendall(_req(lsrv, "GET", "/version", extra="Connection: close\r\n"))
        status, headers, _ = r.response()
        assert status == 200 and ("Connection", "close") in headers
        assert r.closed(), "the box closes the connection after answering Connection: close"
    assert inline_count[0] == 21


def test_http10_without_keep_alive_is_closed(lsrv: ServerHandle) -> None:
    with _connect(lsrv) as sock:
        sock.sendall(_req(lsrv, "GET", "/version", version="1.0"))
        r = _Reader(sock)
        status, headers, _ = r.response()
        assert status == 200
        assert r.closed()


def test_client_closing_mid_request_leaves_no_trace(lsrv: ServerHandle) -> None:
    body = _pod("half")
    with _connect(lsrv) as sock:  # the head and half the body, then gone
        sock.sendall(_req(lsrv, "POST", PODS, body)[: -len(body) // 2])
    with _connect(lsrv) as sock:  # a whole request, then gone before the answer is read
        sock.sendall(_req(lsrv, "POST", PODS, _pod("gone")))
    time.sleep(0.3)
    status, _, body_out = _exchange(lsrv, [_req(lsrv, "GET", PODS)])[0]
    assert status == 200
    names = [p["metadata"]["name"] for p in json.loads(body_out)["items"]]
    assert names == ["gone"], "the half-sent create never ran; the whole one did"


def test_oversized_body_is_413_and_the_box_serves_on(lsrv: ServerHandle) -> None:
    big = b'{"x": "' + b"a" * MAX_REQUEST_BODY_BYTES + b'"}'
    with _connect(lsrv) as sock:
        sock.sendall(_req(lsrv, "POST", PODS, big))
        status, _, body = _Reader(sock).response()
    assert status == 413
    assert json.loads(body)["reason"] == "RequestEntityTooLarge"
    assert _exchange(lsrv, [_req(lsrv, "GET", "/version")])[0][0] == 200


def test_a_client_trickling_its_request(lsrv: ServerHandle) -> None:
    """A request arriving a few bytes at a time (head, then body) is answered once complete."""
    data = _req(lsrv, "POST", PODS, _pod("slow"))
    with _connect(lsrv) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(0, len(data), 16):
            sock.sendall(data[i:i + 16])
            time.sleep(0.002)
        status, _, body = _Reader(sock).response()
    assert status == 201 and json.loads(body)["metadata"]["name"] == "slow"


def test_a_reader_too_slow_for_its_answers(lsrv: ServerHandle) -> None:
    """Sixteen pipelined lists of ~200 KiB each, read only after all are sent: the box waits for
    the socket to drain (back-pressure) and every answer arrives whole and in order."""
    for i in range(200):
        lsrv.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"big-{i}", "namespace": "default",
                                                                     "annotations": {"pad": "x" * 800}},
                     "spec": {"containers": [{"name": "c", "image": "pause"}]}})
    n = 16
    with _connect(lsrv, timeout=60) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(b"".join(_req(lsrv, "GET", f"{PODS}?limit={100 + i}") for i in range(n)))
        time.sleep(0.5)
        r = _Reader(sock)
        answers = [r.response() for _ in range(n)]
    assert [len(json.loads(b)["items"]) for _, _, b in answers] == [100 + i for i in range(n)]


def test_malformed_requests_get_400(lsrv: ServerHandle) -> None:
    with _connect(lsrv) as sock:
        sock.sendall(b"GARBAGE\r\n\r\n")
        status, _, _ = _Reader(sock).response()
    assert status == 400
    with _connect(lsrv) as sock:
        sock.sendall(b"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n")
        status, _, _ = _Reader(sock).response()
    assert status == 400
    assert _exchange(lsrv, [_req(lsrv, "GET", "/version")])[0][0] == 200


def test_stop_with_a_suspended_request_is_bounded(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A request held by ``faults.pause()`` (suspended, running on as a Task) does not keep the
    box from stopping: stop() returns within its bounds."""
    srv = _server(tmp_path, monkeypatch, "lean", tls=False)
    try:
        srv.faults.pause()
        sock = _connect(srv)
        sock.sendall(_req(srv, "GET", "/version"))
        time.sleep(0.2)
        t = time.monotonic()
        srv.stop()
        assert time.monotonic() - t < 10
        sock.close()
    finally:
        srv.faults.resume()
        srv.stop()


def test_lean_is_the_default_and_aiohttp_the_way_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``KUBESCHED_BOX_HTTP`` (or ``lean``): the lean path; ``aiohttp``: aiohttp's own; an aiohttp
    without the internals the lean path drives: aiohttp's own whatever was asked."""
    assert lean.available()  # the pinned aiohttp has them
    for value, want in ((None, True), ("lean", True), ("LEAN", True), ("aiohttp", False), (" AioHTTP ", False)):
        if value is None:
            monkeypatch.delenv(lean.LEAN_ENV, raising=False)
        else:
            monkeypatch.setenv(lean.LEAN_ENV, value)
        assert lean.lean_enabled() is want, value
        with monkeypatch.context() as m:
            m.setattr(lean, "available", lambda: False)
            assert lean.lean_enabled() is False, value
