"""The box's lean HTTP/1.1 request path: a request answered inside ``data_received``.

aiohttp's server (:class:`aiohttp.web_protocol.RequestHandler`) hands every parsed request to
a long-lived task per connection (``start()``), which wakes on a future, creates an
``asyncio.Task`` per request (``_handle_request``: the handler, then ``finish_response``) and
awaits it — three loop callbacks and a Task for each request, about a third of a trivial
request's Python calls in the box (benchmarks/README.md, "box3, session 9").

:class:`LeanRequestHandler` keeps aiohttp's protocol, its C parser (llhttp) and its request and
response objects, and changes only who runs a request: when the connection is idle (aiohttp's
``start()`` waits for a message, nothing queued, no earlier request still running) and a parsed
request is complete (its whole body arrived, no ``Expect``, no upgrade, not a watch), the same
``_handle_request`` coroutine is stepped at once inside ``data_received``. Most requests never
suspend (an in-memory box answers from memory), so the answer is written before
``data_received`` returns: no future, no Task, no wake-up. A request that does suspend (a group
commit's fsync, a fault's latency, a slow reader's back-pressure) continues in a Task from where
it stopped; messages that arrive meanwhile wait behind it, so pipelined answers keep their order.
Everything else — watches, ``Expect: 100-continue``, bodies still arriving, parse errors, upgrades,
or any request while aiohttp's own loop is busy — goes to aiohttp's queue exactly as before.

What aiohttp's ``start()`` does after a request is done the same way here (keep-alive timer and
``Connection: close``, the payload closed, a client that went away). Shutdown waits for a running
request through aiohttp's own ``_request_in_progress`` bookkeeping, which ``_handle_request``
keeps.

Which path serves is :data:`LEAN_ENV` (``KUBESCHED_BOX_HTTP``: ``lean``, the default, or
``aiohttp``, aiohttp's own request path, the way back); :func:`available` says whether the installed
aiohttp has the internals this relies on (else aiohttp's own path serves whatever was asked).
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Coroutine, Generator
from typing import Any

from aiohttp import web, web_protocol
from aiohttp.helpers import rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE, HttpVersion10, HttpVersion11
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.http_writer import StreamWriter, _serialize_headers
from aiohttp.streams import EMPTY_PAYLOAD, StreamReader

__all__ = ["LEAN_ENV", "LeanRequestHandler", "LeanServer", "available", "lean_enabled"]

#: the environment variable choosing the box's HTTP path: ``lean`` (default) or ``aiohttp``
LEAN_ENV = "KUBESCHED_BOX_HTTP"

_NEEDED = ("_handle_request", "_process_keepalive", "_pause_reading_for_buffer", "_resume_reading_if_drained")


def available() -> bool:
    """Whether aiohttp's ``RequestHandler`` has the internals the lean path drives (checked on the
    installed version: its per-request coroutine, keep-alive timer, message queue and parser)."""
    rh = web_protocol.RequestHandler
    slots = set(getattr(rh, "__slots__", ()))
    reader_slots = set(getattr(StreamReader, "__slots__", ()))
    return (all(hasattr(rh, n) for n in _NEEDED)
            and {"_messages", "_waiter", "_max_msg_queue_size", "_msg_queue_resume_size"} <= slots
            and {"_buffer", "_buffer_offset", "_size", "_cursor", "_high_water", "_exception"} <= reader_slots
            and "_read_bytes" in web.BaseRequest.ATTRS
            and hasattr(web_protocol, "_ErrInfo") and hasattr(web_protocol, "_PAYLOAD_ACCESS_ERROR"))


def lean_enabled() -> bool:
    """:func:`available`, unless ``KUBESCHED_BOX_HTTP`` asks for ``aiohttp`` (any other value, or
    none, is the lean path)."""
    return os.environ.get(LEAN_ENV, "").strip().lower() != "aiohttp" and available()


class _Resume:
    """Awaiting it continues ``coro``, which suspended on its first step yielding ``first``: the
    Task running it sees the same futures (and cancellation) as if it had run ``coro`` from the
    start."""

    __slots__ = ("_coro", "_first")

    def __init__(self, coro: Coroutine[Any, Any, Any], first: Any) -> None:
        self._coro = coro
        self._first = first

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, out = self._coro, self._first
        self._first = None
        while True:
            try:
                value = yield out
            except BaseException as exc:  # noqa: BLE001 - thrown in by the Task (cancellation): passed on
                try:
                    out = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    out = coro.send(value)
                except StopIteration as stop:
                    return stop.value


#: ``_lean_task`` while an inline request's first step runs (no Task yet)
_RUNNING: Any = object()


def _body_now(payload: Any) -> bytes | None:
    """The whole body of a complete request, taken from its payload at once — what
    ``request.read()`` would return after two ``readany()`` rounds and a transport resume — or None
    to leave it to ``read()``: a payload that failed, holds a partly read chunk, or grew past the
    size at which it pauses the transport (then its read must resume it)."""
    if payload is EMPTY_PAYLOAD:
        return b""
    if payload._exception is not None or payload._buffer_offset or payload._size > payload._high_water:
        return None
    buf = payload._buffer
    body: bytes = buf[0] if len(buf) == 1 else b"".join(buf)
    buf.clear()
    payload._size = 0
    payload._cursor += len(body)
    return body


async def _continue(coro: Coroutine[Any, Any, Any], first: Any) -> Any:
    return await _Resume(coro, first)


class LeanRequestHandler(web_protocol.RequestHandler):
    """aiohttp's HTTP/1.1 protocol, answering idle connections' complete requests inline (see the
    module docstring). Same constructor as :class:`aiohttp.web_protocol.RequestHandler`."""

    __slots__ = ("_held", "_lean_task")

    def __init__(self, manager: web.Server, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        #: the inline request that suspended, running on as a Task
        self._lean_task: asyncio.Task[None] | None = None
        #: requests parsed while it runs, in arrival order
        self._held: deque[Any] = deque()

    def data_received(self, data: bytes) -> None:
        if self._force_close or self._close or self._payload_parser is not None or self._upgraded:
            super().data_received(data)
            return
        parser = self._parser
        assert parser is not None
        messages: Any
        try:
            messages, upgraded, tail = parser.feed_data(data)
        except HttpProcessingError as exc:
            messages = [(web_protocol._ErrInfo(status=400, exc=exc, message=exc.message), EMPTY_PAYLOAD)]
            upgraded, tail = False, b""
        held = self._held
        for item in messages:
            self._request_count += 1
            if held or self._lean_task is not None:  # behind a request still running (or re-entered)
                held.append(item)
            else:
                self._dispatch_message(item)
        if held and self._lean_task is None:
            self._flush_held()
        if not self._buffer_paused and len(self._messages) + len(held) >= self._max_msg_queue_size:
            self._pause_reading_for_buffer()
        self._upgraded = upgraded
        if upgraded and tail:
            self._message_tail = tail

    def _dispatch_message(self, item: Any) -> None:
        """Serve ``item`` (message, payload) inline if the connection is idle and it qualifies,
        else queue it for aiohttp's ``start()``."""
        msg, payload = item
        waiter = self._waiter
        if (not self._messages and waiter is not None and not waiter.done() and not self._force_close
                and not isinstance(msg, web_protocol._ErrInfo) and payload.is_eof() and not msg.upgrade
                and "watch" not in msg.path and "Expect" not in msg.headers):
            self._serve_inline(msg, payload)
            return
        self._messages.append(item)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _serve_inline(self, msg: Any, payload: Any) -> None:
        """``start()``'s body for one request, with ``_handle_request`` stepped here: done at once,
        or continued in a Task if it suspends."""
        parser = self._parser
        manager = self._manager
        assert parser is not None and manager is not None
        assert self._request_factory is not None and self._request_handler is not None
        parser.message_consumed()
        manager.requests_count += 1
        loop = self._loop
        start = loop.time() if self._logging_enabled else None
        request = self._request_factory(msg, payload, self, StreamWriter(self, loop),
                                        self._task_handler)  # type: ignore[arg-type]
        body = _body_now(payload)
        if body is not None:
            request._read_bytes = body
        coro = self._handle_request(request, start, self._answer)
        # while the request runs here, a re-entered data_received (a payload read resumes the
        # transport, which parses what it holds) holds what it parses behind this request
        self._lean_task = _RUNNING
        try:
            first = coro.send(None)
        except StopIteration as stop:
            self._lean_task = None
            resp, reset = stop.value
            self._finished(request, payload, resp, reset)
            return
        except ConnectionError:
            self._disconnected(request)
            return
        except Exception as exc:  # noqa: BLE001 - as start(): logged, the connection closed
            self._crashed(request, exc)
            return
        self._lean_task = loop.create_task(self._run_on(coro, first, request, payload))

    async def _answer(self, request: web.BaseRequest) -> web.StreamResponse:
        """The server's handler, then its response written as one ``transport.write`` of bytes
        built here when it is a plain body (:meth:`_write_plain`); aiohttp's ``finish_response``
        then finds it sent. Back-pressure as aiohttp's writer: a paused transport is drained first."""
        assert self._request_handler is not None
        resp = await self._request_handler(request)
        if self._write_plain(request, resp) and self._paused:
            try:
                await self._drain_helper()
            except ConnectionError:
                self.force_close()
        return resp

    def _write_plain(self, request: web.BaseRequest, resp: web.StreamResponse) -> bool:
        """Write ``resp`` if it is a :class:`aiohttp.web.Response` with a non-empty bytes body and a
        body-bearing status, no cookies, compression or chunking: the head aiohttp's ``prepare``
        would write (``Content-Length``, ``Content-Type`` default, ``Date``, ``Server``,
        ``Connection``, in its order), serialized by aiohttp's own header writer, and the body, in one
        write. Returns False (nothing written) for anything else, which aiohttp then writes."""
        if (type(resp) is not web.Response or resp._payload_writer is not None or resp._eof_sent
                or resp._cookies or resp._compression or resp._chunked or self._logging_enabled
                or getattr(request, "_match_info", None) is not None):
            return False
        body = resp._body
        status = resp._status
        method = request.method
        if (type(body) is not bytes or not body or status < 200 or status in (204, 304)
                or method in ("HEAD", "CONNECT")):
            return False
        headers = resp._headers
        transport = self.transport
        if ("Content-Length" in headers or "Transfer-Encoding" in headers or transport is None
                or transport.is_closing()):
            return False
        keep_alive = resp._keep_alive
        if keep_alive is None:
            keep_alive = request.keep_alive
        resp._keep_alive = keep_alive
        headers["Content-Length"] = str(len(body))
        headers.setdefault("Content-Type", "application/octet-stream")
        if "Date" not in headers:
            headers["Date"] = rfc822_formatted_time()
        headers.setdefault("Server", SERVER_SOFTWARE)
        version = request.version
        if "Connection" not in headers:
            if keep_alive:
                if version == HttpVersion10:
                    headers["Connection"] = "keep-alive"
            elif version == HttpVersion11:
                headers["Connection"] = "close"
        head = _serialize_headers(f"HTTP/{version[0]}.{version[1]} {status} {resp._reason}", headers)
        transport.write(head + body)
        resp._eof_sent = True
        resp._body_length = len(body)
        return True

    async def _run_on(self, coro: Coroutine[Any, Any, Any], first: Any, request: web.BaseRequest,
                      payload: Any) -> None:
        """The rest of a suspended inline request, then the requests held behind it."""
        try:
            resp, reset = await _continue(coro, first)
        except ConnectionError:
            self._disconnected(request)
            return
        except asyncio.CancelledError:
            self._lean_task = None
            request._task = None  # type: ignore[assignment]
            self.force_close()
            raise
        except Exception as exc:  # noqa: BLE001 - as start(): logged, the connection closed
            self._crashed(request, exc)
            return
        self._lean_task = None
        self._finished(request, payload, resp, reset)
        self._flush_held()

    def _disconnected(self, request: web.BaseRequest) -> None:
        """The client went away while its inline request ran: as aiohttp's ``start``."""
        self._lean_task = None
        self.log_debug("Ignored premature client disconnection")
        self._end_connection(request)

    def _crashed(self, request: web.BaseRequest, exc: BaseException) -> None:
        """The handler raised: logged and the connection closed, as aiohttp's ``start``."""
        self._lean_task = None
        self.log_exception("Unhandled exception", exc_info=exc)
        request._task = None  # type: ignore[assignment]
        self.force_close()

    def _flush_held(self) -> None:
        held = self._held
        while held and self._lean_task is None and not self._force_close:
            self._dispatch_message(held.popleft())
        if self._buffer_paused and len(self._messages) + len(held) <= self._msg_queue_resume_size:
            self._resume_reading_if_drained()

    def _finished(self, request: web.BaseRequest, payload: Any, resp: web.StreamResponse, reset: bool) -> None:
        """After a request: what ``start()`` does (keep-alive or close, the payload closed)."""
        request._task = None  # type: ignore[assignment]
        if reset:
            self.log_debug("Ignored premature client disconnection 2")
            self._end_connection(request)
            return
        self._keepalive = bool(resp.keep_alive)
        payload.set_exception(web_protocol._PAYLOAD_ACCESS_ERROR)
        if self._keepalive and not self._close and not self._force_close:
            loop = self._loop
            close_time = loop.time() + self._keepalive_timeout
            self._next_keepalive_close_time = close_time
            if self._keepalive_handle is None:
                self._keepalive_handle = loop.call_at(close_time, self._process_keepalive)
        else:
            self._end_connection(request)

    def _end_connection(self, request: web.BaseRequest) -> None:
        """``start()`` leaving its loop: the transport closed once what was written is sent."""
        request._task = None  # type: ignore[assignment]
        self.force_close()

    async def shutdown(self, timeout: float | None = 15.0) -> None:
        """aiohttp's shutdown (it waits for a running request, inline ones included), then a
        suspended inline request still running is cancelled, as aiohttp cancels its handler task."""
        await super().shutdown(timeout)
        task = self._lean_task
        if isinstance(task, asyncio.Task) and not task.done():
            task.cancel()


class LeanServer(web.Server):
    """:class:`aiohttp.web.Server` whose connections are :class:`LeanRequestHandler`."""

    def __call__(self) -> web_protocol.RequestHandler:
        return LeanRequestHandler(self, loop=self._loop, **self._kwargs)
