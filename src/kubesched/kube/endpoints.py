"""kube-scheduler's HTTPS endpoints: ``/healthz``, ``/livez``, ``/readyz``, ``/metrics``, ``/configz``.

Follows ``cmd/kube-scheduler/app/server.go`` (``Run``: which checks go where;
``newEndpointsHandler``; ``buildHandlerChain``: authentication → authorization before every
handler), ``staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go`` (output format,
``?verbose``, ``?exclude=``, per-check sub-paths, failures always verbose with
"reason withheld"), ``healthz.NewShutdownHealthz`` and ``pkg/server/options/authorization.go``
(``--authorization-always-allow-paths`` default ``/healthz,/readyz,/livez``, a trailing ``*``
makes a prefix; group ``system:masters`` always allowed).

Every check evaluation is counted in the component-base SLI metrics served at ``/metrics/slis``
(``kubernetes_healthcheck{name,type}``, ``kubernetes_healthchecks_total{name,type,status}``).

Checks as upstream kube-scheduler: ``/healthz`` = [``leaderElection``] (just ``ping`` when there
is no leader election), ``/livez`` = [``ping``], ``/readyz`` = [``leaderElection``,
``shutdown``, ``sched-handler-sync``]. Unlike upstream (whose adaptor is never wired: client-go's
``RunOrDie`` wires it, kube-scheduler does not call it) ``leaderElection`` really fails when the lease is held
but not renewed (:meth:`kubesched.kube.leaderelection.LeaderElector.check`).

Who may read ``/metrics`` and ``/configz`` (everything not in the always-allow list):

- anonymous requests are ``system:anonymous`` and get ``403 Forbidden`` (a ``Status``), as
  upstream with no authorization kubeconfig;
- a bearer token listed in ``static_tokens`` (token → user name) is allowed everything — the
  simple local/dev mode;
- with a ``delegate`` :class:`~kubesched.kube.client.APIClient`, any other bearer token is
  checked as upstream's delegated authn/authz does: ``TokenReview``
  (``authentication.k8s.io/v1``) then ``SubjectAccessReview`` (``authorization.k8s.io/v1``,
  ``nonResourceAttributes{path, verb}``); an unknown token → 401. Users in group
  ``system:masters`` skip the SubjectAccessReview, as upstream's ``AlwaysAllowGroups``.
  Client-certificate authentication (``--client-ca-file``) is not implemented.

Caching, as ``staging/src/k8s.io/apiserver/pkg/authentication/token/cache/cached_token_authenticator.go``
and ``plugin/pkg/authorizer/webhook/webhook.go`` (the delegating factories' 10 s defaults): a
TokenReview answer, authenticated or not, is kept 10 s under an HMAC-SHA256 of the token with a
per-process random key (the token itself is not kept; untrusted input cannot aim at hash
collisions); a failed review (reviewer unreachable, error status) is not cached; concurrent requests
with the same token share one review (``singleflight``). SubjectAccessReview answers, allowed or
denied, are kept 10 s in an LRU of 8,192 entries keyed by the review's spec. Both caches drop
expired entries, so a flood of distinct unknown tokens holds at most 10 s of them (at most 32,768).
TokenReviews and SubjectAccessReviews go through their own clients (``delegate`` /
``authz_delegate``; the runner gives each QPS 200, burst 400 as ``options/authentication.go`` and
``options/authorization.go`` do), never the scheduler's.

TLS: ``cert_file``/``key_file``, or a self-signed certificate for ``localhost`` and ``127.0.0.1``
(upstream ``MaybeDefaultWithSelfSignedCerts``; an ECDSA P-256 key where upstream makes RSA-2048, see
:func:`self_signed_cert`), made with ``cryptography``: kept in ``cert_dir``
(``--cert-dir``) and reused by the next start when given, in memory otherwise.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from aiohttp import web
from cachetools import TTLCache
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

__all__ = [
    "DEFAULT_ALWAYS_ALLOW_PATHS",
    "EndpointsServer",
    "HealthCheck",
    "self_signed_cert",
]

log = logging.getLogger("kubesched.endpoints")

DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
_CACHE_TTL = 10.0  # --authentication-token-webhook-cache-ttl, --authorization-webhook-cache-*-ttl
_AUTHN_CACHE_SIZE = 32768  # cached_token_authenticator.go: "a 32k entry cache"
_AUTHZ_CACHE_SIZE = 8192  # webhook.go: cache.NewLRUExpireCache(8192)


@dataclass(frozen=True)
class HealthCheck:
    """A named check: ``check()`` returns None when healthy, else the error text."""

    name: str
    check: Callable[[], str | None]


PING = HealthCheck("ping", lambda: None)


def self_signed_cert(host: str = "localhost", ips: Iterable[str] = ("127.0.0.1",),
                     alternate_dns: Iterable[str] = ()) -> tuple[bytes, bytes]:
    """A self-signed serving certificate and its key (PEM: ``CERTIFICATE``, ``EC PRIVATE KEY``),
    valid one year, for ``host``, the given IPs and DNS names; SHA-256, CN ``<host>@<unix time>``.

    client-go ``util/cert/cert.go`` ``GenerateSelfSignedCertKeyWithOptions`` (what kube-scheduler
    serves without ``--tls-cert-file``) makes two RSA-2048 keys: a CA ``<host>-ca@<time>`` and a
    serving certificate it signs. Here one self-signed certificate, and an ECDSA P-256 key: RSA-2048
    generation is 0.05–0.15 CPU-s (a prime search, varying from start to start) of every start
    without ``--cert-dir`` and of the first one with it, ECDSA ~0.2 ms. Go's TLS stack, kubectl,
    Prometheus and kube-apiserver accept ECDSA serving certificates, and client-go's
    ``keyutil.ParsePrivateKeyPEM`` reads the ``EC PRIVATE KEY`` written to ``--cert-dir``.
    The key usage is ``digitalSignature`` + ``certSign`` (``keyEncipherment`` is RSA's, RFC 5480 §3)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = _dt.datetime.now(_dt.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@{int(now.timestamp())}")])
    sans: list[x509.GeneralName] = [x509.DNSName(host)]
    sans += [x509.DNSName(d) for d in alternate_dns]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _dt.timedelta(hours=1)).not_valid_after(now + _dt.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=True,
                                         content_commitment=False, data_encipherment=False, key_agreement=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                              serialization.NoEncryption()))


def _server_context(cert_file: str | None, key_file: str | None,
                    cert_dir: str | None = None) -> tuple[ssl.SSLContext, bytes | None]:
    """The serving TLS context and, when generated here, the self-signed certificate (PEM).

    As apiserver ``SecureServingOptions.MaybeDefaultWithSelfSignedCerts``
    (``staging/src/k8s.io/apiserver/pkg/server/options/serving.go``): ``cert_file``/``key_file``
    when given; else with ``cert_dir`` the pair ``<cert_dir>/kube-scheduler.crt`` / ``.key``
    (kube-scheduler's PairName) when both can be read (one of the two alone is an error), a new
    self-signed pair written there otherwise (directory 0755, certificate 0644, key 0600, as
    ``certutil.WriteCert`` / ``keyutil.WriteKey``) — so a restart reuses it; without ``cert_dir``
    a new pair in memory. The context asks no client certificate, so no CA store is loaded.

    Raises:
        ValueError: only one of cert_file/key_file given, or only one file of the cert_dir pair readable.
        OSError / ssl.SSLError: unreadable or invalid files, an unwritable ``cert_dir``.
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)  # create_default_context's server options, no CA store
    ctx.options |= ssl.OP_NO_COMPRESSION
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if cert_file or key_file:
        if not (cert_file and key_file):
            raise ValueError("--tls-cert-file and --tls-private-key-file must be given together")
        ctx.load_cert_chain(cert_file, key_file)
        return ctx, None
    if cert_dir:
        cpath, kpath = os.path.join(cert_dir, "kube-scheduler.crt"), os.path.join(cert_dir, "kube-scheduler.key")
        readable = [os.access(p, os.R_OK) for p in (cpath, kpath)]
        if all(readable):
            ctx.load_cert_chain(cpath, kpath)
            return ctx, None
        if any(readable):
            missing = cpath if not readable[0] else kpath
            raise ValueError(f"error reading {missing}, certificate and key must be supplied as a pair")
        cert, key = self_signed_cert(alternate_dns=[socket.gethostname()])
        os.makedirs(cert_dir, 0o755, exist_ok=True)
        for path, data, mode in ((cpath, cert, 0o644), (kpath, key, 0o600)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(cpath, kpath)
        log.info("Generated self-signed cert (%s, %s)", cpath, kpath)
        return ctx, cert
    cert, key = self_signed_cert(alternate_dns=[socket.gethostname()])
    import tempfile  # here: only this path needs it (~10 ms of imports)

    with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as d:  # ssl loads only from files
        cpath, kpath = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
        for path, data in ((cpath, cert), (kpath, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(cpath, kpath)
    log.info("Generated self-signed cert in-memory")
    return ctx, cert


def _status(code: int, reason: str, message: str) -> web.Response:
    """A ``Status`` as apiserver's ``responsewriters`` writes it (``Forbidden`` has ``details``)."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason}
    if code == 403:
        body["details"] = {}
    body["code"] = code
    return web.json_response(body, status=code)


def _text(body: str, status: int = 200) -> web.Response:
    resp = web.Response(text=body, status=status, content_type="text/plain", charset="utf-8")
    resp.headers["X-Content-Type-Options"] = "nosniff"
    return resp


class EndpointsServer:
    """The scheduler's HTTPS server.

    Args:
        bind_address / secure_port: ``--bind-address`` (``0.0.0.0``) / ``--secure-port`` (10259;
            0 = an ephemeral port, see :attr:`port`).
        cert_file / key_file: ``--tls-cert-file`` / ``--tls-private-key-file`` (else self-signed).
        cert_dir: ``--cert-dir``: where the self-signed pair is kept and found again by the next
            start (``kube-scheduler.crt`` / ``.key``); None = in memory, generated every start.
        leader_election_check: e.g. ``LeaderElector.check`` (None: leader election disabled).
        handlers_synced: ``() -> bool``, the runner's "informers and handlers synced" state
            (``sched-handler-sync``); None = always synced.
        metrics: a :class:`kubesched.kube.metrics.SchedulerMetrics` served at ``/metrics``;
            ``before_scrape()`` runs first (e.g. ``lambda: metrics.update_from(scheduler)``).
        configz: the effective ``KubeSchedulerConfiguration`` as a JSON-able dict (or a callable
            returning it), served as ``{"componentconfig": ...}``.
        always_allow_paths: ``--authorization-always-allow-paths``.
        static_tokens: bearer token → user name, allowed everything.
        delegate: an APIClient for TokenReview (and SubjectAccessReview unless ``authz_delegate``
            is given); None: no delegation.
        authz_delegate: an APIClient for SubjectAccessReview (default: ``delegate``).
        clock: monotonic seconds, for the caches' expiry (tests).
        resource_metrics: ``() -> bytes`` for ``/metrics/resources`` (e.g.
            ``lambda: pod_resource_metrics(pod_store.values())``), served only while
            ``is_leader()`` (an empty answer otherwise, as upstream).

    Raises:
        ValueError: only one of cert_file/key_file given (or of the pair in cert_dir).
    """

    def __init__(self, *, bind_address: str = "0.0.0.0", secure_port: int = 10259,
                 cert_file: str | None = None, key_file: str | None = None, cert_dir: str | None = None,
                 leader_election_check: Callable[[], str | None] | None = None,
                 handlers_synced: Callable[[], bool] | None = None,
                 metrics: Any = None, before_scrape: Callable[[], None] | None = None,
                 configz: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
                 always_allow_paths: Iterable[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
                 static_tokens: Mapping[str, str] | None = None, delegate: Any = None,
                 resource_metrics: Callable[[], bytes] | None = None,
                 is_leader: Callable[[], bool] | None = None, authz_delegate: Any = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bind_address = bind_address
        self.secure_port = secure_port
        self.ssl_context, self.self_signed_cert = _server_context(cert_file, key_file, cert_dir)
        self._shutting_down = False
        self._handlers_synced = handlers_synced
        healthz: list[HealthCheck] = []
        readyz: list[HealthCheck] = []
        if leader_election_check is not None:
            le = HealthCheck("leaderElection", leader_election_check)
            healthz.append(le)
            readyz.append(le)
        readyz.append(HealthCheck("shutdown", self._check_shutdown))
        readyz.append(HealthCheck("sched-handler-sync", self._check_handler_sync))
        self.checks: dict[str, list[HealthCheck]] = {
            "healthz": healthz or [PING], "livez": [PING], "readyz": readyz}
        self.metrics = metrics
        self.before_scrape = before_scrape
        self.configz = configz
        self.always_allow_paths = tuple(always_allow_paths)
        self.static_tokens = dict(static_tokens or {})
        self.delegate = delegate
        self.authz_delegate = authz_delegate if authz_delegate is not None else delegate
        self.resource_metrics = resource_metrics
        self.is_leader = is_leader
        self._authn_cache: TTLCache[bytes, tuple[str, list[str]] | None] = TTLCache(
            _AUTHN_CACHE_SIZE, _CACHE_TTL, timer=clock)
        self._authn_key = os.urandom(32)
        self._authn_inflight: dict[bytes, asyncio.Future[tuple[str, list[str]] | None]] = {}
        self._authz_cache: TTLCache[tuple[str, tuple[str, ...], str, str], bool] = TTLCache(
            _AUTHZ_CACHE_SIZE, _CACHE_TTL, timer=clock)
        self.token_reviews = 0  # TokenReviews sent (cache misses)
        self.access_reviews = 0  # SubjectAccessReviews sent
        self._runner: web.AppRunner | None = None
        self.port = 0
        # component-base/metrics/prometheus/slis: every health check evaluation, at /metrics/slis
        self.sli_registry = CollectorRegistry(auto_describe=True)
        self._sli_gauge = Gauge("kubernetes_healthcheck", "This metric records the result of a single healthcheck.",
                                ["name", "type"], registry=self.sli_registry)
        self._sli_total = Counter("kubernetes_healthchecks", "This metric records the results of all healthcheck.",
                                  ["name", "type", "status"], registry=self.sli_registry)

    # ───────────────────────────── checks ─────────────────────────────

    def begin_shutdown(self) -> None:
        """Make ``/readyz`` fail its ``shutdown`` check (``NewShutdownHealthz``)."""
        self._shutting_down = True

    def _check_shutdown(self) -> str | None:
        return "process is shutting down" if self._shutting_down else None

    def _check_handler_sync(self) -> str | None:
        if self._handlers_synced is None or self._handlers_synced():
            return None
        return "handlers are not fully synchronized"

    def _run_check(self, c: HealthCheck, group: str) -> str | None:
        try:
            err = c.check()
        except Exception as exc:  # noqa: BLE001 - a crashing check is a failing check
            err = f"check panicked: {exc!r}"
        self._sli_gauge.labels(name=c.name, type=group).set(0 if err is not None else 1)
        self._sli_total.labels(name=c.name, type=group, status="error" if err is not None else "success").inc()
        return err

    def _health(self, group: str, request: web.Request) -> web.Response:
        """``handleRootHealth``."""
        excluded = list(dict.fromkeys(request.query.getall("exclude", [])))
        out: list[str] = []
        failed: list[str] = []
        for c in self.checks[group]:
            if c.name in excluded:
                excluded.remove(c.name)
                out.append(f"[+]{c.name} excluded: ok\n")
                continue
            err = self._run_check(c, group)
            if err is not None:
                out.append(f"[-]{c.name} failed: reason withheld\n")
                failed.append(c.name)
                log.info("[-]%s failed: %s", c.name, err)
            else:
                out.append(f"[+]{c.name} ok\n")
        if excluded:
            names = ",".join(f'"{n}"' for n in sorted(excluded))
            out.append(f"warn: some health checks cannot be excluded: no matches for {names}\n")
        if failed:
            return _text("".join(out) + f"{group} check failed\n", 500)
        if "verbose" not in request.query:
            return _text("ok")
        return _text("".join(out) + f"{group} check passed\n")

    def _single_check(self, c: HealthCheck, group: str) -> web.Response:
        """``adaptCheckToHandler``."""
        err = self._run_check(c, group)
        if err is not None:
            return _text(f"internal server error: {err}\n", 500)
        return _text("ok")

    # ───────────────────────────── authn / authz ─────────────────────────────

    def _always_allowed(self, path: str) -> bool:
        for p in self.always_allow_paths:
            if p.endswith("*") and path.startswith(p[:-1]):
                return True
            if path == p:
                return True
        return False

    async def _authenticate(self, token: str) -> tuple[str, list[str]] | None:
        if token in self.static_tokens:
            return self.static_tokens[token], ["system:authenticated"]
        if self.delegate is None:
            return None
        key = hmac.new(self._authn_key, token.encode(), hashlib.sha256).digest()
        try:
            return self._authn_cache[key]
        except KeyError:
            pass
        shared = self._authn_inflight.get(key)
        if shared is None:  # singleflight: one review per token at a time, detached from the request
            shared = asyncio.ensure_future(self._review_and_cache(key, token))
            self._authn_inflight[key] = shared
        return await asyncio.shield(shared)

    async def _review_and_cache(self, key: bytes, token: str) -> tuple[str, list[str]] | None:
        try:
            ok, user = await self._token_review(token)
            if ok:
                self._authn_cache[key] = user
            return user
        finally:
            del self._authn_inflight[key]

    async def _token_review(self, token: str) -> tuple[bool, tuple[str, list[str]] | None]:
        """(answered, user): one TokenReview; answered False when it failed (not cached)."""
        self.token_reviews += 1
        try:
            review = await self.delegate.create(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
        except Exception as err:  # noqa: BLE001 - an unreachable reviewer authenticates no one
            log.warning("TokenReview failed: %s", err)
            return False, None
        status = review.get("status") or {}
        if not status.get("authenticated"):
            return True, None
        u = status.get("user") or {}
        return True, (str(u.get("username", "")), list(u.get("groups") or []))

    async def _authorize(self, user: str, groups: list[str], path: str, verb: str) -> bool:
        if "system:masters" in groups:
            return True
        if self.authz_delegate is None:
            return False
        key = (user, tuple(groups), path, verb)
        try:
            return self._authz_cache[key]
        except KeyError:
            pass
        self.access_reviews += 1
        try:
            review = await self.authz_delegate.create(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                 "spec": {"user": user, "groups": groups,
                          "nonResourceAttributes": {"path": path, "verb": verb}}})
            allowed = bool((review.get("status") or {}).get("allowed"))
        except Exception as err:  # noqa: BLE001
            log.warning("SubjectAccessReview failed: %s", err)
            return False
        self._authz_cache[key] = allowed
        return allowed

    @web.middleware
    async def _cache_control(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        """``WithCacheControl``: nothing here may be cached."""
        resp: web.StreamResponse = await handler(request)
        resp.headers.setdefault("Cache-Control", "no-cache, private")
        return resp

    @web.middleware
    async def _auth_middleware(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        path = request.path
        verb = {"GET": "get", "HEAD": "get", "POST": "post", "PUT": "put", "DELETE": "delete",
                "PATCH": "patch"}.get(request.method, request.method.lower())
        header = request.headers.get("Authorization", "")
        user, groups = "system:anonymous", ["system:unauthenticated"]
        if header.lower().startswith("bearer "):
            token = header[7:].strip()
            who = await self._authenticate(token)
            if who is None:
                return _status(401, "Unauthorized", "Unauthorized")
            if token in self.static_tokens:
                return await handler(request)  # static tokens: allowed everything
            user, groups = who
        if self._always_allowed(path):
            return await handler(request)
        if user != "system:anonymous" and await self._authorize(user, groups, path, verb):
            return await handler(request)
        return _status(403, "Forbidden", f'forbidden: User "{user}" cannot {verb} path "{path}"')

    # ───────────────────────────── handlers ─────────────────────────────

    async def _route(self, request: web.Request) -> web.StreamResponse:
        parts = request.path.strip("/").split("/")
        group = parts[0]
        if group in self.checks:
            if len(parts) == 1:
                return self._health(group, request)
            if len(parts) == 2:
                for c in self.checks[group]:
                    if c.name == parts[1]:
                        return self._single_check(c, group)
        elif request.path == "/metrics" and self.metrics is not None:
            if self.before_scrape is not None:
                self.before_scrape()
            return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4})
        elif request.path == "/metrics/resources" and self.resource_metrics is not None:
            if self.is_leader is not None and not self.is_leader():
                return web.Response(body=b"")
            return web.Response(body=self.resource_metrics(), headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4})
        elif request.path == "/metrics/slis":
            return web.Response(body=generate_latest(self.sli_registry),
                                headers={"Content-Type": CONTENT_TYPE_PLAIN_0_0_4})
        elif request.path == "/configz" and self.configz is not None:
            cfg = self.configz() if callable(self.configz) else self.configz
            return web.Response(text=json.dumps({"componentconfig": cfg}), content_type="application/json")
        return _text("404 page not found\n", 404)

    # ───────────────────────────── lifecycle ─────────────────────────────

    async def start(self) -> int:
        """Listen; returns the bound port.

        Raises:
            OSError: the address is in use or not available.
        """
        app = web.Application(middlewares=[self._cache_control, self._auth_middleware])
        app.router.add_route("*", "/{tail:.*}", self._route)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.bind_address, self.secure_port, ssl_context=self.ssl_context)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self.secure_port
        log.info("Serving securely on %s:%d", self.bind_address, self.port)
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

