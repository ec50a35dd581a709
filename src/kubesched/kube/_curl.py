"""libcurl (pycurl ``CurlMulti``) driven from the asyncio event loop: HTTP requests whose framing,
TLS and (over HTTP/2) multiplexing run in C.

``CurlMultiAsync`` registers libcurl's sockets with the running loop (``add_reader`` /
``add_writer``, ``CURLMOPT_SOCKETFUNCTION``) and its timer with ``call_later``
(``CURLMOPT_TIMERFUNCTION``), and resolves one future per finished transfer — libcurl's
"multi_socket" API as its ``asiohiper``/``hiperfifo`` examples drive it, no thread.

TLS options come from PEM bytes (``CAINFO_BLOB``, ``SSLCERT_BLOB``, ``SSLKEY_BLOB``), never from
an ``ssl.SSLContext`` (libcurl has its own OpenSSL). HTTP/2 over TLS is negotiated with ALPN
(``http2=True``, kube-apiserver's default) and all transfers share one connection
(``CURLMOPT_PIPELINING = CURLPIPE_MULTIPLEX``, ``PIPEWAIT``); otherwise HTTP/1.1 with up to
``max_connections`` kept-alive connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pycurl

__all__ = ["CurlError", "CurlMultiAsync", "CurlTLS", "available"]


def available() -> bool:
    """Whether the linked libcurl speaks HTTP/2 (``pycurl.version_info`` features)."""
    return bool(pycurl.version_info()[4] & pycurl.VERSION_HTTP2)


class CurlError(Exception):
    """A transfer failed before an HTTP answer (``code``: libcurl's ``CURLE_*``; ``timed_out``:
    ``CURLE_OPERATION_TIMEDOUT``)."""

    def __init__(self, code: int, message: str, os_errno: int = 0) -> None:
        self.code = code
        self.os_errno = os_errno
        super().__init__(message or f"curl error {code}")

    @property
    def timed_out(self) -> bool:
        return self.code == pycurl.E_OPERATION_TIMEDOUT

    @property
    def pooled_connections_died(self) -> bool:
        """libcurl gave up after resending on pooled connections that each closed before any
        answer (``Curl_retry_request``: "Connection died, tried 5 times before giving up") — every
        kept connection to a restarted server is dead; nothing reached it."""
        return self.code == pycurl.E_SEND_ERROR and "Connection died" in str(self)


@dataclass(frozen=True)
class CurlTLS:
    """TLS material as PEM bytes. ``ca``: the server's CA bundle (None: the system store);
    ``cert``/``key``: a client certificate and key; ``insecure``: skip verification."""

    ca: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None
    insecure: bool = False


class _Transfer:
    """One easy handle's state, kept with the handle between requests: its body and header lines are
    collected by the lists' own (C) ``append`` — set once as ``WRITEFUNCTION``/``HEADERFUNCTION``
    when the handle is made, no Python callback per header line — and the options of the last
    request (``kind``: method and whether it had a body; ``headers``: the header list given) are
    remembered so that the next request sets only what changed."""

    __slots__ = ("body", "done", "fresh", "fut", "headers", "kind", "lines", "timeout_ms")

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms
        self.fut: asyncio.Future[tuple[int, bytes, str | None]] | None = None
        self.done: Callable[[tuple[int, bytes, str | None] | CurlError], None] | None = None
        """:meth:`CurlMultiAsync.request_done`'s callback (instead of ``fut``)."""
        self.fresh = False
        self.body: list[bytes] = []
        self.lines: list[bytes] = []
        self.kind: tuple[str, bool] | None = None
        self.headers: Any = None

    def retry_after(self) -> str | None:
        """The last ``Retry-After`` header line's value among the lines received, or None."""
        value = None
        for line in self.lines:
            if line[:12].lower() == b"retry-after:":
                value = line[12:].decode("latin-1").strip()
        return value


class CurlMultiAsync:
    """Concurrent HTTP requests through one ``CurlMulti`` on the running asyncio loop.

    ``request(method, url, headers, body)`` → ``(status, body bytes, Retry-After or None)``;
    raises :class:`CurlError` when no answer came (refused, reset, TLS, ``timeout`` seconds).
    ``connect_timeout`` and ``timeout`` are seconds. Easy handles are reused (libcurl keeps the
    connection cache in the multi handle). Create and use it on one loop; ``close()`` when done.
    """

    def __init__(self, *, tls: CurlTLS | None = None, http2: bool = True, max_connections: int = 0,
                 timeout: float = 60.0, connect_timeout: float = 10.0) -> None:
        self._loop = asyncio.get_running_loop()
        self._tls = tls
        self._http2 = http2
        self._timeout_ms = max(1, int(timeout * 1000))
        # libcurl counts a transfer waiting for a free HTTP/2 stream or connection as connecting: with
        # a backlog of binds, waits of seconds are normal (a 10 s bound failed binds of a 3,000-pod
        # backlog), so the connect bound is the request's own (kube-scheduler's client has none)
        self._connect_timeout_ms = max(1, int(max(connect_timeout, timeout) * 1000))
        m = pycurl.CurlMulti()
        m.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        m.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)
        m.setopt(pycurl.M_PIPELINING, pycurl.PIPE_MULTIPLEX if http2 else pycurl.PIPE_NOTHING)
        if max_connections > 0:
            m.setopt(pycurl.M_MAX_HOST_CONNECTIONS, max_connections)
            # the connection cache's size: libcurl's default (4 × the handles *added*, and a finished
            # transfer's handle is removed) closed most of a burst's HTTP/1.1 connections once the
            # burst was over, so every later burst paid new TCP + TLS handshakes (~0.12 per pod
            # against the box); keep as many idle connections as may be open (client-go keeps 25 idle
            # per host, transport/cache.go; connection reuse is not behaviour the server can tell apart)
            m.setopt(pycurl.M_MAXCONNECTS, max_connections)
        if http2:
            # libcurl's own cap is 100 streams per connection; the server's SETTINGS still bound it
            # (kube-apiserver: 250 unless --http2-max-streams-per-connection); a full connection
            # makes libcurl open another, as Go's HTTP/2 transport does (not StrictMaxConcurrentStreams)
            m.setopt(pycurl.M_MAX_CONCURRENT_STREAMS, 1000)
        self._multi = m
        self._free: list[pycurl.Curl] = []
        self._active: dict[pycurl.Curl, _Transfer] = {}
        self._fds: dict[int, int] = {}  # fd -> POLL_* it is registered for
        self._state: dict[pycurl.Curl, _Transfer] = {}  # every handle, free or active, and its state
        self._timer: asyncio.Handle | None = None
        self._timer_soon = False  # ``_timer`` is an immediate (call_soon) run
        self._closed = False
        self.requests = 0

    # ── libcurl callbacks (never call the multi handle from inside them) ──

    def _on_socket(self, what: int, fd: int, multi: Any, data: Any) -> None:
        loop = self._loop
        old = self._fds.get(fd, 0)
        if what == pycurl.POLL_REMOVE:
            what = 0
        if old & pycurl.POLL_IN and not what & pycurl.POLL_IN:
            loop.remove_reader(fd)
        if old & pycurl.POLL_OUT and not what & pycurl.POLL_OUT:
            loop.remove_writer(fd)
        if what & pycurl.POLL_IN and not old & pycurl.POLL_IN:
            loop.add_reader(fd, self._act, fd, pycurl.CSELECT_IN)
        if what & pycurl.POLL_OUT and not old & pycurl.POLL_OUT:
            loop.add_writer(fd, self._act, fd, pycurl.CSELECT_OUT)
        if what:
            self._fds[fd] = what
        else:
            self._fds.pop(fd, None)

    def _on_timer(self, ms: int) -> None:
        # libcurl asks for 0 ms after every added transfer: one pending immediate run serves them all,
        # through call_soon (no timer heap entry, nothing to cancel for the next request)
        if ms == 0 and self._timer_soon:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_soon = False
        if ms == 0:
            self._timer = self._loop.call_soon(self._act, pycurl.SOCKET_TIMEOUT, 0)
            self._timer_soon = True
        elif ms > 0:
            self._timer = self._loop.call_later(ms / 1000.0, self._act, pycurl.SOCKET_TIMEOUT, 0)

    # ── driving ──

    def _act(self, fd: int, ev: int) -> None:
        if fd == pycurl.SOCKET_TIMEOUT:
            self._timer = None
            self._timer_soon = False
        m = self._multi
        try:
            m.socket_action(fd, ev)
        except pycurl.error:
            pass
        self._reap()

    def _reap(self) -> None:
        m = self._multi
        while True:
            queued, ok, failed = m.info_read()
            for c in ok:
                self._finish(c, None)
            for c, code, msg in failed:
                self._finish(c, CurlError(code, msg, c.getinfo_raw(pycurl.OS_ERRNO)))
            if not queued:
                break

    def _finish(self, c: pycurl.Curl, err: CurlError | None) -> None:
        self._multi.remove_handle(c)
        t = self._active.pop(c)
        fut, done = t.fut, t.done
        t.fut = t.done = None
        outcome: tuple[int, bytes, str | None] | CurlError | None = err
        if err is None and (done is not None or (fut is not None and not fut.done())):
            status = c.getinfo_raw(pycurl.RESPONSE_CODE)
            # Retry-After matters only where client-go reads it (429 and 5xx: rest ``checkWait``)
            retry_after = t.retry_after() if status == 429 or status >= 500 else None
            outcome = (status, b"".join(t.body), retry_after)
        t.body.clear()
        t.lines.clear()
        if self._closed or t.fresh:
            c.close()  # a FRESH_CONNECT handle is not reused: the option would stick
            self._state.pop(c, None)
        else:
            self._free.append(c)
        if done is not None:
            self._call_done(done, outcome)
        elif fut is not None and not fut.done():
            if isinstance(outcome, CurlError):
                fut.set_exception(outcome)
            else:
                fut.set_result(outcome)  # type: ignore[arg-type]  # a future's outcome is never None here

    def _call_done(self, done: Callable[[Any], None], outcome: Any) -> None:
        try:
            done(outcome)
        except Exception as e:  # noqa: BLE001 - as a future's done callback: reported, the loop goes on
            self._loop.call_exception_handler({"message": "exception in a libcurl transfer's callback",
                                               "exception": e})

    def _handle(self) -> tuple[pycurl.Curl, _Transfer]:
        if self._free:
            c = self._free.pop()
            return c, self._state[c]
        c = pycurl.Curl()
        t = self._state[c] = _Transfer(self._timeout_ms)
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.TIMEOUT_MS, self._timeout_ms)
        c.setopt(pycurl.CONNECTTIMEOUT_MS, self._connect_timeout_ms)
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS if self._http2
                 else pycurl.CURL_HTTP_VERSION_1_1)
        c.setopt(pycurl.PIPEWAIT, 1 if self._http2 else 0)
        c.setopt(pycurl.ACCEPT_ENCODING, None)  # no Accept-Encoding of libcurl's own, no decoding
        c.setopt(pycurl.HTTP_TRANSFER_DECODING, 1)
        c.setopt(pycurl.WRITEFUNCTION, t.body.append)
        c.setopt(pycurl.HEADERFUNCTION, t.lines.append)
        tls = self._tls
        if tls is not None:
            if tls.insecure:
                c.setopt(pycurl.SSL_VERIFYPEER, 0)
                c.setopt(pycurl.SSL_VERIFYHOST, 0)
            if tls.ca is not None:
                c.setopt(pycurl.CAINFO_BLOB, tls.ca)
            if tls.cert is not None:
                c.setopt(pycurl.SSLCERT_BLOB, tls.cert)
                c.setopt(pycurl.SSLCERTTYPE, "PEM")
            if tls.key is not None:
                c.setopt(pycurl.SSLKEY_BLOB, tls.key)
                c.setopt(pycurl.SSLKEYTYPE, "PEM")
        return c, t

    def request(self, method: str, url: str, headers: list[str],
                body: bytes | None = None, *, fresh: bool = False, timeout: float | None = None,
                ) -> asyncio.Future[tuple[int, bytes, str | None]]:
        """Start one request; the future gives ``(status, body, Retry-After)`` or raises
        :class:`CurlError`. ``headers``: ``"Name: value"`` strings (libcurl adds ``Host`` and,
        for a body, ``Content-Length``); a caller that sends the same headers again passes the
        same list object, never mutated (a reused handle keeps the list it was given last and is
        only given a new one when the object differs). ``Retry-After`` is read from 429 and 5xx
        answers only (None otherwise). ``fresh``: on a new connection, not a pooled one
        (``CURLOPT_FRESH_CONNECT``). ``timeout``: this request's bound in seconds when shorter than
        the client's."""
        if self._closed:
            raise CurlError(pycurl.E_FAILED_INIT, "the client is closed")
        fut: asyncio.Future[tuple[int, bytes, str | None]] = self._loop.create_future()
        self._start(method, url, headers, body, fresh, timeout).fut = fut
        return fut

    def request_done(self, method: str, url: str, headers: list[str], body: bytes | None,
                     done: Callable[[tuple[int, bytes, str | None] | CurlError], None], *,
                     timeout: float | None = None) -> None:
        """:meth:`request` with no future: ``done`` is called with the answer ``(status, body,
        Retry-After)`` or the :class:`CurlError` as soon as the transfer ends (from the loop
        callback that reaps it; :meth:`close` calls it with its error too). For a caller that
        awaits nothing (the event recorder's POSTs): no future, no ``call_soon`` of its
        callbacks per request. An exception ``done`` raises goes to the loop's exception handler."""
        if self._closed:
            raise CurlError(pycurl.E_FAILED_INIT, "the client is closed")
        self._start(method, url, headers, body, False, timeout).done = done

    def _start(self, method: str, url: str, headers: list[str], body: bytes | None, fresh: bool,
               timeout: float | None) -> _Transfer:
        """Set up a (reused) handle for one request and add it to the multi handle."""
        c, t = self._handle()
        t.fresh = fresh
        if fresh:
            c.setopt(pycurl.FRESH_CONNECT, 1)
        c.setopt(pycurl.URL, url)
        timeout_ms = self._timeout_ms if timeout is None else max(1, min(self._timeout_ms, int(timeout * 1000)))
        if t.timeout_ms != timeout_ms:
            c.setopt(pycurl.TIMEOUT_MS, timeout_ms)
            t.timeout_ms = timeout_ms
        if t.headers is not headers:
            c.setopt(pycurl.HTTPHEADER, headers)
            t.headers = headers
        kind = (method, body is not None)
        if kind != t.kind:  # the method options of a reused handle stay as its last request set them
            if method == "GET":
                c.setopt(pycurl.HTTPGET, 1)
                c.setopt(pycurl.CUSTOMREQUEST, None)
            elif method == "POST":
                c.setopt(pycurl.POSTFIELDS, body or b"")
                c.setopt(pycurl.CUSTOMREQUEST, None)
            else:
                if body is not None:
                    c.setopt(pycurl.POSTFIELDS, body)
                else:
                    c.setopt(pycurl.HTTPGET, 1)
                c.setopt(pycurl.CUSTOMREQUEST, method)
            t.kind = kind
        elif body is not None or method == "POST":
            c.setopt(pycurl.POSTFIELDS, body or b"")
        self._active[c] = t
        self.requests += 1
        self._multi.add_handle(c)  # libcurl asks for a timeout of 0: the transfer starts from the loop
        return t

    def abort(self, fut: asyncio.Future[Any]) -> None:
        """Stop the transfer of ``fut`` (its caller was cancelled): the handle leaves the multi
        handle (HTTP/2: the stream is reset; HTTP/1.1: the connection is closed)."""
        for c, t in self._active.items():
            if t.fut is fut:
                self._multi.remove_handle(c)
                del self._active[c]
                del self._state[c]
                c.close()  # not reused: a half-done transfer's state goes with it
                return

    def close(self) -> None:
        """Fail the transfers under way, close every handle and the connections."""
        if self._closed:
            return
        self._closed = True
        done = []
        for c, t in list(self._active.items()):
            self._multi.remove_handle(c)
            if t.fut is not None and not t.fut.done():
                t.fut.set_exception(CurlError(pycurl.E_ABORTED_BY_CALLBACK, "the client is closed"))
            if t.done is not None:
                done.append(t.done)
            t.fut = t.done = None
            c.close()
        self._active.clear()
        for c in self._free:
            c.close()
        self._free.clear()
        self._state.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_soon = False
        for fd, what in list(self._fds.items()):
            if what & pycurl.POLL_IN:
                self._loop.remove_reader(fd)
            if what & pycurl.POLL_OUT:
                self._loop.remove_writer(fd)
        self._fds.clear()
        self._multi.close()
        for cb in done:
            self._call_done(cb, CurlError(pycurl.E_ABORTED_BY_CALLBACK, "the client is closed"))
