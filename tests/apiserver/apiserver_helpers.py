"""Helpers for the box API server tests: a small stdlib HTTP client speaking to a real server."""

from __future__ import annotations

import http.client
import json
import ssl
import time
from typing import Any
from urllib.parse import urlsplit


class Client:
    """Minimal synchronous HTTP client (stdlib) speaking to the server with its bearer token."""

    def __init__(self, url: str, token: str | None, ssl_context: ssl.SSLContext | None = None) -> None:
        u = urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self.token = token
        self.https = u.scheme == "https"
        self.ctx = ssl_context

    def _conn(self, timeout: float = 10) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout, context=self.ctx)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    @classmethod
    def of(cls, srv: Any, token: str | None | bool = True) -> Client:
        """A client for a ServerHandle (``token=True``: the server's token)."""
        return cls(srv.url, srv.token if token is True else token or None, srv.ssl_context())

    def _headers(self, ctype: str = "application/json", accept: str = "application/json") -> dict[str, str]:
        h = {"Content-Type": ctype, "Accept": accept}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        return h

    def req(self, method: str, path: str, body: Any = None, *, ctype: str = "application/json",
            accept: str = "application/json", raw: bytes | None = None) -> tuple[int, Any]:
        c = self._conn()
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        c.request(method, path, body=data, headers=self._headers(ctype, accept))
        r = c.getresponse()
        payload = r.read()
        c.close()
        try:
            return r.status, json.loads(payload) if payload else None
        except ValueError:
            return r.status, payload.decode()

    def get(self, path: str) -> Any:
        code, body = self.req("GET", path)
        assert code == 200, (code, body)
        return body

    def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        code, body = self.req("POST", path, obj)
        assert code == 201, (code, body)
        return body

    def watch(self, path: str, *, timeout: float = 10) -> Watch:
        c = self._conn(timeout)
        c.request("GET", path, headers=self._headers())
        r = c.getresponse()
        return Watch(c, r)


class Watch:
    """A streaming watch: ``next()`` returns the next event dict, None at end of stream."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self.conn, self.resp = conn, resp
        self.status = resp.status

    def next(self) -> dict[str, Any] | None:
        try:
            line = self.resp.readline()
        except TimeoutError:
            raise AssertionError("watch: no event within the timeout") from None
        if not line:
            return None
        return json.loads(line)

    def take(self, n: int) -> list[dict[str, Any]]:
        out = []
        for _ in range(n):
            ev = self.next()
            assert ev is not None, f"stream ended after {out}"
            out.append(ev)
        return out

    def close(self) -> None:
        self.conn.close()


def pod(name: str, ns: str = "default", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def until(fn: Any, what: str, timeout: float = 10) -> Any:
    """Poll ``fn`` every 50 ms until it returns something truthy (returned); fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.05)
