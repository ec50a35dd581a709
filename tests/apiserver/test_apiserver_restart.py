"""Stop and restart on the same data directory: resourceVersions never go backwards, every
acknowledged write survives, and a stopped server answers nothing from its (closed) store.

The regression behind these tests: a TLS connection accepted just before ``stop()`` finished its
handshake afterwards and was served by the stopped server's app (aiohttp registers a TLS
connection only once its handshake is done, so the runner's shutdown never saw it). Clients
kept it alive across the restart on the same port and got the old server's frozen state:
lists with a resourceVersion lower than the restarted server had already handed out.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path
from typing import Any

import orjson
import pytest

from kubesched.apiserver.launcher import start_server

pytestmark = pytest.mark.asyncio

CM = "/api/v1/namespaces/default/configmaps"


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"k": name}}


def _request(sock: socket.socket, ctx: ssl.SSLContext, token: str | None) -> tuple[int | None, bytes]:
    """TLS handshake on an already connected socket, one GET; (status or None if the server
    closed the connection, raw response)."""
    sock.settimeout(5)
    try:
        tls = ctx.wrap_socket(sock, server_hostname="127.0.0.1")
    except (OSError, ssl.SSLError):
        return None, b""
    with tls:
        tls.sendall(f"GET {CM} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:
                chunk = tls.recv(65536)
                if not chunk:
                    break
                buf += chunk
            head, _, body = buf.partition(b"\r\n\r\n")
            if not head:
                return None, b""
            length = next((int(h.split(b":", 1)[1]) for h in head.split(b"\r\n")
                           if h.lower().startswith(b"content-length:")), None)
            while length is not None and len(body) < length:
                chunk = tls.recv(65536)
                if not chunk:
                    break
                body += chunk
        except (OSError, ssl.SSLError):
            return None, b""
        return int(head.split(b" ", 2)[1]), buf


async def test_connection_accepted_before_stop_is_not_served_by_the_stopped_server(tmp_path: Path) -> None:
    kc, data = tmp_path / "kc", tmp_path / "data"
    async with start_server(kc, data_dir=data) as box:
        port, token = box.port, box.token
        ctx = box.pki.client_context()
        for i in range(3):
            box.create_manifest(_cm(f"a{i}"))
        rv_at_stop = box.store.current_rev
        # a client connects (the server accepts the TCP connection) but its TLS handshake is
        # still to come when the server stops
        sock = await asyncio.to_thread(socket.create_connection, ("127.0.0.1", port))
        await asyncio.sleep(0.2)
    try:
        async with start_server(kc, data_dir=data, port=port, token=token) as box2:
            assert box2.store.current_rev == rv_at_stop  # the restart continues the revision log
            for i in range(5):
                box2.create_manifest(_cm(f"b{i}"))
            assert box2.store.current_rev == rv_at_stop + 5
            status, raw = await asyncio.to_thread(_request, sock, ctx, token)
            # never an answer from the stopped server's state (which ends at rv_at_stop)
            if status is not None:
                assert status == 429, raw
                head, _, body = raw.partition(b"\r\n\r\n")
                assert b"connection: close" in head.lower()
                assert b"retry-after: 1" in head.lower()
                st = orjson.loads(body)
                assert st["kind"] == "Status" and st["reason"] == "TooManyRequests"
                assert "shutting down" in st["message"]
            # the restarted server has everything, at revisions after those seen before
            items = [e.obj() for e in box2.store.list("configmaps", "default")]
            assert sorted(o["metadata"]["name"] for o in items) == [*(f"a{i}" for i in range(3)),
                                                                     *(f"b{i}" for i in range(5))]
    finally:
        sock.close()


async def test_requests_during_stop_are_refused_and_stop_is_bounded(tmp_path: Path) -> None:
    """A watch (and any request) arriving while the server stops gets 429 + Connection: close,
    and stop() ends promptly even with open watches whose clients do not read."""
    import aiohttp

    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data") as box:
        ctx = box.pki.client_context()
        headers = {"Authorization": f"Bearer {box.token}"}
        async with aiohttp.ClientSession(headers=headers) as s:
            # open watches (one slow reader each) that the stop must end
            watches = [await s.get(f"{box.url}{CM}?watch=1&allowWatchBookmarks=true", ssl=ctx) for _ in range(3)]
            assert all(w.status == 200 for w in watches)
            box._stopping = True  # the first thing stop() does: from here on requests are refused
            r = await s.get(f"{box.url}{CM}?watch=1", ssl=ctx)
            assert r.status == 429 and r.headers["Retry-After"] == "1"
            assert (await r.json())["message"].startswith("The apiserver is shutting down")
            box._stopping = False
            box.faults.pause()  # a request held in flight when the stop begins
            held = asyncio.create_task(s.get(f"{box.url}{CM}", ssl=ctx))
            await asyncio.sleep(0.2)
            await asyncio.wait_for(box.stop(), 10)  # bounded (hang detection, not a speed figure)
            box.faults.resume()
            try:
                r = await asyncio.wait_for(held, 5)
                assert r.status == 429  # never served by the stopped server
            except aiohttp.ClientError:
                pass  # or cut by the shutdown
            for w in watches:
                rest = await asyncio.wait_for(w.content.read(), 5)  # the streams were ended
                assert b"BOOKMARK" not in rest  # ended by the shutdown, not at their deadline
                w.close()
