"""Import aiohttp with the CA-store loading of its two default SSL contexts put off until one is used.

``aiohttp.connector`` builds ``_SSL_CONTEXT_VERIFIED`` and ``_SSL_CONTEXT_UNVERIFIED`` when it is
imported (aiohttp 3.x, ``connector.py`` ``_make_ssl_context``), and each loads the system CA store
(``set_default_verify_paths``: ~35–45 ms of CPU each on this machine, ~5 % of ``kubesched run``'s
start-up). ``kubesched run`` never uses them: its :class:`~kubesched.kube.client.APIClient` hands
aiohttp the kubeconfig's own context (or none, for http). So :func:`import_aiohttp` imports aiohttp
with that one call recorded instead of run, and runs it on those two contexts the first time
``TCPConnector._get_ssl_context`` would hand out one of them — same objects, same options, same
CA store, only later (for an https request made without a context of its own, e.g. by a plugin).

Falls back to a plain import (CA stores loaded at import, as aiohttp does) when aiohttp is already
imported, when other threads run (a context they made meanwhile must not be recorded), or when
aiohttp's internals are not the expected ones (another version).
"""

from __future__ import annotations

import ssl
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["import_aiohttp"]


def import_aiohttp() -> ModuleType:
    """``import aiohttp``, the default SSL contexts' CA stores loaded on first use (see the module)."""
    if "aiohttp.connector" in sys.modules or threading.active_count() > 1:
        import aiohttp

        return aiohttp
    deferred: list[ssl.SSLContext] = []
    real = ssl.SSLContext.set_default_verify_paths

    def record(self: ssl.SSLContext) -> None:
        deferred.append(self)

    ssl.SSLContext.set_default_verify_paths = record  # type: ignore[method-assign]
    try:
        import aiohttp
        import aiohttp.connector as conn
    finally:
        ssl.SSLContext.set_default_verify_paths = real  # type: ignore[method-assign]
    defaults = (getattr(conn, "_SSL_CONTEXT_VERIFIED", None), getattr(conn, "_SSL_CONTEXT_UNVERIFIED", None))
    original = conn.TCPConnector.__dict__.get("_get_ssl_context")
    if not callable(original) or len(deferred) != 2 or not all(any(d is c for c in deferred) for d in defaults):
        for ctx in deferred:  # not what was expected: load now, as aiohttp would have
            real(ctx)
        return aiohttp
    lock = threading.Lock()

    def _get_ssl_context(self: Any, req: Any) -> ssl.SSLContext | None:
        ctx: ssl.SSLContext | None = original(self, req)
        if deferred and any(ctx is d for d in defaults):
            with lock:
                while deferred:
                    real(deferred.pop())
        return ctx

    conn.TCPConnector._get_ssl_context = _get_ssl_context  # type: ignore[method-assign]
    return aiohttp
