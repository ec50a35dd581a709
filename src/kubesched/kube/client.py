"""``APIClient``: an asyncio client for the Kubernetes REST API (client-go ``rest`` in small).

What it does, following client-go ``rest/config.go``, ``rest/request.go``, ``rest/with_retry.go``
and kube-scheduler's ``cmd/kube-scheduler/app/options/options.go`` (``createKubeConfig``):

- Configuration comes from a kubeconfig file or the in-cluster service account, read by
  :mod:`kubesched.kube.kubeconfig` (current context, CA / client certificates, bearer tokens,
  token files re-read for rotation, exec credential plugins); ``--master`` overrides the server
  URL. See :func:`load_config`.
- A client-side token bucket (``clientConnection.qps`` / ``burst``; upstream 50/100; ``qps <= 0``
  means unlimited) gates every request, watches included, as client-go's
  ``flowcontrol.NewTokenBucketRateLimiter``.
- User agent ``kubesched/<version> (<os>/<arch>)`` plus a suffix (``/scheduler``,
  ``/leader-election``), JSON bodies, no compression (``Accept-Encoding: identity``).
- Retries as client-go: a response with ``Retry-After`` and status 429 or 5xx is retried (up to
  10 times, any verb: the server did not process it); GETs are also retried on a reset
  connection. Nothing else is retried here: callers (reflectors, the binder, status patches)
  own their backoff policy.
- Errors: every non-2xx answer raises :class:`APIError` (``status``, ``reason``, ``message``,
  ``body`` — the decoded ``Status`` when the server sent one); connection failures and
  timeouts raise :class:`APIConnectionError`.

HTTP stack: **libcurl** (pycurl, :mod:`kubesched.kube._curl`) for every request but watches, **aiohttp**
for watches (and for everything when pycurl cannot express the TLS set-up: a server verified
against the system CA store). libcurl frames, encrypts and multiplexes in C: over ``https`` it
offers HTTP/2 (ALPN, as client-go; the box's aiohttp server answers HTTP/1.1) and multiplexes a
client's requests on one connection (another one when the server's stream limit is reached, as
Go's transport); HTTP/1.1 (plain ``http`` or an HTTP/1.1 server) uses up to 100 kept-alive
connections, as the aiohttp pool did. One difference from Go's transport: libcurl resends a
request, POSTs too, once when a *reused* HTTP/1.1 connection closes before any answer byte (over
HTTP/2 only refused streams are resent, as Go does). Measured against the real kube-apiserver v1.37.2 on this
2-core machine (``benchmarks/e2e_upstream.py --client-bench``, 100 binding POSTs in flight):
0.33 ms of client CPU per POST vs aiohttp's 0.66 (aiohttp's request machinery and asyncio's
memory-BIO TLS are Python). ``KUBESCHED_HTTP_TRANSPORT=aiohttp`` sends everything through aiohttp
(A/B runs). Before it, aiohttp had been chosen over httpx2 (lightkube's transport): ~5,600 vs ~870
round trips/s for 16 concurrent small POSTs (client and an aiohttp server in one process). The
kubeconfig was read by lightkube until session 11; :mod:`kubesched.kube.kubeconfig` reads the same
fields now without importing lightkube's HTTP clients (~70 modules of every start).

Watch streams (:meth:`APIClient.stream_watch`) split the chunked body on ``\\n`` with an
unbounded buffer (aiohttp's ``readline`` stops at 128 KiB, a pod with big annotations is
longer) and have no total timeout (aiohttp's default 300 s would cut the server's 300–600 s
watches); the caller may give a deadline of its own.
"""

from __future__ import annotations

import asyncio
import base64
import os
import platform
import random
import re
import ssl
import sys
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

from kubesched.kube._aiohttp_ssl import import_aiohttp

import_aiohttp()  # aiohttp's first import: its unused default SSL contexts load the CA store on first use only

import aiohttp  # noqa: E402
import msgspec  # noqa: E402
from multidict import CIMultiDict  # noqa: E402
from yarl import URL  # noqa: E402

from kubesched import __version__  # noqa: E402
from kubesched.errors import KubeschedError  # noqa: E402
from kubesched.kube._curl import CurlError, CurlMultiAsync, CurlTLS  # noqa: E402

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where the in-cluster service account (token, ca.crt, namespace) is mounted (client-go ``rest.InClusterConfig``)."""

__all__ = [
    "APIClient",
    "APIConnectionError",
    "APIError",
    "ClientConfig",
    "TokenBucket",
    "load_config",
    "user_agent",
]

JSON = "application/json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"

_MAX_RETRIES = 10  # client-go rest.Request maxRetries
_ENCODED_PATH = re.compile(r"[A-Za-z0-9/._~!$&'()*+,;=:@-]*").fullmatch
"""A path made only of RFC 3986 ``pchar``s and ``/``: already a valid encoded path."""
_json_decoder = msgspec.json.Decoder()
_json_encoder = msgspec.json.Encoder()

_REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
    406: "NotAcceptable", 409: "Conflict", 410: "Expired", 413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
    503: "ServiceUnavailable", 504: "Timeout",
}


class APIError(KubeschedError):
    """The API server answered with a non-2xx status.

    ``status``: HTTP status code; ``reason``: the Status ``reason`` (``NotFound``, ``Conflict``,
    ``AlreadyExists``, ``Expired``, …; derived from the HTTP code when the body is not a Status);
    ``message``: the Status message or the body text; ``body``: the decoded Status (or ``{}``).

    The client side of upstream's ``StatusError`` (``k8s.io/apimachinery/pkg/api/errors``), as
    client-go returns it. Not :class:`kubesched.apiserver.errors.APIError`, the server side: what
    the box raises to answer a request with a ``Status``. The two sit in sibling layers (``kube``,
    ``apiserver``) that may not import each other; both read and write the same ``Status`` body.
    """

    def __init__(self, status: int, reason: str, message: str, body: dict[str, Any] | None = None) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body if body is not None else {}
        super().__init__(f"{status} {reason}: {message}")

    @classmethod
    def from_status(cls, status_obj: Mapping[str, Any], default_code: int = 500) -> APIError:
        """An error from a ``Status`` object (e.g. a watch ``ERROR`` event's object)."""
        code = status_obj.get("code")
        code = code if isinstance(code, int) and code > 0 else default_code
        reason = status_obj.get("reason") or _REASONS.get(code, "Unknown")
        return cls(code, str(reason), str(status_obj.get("message") or ""), dict(status_obj))

    @property
    def is_expired(self) -> bool:
        """410 Gone / reason ``Expired`` or legacy ``Gone`` (client-go ``isExpiredError``)."""
        return self.status == 410 or self.reason in ("Expired", "Gone")

    @property
    def is_too_large_resource_version(self) -> bool:
        """Client-go ``isTooLargeResourceVersionError``: cause ``ResourceVersionTooLarge`` or the
        legacy "Too large resource version" message on a Timeout."""
        causes = (self.body.get("details") or {}).get("causes") or []
        if any(isinstance(c, dict) and c.get("reason") == "ResourceVersionTooLarge" for c in causes):
            return True
        return self.status == 504 and "Too large resource version" in self.message


class APIConnectionError(KubeschedError):
    """The API server could not be reached (refused, reset, DNS, TLS) or did not answer in time."""


# ───────────────────────────── rate limiting ─────────────────────────────


class TokenBucket:
    """Client-side token bucket (client-go ``flowcontrol.NewTokenBucketRateLimiter``).

    ``qps`` tokens per second refill a bucket of ``burst`` tokens (starting full); each request
    takes one, waiting when none is left. Waiters reserve their token in arrival order (the
    bucket may go negative), as ``golang.org/x/time/rate.Limiter.Wait``. ``qps <= 0`` or
    ``math.inf`` = unlimited. ``clock`` returns seconds (monotonic).
    """

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.unlimited = not (0 < self.qps < float("inf"))
        self._clock = clock
        self._tokens = float(self.burst)
        self._last = clock()

    def reserve(self) -> float:
        """Take one token now; return how many seconds the caller must wait before using it."""
        if self.unlimited:
            return 0.0
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    def allow(self) -> bool:
        """Take a token if one is there now and no waiter is ahead (``rate.Limiter.Allow``): True
        when taken (the caller goes on without waiting), False when none is (nothing taken)."""
        if self.unlimited:
            return True
        now = self._clock()
        tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        if tokens < 1.0:
            return False
        self._tokens = tokens - 1.0
        self._last = now
        return True

    async def acquire(self) -> None:
        """Wait for a token (returns at once when one is available)."""
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)


# ───────────────────────────── configuration ─────────────────────────────


def user_agent(suffix: str = "") -> str:
    """``kubesched/<version> (<os>/<arch>)`` + ``suffix`` (client-go ``DefaultKubernetesUserAgent``)."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "i686": "386"}.get(machine, machine or "unknown")
    osname = "linux" if sys.platform.startswith("linux") else sys.platform
    return f"kubesched/v{__version__} ({osname}/{arch}){suffix}"


class _Auth:
    """Produces the ``Authorization`` header; ``invalidate()`` after a 401 forces a refresh.

    Modes (in this order): token file (re-read every minute, as client-go's
    ``cachingTokenSource`` for rotated service-account tokens), static token, exec credential
    plugin (:func:`kubesched.kube.kubeconfig.exec_command`, ``exec_credential``; cached until
    ``expirationTimestamp`` or a 401; ``exec_cluster``: its ``provideClusterInfo`` cluster), basic auth.
    """

    def __init__(self, user: Any, exec_cluster: dict[str, Any] | None = None) -> None:
        self.user = user
        self.exec_cluster = exec_cluster
        self._value: str | None = None
        self._expires = 0.0

    async def header(self) -> str | None:
        u = self.user
        if u is None:
            return None
        now = time.monotonic()
        if self._value is not None and now < self._expires:
            return self._value
        if u.token_file:
            try:
                token = (await asyncio.to_thread(_read_text, u.token_file)).strip()
            except OSError as e:
                if self._value is not None:  # keep the last token, as client-go does
                    return self._value
                raise APIConnectionError(f"reading token file {u.token_file}: {e}") from e
            self._value, self._expires = f"Bearer {token}", now + 60.0
        elif u.token:
            self._value, self._expires = f"Bearer {u.token}", float("inf")
        elif u.exec:
            self._value, self._expires = await self._exec(now)
        elif u.username and u.password:
            cred = base64.b64encode(f"{u.username}:{u.password}".encode()).decode()
            self._value, self._expires = f"Basic {cred}", float("inf")
        elif u.auth_provider:
            raise KubeschedError("kubeconfig: auth-provider is not supported; use an exec credential plugin")
        return self._value

    async def _exec(self, now: float) -> tuple[str, float]:
        from kubesched.kube.kubeconfig import exec_command, exec_credential

        command = [self.user.exec.command]
        try:
            command, env, interactive = exec_command(self.user.exec, self.exec_cluster)
            # client-go: the plugin gets this process's stdin only when interactive (else /dev/null)
            stdin = None if interactive else asyncio.subprocess.DEVNULL
            try:
                pipe = asyncio.subprocess.PIPE
                proc = await asyncio.create_subprocess_exec(*command, env=env, stdin=stdin, stdout=pipe, stderr=pipe)
            except FileNotFoundError:  # client-go wrapCmdRunErrorLocked's words, then the hint
                hint = f"; {self.user.exec.installHint}" if self.user.exec.installHint else ""
                raise KubeschedError(f"exec: executable {command[0]} not found{hint}") from None
            out, err = await proc.communicate()
            if proc.returncode != 0:  # upstream leaves stderr on the terminal; here it ends the one line
                raise KubeschedError(f"exec: executable {command[0]} failed with exit code {proc.returncode}: "
                                     f"{err.decode(errors='replace').strip()}")
            token, ts = exec_credential(self.user.exec, out)
        except Exception as e:  # any failure of the plugin is one error
            raise APIConnectionError(f"exec credential plugin {command[0]}: getting credentials: {e}") from e
        expires = float("inf")
        if ts:
            from datetime import datetime

            try:
                left = datetime.fromisoformat(ts).timestamp() - time.time()
                expires = now + max(0.0, left - 10.0)
            except ValueError:
                pass
        return f"Bearer {token}", expires

    def cached(self) -> tuple[bool, str | None]:
        """``(True, header)`` when :meth:`header` would answer without awaiting anything (no
        credentials, or a value not yet expired), else ``(False, None)``."""
        if self.user is None:
            return True, None
        if self._value is not None and time.monotonic() < self._expires:
            return True, self._value
        return False, None

    def invalidate(self) -> None:
        self._expires = 0.0


@dataclass
class ClientConfig:
    """Where and how to connect.

    ``server``: base URL (``https://host:6443``); ``ssl``: an ``SSLContext`` for https (None
    for http); ``user``: a :class:`kubesched.kube.kubeconfig.User` (credentials) or None; ``exec_cluster``: the
    ``spec.cluster`` its exec plugin asks for (``provideClusterInfo``) or None; ``qps``/``burst``: the
    token bucket (``qps <= 0`` = unlimited); ``user_agent``: full UA string; ``timeout``:
    seconds for one non-watch request (connect + answer); ``connect_timeout``: seconds to
    connect (watches too); ``tls``: the same TLS set-up as PEM bytes for libcurl (None: not
    expressible, e.g. the system CA store — then aiohttp carries every request).
    """

    server: str
    ssl: ssl.SSLContext | None = None
    user: Any = None
    qps: float = 50.0
    burst: int = 100
    user_agent: str = field(default_factory=user_agent)
    timeout: float = 60.0
    connect_timeout: float = 10.0
    namespace: str = "default"
    tls: CurlTLS | None = None
    exec_cluster: dict[str, Any] | None = None


def load_config(kubeconfig: str | None = None, master: str | None = None, *, context: str | None = None,
                qps: float = 50.0, burst: int = 100) -> ClientConfig:
    """Build a :class:`ClientConfig` as upstream ``clientcmd.BuildConfigFromFlags(master, kubeconfig)``.

    - ``kubeconfig`` given: that file's context (``context`` or current-context); ``master``,
      when given, overrides its server URL.
    - only ``master``: that URL, no credentials.
    - neither: the in-cluster service account (``KUBERNETES_SERVICE_HOST``/``_PORT``, the
      mounted token — re-read for rotation — and CA).

    The file is read by :mod:`kubesched.kube.kubeconfig`. Raises
    :class:`~kubesched.errors.KubeschedError` with one readable line when the file is missing or
    invalid (a field of the wrong type with its path), or when neither flag is given outside a cluster.
    """
    from kubesched.kube import kubeconfig as kc

    try:
        if kubeconfig:
            single = kc.load_file(kubeconfig, context)
        elif master:
            single = kc.from_server(master)
        else:
            try:
                single = kc.from_service_account(SERVICE_ACCOUNT)
            except (kc.KubeconfigError, KeyError) as e:
                raise KubeschedError(
                    "invalid configuration: no configuration has been provided (not running in a cluster: "
                    f"{e}); use --kubeconfig or --master") from None
    except kc.KubeconfigError as e:
        msg = str(e)
        raise KubeschedError(msg if msg.startswith("kubeconfig ") else f"kubeconfig: {msg}") from None
    user = single.user
    if user is not None and user.token_file and single.fname is not None:
        # client-go (clientcmd loader.go ResolveLocalPaths): a relative tokenFile is relative to the kubeconfig's folder
        user = msgspec.structs.replace(user, token_file=single.abs_file(user.token_file))
    server = (master or single.cluster.server).rstrip("/")
    try:
        exec_cluster = kc.exec_cluster(single, server)
    except kc.KubeconfigError as e:
        raise KubeschedError(f"kubeconfig: {e}") from None
    ctx: ssl.SSLContext | None = None
    tls: CurlTLS | None = None
    if server.startswith("https://"):
        try:
            ca, cert, key = kc.pem_material(single)
            ctx = kc.ssl_context(single, ca, cert, key)
        except (OSError, ssl.SSLError, kc.KubeconfigError, ValueError) as e:
            raise KubeschedError(f"kubeconfig: TLS configuration: {e}") from None
        # libcurl gets the same material; verified against the system store it cannot be (its store may
        # differ from Python's): aiohttp carries every request then
        if ca is not None or single.cluster.insecure:
            tls = CurlTLS(ca=ca, cert=cert, key=key, insecure=ca is None)
    return ClientConfig(server=server, ssl=ctx, user=user, qps=qps, burst=burst,
                        namespace=single.namespace, tls=tls, exec_cluster=exec_cluster)


# ───────────────────────────── the client ─────────────────────────────


class APIClient:
    """Async client for one API server. Create inside a running event loop or call methods
    from one; ``await close()`` when done (or ``async with``).

    Paths are API paths (``/api/v1/namespaces/ns/pods``, ``/apis/coordination.k8s.io/v1/...``);
    ``params`` become the query string (bools as ``true``/``false``).
    """

    def __init__(self, config: ClientConfig, *, user_agent_suffix: str = "") -> None:
        self.config = config
        self.user_agent = config.user_agent + user_agent_suffix
        self.limiter = TokenBucket(config.qps, config.burst)
        self._auth = _Auth(config.user, config.exec_cluster)
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self.requests = 0  # requests sent (retries included)
        # built once, not per request: the timeouts and, per (Content-Type, Authorization), the headers
        self._timeout = aiohttp.ClientTimeout(total=config.timeout, connect=config.connect_timeout)
        self._watch_timeout = aiohttp.ClientTimeout(total=None, connect=config.connect_timeout, sock_read=None)
        self._header_cache: dict[tuple[str | None, str | None], CIMultiDict[str]] = {}
        self._base = URL(config.server)
        self._base_path = self._base.raw_path.rstrip("/")
        self._curl_prefix = str(self._base.with_path(self._base_path, encoded=True)).rstrip("/")
        """The server URL as yarl writes it, without a trailing ``/``: + an encoded path = ``str(self._url(path))``."""
        # libcurl for every request but watches, when it can speak to this server as aiohttp would
        self._use_curl = os.environ.get("KUBESCHED_HTTP_TRANSPORT", "curl") != "aiohttp" and (
            config.server.startswith("http://") or (config.server.startswith("https://") and config.tls is not None))
        self._curl: CurlMultiAsync | None = None
        self._curl_headers: dict[tuple[str | None, str | None], list[str]] = {}

    def _url(self, path: str) -> URL | str:
        """The request URL of an API ``path``: a ``URL`` built from the parsed server URL when
        ``path`` needs no percent-encoding (every path kubesched builds from object names: yarl's
        parsing and re-encoding of the whole string is ~10 µs of each request), else the string."""
        if _ENCODED_PATH(path) is None:
            return self.config.server + path
        return self._base.with_path(self._base_path + path, encoded=True)

    def _curl_url(self, path: str) -> str:
        """:meth:`_url` as the string libcurl is given: the server's prefix and ``path`` joined,
        without a ``URL`` object, when ``path`` needs no percent-encoding (the same string
        ``str(self._url(path))`` gives)."""
        if _ENCODED_PATH(path) is None:
            return self.config.server + path
        return self._curl_prefix + path

    @classmethod
    def for_server(cls, server: str, *, qps: float = -1, burst: int = 0, user_agent_suffix: str = "",
                   timeout: float = 60.0) -> APIClient:
        """A client for a plain-HTTP server without credentials (tests, ``--master``)."""
        return cls(ClientConfig(server=server.rstrip("/"), qps=qps, burst=burst, timeout=timeout),
                   user_agent_suffix=user_agent_suffix)

    def derive(self, *, user_agent_suffix: str = "", timeout: float | None = None,
               qps: float | None = None, burst: int | None = None) -> APIClient:
        """Another client to the same server with its own token bucket and connection pool
        (upstream builds separate clients for events and the leader-election lock)."""
        cfg = replace(self.config,
                      timeout=self.config.timeout if timeout is None else timeout,
                      qps=self.config.qps if qps is None else qps,
                      burst=self.config.burst if burst is None else burst)
        return APIClient(cfg, user_agent_suffix=user_agent_suffix)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection pool; later requests raise :class:`APIConnectionError`."""
        self._closed = True
        if self._curl is not None:
            self._curl.close()
            self._curl = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._closed:
            raise APIConnectionError("the client is closed")
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=100, ssl=self.config.ssl if self.config.ssl is not None else False,
                                             enable_cleanup_closed=True)
            # what a request does not need, left out of aiohttp's per-request work: cookies (a
            # DummyCookieJar: the API server sets none), a timeout object per call (the session's),
            # ``skip_auto_headers`` (aiohttp's slow path; every auto header is given explicitly instead)
            self._session = aiohttp.ClientSession(
                connector=connector, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
                timeout=self._timeout)
        return self._session

    def _get_curl(self) -> CurlMultiAsync:
        if self._closed:
            raise APIConnectionError("the client is closed")
        if self._curl is None:
            https = self.config.server.startswith("https://")
            self._curl = CurlMultiAsync(tls=self.config.tls if https else None, http2=https,
                                        max_connections=100, timeout=self.config.timeout,
                                        connect_timeout=self.config.connect_timeout)
        return self._curl

    async def _header_lines(self, content_type: str | None) -> list[str]:
        """:meth:`_headers` as libcurl's ``Name: value`` lines, plus an empty ``Expect`` (no
        ``100-continue`` round trip for bodies over 1 KiB; client-go sends none either)."""
        return self._header_lines_for(content_type, await self._auth.header())

    def _header_lines_for(self, content_type: str | None, auth: str | None) -> list[str]:
        """:meth:`_header_lines` for a known ``Authorization`` value: one list per (content type,
        credential), the same object each time (libcurl's handles keep the list they were given last)."""
        key = (content_type, auth)
        lines = self._curl_headers.get(key)
        if lines is None:
            if len(self._curl_headers) > 64:
                self._curl_headers.clear()
            lines = [f"{k}: {v}" for k, v in self._header_dict(content_type, auth).items()] + ["Expect:"]
            self._curl_headers[key] = lines
        return lines

    async def _send_curl(self, method: str, path: str, q: dict[str, str] | None,
                         data: bytes | None, content_type: str | None) -> tuple[int, bytes, str | None]:
        """One request through libcurl: ``(status, body, Retry-After)``; raises :class:`CurlError`
        when no answer came. A cancelled caller aborts the transfer. When every kept connection
        was dead (the server restarted) and nothing reached it, the request goes once more on a
        new connection, as Go's transport retries a request that was not written (net/http
        transport.go ``shouldRetryRequest``)."""
        if q:
            url = self._url(path)
            url_s = str((URL(url, encoded=True) if isinstance(url, str) else url).extend_query(q))
        else:
            url_s = self._curl_url(path)
        ready, auth = self._auth.cached()
        headers = self._header_lines_for(content_type, auth) if ready else await self._header_lines(content_type)
        curl = self._get_curl()
        for fresh in (False, True):
            fut = curl.request(method, url_s, headers, data, fresh=fresh)
            try:
                return await fut
            except asyncio.CancelledError:
                curl.abort(fut)
                raise
            except CurlError as e:
                if fresh or not e.pooled_connections_died:
                    raise
        raise AssertionError("unreachable")

    async def _headers(self, content_type: str | None) -> CIMultiDict[str]:
        """The request headers (``User-Agent``, ``Accept``, ``Accept-Encoding: identity``,
        ``Content-Type`` when given, ``Authorization`` when the credentials make one), one
        prebuilt ``CIMultiDict`` per (content type, credential) pair."""
        return self._header_dict(content_type, await self._auth.header())

    def _header_dict(self, content_type: str | None, auth: str | None) -> CIMultiDict[str]:
        key = (content_type, auth)
        h = self._header_cache.get(key)
        if h is None:
            if len(self._header_cache) > 64:  # rotated tokens: keep the cache small
                self._header_cache.clear()
            h = CIMultiDict({"User-Agent": self.user_agent, "Accept": JSON, "Accept-Encoding": "identity"})
            if content_type:
                h["Content-Type"] = content_type
            if auth:
                h["Authorization"] = auth
            self._header_cache[key] = h
        return h

    # ── core request ──

    async def request_raw(self, method: str, path: str, params: Mapping[str, Any] | None = None,
                          body: Any = None, content_type: str | None = None) -> tuple[int, bytes]:
        """Send one request; return ``(status, body bytes)`` of a 2xx answer.

        ``body``: bytes or a JSON-encodable value. Raises :class:`APIError` (non-2xx) or
        :class:`APIConnectionError`.
        """
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, bytes | bytearray):
            data = bytes(body)
        else:
            data = _json_encoder.encode(body)
        if data is not None and content_type is None:
            content_type = JSON
        return await self._request(method, path, _query(params), data, content_type, None)

    async def _request(self, method: str, path: str, q: dict[str, str] | None, data: bytes | None,
                       content_type: str | None, first: tuple[int, bytes, str | None] | None,
                       ) -> tuple[int, bytes]:
        """:meth:`request_raw`'s loop (rate limit, send, then 401 / 429 / 5xx Retry-After
        retries); ``first``: the answer of a first try already sent (:meth:`post_nowait`)."""
        retries = 0
        unauthorized_retry = True
        limiter = self.limiter
        while True:
            if first is not None:
                status, payload, retry_after = first
                first = None
            else:
                if not limiter.unlimited:
                    delay = limiter.reserve()
                    if delay > 0:
                        await asyncio.sleep(delay)
                self.requests += 1
                if self._use_curl:
                    try:
                        status, payload, retry_after = await self._send_curl(method, path, q, data, content_type)
                    except CurlError as e:
                        if method == "GET" and retries < _MAX_RETRIES and e.code in _CURL_RESET:
                            retries += 1
                            await asyncio.sleep(1.0)
                            continue
                        raise APIConnectionError(f"{method} {path}: {_describe_curl(e)}") from None
                else:
                    status, payload, retry_after, again = await self._send_aiohttp(
                        method, path, q, data, content_type, retries)
                    if again:
                        retries += 1
                        await asyncio.sleep(1.0)
                        continue
            if 200 <= status < 300:
                return status, payload
            if status == 401 and unauthorized_retry and self.config.user is not None:
                unauthorized_retry = False
                self._auth.invalidate()
                continue
            if (status == 429 or status >= 500) and retry_after is not None and retries < _MAX_RETRIES:
                retries += 1
                await asyncio.sleep(_retry_after_seconds(retry_after))
                continue
            raise _api_error(status, payload)

    def post_nowait(self, path: str, data: bytes, *, timeout: float | None = None,
                    ) -> asyncio.Future[tuple[int, bytes, str | None]] | None:
        """Start the first try of :meth:`post` (``data``: the JSON body) without a coroutine when
        nothing needs awaiting first: libcurl is the transport, the ``Authorization`` header is at
        hand and the rate limit has a token now (it is taken; else None: use :meth:`post`). The future gives the
        answer ``(status, body, Retry-After)`` or raises :class:`~kubesched.kube._curl.CurlError`;
        hand anything but a 2xx answer to :meth:`post_resume`, which finishes the request as
        :meth:`post` would have (retries, errors). ``timeout``: seconds, a bound on this try when
        shorter than the client's (a timed-out try raises ``CurlError`` with ``timed_out``)."""
        headers = self._nowait_headers()
        if headers is None:
            return None
        self.requests += 1
        return self._get_curl().request("POST", self._curl_url(path), headers, data, timeout=timeout)

    def post_done(self, path: str, data: bytes, done: Callable[[tuple[int, bytes, str | None] | CurlError], None],
                  *, timeout: float | None = None) -> bool:
        """:meth:`post_nowait` with a callback instead of a future: False when it cannot start
        that way (use :meth:`post`); else ``done`` is called once with the answer ``(status, body,
        Retry-After)`` or the :class:`~kubesched.kube._curl.CurlError` when the transfer ends
        (:meth:`post_resume` finishes anything but a 2xx). The event recorder's writes use it:
        most events need one request, and no Task, future or ``call_soon`` of their own."""
        headers = self._nowait_headers()
        if headers is None:
            return False
        self.requests += 1
        self._get_curl().request_done("POST", self._curl_url(path), headers, data, done, timeout=timeout)
        return True

    def _nowait_headers(self) -> list[str] | None:
        """The header lines of a JSON POST when it can start without awaiting (libcurl, the
        credential cached, a token of the rate limit there now: it is taken), else None."""
        if not self._use_curl or self._closed:
            return None
        ready, auth = self._auth.cached()
        if not ready or not self.limiter.allow():
            return None
        return self._header_lines_for(JSON, auth)

    async def post_resume(self, path: str, data: bytes, outcome: tuple[int, bytes, str | None] | BaseException,
                          ) -> None:
        """Finish a POST whose first try :meth:`post_nowait` sent: ``outcome`` is that try's answer
        or its :class:`~kubesched.kube._curl.CurlError`. Raises as :meth:`post`."""
        if isinstance(outcome, BaseException):
            if not (isinstance(outcome, CurlError) and outcome.pooled_connections_died):
                if isinstance(outcome, CurlError):
                    raise APIConnectionError(f"POST {path}: {_describe_curl(outcome)}") from None
                raise outcome
            first = None  # nothing reached the server: send again (``_send_curl``'s fresh retry)
        else:
            first = outcome
        await self._request("POST", path, None, data, JSON, first)

    async def _send_aiohttp(self, method: str, path: str, q: dict[str, str] | None, data: bytes | None,
                            content_type: str | None, retries: int) -> tuple[int, bytes, str | None, bool]:
        """One request through aiohttp: ``(status, body, Retry-After, False)``, or ``(0, b"", None,
        True)`` when a GET's connection was reset and may be retried; raises
        :class:`APIConnectionError` otherwise when no answer came."""
        url = self._url(path)
        headers = await self._headers(content_type)
        try:
            async with self._get_session().request(method, url, params=q, data=data, headers=headers) as resp:
                return resp.status, await resp.read(), resp.headers.get("Retry-After"), False
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as e:
            if method == "GET" and retries < _MAX_RETRIES and _is_reset(e):
                return 0, b"", None, True
            raise APIConnectionError(f"{method} {path}: {_describe(e)}") from None
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            raise APIConnectionError(f"{method} {path}: {_describe(e)}") from None

    async def _json(self, method: str, path: str, params: Mapping[str, Any] | None = None, body: Any = None,
                    content_type: str | None = None) -> dict[str, Any]:
        _, payload = await self.request_raw(method, path, params, body, content_type)
        if not payload:
            return {}
        try:
            out = _json_decoder.decode(payload)
        except msgspec.DecodeError as e:
            raise APIError(500, "InternalError", f"{method} {path}: invalid JSON in the answer: {e}") from None
        return out if isinstance(out, dict) else {"value": out}

    # ── verbs ──

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """GET one object (or any JSON document)."""
        return await self._json("GET", path, params)

    async def list(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """GET a collection (one page; pass ``limit``/``continue`` to paginate)."""
        return await self._json("GET", path, params)

    async def get_raw(self, path: str, params: Mapping[str, Any] | None = None) -> bytes:
        """GET and return the undecoded body (for typed decoding by the caller)."""
        _, payload = await self.request_raw("GET", path, params)
        return payload

    async def create(self, path: str, body: Any, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """POST ``body`` to a collection; returns the created object."""
        return await self._json("POST", path, params, body)

    async def post(self, path: str, body: Any) -> None:
        """POST ``body`` (the same request as :meth:`create`) when the caller does not need the
        answer: it is read but not decoded (the event recorder's writes). Raises as :meth:`create`."""
        await self.request_raw("POST", path, None, body)

    async def replace(self, path: str, body: Any) -> dict[str, Any]:
        """PUT ``body`` (its ``metadata.resourceVersion`` is the precondition: 409 on mismatch)."""
        return await self._json("PUT", path, None, body)

    async def patch(self, path: str, body: Any, content_type: str = STRATEGIC_MERGE_PATCH) -> dict[str, Any]:
        """PATCH with ``content_type`` (strategic merge patch by default)."""
        return await self._json("PATCH", path, None, body, content_type)

    async def delete(self, path: str, body: Any = None) -> dict[str, Any]:
        """DELETE (``body``: optional ``DeleteOptions``)."""
        return await self._json("DELETE", path, None, body)

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST ``pods/{name}/binding`` (upstream DefaultBinder ``Bind``).

        The server answers ``201`` with a ``Status`` (not a Binding); the answer is not decoded.
        Raises :class:`APIError` (409 already assigned / being deleted, 404 pod gone, …) or
        :class:`APIConnectionError`.
        """
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace, **({"uid": uid} if uid else {})},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        await self.request_raw("POST", f"/api/v1/namespaces/{namespace}/pods/{name}/binding", None, body)

    # ── watch ──

    async def stream_watch_raw(self, path: str, params: Mapping[str, Any] | None = None, *,
                               deadline_s: float | None = None) -> AsyncGenerator[bytes, None]:
        """Open a watch (``watch=true`` added) and yield each event line (bytes, no newline).

        No total timeout unless ``deadline_s`` (seconds from now) is given; the stream ends when
        the server closes it. Raises :class:`APIError` when the watch cannot start (non-2xx) and
        :class:`APIConnectionError` when the connection fails or the deadline passes.
        """
        q = dict(params or {})
        q["watch"] = "true"
        url = self._url(path)
        timeout = self._watch_timeout
        await self.limiter.acquire()
        headers = await self._headers(None)
        self.requests += 1
        loop = asyncio.get_running_loop()
        end = None if deadline_s is None else loop.time() + deadline_s
        try:
            async with self._get_session().get(url, params=_query(q), headers=headers, timeout=timeout) as resp:
                if resp.status == 401:
                    self._auth.invalidate()
                if not 200 <= resp.status < 300:
                    raise _api_error(resp.status, await resp.read())
                buf = bytearray()
                it = resp.content.iter_any().__aiter__()
                while True:
                    try:
                        if end is None:
                            chunk = await it.__anext__()
                        else:
                            left = end - loop.time()
                            if left <= 0:
                                raise APIConnectionError(f"watch {path}: client deadline of {deadline_s:.0f}s passed")
                            # asyncio.timeout, not wait_for: on 3.11 wait_for drops a cancellation
                            # that arrives as the chunk does, and the watch (reflector) never stops
                            async with asyncio.timeout(left):
                                chunk = await it.__anext__()
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        raise APIConnectionError(
                            f"watch {path}: client deadline of {deadline_s:.0f}s passed") from None
                    buf += chunk
                    start = 0
                    while True:
                        nl = buf.find(b"\n", start)
                        if nl < 0:
                            break
                        line = bytes(buf[start:nl]).strip()
                        start = nl + 1
                        if line:
                            yield line
                    if start:
                        del buf[:start]
                tail = bytes(buf).strip()
                if tail:
                    yield tail
        except (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as e:
            raise APIConnectionError(f"watch {path}: {_describe(e)}") from None
        except aiohttp.ClientError as e:
            raise APIConnectionError(f"watch {path}: {_describe(e)}") from None
        except OSError as e:
            raise APIConnectionError(f"watch {path}: {_describe(e)}") from None

    async def stream_watch(self, path: str, params: Mapping[str, Any] | None = None, *,
                           deadline_s: float | None = None) -> AsyncGenerator[dict[str, Any], None]:
        """Like :meth:`stream_watch_raw`, each event decoded to ``{"type", "object"}``."""
        async for line in self.stream_watch_raw(path, params, deadline_s=deadline_s):
            try:
                ev = _json_decoder.decode(line)
            except msgspec.DecodeError as e:
                raise APIConnectionError(f"watch {path}: undecodable event: {e}") from None
            if isinstance(ev, dict):
                yield ev


def _query(params: Mapping[str, Any] | None) -> dict[str, str] | None:
    if not params:
        return None
    out: dict[str, str] = {}
    for k, v in params.items():
        if v is None:
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def _api_error(status: int, payload: bytes) -> APIError:
    body: Any = None
    if payload:
        try:
            body = _json_decoder.decode(payload)
        except msgspec.DecodeError:
            body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        reason = body.get("reason") or _REASONS.get(status, "Unknown")
        return APIError(status, str(reason), str(body.get("message") or ""), body)
    text = payload.decode("utf-8", "replace").strip()[:1024] if payload else ""
    return APIError(status, _REASONS.get(status, "Unknown"), text or f"the server answered {status}", {})


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _retry_after_seconds(value: str) -> float:
    try:
        s = float(value)
    except ValueError:
        s = 1.0
    return min(max(s, 0.0), 60.0) + random.uniform(0, 0.1)


def _is_reset(e: BaseException) -> bool:
    if isinstance(e, aiohttp.ServerDisconnectedError):
        return True
    err = getattr(e, "os_error", None) or e
    return isinstance(err, ConnectionResetError | BrokenPipeError) or "reset" in str(e).lower()


_CURL_RESET = frozenset({52, 55, 56, 16, 92})
"""libcurl codes of a connection that broke under a request: GOT_NOTHING, SEND_ERROR, RECV_ERROR,
HTTP2, HTTP2_STREAM (aiohttp's ``ServerDisconnectedError`` / reset ``ClientOSError``)."""


def _describe_curl(e: CurlError) -> str:
    """A libcurl failure in aiohttp's words where callers look at them: ``timed out``,
    ``connection refused`` (the binder retries that one, upstream ``util.BindPod``)."""
    import errno

    if e.timed_out:
        return "timed out"
    if e.os_errno == errno.ECONNREFUSED:
        return f"connection refused ({e})"
    return str(e)


def _describe(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    if isinstance(e, TimeoutError):
        return "timed out"
    return text
