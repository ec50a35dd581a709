"""The box's Kubernetes-compatible REST API (aiohttp) over :class:`~kubesched.apiserver.storage.Store`.

Follows kube-apiserver's generic registry and handlers
(``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/{get,create,update,patch,delete,watch}.go``,
``pkg/registry/generic/registry/store.go``) and the pod registry
(``pkg/registry/core/pod/storage/storage.go``: binding, eviction; ``pkg/registry/core/pod/strategy.go``:
graceful deletion). Objects are plain JSON dicts; stored and answered as bytes (orjson).

Routing: ``/api/v1/...`` and ``/apis/<group>/<version>/...`` with
``[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]``. Every error is an upstream ``Status``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import bisect
import dataclasses
import hashlib
import hmac
import json
import logging
import random
import ssl
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from aiohttp import web

from kubesched.api import podgroups, schemas, strategy
from kubesched.api.hashing import ALPHANUMS
from kubesched.api.labels import Selector
from kubesched.apiserver import apply as ssa
from kubesched.apiserver import crd as crdmod
from kubesched.apiserver import impersonation, protobuf, rbac
from kubesched.apiserver import resources as res
from kubesched.apiserver.errors import APIError, status_success
from kubesched.apiserver.eventsconv import core_to_events, events_to_core
from kubesched.apiserver.faults import Faults
from kubesched.apiserver.gc import deletion_finalizers
from kubesched.apiserver.resources import ResourceInfo
from kubesched.apiserver.selectors import (
    FieldSelector,
    SelectorParseError,
    parse_field_selector,
    parse_label_selector,
)
from kubesched.apiserver.storage import (
    Compacted,
    Conflict,
    Entry,
    Event,
    FutureRevision,
    KeyExists,
    KeyNotFound,
    RequestTooLarge,
    StorageError,
    Store,
)
from kubesched.features import BINARY_VERSION, FeatureGate, default_feature_gate

__all__ = ["SYSTEM_NAMESPACES", "VERSION_INFO", "APIServer", "now_rfc3339"]

log = logging.getLogger("kubesched.apiserver")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")

VERSION_INFO = {
    "major": str(BINARY_VERSION[0]),
    "minor": str(BINARY_VERSION[1]),
    "emulationMajor": str(BINARY_VERSION[0]),
    "emulationMinor": str(BINARY_VERSION[1]),
    "minCompatibilityMajor": str(BINARY_VERSION[0]),
    "minCompatibilityMinor": str(BINARY_VERSION[1] - 1),
    "gitVersion": f"v{BINARY_VERSION[0]}.{BINARY_VERSION[1]}.2-kubesched",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.24.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_JSON = "application/json"
_INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_PUBLIC_PATHS = frozenset(("/healthz", "/livez", "/readyz", "/version"))


_COMPAT: dict[str, Any] = {}


def _compat(name: str) -> Any:
    """The boxcompat module ``kubesched.apiserver.<name>`` or None (imported once)."""
    if name not in _COMPAT:
        import importlib

        try:
            _COMPAT[name] = importlib.import_module(f"kubesched.apiserver.{name}")
        except ImportError:
            _COMPAT[name] = None
    return _COMPAT[name]


def now_rfc3339(delta: float = 0.0) -> str:
    """``metav1.Time`` format: whole seconds, UTC, ``Z``."""
    t = datetime.now(UTC) + timedelta(seconds=delta)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(s: str) -> datetime | None:
    try:
        return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except (ValueError, TypeError):
        return None


def _json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    return web.Response(body=data, status=status, content_type=_JSON, headers=headers)


def _rand_suffix(n: int = 5) -> str:
    # upstream utilrand.String: consonants and digits without vowels/ambiguous characters
    return "".join(random.choice(ALPHANUMS) for _ in range(n))


def _matcher(lsel: Selector, fsel: FieldSelector) -> Callable[[Entry], bool] | None:
    if lsel.is_empty and fsel.empty:
        return None
    if fsel.empty:
        return lambda e: lsel.matches(e.labels)
    if lsel.is_empty:
        return lambda e: fsel.matches(e.fields)
    return lambda e: lsel.matches(e.labels) and fsel.matches(e.fields)



#: kube-apiserver's ``MaxRequestBodyBytes`` (``server/config.go``: 3 MiB): a larger write body is
#: answered 413 "Request entity too large: limit is 3145728" (``handlers/rest.go`` limitedReadBody).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
#: ``http.Server.IdleTimeout`` of kube-apiserver's secure serving (``server/secure_serving.go``): 90 s.
IDLE_TIMEOUT = 90.0
#: ``http.DefaultMaxHeaderBytes``: how long a request line or header may be (1 MiB)
MAX_HEADER_BYTES = 1 << 20
#: request body media types the box decodes (besides protobuf): JSON and YAML, as kube-apiserver's serializers
_BODY_MEDIA_TYPES = frozenset(("application/json", "application/yaml", "application/apply-patch+yaml"))


def _unsupported_body(media: str) -> dict[str, Any]:
    """``errors.NewUnsupportedMediaType`` for a write body of an unknown format."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the body of the request was in an unknown format - accepted media types include: "
                       "application/json, application/yaml, application/vnd.kubernetes.protobuf",
            "reason": "UnsupportedMediaType", "details": {}, "code": 415}


def _decode_yaml_body(raw: bytes, json_error: Exception) -> Any:
    """A YAML request body, with the API server's limits: a "billion laughs" document is refused
    before it is expanded (go-yaml's alias limit: 400 ``... yaml: document contains excessive
    aliasing``), and nesting too deep for the decoder is a 400, not a 500."""
    import yaml

    from kubesched.api.yamllimits import EXCESSIVE_ALIASING, excessive_aliasing

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        loader = loader_cls(raw)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if excessive_aliasing(node):
                raise APIError.bad_request(f"the object provided is unrecognized (must be of type JSON or YAML): "
                                           f"error converting YAML to JSON: {EXCESSIVE_ALIASING}")
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except (yaml.YAMLError, RecursionError):
        raise APIError.bad_request(f"the object provided is unrecognized (must be of type "
                                   f"JSON or YAML): {json_error}") from None


#: the user a request acts as when it impersonates one (else the token's admin)
_USER = web.RequestKey("user", rbac.UserInfo)


def _dry_run(request: web.Request, options_kind: str) -> bool:
    """``dryRun`` of a write (``All``, or absent); any other value is the options' validation error
    (metav1 ``ValidateDryRun``: 422 ``CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported
    value: ["Bogus"]: supported values: "All"``, the value as JSON as field.Error renders it), before
    anything is written."""
    values = request.query.getall("dryRun", [])
    if any(v != "All" for v in values):
        shown = json.dumps(values, separators=(",", ":"), ensure_ascii=False)
        msg = f'dryRun: Unsupported value: {shown}: supported values: "All"'
        raise APIError.invalid(options_kind, "meta.k8s.io", "", [("FieldValueNotSupported", "dryRun", msg)])
    return bool(values)


def _resource_version_type_error(obj: Any) -> str | None:
    """The JSON decoder's error for a ``metadata.resourceVersion`` that is not a string, or None."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    rv = md.get("resourceVersion") if isinstance(md, dict) else None
    if rv is None or isinstance(rv, str):
        return None
    kind = "bool" if isinstance(rv, bool) else "number" if isinstance(rv, (int, float)) else \
        "array" if isinstance(rv, list) else "object"
    return f"json: cannot unmarshal {kind} into Go struct field ObjectMeta.metadata.resourceVersion of type string"


def _check_resource_version_type(info: ResourceInfo | tuple[str, str], obj: dict[str, Any]) -> None:
    """The decoder's 400 for a ``metadata.resourceVersion`` that is not a string, before the server
    uses the field (create resets it, update compares it) or writes anything. ``info``: the
    served resource, or (kind, version) of a subresource's body (Binding, Eviction)."""
    err = _resource_version_type_error(obj)
    if err is not None:
        kind, version = info if isinstance(info, tuple) else (info.kind, info.version)
        raise APIError.bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {err}')


class _Route:
    __slots__ = ("info", "name", "ns", "sub")

    def __init__(self, info: ResourceInfo, ns: str | None, name: str | None, sub: str) -> None:
        self.info = info
        self.ns = ns
        self.name = name
        self.sub = sub


class _Watcher:
    """A watch's subscription: events after revision ``after`` (its start), buffered for the stream."""

    __slots__ = ("after", "buf", "closed", "wake")

    def __init__(self, after: int = 0) -> None:
        self.after = after
        self.buf: list[Event] = []
        self.wake = asyncio.Event()
        self.closed = False

    def __call__(self, ev: Event) -> None:
        if ev.rv <= self.after:  # a write in the watch's initial state, published at its group commit
            return
        self.buf.append(ev)
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()


SHUTDOWN_TIMEOUT = 0.5
"""Seconds aiohttp waits for running handlers at stop (then again after cancelling them)."""


def _generate_job_selector(job: dict[str, Any]) -> None:
    """The Job strategy's ``generateSelectorIfNeeded`` (pkg/registry/batch/job/strategy.go:200):
    unless ``spec.manualSelector``, the template gets the ``job-name`` / ``controller-uid`` labels
    (legacy and ``batch.kubernetes.io/`` keys, user values kept) and the selector matches the uid."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") is True:
        return
    md = job.get("metadata") or {}
    template = spec.get("template")
    if not isinstance(template, dict):
        return
    tmeta = template.setdefault("metadata", {})
    if not isinstance(tmeta, dict):
        return
    labels = tmeta.get("labels")
    if not isinstance(labels, dict):
        labels = tmeta["labels"] = {}
    for key in ("job-name", "batch.kubernetes.io/job-name"):
        labels.setdefault(key, md.get("name") or "")
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid"):
        labels.setdefault(key, md.get("uid") or "")
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        sel = spec["selector"] = {}
    ml = sel.get("matchLabels")
    if not isinstance(ml, dict):
        ml = sel["matchLabels"] = {}
    ml.setdefault("batch.kubernetes.io/controller-uid", md.get("uid") or "")


class APIServer:
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
    """

    def __init__(self, store: Store, *, token: str | None = None, faults: Faults | None = None,
                 compaction_window: int = 10000, compaction_interval: float = 60.0,
                 bookmark_interval: float = 60.0, min_request_timeout: float = 1800.0,
                 admission: bool = True, event_ttl: float = 3600.0, max_requests_inflight: int = 400,
                 max_mutating_requests_inflight: int = 200, features: FeatureGate | None = None,
                 idle_timeout: float = IDLE_TIMEOUT, anonymous_auth: bool = True,
                 authorization_mode: str = "RBAC") -> None:
        self.store = store
        if authorization_mode not in ("RBAC", "AlwaysAllow"):
            raise ValueError(f'authorization mode "{authorization_mode}" is not supported (RBAC, AlwaysAllow)')
        #: kube-apiserver ``--authorization-mode``: RBAC (``system:masters`` always allowed, the stored
        #: RBAC objects for everyone else) or AlwaysAllow
        self.authorization_mode = authorization_mode
        #: kube-apiserver ``--anonymous-auth``: a request without credentials is ``system:anonymous``
        #: (then authorized: 403 unless RBAC allows it) instead of 401; off with AlwaysAllow, as
        #: kube-apiserver resets it ("AnonymousAuth is not allowed with the AlwaysAllow authorizer")
        self.anonymous_auth = anonymous_auth and authorization_mode != "AlwaysAllow"
        #: seconds a connection may stay idle, or trickle an incomplete first request, before it is
        #: closed (kube-apiserver: IdleTimeout 90 s; ReadHeaderTimeout 32 s is covered by the same bound)
        self.idle_timeout = idle_timeout
        self.features = features if features is not None else default_feature_gate()
        #: the API release served: ``(major, minor)`` of the emulated version
        self.api_version = self.features.emulated_version
        emu, mcv = self.features.emulated_version, self.features.min_compatibility_version
        self.version_info = {**VERSION_INFO, "emulationMajor": str(emu[0]), "emulationMinor": str(emu[1]),
                             "minCompatibilityMajor": str(mcv[0]), "minCompatibilityMinor": str(mcv[1])}
        #: kube-apiserver ``--max-requests-inflight`` / ``--max-mutating-requests-inflight``
        #: (``filters/maxinflight.go``): beyond them a request is answered 429 at once; 0 = no limit.
        #: Long-running requests (watches) are not counted.
        self.max_requests_inflight = max_requests_inflight
        self.max_mutating_requests_inflight = max_mutating_requests_inflight
        self._inflight = [0, 0]  # read-only, mutating
        self.token = token
        self.faults = faults or Faults()
        self.compaction_window = compaction_window
        self.compaction_interval = compaction_interval
        self.bookmark_interval = bookmark_interval
        self.min_request_timeout = min_request_timeout
        self.use_admission = admission
        self.event_ttl = event_ttl
        self._watchers: set[_Watcher] = set()
        #: list snapshots behind continue tokens: (space, ns, rv) -> (created, keys, entries)
        self._snapshots: OrderedDict[tuple[str, str | None, int], tuple[float, list[Any], list[Entry]]] = \
            OrderedDict()
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._runner: web.AppRunner | None = None
        self._stopping = False
        self.port: int = 0
        self.host: str = "127.0.0.1"
        self.scheme = "http"
        self.loop: asyncio.AbstractEventLoop | None = None
        self.on_started: list[Callable[[APIServer], Any]] = []
        self.pki: Any = None  #: the serving PKI when started through testing/CLI with TLS
        self.kubeconfig_path: Any = None
        #: the custom resources the Established CRDs define (kubesched.apiserver.crd)
        self.crds = crdmod.Registry()
        self._bootstrap()
        self._rebuild_crds()

    # ------------------------------------------------------------- lifecycle
    def _bootstrap(self) -> None:
        """System namespaces and PriorityClasses, as kube-apiserver creates them at start
        (``pkg/controlplane/controller/systemnamespaces``, ``pkg/registry/scheduling/rest``)."""
        ns_info = res.find("", "v1", "namespaces")
        pc_info = res.find("scheduling.k8s.io", "v1", "priorityclasses")
        assert ns_info is not None and pc_info is not None
        for ns in SYSTEM_NAMESPACES:
            if self.store.get(ns_info.key, "", ns) is None:
                obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                self._fill_create(ns_info, obj, "")
                self._prepare_create(ns_info, obj)
                self.store.create(ns_info.key, "", ns, obj)
        for robj in rbac.bootstrap_objects():  # the RBAC bootstrap policy (storage_rbac.go PostStartHook)
            ri = info_for_object(robj)
            rns: str = robj["metadata"].get("namespace", "") if ri.namespaced else ""
            if self.store.get(ri.key, rns, robj["metadata"]["name"]) is None:
                self._fill_create(ri, robj, rns)
                self.store.create(ri.key, rns, robj["metadata"]["name"], robj)
        admission = _compat("admission")
        for name, pc in (getattr(admission, "SYSTEM_PRIORITY_CLASSES", None) or {}).items():
            if self.store.get(pc_info.key, "", name) is None:
                obj = {**pc, "metadata": dict(pc["metadata"])}
                self._fill_create(pc_info, obj, "")
                self.store.create(pc_info.key, "", name, obj)

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BODY_BYTES, middlewares=[self._middleware])
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0, ssl_context: ssl.SSLContext | None = None) -> int:
        """Serve on ``host:port`` (0 = ephemeral; HTTPS with ``ssl_context``) in the running loop;
        returns the bound port."""
        self.scheme = "https" if ssl_context is not None else "http"
        self.loop = asyncio.get_running_loop()
        self.faults._bind(self.loop, self.compact_now, self.close_all_watches)
        # an idle keep-alive connection is closed after 90 s, as kube-apiserver's http.Server IdleTimeout
        self._runner = web.AppRunner(self.make_app(), access_log=None, handle_signals=False,
                                     shutdown_timeout=SHUTDOWN_TIMEOUT, keepalive_timeout=self.idle_timeout,
                                     # Go's http.Server DefaultMaxHeaderBytes (1 MiB): long URLs and headers are
                                     # read, not refused at aiohttp's 8 KiB line limit
                                     max_line_size=MAX_HEADER_BYTES, max_field_size=MAX_HEADER_BYTES)
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

    @property
    def url(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
        return f"{self.scheme}://{host}:{self.port}"

    async def stop(self) -> None:
        """Close watches, stop timers and background tasks, stop serving (the store stays open).

        Bounded: from the first line on every request (new, or on a kept-alive or late-accepted
        connection) is answered 429 ``Retry-After: 1`` with ``Connection: close``; open watch
        streams end at once (without a closing bookmark); aiohttp waits at most
        ``SHUTDOWN_TIMEOUT`` s per phase for handlers still running, then cancels them.
        """
        self._stopping = True
        self.close_all_watches()
        for h in self._timers.values():
            h.cancel()
        self._timers.clear()
        for t in list(self._tasks):
            t.cancel()
        for t in list(self._tasks):
            try:
                await t
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - shutting down
                pass
        if self._runner is not None:
            web_server = self._runner.server
            await self._runner.cleanup()
            self._runner = None
            # connections registered after the runner's shutdown (a TLS handshake that ends late)
            for handler in list(getattr(web_server, "_connections", None) or ()):
                handler.force_close()

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run a background task owned by the server (cancelled at :meth:`stop`)."""
        return self._spawn(coro)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        t = asyncio.ensure_future(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)
        return t

    async def _compactor(self) -> None:
        while True:
            await asyncio.sleep(self.compaction_interval)
            try:
                self.expire_events()
                self.store.compact_window(self.compaction_window)
            except Exception:  # pragma: no cover - logged, retried next tick
                log.exception("compaction failed")
            _trim_heap()

    def expire_events(self, now: datetime | None = None) -> int:
        """Delete Events last seen more than ``event_ttl`` ago (upstream stores them with an etcd
        lease of ``--event-ttl``); returns how many."""
        now = now or datetime.now(UTC)
        info = res.find("", "v1", "events")
        assert info is not None
        n = 0
        for e in self.store.list(info.key):
            ev = e.obj()
            series = ev.get("series") or {}
            seen = (series.get("lastObservedTime") or ev.get("lastTimestamp") or ev.get("eventTime")
                    or ev["metadata"].get("creationTimestamp") or "")
            t = _parse_time(seen)
            if t is not None and (now - t).total_seconds() > self.event_ttl:
                md = ev["metadata"]
                try:
                    self.store.delete(info.key, md.get("namespace", ""), md["name"], expect_rv=e.rv)
                    n += 1
                except (KeyNotFound, Conflict):
                    pass
        return n

    def compact_now(self) -> int:
        """Compact to the current revision (fault injection / tests)."""
        return self.store.compact()

    def close_all_watches(self) -> int:
        n = len(self._watchers)
        for w in list(self._watchers):
            w.close()
        return n

    # ------------------------------------------------------------ middleware
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        if self._stopping:
            return self._shutting_down_response(request)
        slot = self._inflight_slot(request)
        if slot is not None:
            limit = (self.max_requests_inflight, self.max_mutating_requests_inflight)[slot]
            if limit and self._inflight[slot] >= limit:
                err = APIError.too_many_requests("Too many requests, please try again later.", retry_after=1)
                return _json_response(err.status, 429, err.headers)
            self._inflight[slot] += 1
        try:
            if self.store.failure is not None:  # its memory may hold writes that never reached the disk
                err = APIError.internal(f"storage failed: {self.store.failure}")
                return _json_response(err.status, 500)
            resp = await self._guarded(request, handler)
            if self.store.unsynced and not resp.prepared:
                # group commit: no answer before every write it may reflect (its own, or others' it
                # read) is committed — a write is acknowledged only after the fsync that covers it
                try:
                    await self.store.sync()
                except StorageError as e:
                    err = APIError.internal(str(e))
                    return _json_response(err.status, 500)
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
        if request.path in _PUBLIC_PATHS:
            return None
        return 0 if request.method in ("GET", "HEAD", "OPTIONS") else 1

    async def _guarded(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        try:
            if self.token is not None and request.path not in _PUBLIC_PATHS:
                header = request.headers.get("Authorization")
                wanted = impersonation.wanted_user(request.headers)
                if header is None and self.anonymous_auth:
                    if wanted is None:
                        self._authorize_anonymous(request)
                    else:
                        self._impersonate(request, rbac.ANONYMOUS, wanted)
                else:
                    scheme, _, presented = (header or "").strip().partition(" ")
                    # the scheme is case-insensitive (bearertoken.go), the token compared in constant time
                    if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(),
                                                                            self.token.encode()):
                        raise APIError.unauthorized()
                    if wanted is not None:
                        self._impersonate(request, self.ADMIN, wanted)
            await self.faults.before_request()
            if self._stopping:  # held (latency/pause) until the server began to stop
                return self._shutting_down_response(request)
            resp: web.StreamResponse = await handler(request)
            warnings = request.get("warnings")
            if warnings and not resp.prepared:
                for w in warnings:
                    resp.headers.add("Warning", w)
            return resp
        except APIError as e:
            return _json_response(e.status, e.code, e.headers)
        except RequestTooLarge as e:  # etcd's limit on one write (storage.MAX_REQUEST_BYTES)
            err = APIError.unknown(500, str(e))
            return _json_response(err.status, err.code)
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except web.HTTPRequestEntityTooLarge:  # the body limit (handlers/rest.go limitedReadBody)
            err = APIError.entity_too_large(f"limit is {MAX_REQUEST_BODY_BYTES}")
            return _json_response(err.status, err.code)
        except web.HTTPException:
            raise
        except Exception as e:  # a bug: answer as upstream would, keep serving
            log.exception("internal error on %s %s", request.method, request.path)
            err = APIError.internal(str(e) or type(e).__name__)
            return _json_response(err.status, 500)

    def _rbac_objects(self, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        ri = res.find("rbac.authorization.k8s.io", "v1", kind.lower() + "s")
        assert ri is not None
        return [e.obj() for e in self.store.list(ri.key, namespace if ri.namespaced else None)]

    def _authorize(self, attrs: rbac.Attributes) -> tuple[bool, str]:
        """The authorizer chain: AlwaysAllow, or ``system:masters`` then RBAC (``rbac.authorize``)."""
        if self.authorization_mode == "AlwaysAllow":
            return True, ""
        allowed, reason = rbac.authorize(attrs, self._rbac_objects)
        # the authorizer chain names the authorizer in a no-opinion reason (an allow's is kept as is)
        return allowed, reason if allowed or not reason else f"rbac: {reason}"

    def _impersonate(self, request: web.Request, requestor: rbac.UserInfo, wanted: impersonation.Wanted) -> None:
        """``WithImpersonation`` then ``WithAuthorization``: the request continues as the impersonated
        user (``request["user"]``), which RBAC must allow it (403 otherwise)."""
        attrs = rbac.request_attributes(requestor, request.method, request.path, request.query)
        user = impersonation.impersonate(requestor, wanted, attrs, self._authorize)
        request[_USER] = user
        attrs = dataclasses.replace(attrs, user=user)
        allowed, reason = self._authorize(attrs)
        if not allowed:
            raise APIError.forbidden_attributes(attrs, rbac.forbidden_message(attrs, reason))

    def _authorize_anonymous(self, request: web.Request) -> None:
        """A request without credentials, anonymous authentication on: ``system:anonymous`` must be
        allowed by RBAC (the bootstrap policy lets it read /healthz, /livez, /readyz, /version only),
        else 403 with upstream's message (``WithAuthorization``)."""
        attrs = rbac.request_attributes(rbac.ANONYMOUS, request.method, request.path, request.query)
        allowed, reason = self._authorize(attrs)
        if not allowed:
            raise APIError.forbidden_attributes(attrs, rbac.forbidden_message(attrs, reason))

    @staticmethod
    def _shutting_down_response(request: web.Request) -> web.StreamResponse:
        """A request to a stopping server: 429 + ``Retry-After: 1`` + ``Connection: close``, as
        kube-apiserver with ``--shutdown-send-retry-after`` answers during graceful termination
        (``staging/src/k8s.io/apiserver/pkg/server/filters/with_retry_after.go``): the client
        reconnects (to the restarted server) instead of reusing a connection into the old one,
        whose store may already be closed."""
        err = APIError.too_many_requests("The apiserver is shutting down, please try again later.",
                                         retry_after=1)
        resp = _json_response(err.status, 429, err.headers)
        resp.force_close()
        return resp

    # ---------------------------------------------------------------- routing
    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        parts = [p for p in path.split("/") if p]
        if not parts:
            return _json_response({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/readyz",
                                             "/openapi/v2", "/openapi/v3", "/version"]})
        head = parts[0]
        if head in ("healthz", "livez", "readyz") and len(parts) == 1:
            if request.method not in ("GET", "HEAD"):  # a health check is GET-only (405, as Go's mux)
                return web.Response(status=405, text="Method Not Allowed\n", headers={"Allow": "GET, HEAD"})
            return web.Response(text="ok")
        if head == "version" and len(parts) == 1:
            return _json_response(self.version_info)
        if head == "openapi":
            return self._openapi(request, parts[1:])
        if head == "api":
            if len(parts) == 1:
                return _json_response(self._api_versions(request))
            if parts[1] != "v1":
                raise APIError.no_route()
            group, version, rest = "", "v1", parts[2:]
        elif head == "apis":
            if len(parts) == 1:
                return _json_response(self._api_group_list())
            if len(parts) == 2:
                return _json_response(self._api_group(parts[1]))
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise APIError.no_route()
        if not rest:
            return _json_response(self._resource_list(group, version))
        if rest[0] == "watch" and len(rest) > 1:  # deprecated /api/v1/watch/... paths
            route = self._route(group, version, rest[1:])
            if request.method != "GET" or route.sub:
                raise APIError.method_not_allowed()
            if route.name is not None:  # watch of one object = a name field selector
                return await self._watch(request, route, name=route.name)
            return await self._watch(request, route)
        route = self._route(group, version, rest)
        return await self._serve(request, route)

    def _route(self, group: str, version: str, rest: list[str]) -> _Route:
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
        return _Route(info, ns, name, sub)

    async def _serve(self, request: web.Request, r: _Route) -> web.StreamResponse:
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

    # ------------------------------------------------------------------ reviews
    #: who the box's bearer token is: a cluster admin (as a static token in group system:masters)
    ADMIN_USER: dict[str, Any] = {"username": "kubesched-admin", "uid": "kubesched-admin",
                                  "groups": ["system:masters", "system:authenticated"]}
    ADMIN = rbac.UserInfo("kubesched-admin", ("system:masters", "system:authenticated"), "kubesched-admin")

    @staticmethod
    def _user_info(user: rbac.UserInfo) -> dict[str, Any]:
        """``status.userInfo`` of a SelfSubjectReview."""
        return {"username": user.name, **({"uid": user.uid} if user.uid else {}), "groups": list(user.groups)}

    async def _review(self, request: web.Request, r: _Route) -> web.Response:
        """TokenReview, SelfSubjectReview, (Self|Local)SubjectAccessReview: the answer in ``status``,
        nothing stored (``pkg/registry/authentication|authorization``). Authentication knows one
        identity, the box's token (a ``system:masters`` admin); access reviews go through the
        authorizer chain (:meth:`_authorize`: RBAC over the stored RBAC objects by default)."""
        info = r.info
        obj = await self._read_body(request)
        self._check_type(info, obj)
        raw_spec = obj.get("spec")
        spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
        out: dict[str, Any] = {"kind": info.kind, "apiVersion": info.api_version,
                               "metadata": {"creationTimestamp": None}}
        if info.kind == "TokenReview":
            token = spec.get("token")
            if not isinstance(token, str) or not token:
                raise APIError.invalid(info.kind, info.group, "", [("FieldValueRequired", "spec.token",
                                                                    "spec.token: Required value")])
            # without a token (authentication off) there is no token authenticator: nothing authenticates
            ok = self.token is not None and hmac.compare_digest(token.encode(), self.token.encode())
            out["spec"] = spec
            out["status"] = ({"authenticated": True, "user": dict(self.ADMIN_USER)} if ok
                             else {"user": {}, "error": "invalid bearer token"})
        elif info.kind == "SelfSubjectReview":
            out["status"] = {"userInfo": self._user_info(request.get(_USER, self.ADMIN))}
        elif info.kind == "SelfSubjectRulesReview":  # AlwaysAllow's RulesFor: everything
            out["spec"] = spec
            out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                             "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
        else:
            if info.kind == "LocalSubjectAccessReview":
                attrs = spec.get("resourceAttributes") or {}
                if r.ns is None or (isinstance(attrs, dict) and attrs.get("namespace", r.ns) != r.ns):
                    raise APIError.bad_request(f"spec.resourceAttributes.namespace must match namespace: {r.ns}")
            if not spec.get("resourceAttributes") and not spec.get("nonResourceAttributes"):
                raise APIError.invalid(info.kind, info.group, "", [(
                    "FieldValueRequired", "spec.resourceAttributes",
                    "spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or "
                    "resourceAttributes must be specified")])
            out["spec"] = spec
            out["status"] = self._access_review_status(info.kind, spec, r.ns, request.get(_USER, self.ADMIN))
        return _json_response(out, 201)

    def _access_review_status(self, kind: str, spec: dict[str, Any], ns: str | None,
                              requestor: rbac.UserInfo) -> dict[str, Any]:
        """``status`` of a (Self|Local)SubjectAccessReview: the request's subject (the box token's
        admin for SelfSubjectAccessReview) through the authorizer chain (``pkg/registry/authorization``:
        ``allowed``, ``reason`` when there is one; ``denied`` is never set — RBAC has no opinion)."""
        if kind == "SelfSubjectAccessReview":
            user = requestor
        else:
            groups = spec.get("groups")
            user = rbac.UserInfo(str(spec.get("user") or ""),
                                 tuple(g for g in groups if isinstance(g, str)) if isinstance(groups, list) else ())
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if isinstance(ra, dict):
            attrs = rbac.Attributes(user, str(ra.get("verb") or ""), True, api_group=str(ra.get("group") or ""),
                                    resource=str(ra.get("resource") or ""),
                                    subresource=str(ra.get("subresource") or ""), name=str(ra.get("name") or ""),
                                    namespace=str(ra.get("namespace") or (ns or "")))
        else:
            nra = nra if isinstance(nra, dict) else {}
            attrs = rbac.Attributes(user, str(nra.get("verb") or ""), False, path=str(nra.get("path") or ""))
        allowed, reason = self._authorize(attrs)
        return {"allowed": allowed, **({"reason": reason} if reason else {})}

    # ------------------------------------------------------- custom resources
    def _find_info(self, group: str, version: str, plural: str) -> ResourceInfo | None:
        """The built-in resource, else the custom resource served at ``group/version/plural``."""
        info = res.find(group, version, plural)
        if info is None:
            cr = self.crds.find(group, version, plural)
            info = cr.info if cr is not None else None
        return info

    def _all_infos(self) -> list[ResourceInfo]:
        return [*res.RESOURCES, *self.crds.infos()]

    def _groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*res.GROUPS, *(r.group for r in self.crds.infos())]))

    def _rebuild_crds(self) -> None:
        """Serve what the stored, Established CRDs define (after every CRD write, and at start)."""
        self.crds.rebuild(e.obj() for e in self.store.list(f"{crdmod.CRD_GROUP}/customresourcedefinitions"))

    def _crd_established(self, entry: Entry) -> Entry:
        """The naming and establishing controllers, at once: write the CRD's status if it changed."""
        obj = entry.obj()
        key = f"{crdmod.CRD_GROUP}/customresourcedefinitions"
        others = [e.obj() for e in self.store.list(key)]
        status = crdmod.crd_status(obj, others, now_rfc3339())
        if status != obj.get("status"):
            obj["status"] = status
            try:
                entry = self.store.update(key, "", obj["metadata"]["name"], obj, expect_rv=entry.rv)
            except (Conflict, KeyNotFound):
                pass
        self._rebuild_crds()
        return entry

    def _delete_crd(self, info: ResourceInfo, name: str, entry: Entry) -> Entry:
        """A CRD goes Terminating with the cleanup finalizer; its objects are deleted, then it is
        (``customresourcedefinition/etcd.go`` Delete + ``pkg/controller/finalizer``)."""
        obj = entry.obj()
        md = obj["metadata"]
        if md.get("deletionTimestamp"):
            return entry
        md["deletionTimestamp"] = now_rfc3339()
        md["deletionGracePeriodSeconds"] = 0
        md["finalizers"] = [*(md.get("finalizers") or []), crdmod.CRD_FINALIZER] \
            if crdmod.CRD_FINALIZER not in (md.get("finalizers") or []) else md["finalizers"]
        conds = [c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") != "Terminating"]
        conds.append({"type": "Terminating", "status": "True", "lastTransitionTime": now_rfc3339(),
                      "reason": "InstanceDeletionInProgress", "message": "CustomResource deletion is in progress"})
        obj.setdefault("status", {})["conditions"] = conds
        e = self.store.update(info.key, "", name, obj, expect_rv=entry.rv)
        loop = self.loop or asyncio.get_event_loop()
        loop.call_soon(self._finalize_crd, name)
        return e

    def _finalize_crd(self, name: str) -> None:
        """Delete every object of a Terminating CRD, then drop the finalizer (the CRD goes)."""
        key = f"{crdmod.CRD_GROUP}/customresourcedefinitions"
        entry = self.store.get(key, "", name)
        if entry is None:
            return
        obj = entry.obj()
        spec = obj.get("spec") or {}
        space = f"{spec.get('group')}/{(spec.get('names') or {}).get('plural')}"
        for e in self.store.list(space):
            md = e.obj()["metadata"]
            try:
                self.store.delete(space, md.get("namespace", ""), md["name"], expect_rv=e.rv)
            except (KeyNotFound, Conflict):
                pass
        md = obj["metadata"]
        md["finalizers"] = [f for f in md.get("finalizers") or [] if f != crdmod.CRD_FINALIZER]
        try:
            if md["finalizers"]:
                self.store.update(key, "", name, obj, expect_rv=entry.rv)
            else:
                self.store.delete(key, "", name, expect_rv=entry.rv)
        except (KeyNotFound, Conflict):
            pass
        self._rebuild_crds()

    def _admit_custom(self, cr: crdmod.CustomResource, obj: dict[str, Any], old: dict[str, Any] | None,
                      sub: str) -> dict[str, Any]:
        out, _unknown, errs = crdmod.admit_custom_resource(cr, obj, old, sub)
        if errs:
            name = str((out.get("metadata") or {}).get("name") or "")
            raise APIError(crdmod.invalid_status(cr.info.kind, cr.info.group, name, errs))
        return out

    # -------------------------------------------------------------- discovery
    def _api_versions(self, request: web.Request) -> dict[str, Any]:
        host = request.host or f"{self.host}:{self.port}"
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}

    def served(self, info: ResourceInfo) -> bool:
        """Whether this server serves ``info`` at its emulated version and gates: the workload API
        (``scheduling.k8s.io/v1beta1``, ``v1alpha3``) only with its gates
        (:func:`kubesched.api.podgroups.served_api`); everything else always."""
        if info.group == podgroups.GROUP and info.version != "v1":
            return podgroups.served_api(info.kind, self.features) == info.api_version
        return True

    def _group_entry(self, group: str) -> dict[str, Any]:
        # kube-apiserver's version priority: GA, then beta, then alpha (v1 > v1beta1 > v1alpha3)
        versions = sorted({r.version for r in self._all_infos() if r.group == group and self.served(r)},
                          key=_version_priority)
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}

    def _api_group_list(self) -> dict[str, Any]:
        return {"kind": "APIGroupList", "apiVersion": "v1",
                "groups": [self._group_entry(g) for g in self._groups() if g]}

    def _api_group(self, group: str) -> dict[str, Any]:
        if group not in self._groups() or not group:
            raise APIError.no_route()
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(group)}

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        gv = f"{group}/{version}" if group else version
        infos = [r for r in res.by_group_version().get(gv) or () if self.served(r)] or \
            [r for r in self.crds.infos() if r.group_version == gv]
        if not infos:
            raise APIError.no_route()
        out: list[dict[str, Any]] = []
        for r in infos:
            item: dict[str, Any] = {"name": r.plural, "singularName": r.singular, "namespaced": r.namespaced,
                                    "kind": r.kind, "verbs": list(r.verbs)}
            if r.short_names:
                item["shortNames"] = list(r.short_names)
            if r.categories:
                item["categories"] = list(r.categories)
            out.append(item)
            for sub in r.subresources:
                s: dict[str, Any] = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced,
                                     "kind": r.kind, "verbs": ["get", "patch", "update"]}
                if sub == "binding":
                    s.update(kind="Binding", verbs=["create"])
                elif sub == "eviction":
                    s.update(group="policy", version="v1", kind="Eviction", verbs=["create"])
                elif sub == "scale":
                    s.update(group="autoscaling", version="v1", kind="Scale")
                elif sub == "finalize":
                    s.update(verbs=["update"])
                out.append(s)
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}

    def _openapi(self, request: web.Request, rest: list[str]) -> web.StreamResponse:
        openapi = _compat("openapi")
        if openapi is None:
            raise APIError.no_route()
        served = [(r.group, r.version, r.kind, r.plural, r.namespaced) for r in res.RESOURCES if self.served(r)]
        if rest == ["v2"]:
            if "protobuf" in request.headers.get("Accept", ""):  # what kubectl asks for
                return web.Response(body=openapi.v2_protobuf(self.api_version),
                                    headers={"Content-Type": openapi.V2_PROTOBUF_CONTENT_TYPE})
            return web.Response(body=openapi.v2_document(served, self.api_version), content_type=_JSON)
        if rest == ["v3"]:
            index = openapi.v3_index(self.url, served, self.api_version)
            for gv in sorted({r.group_version for r in self.crds.infos()}):
                body = self._openapi_custom(openapi, *gv.split("/"))
                digest = hashlib.sha512(body).hexdigest().upper()
                index["paths"][f"apis/{gv}"] = {"serverRelativeURL": f"/openapi/v3/apis/{gv}?hash={digest}"}
            return _json_response(index)
        if len(rest) >= 3 and rest[0] == "v3":
            if rest[1] == "api":
                group, version = "", rest[2]
            elif rest[1] == "apis" and len(rest) >= 4:
                group, version = rest[2], rest[3]
            else:
                raise APIError.no_route()
            doc = openapi.v3_group_version(group, version, served, self.api_version)
            if doc is None and any(r.group == group and r.version == version for r in self.crds.infos()):
                doc = self._openapi_custom(openapi, group, version)
            if doc is None:
                raise APIError.no_route()
            return web.Response(body=doc, content_type=_JSON)
        raise APIError.no_route()

    def _openapi_custom(self, openapi: Any, group: str, version: str) -> bytes:
        crs = sorted((c for c in self.crds.by_gvr.values() if c.info.group == group and c.info.version == version),
                     key=lambda c: c.info.kind)
        return openapi.v3_custom(group, version, [(c.info.kind, c.info.plural, c.info.namespaced, c.schema, c.status)
                                                  for c in crs], self.api_version)

    # --------------------------------------------------------------- helpers
    @staticmethod
    def _space_ns(info: ResourceInfo, ns: str | None) -> str:
        return (ns or "") if info.namespaced else ""

    def _get_entry(self, r: _Route) -> Entry:
        assert r.name is not None
        entry = self.store.get(r.info.key, self._space_ns(r.info, r.ns), r.name)
        if entry is None:
            raise APIError.not_found(r.info.plural, r.info.group, r.name)
        return entry

    def _out(self, info: ResourceInfo, data: bytes) -> bytes:
        """Stored bytes → the bytes served for ``info`` (events.k8s.io view conversion)."""
        if info.group == "events.k8s.io":
            return orjson.dumps(core_to_events(orjson.loads(data)))
        if info.storage and (cr := self.crds.of_info(info)) is not None and \
                b'"apiVersion":"' + info.api_version.encode() + b'"' not in data:
            obj = orjson.loads(data)  # another served version of the same custom resource (strategy None)
            from kubesched.apiserver.crd_conversion import check_conversion

            check_conversion(self, cr, str(obj.get("apiVersion") or "").rpartition("/")[2])
            obj["apiVersion"] = info.api_version
            return orjson.dumps(obj)
        return data

    def _object_response(self, request: web.Request, info: ResourceInfo, data: bytes,
                         status: int = 200) -> web.Response:
        if self._wants_table(request):
            table = self._table(request, info, [orjson.loads(self._out(info, data))], None)
            if table is not None:
                return _json_response(table, status)
        return _json_response(self._out(info, data), status)

    @staticmethod
    def _wants_table(request: web.Request) -> bool:
        acc = request.headers.get("Accept", "")
        return "as=Table" in acc

    def _table(self, request: web.Request, info: ResourceInfo, items: list[dict[str, Any]],
               meta: dict[str, Any] | None) -> dict[str, Any] | None:
        tables = _compat("tables")
        if tables is None:
            return None
        include = request.query.get("includeObject", "Metadata")
        if info.group == "events.k8s.io":  # the printer reads the core/v1 fields
            items = [events_to_core(i) for i in items]
        printer = None
        cr = self.crds.of_info(info)
        if cr is not None:  # additionalPrinterColumns
            printer = (crdmod.printer_columns(cr),
                       lambda o, now, cr=cr: crdmod.printer_row(cr, dict(o), now, tables.since))
        try:
            table: dict[str, Any] = tables.to_table(info.plural, items, now=datetime.now(UTC),
                                                     include_object=include, list_meta=meta, printer=printer)
        except ValueError as e:
            raise APIError.bad_request(str(e)) from None
        return table

    async def _read_body(self, request: web.Request) -> dict[str, Any]:
        ctype = request.headers.get("Content-Type", "")
        raw = await request.read()
        media = ctype.split(";", 1)[0].strip().lower()
        if media and media not in _BODY_MEDIA_TYPES and not media.startswith(protobuf.MEDIA_TYPE):
            # negotiation.NegotiateInputSerializer: an unknown body format is 415 (an empty type is read as JSON)
            raise APIError(_unsupported_body(media))
        if ctype.startswith(protobuf.MEDIA_TYPE):
            # kubectl's typed generators (create namespace|deployment|…, run, expose)
            try:
                return protobuf.decode_object(raw)
            except protobuf.ProtobufError as e:
                raise APIError.bad_request(str(e)) from None
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            ctype = request.headers.get("Content-Type", "")
            if "yaml" in ctype:
                obj = _decode_yaml_body(raw, e)
            else:
                raise APIError.bad_request(f"the object provided is unrecognized: {e}") from None
        if not isinstance(obj, dict):
            raise APIError.bad_request("the object provided is unrecognized: not an object")
        return obj

    def _check_type(self, info: ResourceInfo, obj: dict[str, Any], kind: str | None = None) -> None:
        want_kind = kind or info.kind
        av = obj.get("apiVersion")
        k = obj.get("kind")
        if av is not None and av != info.api_version:
            raise APIError.bad_request(f"the API version in the data ({av}) does not match the expected "
                                       f"API version ({info.api_version})")
        if k is not None and k != want_kind:
            raise APIError.bad_request(f"the kind in the data ({k}) does not match the expected kind ({want_kind})")
        obj["apiVersion"] = info.api_version
        obj["kind"] = want_kind

    def _field_validation(self, request: web.Request, info: ResourceInfo, obj: Any, *,
                          patch_ctype: str | None = None, patch_body: bytes = b"") -> None:
        """``fieldValidation`` (Strict | Warn | Ignore; server default Warn) on a decoded body or
        a patched result (upstream ``handlers/create.go``, ``patch.go``)."""
        directive = request.query.get("fieldValidation", "Warn") or "Warn"
        fv = _compat("fieldvalidation")
        if fv is None:
            return
        if directive not in fv.VALIDATION_DIRECTIVES:
            raise APIError.bad_request(f'fieldValidation: Unsupported value: "{directive}": supported values: '
                                       f'"Ignore", "Strict", "Warn"')
        if directive == "Ignore":
            return
        cr = self.crds.of_info(info)
        if cr is not None:  # the fields pruning drops (customresource_handler.go unstructuredSchemaCoercer)
            unknown = crdmod.unknown_fields(cr, obj if isinstance(obj, dict) else {})
            if not unknown:
                return
            if directive == "Strict":
                raise APIError.bad_request(f'{info.kind} in version "{info.version}" cannot be handled as a '
                                           f'{info.kind}: strict decoding error: '
                                           + ", ".join(crdmod.unknown_field_messages(unknown)))
            request["warnings"] = fv.warning_headers(crdmod.unknown_field_messages(unknown))
            return
        msgs = fv.unknown_fields((info.group, info.version, info.kind), obj, self.api_version)
        if not msgs:
            return
        if directive == "Strict":
            if patch_ctype is not None:
                raise APIError(fv.patch_strict_status(patch_ctype, patch_body, obj, msgs))
            raise APIError.bad_request(fv.decode_error_message(info.kind, info.version, msgs))
        request["warnings"] = fv.warning_headers(msgs)

    def _write_fault(self, info: ResourceInfo, sub: str, verb: str) -> None:
        if not self.faults.write_faults:
            return
        code = self.faults.write_fault(info.plural, sub, verb)
        if code == 409:
            raise APIError.conflict(info.plural, info.group, "", "injected conflict (fault injection)")
        if code == 503:
            raise APIError.method_status(503, "ServiceUnavailable", "injected unavailability (fault injection)")
        if code is not None:
            raise APIError.internal("injected failure (fault injection)")

    def _namespace_ok(self, ns: str, name: str, info: ResourceInfo) -> None:
        ns_entry = self.store.get("namespaces", "", ns)
        if ns_entry is None:
            raise APIError.not_found("namespaces", "", ns)
        phase = orjson.loads(ns_entry.data).get("status", {}).get("phase")
        if phase == "Terminating":
            raise APIError.forbidden(info.plural, info.group, name,
                                     f"unable to create new content in namespace {ns} because it is being "
                                     f"terminated",
                                     [{"reason": "NamespaceTerminating",
                                       "message": f"namespace {ns} is being terminated",
                                       "field": "metadata.namespace"}])

    # ------------------------------------------------------------ list/get
    def _parse_selectors(self, request: web.Request, info: ResourceInfo) -> tuple[Selector, FieldSelector]:
        q = request.query
        try:
            lsel = parse_label_selector(q.get("labelSelector", ""))
            fsel = parse_field_selector(q.get("fieldSelector", ""))
        except SelectorParseError as e:
            raise APIError.bad_request(str(e)) from None
        allowed = info.field_names if info.group != "events.k8s.io" else res.find("", "v1", "events").field_names  # type: ignore[union-attr]
        for name in fsel.names():
            if name not in allowed:
                raise APIError.bad_request(f'field label not supported: {name}')
        return lsel, fsel

    @staticmethod
    def _parse_rv(value: str | None) -> int | None:
        if value is None or value == "":
            return None
        try:
            rv = int(value)
        except ValueError:
            raise APIError.bad_request(f'resourceVersion: Invalid value: "{value}": must be a valid '
                                       f'resource version') from None
        if rv < 0:
            raise APIError.bad_request(f'resourceVersion: Invalid value: "{value}": must be a valid resource version')
        return rv

    @staticmethod
    def _encode_continue(rv: int, key: tuple[str, str]) -> str:
        raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": [key[0], key[1]]})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @staticmethod
    def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            d = orjson.loads(raw)
            return int(d["rv"]), (str(d["start"][0]), str(d["start"][1]))
        except (binascii.Error, ValueError, KeyError, TypeError, IndexError, orjson.JSONDecodeError):
            raise APIError.bad_request("continue key is not valid: illegal base64 data") from None

    def _list(self, request: web.Request, r: _Route) -> web.Response:
        info, q = r.info, request.query
        lsel, fsel = self._parse_selectors(request, info)
        match = _matcher(lsel, fsel)
        limit_s = q.get("limit")
        limit = 0
        if limit_s:
            try:
                limit = max(0, int(limit_s))
            except ValueError:
                raise APIError.bad_request(f"limit: Invalid value: {limit_s!r}") from None
        ns = self._space_ns(info, r.ns) if r.ns is not None else None
        store = self.store
        cont = q.get("continue")
        try:
            if cont:
                list_rv, start = self._decode_continue(cont)
                snap = self._snapshots.get((info.key, ns, list_rv))
                try:
                    if snap is not None:
                        entries = snap[2][bisect.bisect_right(snap[1], start):]
                    else:
                        entries = store.list_at(info.key, list_rv, ns, start)
                except Compacted:
                    raise APIError.expired(
                        "The provided continue parameter is too old to display a consistent list result. You can "
                        "start a new list without the continue parameter.") from None
            else:
                rv = self._parse_rv(q.get("resourceVersion"))
                rv_match = q.get("resourceVersionMatch", "")
                if rv_match not in ("", "Exact", "NotOlderThan"):
                    raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                        "FieldValueNotSupported", "resourceVersionMatch",
                        (f'resourceVersionMatch: Unsupported value: "{rv_match}": supported values: "Exact", '
                        f'"NotOlderThan", ""'))])
                if rv_match and rv is None:
                    raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                        "FieldValueForbidden", "resourceVersionMatch",
                        ("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                        "resourceVersion is provided"))])
                if rv_match == "Exact" and rv == 0:
                    raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                        "FieldValueForbidden", "resourceVersionMatch",
                        ('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for '
                        'resourceVersion "0"'))])
                if rv_match == "Exact" and rv is not None and rv > 0:
                    try:
                        entries = store.list_at(info.key, rv, ns)
                    except Compacted:
                        # served by storage, not the watch cache: etcd3's interpretListError
                        raise APIError.expired("The resourceVersion for the provided list is too old.") from None
                    list_rv = rv
                else:
                    if rv is not None and rv > store.current_rev:
                        raise FutureRevision(rv, store.current_rev)
                    if limit:
                        keys, entries = store.list_keyed(info.key, ns)
                        if len(entries) > limit:
                            self._remember_snapshot((info.key, ns, store.current_rev), keys, entries)
                    else:
                        entries = store.list(info.key, ns)
                    list_rv = store.current_rev
        except Compacted as e:
            raise APIError.expired(f"too old resource version: {e.requested} ({e.compact_rev})") from None
        except FutureRevision as e:
            raise APIError.too_large_rv(e.requested, e.current) from None
        # name-only field selectors: one lookup instead of a scan
        if match is not None:
            entries = [e for e in entries if match(e)]
        meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if limit and len(entries) > limit:
            last = entries[limit - 1]
            lobj = orjson.loads(last.data)["metadata"]
            meta["continue"] = self._encode_continue(list_rv, (lobj.get("namespace", "") if info.namespaced else "",
                                                               lobj["name"]))
            if match is None:
                meta["remainingItemCount"] = len(entries) - limit
            entries = entries[:limit]
        if self._wants_table(request):
            items = [orjson.loads(self._out(info, e.data)) for e in entries]
            table = self._table(request, info, items, meta)
            if table is not None:
                return _json_response(table)
        datas = [e.data for e in entries]
        if info.group == "events.k8s.io" or self.crds.of_info(info) is not None:
            datas = [self._out(info, d) for d in datas]
        head = orjson.dumps({"kind": f"{info.kind}List", "apiVersion": info.api_version, "metadata": meta})
        body = b"".join((head[:-1], b',"items":[', b",".join(datas), b"]}"))
        return web.Response(body=body, content_type=_JSON)

    def _remember_snapshot(self, key: tuple[str, str | None, int], keys: list[Any], entries: list[Entry]) -> None:
        """Keep a paginated list's snapshot (references only) so its continue pages are slices;
        at most 32, each for 5 minutes (then pages come from the SQLite history)."""
        now = time.monotonic()
        snaps = self._snapshots
        snaps[key] = (now, keys, entries)
        snaps.move_to_end(key)
        while snaps and (len(snaps) > 32 or next(iter(snaps.values()))[0] < now - 300):
            snaps.popitem(last=False)

    # ------------------------------------------------------------------ watch
    async def _wait_fresh(self, request: web.Request) -> None:
        """A list or watch from a resourceVersion the store has not reached yet waits up to 3 s
        for it, as the watch cache's ``waitUntilFreshAndBlock`` (``blockTimeout``) does; the
        handler then answers 504 ``ResourceVersionTooLarge`` if it is still ahead."""
        rv_s = request.query.get("resourceVersion")
        if not rv_s or request.query.get("continue") or request.query.get("resourceVersionMatch") == "Exact":
            return
        try:
            rv = int(rv_s)
        except ValueError:
            return  # the handler reports it
        deadline = asyncio.get_running_loop().time() + 3.0
        while rv > self.store.current_rev and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)

    async def _watch(self, request: web.Request, r: _Route, name: str | None = None) -> web.StreamResponse:
        info, q = r.info, request.query
        lsel, fsel = self._parse_selectors(request, info)
        if name is not None:
            fsel = FieldSelector([*fsel.terms, ("metadata.name", "=", name)])
        match = _matcher(lsel, fsel)
        ns = self._space_ns(info, r.ns) if r.ns is not None else None
        rv = self._parse_rv(q.get("resourceVersion"))
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
        sie_s = q.get("sendInitialEvents")
        rv_match = q.get("resourceVersionMatch", "")
        send_initial: bool
        if sie_s is not None:
            send_initial = sie_s in ("1", "true", "True")
            causes = []
            if rv_match != "NotOlderThan":
                causes.append(("FieldValueInvalid", "resourceVersionMatch",
                               (f'resourceVersionMatch: Invalid value: "{rv_match}": sendInitialEvents requires '
                                'setting resourceVersionMatch to NotOlderThan')))
            if send_initial and not bookmarks:
                causes.append(("FieldValueForbidden", "allowWatchBookmarks",
                               ("allowWatchBookmarks: Forbidden: sendInitialEvents requires setting "
                                "allowWatchBookmarks to true")))
            if causes:
                raise APIError.invalid("ListOptions", "meta.k8s.io", "", causes)
        else:
            if rv_match:
                raise APIError.invalid("ListOptions", "meta.k8s.io", "", [(
                    "FieldValueForbidden", "resourceVersionMatch",
                    ("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                     "sendInitialEvents is provided"))])
            send_initial = rv is None or rv == 0
        timeout_s = q.get("timeoutSeconds")
        try:  # a Go *int64: "1e20" or "1.5" do not decode (400), nor values past int64
            timeout = float(int(timeout_s)) if timeout_s else 0.0
            if not -(1 << 63) <= timeout < (1 << 63):
                raise ValueError
        except ValueError:
            raise APIError.bad_request(f'invalid timeoutSeconds: strconv.ParseInt: parsing "{timeout_s}": '
                                       "invalid syntax") from None
        if timeout == 0:  # upstream: unset or 0 = random in [minRequestTimeout, 2*minRequestTimeout)
            timeout = self.min_request_timeout * (1 + random.random())
        elif timeout < 0:  # context.WithTimeout with a negative duration: the watch ends at once
            timeout = 1e-6

        store = self.store
        error: dict[str, Any] | None = None
        initial: list[Entry] = []
        backlog: list[Event] = []
        # registration, snapshot and backlog happen without awaiting: nothing can interleave
        if send_initial:
            if rv is not None and rv > store.current_rev:
                raise APIError.too_large_rv(rv, store.current_rev)
            initial = store.list(info.key, ns)
            start_rv = store.current_rev
        else:
            start_rv = store.current_rev if rv is None else rv
            try:
                backlog = store.events_since(info.key, start_rv)
            except Compacted as exc:
                error = APIError.expired(f"too old resource version: {exc.requested} ({exc.compact_rev})").status
            except FutureRevision as exc:
                raise APIError.too_large_rv(exc.requested, exc.current) from None
        w = _Watcher(start_rv)
        if error is None:
            store.subscribe(info.key, w)
            self._watchers.add(w)
        resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON,
                                                       "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        table = self._wants_table(request)
        try:
            if start_rv > store.synced_rev:  # initial state with writes still in their group commit
                await store.sync()
            await resp.prepare(request)
            if error is not None:
                await resp.write(orjson.dumps({"type": "ERROR", "object": error}) + b"\n")
                return resp
            render = self._renderer(request, info, ns, match, table)
            if initial:
                chunk = []
                for e in initial if match is None else (e for e in initial if match(e)):
                    chunk.append(self._line("ADDED", self._maybe_table(request, info, self._out(info, e.data), table)))
                    if len(chunk) >= 500:
                        await resp.write(b"".join(chunk))
                        chunk = []
                if chunk:
                    await resp.write(b"".join(chunk))
            if sie_s is not None and send_initial:
                await resp.write(self._bookmark(info, start_rv, initial_end=True))
            if backlog:
                out = [b for b in (render(ev) for ev in backlog) if b]
                if out:
                    await resp.write(b"".join(out))
            await self._stream(resp, w, info, render, timeout, bookmarks)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            store.unsubscribe(info.key, w)
            self._watchers.discard(w)
        return resp

    @staticmethod
    def _line(typ: str, data: bytes) -> bytes:
        return b'{"type":"' + typ.encode() + b'","object":' + data + b"}\n"

    def _bookmark(self, info: ResourceInfo, rv: int, initial_end: bool = False) -> bytes:
        md: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            md["annotations"] = {_INITIAL_EVENTS_END: "true"}
        obj = {"kind": info.kind, "apiVersion": info.api_version, "metadata": md}
        return orjson.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"

    def _maybe_table(self, request: web.Request, info: ResourceInfo, data: bytes, table: bool) -> bytes:
        if not table:
            return data
        t = self._table(request, info, [orjson.loads(data)], None)
        return data if t is None else orjson.dumps(t)

    def _renderer(self, request: web.Request, info: ResourceInfo, ns: str | None,
                  match: Callable[[Entry], bool] | None, table: bool) -> Callable[[Event], bytes | None]:
        conv = info.group == "events.k8s.io" or self.crds.of_info(info) is not None

        def data_of(b: bytes) -> bytes:
            if conv:
                b = self._out(info, b)
            if table:
                b = self._maybe_table(request, info, b, True)
            return b

        def render(ev: Event) -> bytes | None:
            if ns is not None and ev.ns != ns:
                return None
            typ = ev.type
            if match is None:
                return self._line(typ, data_of(ev.entry.data))
            if typ == "ADDED":
                return self._line("ADDED", data_of(ev.entry.data)) if match(ev.entry) else None
            if typ == "DELETED":
                return self._line("DELETED", data_of(ev.entry.data)) if match(ev.entry) else None
            cur = match(ev.entry)
            old = ev.prev is not None and match(ev.prev)
            if cur and old:
                return self._line("MODIFIED", data_of(ev.entry.data))
            if cur:
                return self._line("ADDED", data_of(ev.entry.data))
            if old:
                assert ev.prev is not None
                prev = orjson.loads(ev.prev.data)
                prev.setdefault("metadata", {})["resourceVersion"] = str(ev.rv)
                return self._line("DELETED", data_of(orjson.dumps(prev)))
            return None

        return render

    async def _stream(self, resp: web.StreamResponse, w: _Watcher, info: ResourceInfo,
                      render: Callable[[Event], bytes | None], timeout: float, bookmarks: bool) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + timeout
        end = deadline  # the request's timeoutSeconds: the only end that gets a closing bookmark
        every = self.faults.watch_close_every
        if every is not None:  # fault: 0 ends every watch right after its backlog
            deadline = min(deadline, start + every)
        next_bm = start + self.bookmark_interval
        while not w.closed and not self._stopping:
            if w.buf:
                evs, w.buf = w.buf, []
                out = [b for b in (render(ev) for ev in evs) if b]
                if out:
                    await resp.write(b"".join(out))
                if len(w.buf) > 500_000:  # hopelessly slow client: end it, it will resume from its RV
                    break
                continue
            now = loop.time()
            if now >= deadline:
                break
            if bookmarks and now >= next_bm:
                await resp.write(self._bookmark(info, self.store.synced_rev))
                next_bm = now + self.bookmark_interval
                continue
            w.wake.clear()
            wait = min(deadline, next_bm if bookmarks else deadline) - now
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can drop a cancellation that
            # arrives with the wake-up, and the shutdown's cancel must end this handler
            try:
                async with asyncio.timeout(max(wait, 0.001)):
                    await w.wake.wait()
            except TimeoutError:
                pass
        if self._stopping or w.closed:
            return  # ended by a fault or the shutdown: no bookmark (an unexpected close)
        if w.buf:
            out = [b for b in (render(ev) for ev in w.buf) if b]
            if out:
                await resp.write(b"".join(out))
        if bookmarks and loop.time() >= end:
            # upstream's watch cache sends a bookmark shortly before a watch's deadline when
            # allowWatchBookmarks is set; a stream closed early (fault, slow client) gets none
            await resp.write(self._bookmark(info, self.store.synced_rev))

    # ----------------------------------------------------------------- create
    def _fill_create(self, info: ResourceInfo, obj: dict[str, Any], ns: str) -> dict[str, Any]:
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = obj["metadata"] = {}
        if info.namespaced:
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_rfc3339()
        md.pop("resourceVersion", None)
        md.pop("deletionTimestamp", None)
        md.pop("deletionGracePeriodSeconds", None)
        md.pop("selfLink", None)
        if info.generation:
            md["generation"] = 1
        else:
            md.pop("generation", None)
        return md

    def _prepare_create(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        """Per-kind create strategy (upstream ``PrepareForCreate``)."""
        k = info.kind
        if k == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP:
            crdmod.default_crd(obj)  # v1 defaults; status reset (the controllers write it after)
            stored = [v["name"] for v in (obj.get("spec") or {}).get("versions") or []
                      if isinstance(v, dict) and v.get("storage") is True and isinstance(v.get("name"), str)]
            obj["status"] = {"conditions": [], "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored}
        elif k == "Namespace":
            spec = obj.setdefault("spec", {})
            fins = spec.get("finalizers") or []
            if "kubernetes" not in fins:
                spec["finalizers"] = [*fins, "kubernetes"]
            obj["status"] = {"phase": "Active"}
            labels = obj["metadata"].setdefault("labels", {})
            labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        elif k == "Pod":
            st = obj.get("status") or {}
            obj["status"] = {"phase": "Pending", **({"qosClass": st["qosClass"]} if "qosClass" in st else {})}
            spec = obj.setdefault("spec", {})
            spec.setdefault("schedulerName", "default-scheduler")
            spec.setdefault("terminationGracePeriodSeconds", 30)
            spec.setdefault("restartPolicy", "Always")
            spec.setdefault("dnsPolicy", "ClusterFirst")
            spec.setdefault("securityContext", {})
            if not obj["status"].get("qosClass"):
                obj["status"]["qosClass"] = _qos_class(spec)
        elif k == "Node":
            st = obj.setdefault("status", {})
            if "capacity" in st and "allocatable" not in st:
                st["allocatable"] = dict(st["capacity"])
        elif k == "PersistentVolume":  # persistentvolume/strategy.go PrepareForCreate
            obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}
        elif k == "PersistentVolumeClaim":  # status reset; served with the defaulted phase Pending
            obj["status"] = {"phase": "Pending"}
        elif k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob",
                   "PodDisruptionBudget", "ReplicationController"):
            obj.pop("status", None)
            if k == "Job":
                _generate_job_selector(obj)
            if k == "PodDisruptionBudget":
                obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                 "expectedPods": 0}

    def _admit(self, info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None, op: str,
               sub: str = "") -> dict[str, Any]:
        cr = self.crds.of_info(info)
        if cr is not None:  # custom resources: pruning, defaulting, schema validation
            return self._admit_custom(cr, obj, old, sub)
        if info.kind == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP and sub == "":
            crdmod.default_crd(obj)
            errs = crdmod.validate_crd(obj, old)
            if errs:
                name = str((obj.get("metadata") or {}).get("name") or "")
                raise APIError(crdmod.invalid_status(info.kind, info.group, name, errs))
        if not self.use_admission:
            return obj
        admission = _compat("admission")
        if admission is None:
            return obj

        def lookup(resource: str, ns: str, name: str) -> dict[str, Any] | None:
            ri = _by_plural(resource)
            if ri is None:
                return None
            e = self.store.get(ri.key, ns if ri.namespaced else "", name)
            return None if e is None else e.obj()

        def list_objects(resource: str) -> list[dict[str, Any]]:
            ri = _by_plural(resource)
            return [] if ri is None else [e.obj() for e in self.store.list(ri.key)]

        try:
            out: dict[str, Any] = admission.admit(f"{info.plural}/{sub}" if sub else info.plural, obj, old,
                                                  operation=op, lookup=lookup, list_objects=list_objects,
                                                  features=self.features)
        except admission.AdmissionError as e:
            raise APIError(e.status) from None
        return out

    def _validate_meta(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        md = obj["metadata"]
        if not md.get("name") and not md.get("generateName"):
            raise APIError.invalid(info.kind, info.group, "", [(
                "FieldValueRequired", "metadata.name",
                "metadata.name: Required value: name or generateName is required")])

    async def _create(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        self._write_fault(info, "", "create")
        dry = _dry_run(request, "CreateOptions")
        obj = await self._read_body(request)
        _check_resource_version_type(info, obj)
        self._field_validation(request, info, obj)
        entry = self.create_object(info, r.ns or "", obj, dry_run=dry, manager=self._field_manager(request))
        return self._object_response(request, info, entry.data, 201)

    def create_object(self, info: ResourceInfo, ns: str, obj: dict[str, Any], *, dry_run: bool = False,
                      manager: str | None = None) -> Entry:
        """Create ``obj`` as ``POST`` would (metadata, strategy, namespace checks, generateName,
        admission, validation); call on the server's loop. Returns the stored entry (for
        events.k8s.io, the stored core/v1 form). Raises :class:`APIError` (AlreadyExists,
        NotFound namespace, Invalid, Forbidden, BadRequest)."""
        if info.key == "events" and info.group == "events.k8s.io":
            self._check_type(info, obj)
            obj = events_to_core(obj)
            store_info = res.find("", "v1", "events")
            assert store_info is not None
        else:
            self._check_type(info, obj)
            store_info = info
        md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else None
        if info.namespaced and md is not None and md.get("namespace") and md["namespace"] != ns:
            raise APIError.bad_request("the namespace of the provided object does not match the namespace sent "
                                       "on the request")
        md = self._fill_create(info, obj, ns)
        self._validate_meta(info, obj)
        name = md.get("name") or ""
        if info.namespaced:
            self._namespace_ok(ns, name, info)
        gen = md.get("generateName") if not name else None
        if gen:  # upstream BeforeCreate generates the name before validation
            name = gen[:58] + _rand_suffix()
            md["name"] = name
        self._prepare_create(info, obj)
        if (cr := self.crds.of_info(info)) is not None and info.version != cr.storage_version:
            from kubesched.apiserver.crd_conversion import check_conversion

            check_conversion(self, cr, info.version, write=True)  # a Webhook strategy's webhook is unreachable
        decoded = obj
        obj = self._admit(info, obj, None, "CREATE")
        if manager is not None:  # create.go: the creator's Update entry, of the decoded (defaulted) object
            from kubesched.apiserver.managers import track_create

            track_create(self, info, decoded, obj, manager)
        space_ns = ns if info.namespaced else ""
        for attempt in range(8 if gen else 1):
            if attempt:
                assert gen is not None
                name = gen[:58] + _rand_suffix()
                obj["metadata"]["name"] = name
            if dry_run:
                if self.store.get(store_info.key, space_ns, name) is not None:
                    raise APIError.already_exists(info.plural, info.group, name)
                obj["metadata"]["resourceVersion"] = ""
                return Entry(0, orjson.dumps(obj), {}, {})
            try:
                entry = self.store.create(store_info.key, space_ns, name, obj)
                break
            except KeyExists:
                if attempt == (7 if gen else 0):
                    raise APIError.already_exists(info.plural, info.group, name) from None
        self._after_write(info, entry)
        return entry

    def create_manifest(self, obj: dict[str, Any]) -> Entry:
        """Create one manifest object (``apiVersion``/``kind``, namespace from ``metadata.namespace``,
        default ``default``) as ``kubectl create -f`` would. Raises :class:`APIError`, and
        NotFound for a kind the box does not serve."""
        av, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        cr = self.crds.find_kind(av.rpartition("/")[0], av.rpartition("/")[2], kind) if "/" in av else None
        info = cr.info if cr is not None else info_for_object(obj)
        if not self.served(info):
            raise APIError.method_status(404, "NotFound", f'no matches for kind "{info.kind}" in version '
                                         f'"{info.api_version}"')
        ns = ((obj.get("metadata") or {}).get("namespace") or "default") if info.namespaced else ""
        return self.create_object(info, ns, obj)

    # ----------------------------------------------------------------- update
    def _commit_update(self, info: ResourceInfo, ns: str, name: str, new: dict[str, Any], old_entry: Entry,
                       sub: str, precondition: int | None, dry: bool = False, *, manager: str | None = None,
                       manager_sub: str | None = None) -> Entry:
        """Apply update strategy + admission and write (unless a no-op). Shared by PUT and PATCH."""
        old = old_entry.obj()
        if info.group == "events.k8s.io":
            new = events_to_core(new)
            info_kind = "Event"
        else:
            info_kind = info.kind
        if precondition is not None and precondition != old_entry.rv:
            raise APIError.modified(info.plural, info.group, name)
        nmd = new.get("metadata")
        if not isinstance(nmd, dict):
            nmd = new["metadata"] = {}
        omd = old["metadata"]
        if nmd.get("name", name) != name:
            raise APIError.bad_request(f'the name of the object ({nmd.get("name")}) does not match the name on '
                                       f'the URL ({name})')
        for k in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                  "generation"):
            if k in omd:
                nmd[k] = omd[k]
            else:
                nmd.pop(k, None)
        nmd.pop("resourceVersion", None)
        new["kind"] = info_kind
        new["apiVersion"] = old.get("apiVersion", info.api_version)
        has_status = "status" in info.subresources
        if sub == "status":
            status = new.get("status")
            keep_md = nmd
            new = dict(old)
            if status is None:
                new.pop("status", None)
            else:
                new["status"] = status
            md2 = dict(old["metadata"])
            for k in ("labels", "annotations"):  # status updates may touch labels/annotations (pods)
                if k in keep_md:
                    md2[k] = keep_md[k]
            new["metadata"] = md2
        elif has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if info.generation and sub == "" and (new.get("spec") != old.get("spec") if self.crds.of_info(info) is None
                                              else crdmod.generation_changed(old, new)):
            new["metadata"]["generation"] = int(omd.get("generation", 1)) + 1
        new = self._admit(info, new, old, "UPDATE", sub)  # incl. ValidatePodUpdate's spec rules
        if manager is not None:  # the updater's managedFields entry (update.go, patch.go)
            schema, resolve = self._ssa_schema(info)
            ssa.track_update(old, new, schema, resolve, manager=manager, api_version=info.api_version,
                             now=now_rfc3339(), subresource=sub if manager_sub is None else manager_sub,
                             strip_status=sub == "" and has_status)
        cmp_old = dict(old)
        cmp_old["metadata"] = {k: v for k, v in omd.items() if k != "resourceVersion"}
        if new == cmp_old:
            return old_entry
        md = new["metadata"]
        if md.get("deletionTimestamp") and not md.get("finalizers") and not self._grace_pending(info, new):
            # last finalizer removed: the object goes away
            if dry:
                return old_entry
            try:
                e = self.store.update(info.key, ns, name, new, expect_rv=old_entry.rv)
                return self._finish_delete(info, ns, name, e)
            except Conflict:
                raise APIError.modified(info.plural, info.group, name) from None
        if dry:
            return Entry(old_entry.rv, orjson.dumps(new), old_entry.labels, old_entry.fields)
        try:
            entry = self.store.update(info.key, ns, name, new, expect_rv=old_entry.rv)
        except Conflict:
            raise APIError.modified(info.plural, info.group, name) from None
        self._after_write(info, entry)
        return entry

    async def _put(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self._write_fault(info, r.sub, "update")
        obj = await self._read_body(request)
        _check_resource_version_type(info, obj)
        self._field_validation(request, info, obj)
        self._check_type(info, obj)
        entry = self._get_entry(r)
        md = obj.get("metadata") or {}
        rv_s = md.get("resourceVersion")
        if not rv_s and info.kind not in ("Namespace",):
            # upstream: unconditional updates are allowed for most kinds (AllowUnconditionalUpdate)
            precondition = None
        else:
            precondition = self._parse_rv(rv_s) if rv_s else None
        ns = self._space_ns(info, r.ns)
        if info.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise APIError.bad_request("the namespace of the provided object does not match the namespace sent "
                                       "on the request")
        dry = _dry_run(request, "UpdateOptions")
        new_entry = self._commit_update(info, ns, r.name, obj, entry, r.sub, precondition, dry,
                                        manager=self._field_manager(request))
        return self._object_response(request, info, new_entry.data)

    async def _patch(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self._write_fault(info, r.sub, "patch")
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
        body = await request.read()
        if ctype == "application/apply-patch+yaml":
            return self._server_side_apply(request, r, body)
        entry = self._get_entry(r)
        original = orjson.loads(self._out(info, entry.data))
        patched = self._apply_patch(info, ctype, original, body)
        if not isinstance(patched, dict):
            raise APIError.bad_request("the patch produced a non-object")
        rv_err = _resource_version_type_error(patched)
        if rv_err is not None:  # patch.go: the patched JSON does not decode into the object
            shown = orjson.dumps(patched, option=orjson.OPT_SORT_KEYS).decode()
            msg = f"patch: Invalid value: {json.dumps(shown, ensure_ascii=False)}: {rv_err}"
            raise APIError.invalid("", "", "", [("FieldValueInvalid", "patch", msg)])
        self._field_validation(request, info, patched, patch_ctype=ctype, patch_body=body)
        md = patched.get("metadata") if isinstance(patched.get("metadata"), dict) else {}
        rv_s = md.get("resourceVersion") if md else None
        precondition = None
        if rv_s and rv_s != str(entry.rv):
            orig_md = original.get("metadata") or {}
            if rv_s != orig_md.get("resourceVersion"):
                precondition = self._parse_rv(rv_s)
        if info.kind and patched.get("kind", info.kind) != info.kind:
            raise APIError.bad_request(f"the kind in the data ({patched.get('kind')}) does not match the expected "
                                       f"kind ({info.kind})")
        dry = _dry_run(request, "PatchOptions")
        ns = self._space_ns(info, r.ns)
        new_entry = self._commit_update(info, ns, r.name, patched, entry, r.sub, precondition, dry,
                                        manager=self._field_manager(request))
        return self._object_response(request, info, new_entry.data)

    def _apply_patch(self, info: ResourceInfo, ctype: str, original: dict[str, Any], body: bytes) -> Any:
        patchmod = _compat("patch")
        if patchmod is not None:
            try:
                return patchmod.apply_patch(ctype, original, body, gvk=(info.group, info.version, info.kind))
            except patchmod.PatchError as e:
                raise APIError(e.status) from None
        # built-in fallback: merge patch and JSON patch
        try:
            p = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            raise APIError.bad_request(f"error decoding patch: {e}") from None
        if ctype in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
            return merge_patch(original, p)
        if ctype == "application/json-patch+json":
            import jsonpatch

            try:
                return jsonpatch.apply_patch(original, p)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                raise APIError.method_status(422, "Invalid", str(e)) from None
        raise APIError.unsupported_media(ctype)

    # ------------------------------------------------------- server-side apply
    @staticmethod
    def _field_manager(request: web.Request) -> str:
        """``fieldManager``, else the User-Agent's prefix (``prefixFromUserAgent``)."""
        return request.query.get("fieldManager") or ssa.manager_from_user_agent(request.headers.get("User-Agent", ""))

    def _ssa_schema(self, info: ResourceInfo) -> tuple[Any, Callable[[Any], Any]]:
        """The schema server-side apply reads list and map types from, and its ``$ref`` resolver."""
        cr = self.crds.of_info(info)
        if cr is not None:
            return cr.schema, lambda s: s
        api = self.api_version
        name = schemas.definition_for_gvk(info.group, info.version, info.kind, api=api)
        schema = schemas.definitions(api).get(name) if name else None
        return schema, lambda s: schemas.resolve(s, api)

    def _server_side_apply(self, request: web.Request, r: _Route, body: bytes) -> web.Response:
        """PATCH ``application/apply-patch+yaml`` (``handlers/patch.go`` applyPatcher): create when
        absent, else merge with conflicts unless ``force=true`` (:mod:`kubesched.apiserver.apply`)."""
        info = r.info
        assert r.name is not None
        q = request.query
        manager = q.get("fieldManager") or ""
        if not manager:
            raise APIError.invalid("PatchOptions", "meta.k8s.io", "", [(
                "FieldValueRequired", "fieldManager", "fieldManager: Required value: is required for apply patch")])
        force = q.get("force") in ("true", "1", "True")
        try:
            applied = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            applied = _decode_yaml_body(body, e)
        if not isinstance(applied, dict):
            raise APIError.bad_request("the object provided is unrecognized: not an object")
        self._check_type(info, applied)
        amd_raw = applied.get("metadata")
        amd: dict[str, Any] = amd_raw if isinstance(amd_raw, dict) else {}
        if amd.get("name") is not None and amd.get("name") != r.name:
            raise APIError.bad_request(f"the name of the object ({amd.get('name')}) does not match the name on the "
                                       f"URL ({r.name})")
        if amd.get("managedFields"):
            raise APIError.bad_request("metadata.managedFields must be nil")
        self._field_validation(request, info, applied)
        ns = self._space_ns(info, r.ns)
        schema, resolve = self._ssa_schema(info)
        entry = self.store.get(info.key, ns, r.name)
        strip_status = r.sub == "" and "status" in info.subresources
        live = entry.obj() if entry is not None else None
        try:
            new = ssa.apply(live, applied, schema, resolve, manager=manager, force=force,
                            api_version=info.api_version, now=now_rfc3339(), strip_status=strip_status,
                            subresource=r.sub)
        except ssa.ApplyConflict as e:
            raise APIError(e.status(info.plural, info.group, r.name)) from None
        dry = _dry_run(request, "PatchOptions")
        if entry is None:
            if r.sub:
                raise APIError.not_found(info.plural, info.group, r.name)
            new.setdefault("metadata", {})["name"] = r.name
            created = self.create_object(info, r.ns or "", new, dry_run=dry)
            return self._object_response(request, info, created.data, 201)
        new_entry = self._commit_update(info, ns, r.name, new, entry, r.sub, None, dry)
        return self._object_response(request, info, new_entry.data)

    # ----------------------------------------------------------------- delete
    def _grace_pending(self, info: ResourceInfo, obj: dict[str, Any]) -> bool:
        """A pod in graceful deletion whose grace period has not ended."""
        if info.kind != "Pod":
            return False
        md = obj["metadata"]
        ts = md.get("deletionTimestamp")
        if not ts or not md.get("deletionGracePeriodSeconds"):
            return False
        t = _parse_time(ts)
        return t is not None and t > datetime.now(UTC)

    async def _delete_options(self, request: web.Request) -> dict[str, Any]:
        raw = await request.read()
        opts: dict[str, Any] = {}
        if raw.strip() and request.headers.get("Content-Type", "").startswith(protobuf.MEDIA_TYPE):
            # client-go's typed clients send DeleteOptions as protobuf (e.g. helm purging its
            # release Secrets on uninstall)
            try:
                opts = protobuf.decode_object(raw)
            except protobuf.ProtobufError as e:
                raise APIError.bad_request(str(e)) from None
        elif raw.strip():
            try:
                o = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise APIError.bad_request(f"the object provided is unrecognized: {e}") from None
            if isinstance(o, dict):
                opts = o
        q = request.query
        if "gracePeriodSeconds" in q:
            try:
                opts["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
            except ValueError:
                raise APIError.bad_request("invalid gracePeriodSeconds") from None
        if "propagationPolicy" in q:
            opts["propagationPolicy"] = q["propagationPolicy"]
        policy = opts.get("propagationPolicy")
        if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
            # metav1 validation.ValidateDeleteOptions
            msg = (f'propagationPolicy: Unsupported value: "{policy}": supported values: "Foreground", '
                   '"Background", "Orphan", "nil"')
            raise APIError.invalid("DeleteOptions", "meta.k8s.io", "", [("FieldValueNotSupported",
                                                                          "propagationPolicy", msg)])
        return opts

    async def _delete(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self._write_fault(info, "", "delete")
        opts = await self._delete_options(request)
        entry = self._get_entry(r)
        ns = self._space_ns(info, r.ns)
        if _dry_run(request, "DeleteOptions"):
            return self._object_response(request, info, entry.data)
        out = self.delete_object(info, ns, r.name, opts, entry)
        return self._object_response(request, info, out.data)

    def delete_object(self, info: ResourceInfo, ns: str, name: str, opts: dict[str, Any] | None = None,
                      entry: Entry | None = None) -> Entry:
        """Delete as the API would (graceful pods, finalizers, namespaces); returns the answered state.

        Raises :class:`APIError` (NotFound, Conflict on failed preconditions, Forbidden).
        """
        opts = opts or {}
        entry = entry or self.store.get(info.key, ns, name)
        if entry is None:
            raise APIError.not_found(info.plural, info.group, name)
        obj = entry.obj()
        md = obj["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise APIError.conflict(info.plural, info.group, name,
                                    f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                                    f"{md.get('uid')}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise APIError.conflict(info.plural, info.group, name,
                                    f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']},"
                                    f" ResourceVersion in object meta: {md.get('resourceVersion')}")
        if info.kind == "Namespace":
            return self._delete_namespace(info, name, entry, obj)
        if info.kind == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP:
            return self._delete_crd(info, name, entry)
        grace = self._grace_period(info, obj, opts)
        # orphan / foregroundDeletion when a garbage collector runs (--enable-garbage-collector; apiserver/gc.py)
        gc_fins = deletion_finalizers(info, obj, opts) if getattr(self, "garbage_collector", None) else None
        if gc_fins is not None:
            md["finalizers"] = gc_fins
        if md.get("deletionTimestamp"):
            if gc_fins is not None:  # a new propagation policy for an object being deleted
                return self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
            # already terminating: a shorter grace period may be requested
            cur = md.get("deletionGracePeriodSeconds")
            if grace is not None and cur is not None and grace < cur:
                if grace == 0 and not md.get("finalizers"):
                    return self._remove(info, ns, name, entry)
                md["deletionGracePeriodSeconds"] = grace
                md["deletionTimestamp"] = now_rfc3339(grace)
                e = self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
                self._schedule_reap(info, ns, name, md.get("uid", ""), grace)
                return e
            return entry
        fins = md.get("finalizers") or []
        if grace:
            md["deletionTimestamp"] = now_rfc3339(grace)
            md["deletionGracePeriodSeconds"] = grace
            if info.generation:
                md["generation"] = int(md.get("generation", 1)) + 1
            e = self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
            self._schedule_reap(info, ns, name, md.get("uid", ""), grace)
            return e
        if fins:
            md["deletionTimestamp"] = now_rfc3339()
            md["deletionGracePeriodSeconds"] = 0
            if info.generation:
                md["generation"] = int(md.get("generation", 1)) + 1
            return self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
        return self._remove(info, ns, name, entry)

    def _grace_period(self, info: ResourceInfo, obj: dict[str, Any], opts: dict[str, Any]) -> int | None:
        """Upstream pod strategy ``CheckGracefulDeleteStrategy``: unscheduled or terminal pods go at once."""
        if info.kind != "Pod":
            return None
        g = opts.get("gracePeriodSeconds")
        spec = obj.get("spec") or {}
        if g is None:
            g = spec.get("terminationGracePeriodSeconds", 30)
        g = int(g or 0)
        if g < 0:
            g = 1
        if not spec.get("nodeName") or (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            g = 0
        return g

    def _remove(self, info: ResourceInfo, ns: str, name: str, entry: Entry) -> Entry:
        try:
            e = self.store.delete(info.key, ns, name, expect_rv=entry.rv)
        except KeyNotFound:
            raise APIError.not_found(info.plural, info.group, name) from None
        except Conflict:
            raise APIError.modified(info.plural, info.group, name) from None
        self._timers.pop((info.key, f"{ns}/{name}"), None)
        return e

    def _finish_delete(self, info: ResourceInfo, ns: str, name: str, e: Entry) -> Entry:
        return self._remove(info, ns, name, e)

    def _schedule_reap(self, info: ResourceInfo, ns: str, name: str, uid: str, grace: float) -> None:
        loop = self.loop or asyncio.get_event_loop()
        key = (info.key, f"{ns}/{name}")
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._timers[key] = loop.call_later(max(grace, 0.0), self._reap, info, ns, name, uid)

    def _reap(self, info: ResourceInfo, ns: str, name: str, uid: str) -> None:
        """The grace period ended (as the kubelet would): remove the pod unless finalizers hold it."""
        self._timers.pop((info.key, f"{ns}/{name}"), None)
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            return
        obj = entry.obj()
        md = obj["metadata"]
        if md.get("uid") != uid or not md.get("deletionTimestamp"):
            return
        if md.get("finalizers"):
            md["deletionGracePeriodSeconds"] = 0
            self.store.update(info.key, ns, name, obj, expect_rv=entry.rv)
            return
        try:
            self._remove(info, ns, name, entry)
        except APIError:
            pass

    def _resume_graceful_deletions(self) -> None:
        info = res.find("", "v1", "pods")
        assert info is not None
        now = datetime.now(UTC)
        for e in self.store.list(info.key):
            obj = e.obj()
            md = obj["metadata"]
            ts = md.get("deletionTimestamp")
            if ts and md.get("deletionGracePeriodSeconds"):
                t = _parse_time(ts) or now
                self._schedule_reap(info, md.get("namespace", ""), md["name"], md.get("uid", ""),
                                    max(0.0, (t - now).total_seconds()))

    def _delete_namespace(self, info: ResourceInfo, name: str, entry: Entry, obj: dict[str, Any]) -> Entry:
        if name in _UNDELETABLE_NAMESPACES:
            raise APIError.forbidden("namespaces", "", name, "this namespace may not be deleted")
        md = obj["metadata"]
        if md.get("deletionTimestamp"):
            return entry
        md["deletionTimestamp"] = now_rfc3339()
        md["deletionGracePeriodSeconds"] = 0
        obj.setdefault("status", {})["phase"] = "Terminating"
        e = self.store.update(info.key, "", name, obj, expect_rv=entry.rv)
        loop = self.loop or asyncio.get_event_loop()
        loop.call_soon(self._finalize_namespace, name)
        return e

    def _finalize_namespace(self, name: str) -> None:
        """The namespace controller, in one step: delete every namespaced object, then the namespace."""
        for info in self._all_infos():
            if not info.namespaced or info.group == "events.k8s.io":
                continue
            for e in self.store.list(info.key, name):
                o = e.obj()
                md = o["metadata"]
                try:
                    if md.get("finalizers"):
                        md["finalizers"] = []
                        md.setdefault("deletionTimestamp", now_rfc3339())
                        e = self.store.update(info.key, name, md["name"], o, expect_rv=e.rv)
                    self._remove(info, name, md["name"], e)
                except (APIError, KeyNotFound, Conflict):
                    pass
        ns_info = res.find("", "v1", "namespaces")
        assert ns_info is not None
        nse = self.store.get(ns_info.key, "", name)
        if nse is not None:
            o = nse.obj()
            o.setdefault("spec", {})["finalizers"] = []
            if o["metadata"].get("finalizers"):
                self.store.update(ns_info.key, "", name, o, expect_rv=nse.rv)
                return
            try:
                self._remove(ns_info, "", name, nse)
            except APIError:
                pass

    async def _delete_collection(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        self._write_fault(info, "", "delete")
        opts = await self._delete_options(request)
        dry = _dry_run(request, "DeleteOptions")
        lsel, fsel = self._parse_selectors(request, info)
        match = _matcher(lsel, fsel)
        ns = self._space_ns(info, r.ns) if r.ns is not None else None
        out = []
        for e in self.store.list(info.key, ns):
            if match is not None and not match(e):
                continue
            o = orjson.loads(e.data)["metadata"]
            if dry:
                out.append(self._out(info, e.data))
                continue
            try:
                d = self.delete_object(info, o.get("namespace", "") if info.namespaced else "", o["name"], opts, e)
                out.append(self._out(info, d.data))
            except APIError:
                continue
        head = orjson.dumps({"kind": f"{info.kind}List", "apiVersion": info.api_version,
                             "metadata": {"resourceVersion": str(self.store.current_rev)}})
        return web.Response(body=head[:-1] + b',"items":[' + b",".join(out) + b"]}", content_type=_JSON)

    # ------------------------------------------------------------ subresources
    async def _bind(self, request: web.Request, r: _Route) -> web.Response:
        pods = res.find("", "v1", "pods")
        assert pods is not None
        info = pods
        self._write_fault(info, "binding", "create")
        dry = _dry_run(request, "CreateOptions")
        body = await self._read_body(request)
        _check_resource_version_type(("Binding", "v1"), body)
        target = body.get("target") or {}
        bmd = body.get("metadata") or {}
        ns = r.ns or ""
        name = r.name if r.name is not None else str(bmd.get("name") or "")
        if not name:
            raise APIError.invalid("Binding", "", "", [("FieldValueRequired", "metadata.name",
                                                        "metadata.name: Required value: name is required")])
        if bmd.get("name") and bmd["name"] != name:
            raise APIError.bad_request("name in URL does not match name in Binding object")
        if target.get("kind") not in (None, "", "Node"):
            raise APIError.invalid("Binding", "", name, [(
                "FieldValueNotSupported", "target.kind",
                f'target.kind: Unsupported value: "{target.get("kind")}": supported values: "Node", ""')])
        node = target.get("name") or ""
        if not node:
            raise APIError.invalid("Binding", "", name, [(
                "FieldValueRequired", "target.name", "target.name: Required value")])
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            raise APIError.not_found("pods", "", name)
        pod = entry.obj()
        md, spec = pod["metadata"], pod.setdefault("spec", {})

        def conflict(why: str) -> APIError:
            return APIError.conflict("pods/binding", "", name, why)

        def precondition_failed(why: str) -> APIError:
            # the storage layer's precondition check (GuaranteedUpdate with the binding's UID
            # and resourceVersion), passed through by storeerr.InterpretUpdateError as a
            # Conflict on "pods" (pkg/registry/core/pod/storage/storage.go setPodNodeAndMetadata)
            return APIError.conflict("pods", "", name, f"StorageError: invalid object, Code: 4, Key: "
                                     f"/registry/pods/{ns}/{name}, ResourceVersion: 0, AdditionalErrorMsg: {why}")

        if bmd.get("uid") and bmd["uid"] != md.get("uid"):
            raise precondition_failed(f"Precondition failed: UID in precondition: {bmd['uid']}, "
                                      f"UID in object meta: {md.get('uid')}")
        if bmd.get("resourceVersion") and bmd["resourceVersion"] != md.get("resourceVersion"):
            raise precondition_failed(f"Precondition failed: ResourceVersion in precondition: "
                                      f"{bmd['resourceVersion']}, ResourceVersion in object meta: "
                                      f"{md.get('resourceVersion')}")
        if md.get("deletionTimestamp"):
            raise conflict(f"pod {name} is being deleted, cannot be assigned to a host")
        if spec.get("nodeName"):
            raise conflict(f'pod {name} is already assigned to node "{spec["nodeName"]}"')
        if spec.get("schedulingGates"):
            raise conflict(f"pod {name} has non-empty .spec.schedulingGates")
        spec["nodeName"] = node
        status = pod.setdefault("status", {})
        if self.features.enabled("ClearingNominatedNodeNameAfterBinding"):
            # clear the nomination hint (pkg/registry/core/pod/storage/storage.go L246-249)
            status.pop("nominatedNodeName", None)
        if bmd.get("annotations"):
            md.setdefault("annotations", {}).update(bmd["annotations"])
        labels = dict(bmd.get("labels") or {})
        nodes_info = _by_plural("nodes")
        node_entry = self.store.get(nodes_info.key, "", node) if nodes_info is not None else None
        if node_entry is not None:  # PodTopologyLabels admission on the binding (admission.go admitBinding)
            node_labels = (node_entry.obj().get("metadata") or {}).get("labels")
            labels.update(strategy.pod_topology_labels(node_labels, self.features))
        if labels:
            md.setdefault("labels", {}).update(labels)
        conds = status.setdefault("conditions", [])
        now = now_rfc3339()
        for c in conds:
            if c.get("type") == "PodScheduled":
                if c.get("status") != "True":
                    c["lastTransitionTime"] = now
                c["status"] = "True"
                c.pop("reason", None)
                c.pop("message", None)
                break
        else:
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now})
        if not dry:
            try:
                e = self.store.update(info.key, ns, name, pod, expect_rv=entry.rv)
            except Conflict:
                raise APIError.modified("pods", "", name) from None
            self._after_write(info, e)
        return _json_response(status_success(201), 201)

    @staticmethod
    def _to_scale(obj: dict[str, Any]) -> dict[str, Any]:
        """autoscaling/v1 ``Scale`` of a workload.

        Upstream: ``pkg/registry/apps/deployment/storage`` ``scaleFromDeployment``.
        """
        md = obj["metadata"]
        spec, st = obj.get("spec") or {}, obj.get("status") or {}
        sel = spec.get("selector") or {}
        if "matchLabels" in sel or "matchExpressions" in sel:
            parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
            for ex in sel.get("matchExpressions") or []:
                op = ex.get("operator")
                vals = ",".join(ex.get("values") or [])
                parts.append({"In": f"{ex['key']} in ({vals})", "NotIn": f"{ex['key']} notin ({vals})",
                              "Exists": ex["key"], "DoesNotExist": f"!{ex['key']}"}.get(op, ex["key"]))
            selector = ",".join(parts)
        else:  # ReplicationController: a plain map
            selector = ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
        scale_md = {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in md}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_md,
                "spec": {"replicas": spec.get("replicas", 1)},
                "status": {"replicas": st.get("replicas", 0), "selector": selector}}

    async def _scale(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        assert r.name is not None
        entry = self._get_entry(r)
        obj = entry.obj()
        cr = self.crds.of_info(info)
        to_scale: Callable[[dict[str, Any]], dict[str, Any]] = \
            self._to_scale if cr is None else (lambda o: crdmod.scale_of(cr, o))
        if request.method == "GET":
            return _json_response(to_scale(obj))
        if request.method not in ("PUT", "PATCH"):
            raise APIError.method_not_allowed()
        self._write_fault(info, "scale", "update" if request.method == "PUT" else "patch")
        scale = to_scale(obj)
        if request.method == "PUT":
            new_scale = await self._read_body(request)
        else:
            ctype = request.headers.get("Content-Type", "").split(";")[0].strip()
            patchmod = _compat("patch")
            body = await request.read()
            if patchmod is not None:
                try:
                    new_scale = patchmod.apply_patch(ctype, scale, body, gvk=("autoscaling", "v1", "Scale"))
                except patchmod.PatchError as e:
                    raise APIError(e.status) from None
            else:
                new_scale = merge_patch(scale, orjson.loads(body))
        rv_s = (new_scale.get("metadata") or {}).get("resourceVersion")
        precondition = self._parse_rv(rv_s) if rv_s and rv_s != str(entry.rv) else None
        replicas = (new_scale.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise APIError.invalid("Scale", "autoscaling", r.name, [(
                "FieldValueInvalid", "spec.replicas",
                f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")])
        if cr is not None and cr.scale is not None:
            crdmod.set_path(obj, str(cr.scale.get("specReplicasPath") or ".spec.replicas"), replicas)
        else:
            obj.setdefault("spec", {})["replicas"] = replicas
        ns = self._space_ns(info, r.ns)
        new_entry = self._commit_update(info, ns, r.name, obj, entry, "", precondition,
                                        _dry_run(request, "UpdateOptions"), manager=self._field_manager(request),
                                        manager_sub="scale")
        return _json_response(to_scale(new_entry.obj()))

    async def _evict(self, request: web.Request, r: _Route) -> web.Response:
        info = r.info
        assert r.name is not None
        self._write_fault(info, "eviction", "create")
        dry = _dry_run(request, "CreateOptions")
        body = await self._read_body(request)
        _check_resource_version_type(("Eviction", "v1"), body)
        ns, name = r.ns or "", r.name
        bmd = body.get("metadata") or {}
        if bmd.get("name") and bmd["name"] != name:
            raise APIError.bad_request("name in URL does not match name in Eviction object")
        entry = self.store.get(info.key, ns, name)
        if entry is None:
            raise APIError.not_found("pods", "", name)
        pod = entry.obj()
        opts = body.get("deleteOptions") or {}
        phase = (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase in ("Succeeded", "Failed", "Pending"):
            if not dry:
                self.delete_object(info, ns, name, opts, entry)
            return _json_response(status_success(201), 201)
        pdbs = [p for p in self._pdbs_for(ns, pod)]
        if len(pdbs) > 1:
            raise APIError.internal("This pod has more than one PodDisruptionBudget, which the eviction "
                                    "subresource does not support.")
        if pdbs:
            pdb = pdbs[0]
            _expected, healthy, desired = self._pdb_counts(ns, pdb)
            if healthy - desired <= 0:
                pname = pdb["metadata"]["name"]
                raise APIError.too_many_requests(
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    [{"reason": "DisruptionBudget",
                      "message": f"The disruption budget {pname} needs {desired} healthy pods and has {healthy} "
                                 f"currently"}])
        if not dry:
            self.delete_object(info, ns, name, opts, entry)
        return _json_response(status_success(201), 201)

    def _pdbs_for(self, ns: str, pod: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for e in self.store.list("policy/poddisruptionbudgets", ns):
            pdb = e.obj()
            if _pdb_selects(pdb, pod):
                out.append(pdb)
        return out

    def _pdb_counts(self, ns: str, pdb: dict[str, Any]) -> tuple[int, int, int]:
        """(expected, currently healthy, desired healthy), computed now as the disruption
        controller would (so evictions are right even without the simulated controllers)."""
        from kubesched.apiserver.controllers import pdb_status

        st = pdb_status(pdb, [e.obj() for e in self.store.list("pods", ns)], now_rfc3339())
        return st["expectedPods"], st["currentHealthy"], st["desiredHealthy"]

    # ----------------------------------------------------------------- hooks
    def _after_write(self, info: ResourceInfo, entry: Entry) -> None:
        """Called after a successful create/update through the API (extension point)."""
        if info.kind == "CustomResourceDefinition" and info.group == crdmod.CRD_GROUP:
            self._crd_established(entry)


def info_for_object(obj: dict[str, Any]) -> ResourceInfo:
    """The served resource for an object's ``apiVersion`` and ``kind``; raises :class:`APIError`
    (404, as the API server's "no matches for kind") when the box does not serve it."""
    av, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    group, _, version = av.rpartition("/")
    for r in res.RESOURCES:
        if r.group == group and r.version == version and r.kind == kind and r.plural != "bindings":
            return r
    raise APIError.method_status(404, "NotFound", f'no matches for kind "{kind}" in version "{av}"')


def _version_priority(version: str) -> tuple[int, int, int]:
    """Sort key of Kubernetes API versions (``v1`` < ``v1beta1`` < ``v1alpha3``: preferred first)."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if m is None:
        return (3, 0, 0)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0))


def _trim_heap() -> None:
    """Return freed heap to the OS (glibc ``malloc_trim``): request bursts otherwise leave RSS high."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _by_plural(plural: str) -> ResourceInfo | None:
    for r in res.RESOURCES:
        if r.plural == plural and r.group != "events.k8s.io":
            return r
    return None


def _pdb_selects(pdb: dict[str, Any], pod: dict[str, Any]) -> bool:
    """Whether the PDB's label selector selects ``pod`` (policy/v1: ``{}`` selects all, null none)."""
    from kubesched.api.labels import make_requirement

    sel = (pdb.get("spec") or {}).get("selector")
    if sel is None:
        return False
    labels = (pod.get("metadata") or {}).get("labels") or {}
    reqs = [make_requirement(k, "=", (v,)) for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for ex in sel.get("matchExpressions") or []:
        reqs.append(make_requirement(ex["key"], ops.get(ex.get("operator", ""), "in"), ex.get("values") or ()))
    return Selector(reqs).matches(labels)  # policy/v1: an empty selector selects every pod


def _qos_class(spec: dict[str, Any]) -> str:
    """Upstream ``qos.GetPodQOS`` (simplified to cpu/memory requests and limits)."""
    containers = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    any_set = False
    guaranteed = True
    for c in containers:
        r = c.get("resources") or {}
        req, lim = r.get("requests") or {}, r.get("limits") or {}
        for k in ("cpu", "memory"):
            if k in req or k in lim:
                any_set = True
            if k not in lim or (k in req and req[k] != lim[k]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out

