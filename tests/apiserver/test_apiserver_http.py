"""HTTP details of the box's one request handler (aiohttp's low-level server, no router):
``Expect: 100-continue`` as Go's net/http answers it, and the request body limit."""

from __future__ import annotations

import json
import socket
import ssl
from typing import Any

from kubesched.apiserver.launcher import ServerHandle

PODS = "/api/v1/namespaces/default/pods"


def _open(srv: ServerHandle) -> ssl.SSLSocket | socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    ctx = srv.ssl_context()
    return ctx.wrap_socket(sock, server_hostname="127.0.0.1") if ctx is not None else sock


def _read_head(sock: Any) -> bytes:
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            break
        buf += chunk
    return buf


def _head(srv: ServerHandle, path: str, body: bytes, expect: str) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {srv.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nExpect: {expect}\r\n\r\n").encode()


def test_expect_100_continue_then_the_answer(srv: ServerHandle) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "expect"},
                       "spec": {"containers": [{"name": "c", "image": "pause"}]}}).encode()
    with _open(srv) as sock:
        sock.sendall(_head(srv, PODS, body, "100-continue"))
        interim = _read_head(sock)
        assert interim.startswith(b"HTTP/1.1 100 Continue\r\n"), interim
        rest = interim.split(b"\r\n\r\n", 1)[1]
        sock.sendall(body)
        final = rest if rest.startswith(b"HTTP/1.1") else _read_head(sock)
        assert final.startswith(b"HTTP/1.1 201 "), final


def test_unknown_expectation_is_417(srv: ServerHandle) -> None:
    with _open(srv) as sock:
        sock.sendall(_head(srv, PODS, b"{}", "something-else"))
        assert _read_head(sock).startswith(b"HTTP/1.1 417 "), "Go's server: 417 Expectation Failed"
