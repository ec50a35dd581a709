"""The box's Kubernetes-compatible API server (aiohttp) over :class:`~kubesched.apiserver.storage.Store`.

:class:`APIServer` is the HTTP server and its filter chain (``staging/src/k8s.io/apiserver/pkg/server``:
max-in-flight, authentication, impersonation, authorization, retry-after at shutdown, group commit
before answering) and routing. What it serves lives in the modules upstream's apiserver splits it
into, each a layer of the class:

- :mod:`~kubesched.apiserver.registry` — the generic registry store (create, update, delete,
  graceful deletion, finalizers, strategies, admission, CRDs, namespaces); controllers write
  through it, not through the server;
- :mod:`~kubesched.apiserver.handlers` — the REST handlers (decoding, responses, get/create/
  update/patch/apply/delete); :mod:`~kubesched.apiserver.listwatch` — list and watch;
- :mod:`~kubesched.apiserver.subresources` — binding, eviction, scale;
- :mod:`~kubesched.apiserver.discovery` — discovery and OpenAPI;
- :mod:`~kubesched.apiserver.authn` / :mod:`~kubesched.apiserver.authz` — authentication,
  authorization, impersonation and the review APIs.

Routing: ``/api/v1/...`` and ``/apis/<group>/<version>/...`` with
``[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``. Every error is an upstream ``Status``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, cast

from aiohttp import web

from kubesched.apiserver import lean
from kubesched.apiserver import resources as res
from kubesched.apiserver.authn import PUBLIC_PATHS, Authentication
from kubesched.apiserver.discovery import VERSION_INFO, Discovery
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.faults import Faults
from kubesched.apiserver.handlers import MAX_REQUEST_BODY_BYTES, Route, json_response
from kubesched.apiserver.listwatch import ListWatch
from kubesched.apiserver.registry import SYSTEM_NAMESPACES, now_rfc3339
from kubesched.apiserver.storage import RequestTooLarge, StorageError, Store
from kubesched.apiserver.subresources import Subresources
from kubesched.features import FeatureGate

__all__ = ["SERVING_GC_THRESHOLD", "SYSTEM_NAMESPACES", "VERSION_INFO", "APIServer", "now_rfc3339"]

log = logging.getLogger("kubesched.apiserver")


#: ``http.Server.IdleTimeout`` of kube-apiserver's secure serving (``server/secure_serving.go``): 90 s.
IDLE_TIMEOUT = 90.0


#: ``http.DefaultMaxHeaderBytes``: how long a request line or header may be (1 MiB)
MAX_HEADER_BYTES = 1 << 20


SERVING_GC_THRESHOLD = (50_000, 20, 100)
"""``gc.set_threshold`` of a serving box after :meth:`APIServer.freeze_startup_heap` (Python's default
``(700, 10, 10)``). Under ``benchmarks/live.py --nodes 5000 --pods 10000`` the default thresholds ran
257 collections that freed 232 objects in 0.74 of 22 CPU-s; with these, 2 young collections, 0.07 s.
Young cycles are still freed within ~50,000 allocations, older ones at the rarer full collections."""


SHUTDOWN_TIMEOUT = 0.5
"""Seconds aiohttp waits for running handlers at stop (then again after cancelling them)."""


class APIServer(Authentication, Subresources, ListWatch, Discovery):
    """The API server: ``make_app()`` for aiohttp, ``start(host, port)`` / ``stop()`` to serve.

    ``token``: required bearer token (None = no authentication). ``compaction_window``: how
    many recent revisions the periodic compactor keeps (every ``compaction_interval`` s).
    ``on_started``: callables run after start with the server (e.g. simulated kubelets).
    ``event_ttl``: seconds after which Events are removed (kube-apiserver ``--event-ttl``, 1 h).
    ``features``: the API server's ``--emulated-version`` and ``--feature-gates`` (None: v1.37
    defaults) — which release's API schemas decode and are served (``/openapi``, ``/version``'s
    ``emulationMinor``), which gated fields are dropped or merged on write
    (:mod:`kubesched.apiserver.admission`), and whether a binding clears
    ``status.nominatedNodeName`` (ClearingNominatedNodeNameAfterBinding, on since 1.35).
    Raises ValueError for an unknown ``authorization_mode``.
    """

    def __init__(self, store: Store, *, token: str | None = None, faults: Faults | None = None,
                 compaction_window: int = 10000, compaction_interval: float = 60.0,
                 bookmark_interval: float = 60.0, min_request_timeout: float = 1800.0,
                 admission: bool = True, event_ttl: float = 3600.0, max_requests_inflight: int = 400,
                 max_mutating_requests_inflight: int = 200, features: FeatureGate | None = None,
                 idle_timeout: float = IDLE_TIMEOUT, anonymous_auth: bool = True,
                 authorization_mode: str = "RBAC") -> None:
        self._init_authz(authorization_mode)
        self._init_authn(token, anonymous_auth)
        super().__init__(store, faults=faults, compaction_window=compaction_window,
                         compaction_interval=compaction_interval, admission=admission, event_ttl=event_ttl,
                         features=features)
        self._init_list_watch(bookmark_interval, min_request_timeout)
        #: seconds a connection may stay idle, or trickle an incomplete first request, before it is
        #: closed (kube-apiserver: IdleTimeout 90 s; ReadHeaderTimeout 32 s is covered by the same bound)
        self.idle_timeout = idle_timeout
        emu, mcv = self.features.emulated_version, self.features.min_compatibility_version
        self.version_info = {**VERSION_INFO, "emulationMajor": str(emu[0]), "emulationMinor": str(emu[1]),
                             "minCompatibilityMajor": str(mcv[0]), "minCompatibilityMinor": str(mcv[1])}
        #: kube-apiserver ``--max-requests-inflight`` / ``--max-mutating-requests-inflight``
        #: (``filters/maxinflight.go``): beyond them a request is answered 429 at once; 0 = no limit.
        #: Long-running requests (watches) are not counted.
        self.max_requests_inflight = max_requests_inflight
        self.max_mutating_requests_inflight = max_mutating_requests_inflight
        self._inflight = [0, 0]  # read-only, mutating
        self._runner: web.ServerRunner | None = None
        self.port = 0
        self.host = "127.0.0.1"
        self.scheme = "http"
        self.pki: Any = None  #: the serving PKI when started through the launcher/CLI with TLS
        self.kubeconfig_path: Any = None

    def make_server(self, **kwargs: Any) -> web.Server:
        """aiohttp's low-level server with :meth:`_handle` as its one handler (``kwargs``: the
        connection's options, :class:`aiohttp.web_protocol.RequestHandler`'s). Every path is the
        API's, so there is no router and no middleware chain: one dispatch per request, as
        upstream's handler chain is one ``http.Handler`` (``server/handler.go``)."""
        loop = asyncio.get_running_loop()

        def request_factory(message: Any, payload: Any, protocol: Any, writer: Any,
                            task: asyncio.Task[None]) -> web.Request:
            # the body limit (handlers/rest.go limitedReadBody): request.read() raises 413 beyond it
            return web.Request(message, payload, protocol, writer, task, loop,
                               client_max_size=MAX_REQUEST_BODY_BYTES)

        # the factory makes every request a web.Request (aiohttp types the handler for BaseRequest)
        handler = cast("Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]", self._handle)
        # the lean path (lean.py: a complete request on an idle connection answered inside
        # data_received, no Task per request) unless KUBESCHED_BOX_HTTP=aiohttp
        server_class = lean.LeanServer if lean.lean_enabled() else web.Server
        return server_class(handler, request_factory=request_factory, **kwargs)

    async def start(self, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None) -> int:
        """Serve on ``host:port`` (0 = ephemeral; HTTPS with ``ssl_context``) in the running loop;
        returns the bound port."""
        self.scheme = "https" if ssl_context is not None else "http"
        self.loop = asyncio.get_running_loop()
        self.faults._bind(self.loop, self.compact_now, self.close_all_watches)
        # an idle keep-alive connection is closed after 90 s, as kube-apiserver's http.Server IdleTimeout
        web_server = self.make_server(access_log=None, keepalive_timeout=self.idle_timeout,
                                      # Go's http.Server DefaultMaxHeaderBytes (1 MiB): long URLs and headers
                                      # are read, not refused at aiohttp's 8 KiB line limit
                                      max_line_size=MAX_HEADER_BYTES, max_field_size=MAX_HEADER_BYTES)
        self._runner = web.ServerRunner(web_server, handle_signals=False, shutdown_timeout=SHUTDOWN_TIMEOUT)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, reuse_address=True, ssl_context=ssl_context)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        self.host = host
        self._spawn(self._compactor())
        self._resume_graceful_deletions()
        for e in self.store.list("namespaces"):  # finish namespace deletions interrupted by a restart
            if e.obj()["metadata"].get("deletionTimestamp"):
                self.loop.call_soon(self._finalize_namespace, e.obj()["metadata"]["name"])
        for fn in self.on_started:
            r = fn(self)
            if asyncio.iscoroutine(r):
                await r
        return self.port

    def freeze_startup_heap(self) -> None:
        """Move what start-up made (modules, the API release's schema definitions, the loaded
        store) out of the cyclic collector's reach (``gc.freeze``): each full collection then
        walks only what serving made since (~0.1 CPU-s per full collection in a 5,000-node box
        otherwise). For a process that serves one box until it exits (``kubesched apiserver``):
        frozen objects are still freed by reference counting, but cycles among them are never
        collected.

        Then the collector's thresholds become :data:`SERVING_GC_THRESHOLD`."""
        from kubesched.api import schemas

        schemas.definitions(self.features.emulated_version)  # loaded by the first write otherwise
        gc.collect()
        gc.freeze()
        gc.set_threshold(*SERVING_GC_THRESHOLD)

    async def stop(self) -> None:
        """Close watches, stop timers and background tasks, stop serving (the store stays open).

        Bounded: from the first line on every request (new, or on a kept-alive or late-accepted
        connection) is answered 429 ``Retry-After: 1`` with ``Connection: close``; open watch
        streams end at once (without a closing bookmark); aiohttp waits at most
        ``SHUTDOWN_TIMEOUT`` s per phase for handlers still running, then cancels them.
        """
        self._stopping = True
        self.close_all_watches()
        await self._stop_background()
        if self._runner is not None:
            web_server = self._runner.server
            await self._runner.cleanup()
            self._runner = None
            # connections registered after the runner's shutdown (a TLS handshake that ends late)
            for handler in list(getattr(web_server, "_connections", None) or ()):
                handler.force_close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        """Every request: the filter chain (shutdown, max-in-flight, storage health, then
        :meth:`_guarded`), then the group commit before the answer."""
        if self._stopping:
            return self._shutting_down_response(request)
        slot = self._inflight_slot(request)
        if slot is not None:
            limit = (self.max_requests_inflight, self.max_mutating_requests_inflight)[slot]
            if limit and self._inflight[slot] >= limit:
                err = APIError.too_many_requests("Too many requests, please try again later.", retry_after=1)
                return json_response(err.status, 429, err.headers)
            self._inflight[slot] += 1
        try:
            if self.store.failure is not None:  # its memory may hold writes that never reached the disk
                err = APIError.internal(f"storage failed: {self.store.failure}")
                return json_response(err.status, 500)
            if request.headers.get("Expect") is not None:
                await self._expect_continue(request)
            resp = await self._guarded(request)
            if self.store.unsynced and not resp.prepared:
                # group commit: no answer before every write it may reflect (its own, or others' it
                # read) is committed — a write is acknowledged only after the fsync that covers it
                try:
                    await self.store.sync()
                except StorageError as e:
                    err = APIError.internal(str(e))
                    return json_response(err.status, 500)
            return resp
        finally:
            if slot is not None:
                self._inflight[slot] -= 1

    @staticmethod
    def _inflight_slot(request: web.Request) -> int | None:
        """0 for a read-only request, 1 for a mutating one, None for a long-running request (a
        watch) or a health check, which ``WithMaxInFlightLimit`` does not count."""
        if request.query.get("watch") in ("true", "1") or "/watch/" in request.path:
            return None
        if request.path in PUBLIC_PATHS:
            return None
        return 0 if request.method in ("GET", "HEAD", "OPTIONS") else 1

    @staticmethod
    async def _expect_continue(request: web.Request) -> None:
        """``Expect: 100-continue`` (curl sends it with a large body): the interim ``100 Continue``
        before the body is read, as Go's server answers (``net/http`` expectContinueReader); any
        other expectation is 417 (``HTTPExpectationFailed``)."""
        expect = request.headers.get("Expect", "")
        if request.version != (1, 1):
            return
        if expect.lower() != "100-continue":
            raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0  # the interim answer is not the response's
        await request.writer.drain()

    async def _guarded(self, request: web.Request) -> web.StreamResponse:
        try:
            self._authenticate(request)
            await self.faults.before_request()
            if self._stopping:  # held (latency/pause) until the server began to stop
                return self._shutting_down_response(request)
            resp: web.StreamResponse = await self._dispatch(request)
            warnings = request.get("warnings")
            if warnings and not resp.prepared:
                for w in warnings:
                    resp.headers.add("Warning", w)
            return resp
        except APIError as e:
            return json_response(e.status, e.code, e.headers)
        except RequestTooLarge as e:  # etcd's limit on one write (storage.MAX_REQUEST_BYTES)
            err = APIError.unknown(500, str(e))
            return json_response(err.status, err.code)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except web.HTTPRequestEntityTooLarge:  # the body limit (handlers/rest.go limitedReadBody)
            err = APIError.entity_too_large(f"limit is {MAX_REQUEST_BODY_BYTES}")
            return json_response(err.status, err.code)
        except web.HTTPException:
            raise
        except Exception as e:  # a bug: answer as upstream would, keep serving
            log.exception("internal error on %s %s", request.method, request.path)
            err = APIError.internal(str(e) or type(e).__name__)
            return json_response(err.status, 500)

    @staticmethod
    def _shutting_down_response(request: web.Request) -> web.StreamResponse:
        """A request to a stopping server: 429 + ``Retry-After: 1`` + ``Connection: close``, as
        kube-apiserver with ``--shutdown-send-retry-after`` answers during graceful termination
        (``staging/src/k8s.io/apiserver/pkg/server/filters/with_retry_after.go``): the client
        reconnects (to the restarted server) instead of reusing a connection into the old one,
        whose store may already be closed."""
        err = APIError.too_many_requests("The apiserver is shutting down, please try again later.",
                                         retry_after=1)
        resp = json_response(err.status, 429, err.headers)
        resp.force_close()
        return resp

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        parts = [p for p in path.split("/") if p]
        if not parts:
            return json_response({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz",
                                             "/openapi/v2", "/openapi/v3", "/version"]})
        head = parts[0]
        if head in ("healthz", "livez", "readyz") and len(parts) == 1:
            if request.method not in ("GET", "HEAD"):  # a health check is GET-only (405, as Go's mux)
                return web.Response(status=405, text="Method Not Allowed\n", headers={"Allow": "GET, HEAD"})
            return web.Response(text="ok")
        if head == "version" and len(parts) == 1:
            return json_response(self.version_info)
        if head == "openapi":
            return self._openapi(request, parts[1:])
        if head == "api":
            if len(parts) == 1:
                return json_response(self._api_versions(request))
            if parts[1] != "v1":
                raise APIError.no_route()
            group, version, rest = "", "v1", parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                return json_response(self._api_group_list())
            if len(parts) == 2:
                return json_response(self._api_group(parts[1]))
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise APIError.no_route()
        if not rest:
            return json_response(self._resource_list(group, version))
        if rest[0] == "watch" and len(rest) > 1:  # deprecated /api/v1/watch/... paths
            route = self._route(group, version, rest[1:])
            if request.method != "GET" or route.sub:
                raise APIError.method_not_allowed()
            if route.name is not None:  # watch of one object = a name field selector
                return await self._watch(request, route, name=route.name)
            return await self._watch(request, route)
        route = self._route(group, version, rest)
        return await self._serve(request, route)

    def _route(self, group: str, version: str, rest: list[str]) -> Route:
        ns: str | None = None
        if rest[0] == "namespaces" and len(rest) >= 3 and not (group == "" and rest[2] in ("status", "finalize")
                                                               and len(rest) == 3):
            ns = rest[1]
            rest = rest[2:]
        info = self._find_info(group, version, rest[0])
        if info is None or not self.served(info):
            raise APIError.no_route()
        if ns is not None and not info.namespaced:
            raise APIError.no_route()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3 or (sub and sub not in info.subresources):
            raise APIError.no_route()
        return Route(info, ns, name, sub)

    async def _serve(self, request: web.Request, r: Route) -> web.StreamResponse:
        m = request.method
        if r.info.kind in res.REVIEW_KINDS:  # create-only: 405 for anything else, as upstream's REST storage
            if m != "POST" or r.name is not None:
                raise APIError.method_not_allowed()
            return await self._review(request, r)
        if r.info.plural == "bindings":  # POST /api/v1/namespaces/{ns}/bindings: the pod named in the body
            if m != "POST" or r.name is not None or r.ns is None:
                raise APIError.method_not_allowed()
            return await self._bind(request, r)
        if r.name is None:
            if m == "GET":
                await self._wait_fresh(request)
                if request.query.get("watch") in ("1", "true", "True"):
                    return await self._watch(request, r)
                return self._list(request, r)
            if m == "POST":
                if r.info.namespaced and r.ns is None:
                    raise APIError.method_not_allowed()
                return await self._create(request, r)
            if m == "DELETE":
                return await self._delete_collection(request, r)
            raise APIError.method_not_allowed()
        if r.sub == "binding":
            if m != "POST":
                raise APIError.method_not_allowed()
            return await self._bind(request, r)
        if r.sub == "eviction":
            if m != "POST":
                raise APIError.method_not_allowed()
            return await self._evict(request, r)
        if r.sub == "scale":
            return await self._scale(request, r)
        if m == "GET":
            entry = self._get_entry(r)
            return self._object_response(request, r.info, entry.data)
        if m == "PUT":
            return await self._put(request, r)
        if m == "PATCH":
            return await self._patch(request, r)
        if m == "DELETE":
            if r.sub:
                raise APIError.method_not_allowed()
            return await self._delete(request, r)
        raise APIError.method_not_allowed()
