"""The box API server's launcher: start and stop it from Python (``kubesched up``,
``kubesched apiserver``, tests, benchmarks) with its store, PKI, kubeconfig and controllers.

Two ways:

- :func:`run_server` — the server runs in a **background thread with its own event loop**;
  returns a :class:`ServerHandle` at once (usable as a context manager)::

      with run_server(tmp_path / "kubeconfig") as srv:
          srv.url, srv.token, srv.kubeconfig_path, srv.faults
          srv.call(lambda s: s.store.current_rev)   # run a function on the server's loop

- :func:`start_server` — **in the caller's running loop** (``async with``)::

      async with start_server() as srv:
          ...

Both bind 127.0.0.1 on an ephemeral port by default and stop cleanly (watches closed, store
closed). ``data_dir`` None = in memory.
"""

from __future__ import annotations

import asyncio
import base64
import os
import secrets
import shutil
import ssl
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import yaml

from kubesched.apiserver import resources as res
from kubesched.apiserver.faults import Faults
from kubesched.apiserver.pki import PKI, ensure_pki, write_private
from kubesched.apiserver.server import APIServer
from kubesched.apiserver.storage import Store

__all__ = ["ServerHandle", "box_server", "build_server", "run_server", "server_pki", "start_server", "write_kubeconfig"]

T = TypeVar("T")


def write_kubeconfig(path: str | os.PathLike[str], url: str, token: str | None, *,
                     ca_pem: bytes | None = None, name: str = "kubesched") -> Path:
    """Write a kubeconfig (cluster ``url`` trusting ``ca_pem``, user with bearer ``token``,
    current context, namespace ``default``) to ``path`` (mode 0600)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    user: dict[str, Any] = {"token": token} if token else {}
    cluster: dict[str, Any] = {"server": url}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }
    write_private(p, yaml.safe_dump(doc, sort_keys=False).encode())
    return p


def _attrs(space: str, obj: dict[str, Any]) -> dict[str, str]:
    info = _SPACE_INFO.get(space)
    if info is None:
        md = obj.get("metadata") or {}
        return {"metadata.name": md.get("name", ""), "metadata.namespace": md.get("namespace", "")}
    return res.selectable_fields(info, obj)


_SPACE_INFO = {r.key: r for r in res.RESOURCES if r.group != "events.k8s.io"}


def build_server(data_dir: str | os.PathLike[str] | None = None, *, token: str | None = None,
                 faults: Faults | None = None, simulate_kubelets: bool = False, fsync: bool = True,
                 encryption_config: str | None = None, pod_termination_seconds: float | None = 0.0,
                 **server_kw: Any) -> APIServer:
    """An :class:`APIServer` over a new :class:`Store` (not started). ``token`` None = no auth;
    ``fsync`` False: etcd's ``--unsafe-no-fsync`` (see :class:`Store`); ``encryption_config``: an
    ``EncryptionConfiguration`` file (``--encryption-provider-config``; raises ``EncryptionConfigError``);
    ``pod_termination_seconds``: how long a simulated kubelet takes to stop a deleted pod (None: its
    grace period; see :class:`~kubesched.apiserver.kubelet.KubeletSimulator`). Raises
    :class:`~kubesched.apiserver.storage.DataDirLocked` / ``CorruptStore`` for an unusable data dir."""
    transformers = None
    if encryption_config is not None:
        from kubesched.apiserver.encryption import load_encryption_config

        transformers = load_encryption_config(encryption_config)
    store = Store(None if data_dir is None else str(data_dir), attrs=_attrs, fsync=fsync, transformers=transformers,
                  group_commit=True)
    srv = APIServer(store, token=token, faults=faults, **server_kw)
    if simulate_kubelets:
        from kubesched.apiserver.controllermanager import attach_controllers
        from kubesched.apiserver.kubelet import attach_kubelets

        attach_kubelets(srv, pod_termination_seconds)
        attach_controllers(srv)
    return srv


def server_pki(data_dir: str | os.PathLike[str] | None, host: str) -> tuple[PKI, str | None]:
    """Certificates for ``host``: in ``<data_dir>/pki`` (kept), else a temporary directory
    (returned second, to delete at stop)."""
    if data_dir is not None:
        return ensure_pki(Path(data_dir) / "pki", [host]), None
    tmp = tempfile.mkdtemp(prefix="kubesched-pki-")
    return ensure_pki(tmp, [host]), tmp


class ServerHandle:
    """A server running in a background thread. ``stop()`` (or leaving ``with``) ends it."""

    def __init__(self, server: APIServer, loop: asyncio.AbstractEventLoop, thread: threading.Thread,
                 kubeconfig_path: Path | None, pki: PKI | None = None, tmpdir: str | None = None) -> None:
        self.server = server
        self.loop = loop
        self.thread = thread
        self.kubeconfig_path = kubeconfig_path
        self.pki = pki
        self._tmpdir = tmpdir
        self._stopped = False

    @property
    def ca_path(self) -> Path | None:
        """The CA certificate (PEM) clients must trust (None for plain HTTP)."""
        return None if self.pki is None else self.pki.ca_cert

    def ssl_context(self) -> ssl.SSLContext | None:
        """A client SSL context trusting the server (None for plain HTTP)."""
        return None if self.pki is None else self.pki.client_context()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def token(self) -> str | None:
        return self.server.token

    @property
    def faults(self) -> Faults:
        return self.server.faults

    @property
    def store(self) -> Store:
        """The store (touch it only through :meth:`call` while the server runs)."""
        return self.server.store

    def call(self, fn: Callable[[APIServer], T], timeout: float = 30) -> T:
        """Run ``fn(server)`` on the server's loop and return its result."""
        fut: Future[T] = Future()

        def run() -> None:
            try:
                fut.set_result(fn(self.server))
            except BaseException as e:  # noqa: BLE001 - surfaced to the caller
                fut.set_exception(e)

        self.loop.call_soon_threadsafe(run)
        return fut.result(timeout)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create a manifest object in-process (as ``kubectl create -f``; admission included);
        returns the stored object. Raises :class:`~kubesched.apiserver.errors.APIError`."""
        return self.call(lambda s: s.create_manifest(obj).obj())

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        fut = asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop)
        try:
            fut.result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=30)
            self.server.store.close()
            if self._tmpdir:
                shutil.rmtree(self._tmpdir, ignore_errors=True)

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_server(kubeconfig: str | os.PathLike[str] | None = None, *, data_dir: str | os.PathLike[str] | None = None,
               token: str | None = "", host: str = "127.0.0.1", port: int = 0, tls: bool = True,
               simulate_kubelets: bool = False, faults: Faults | None = None, **server_kw: Any) -> ServerHandle:
    """Start a server in a background thread; returns when it accepts connections.

    ``token=""`` (default) generates a random token; ``None`` disables authentication.
    ``tls`` (default): HTTPS with a self-signed CA (``.ca_path``, ``.ssl_context()``, and in the
    kubeconfig) — kubectl sends tokens only over TLS; ``tls=False`` serves plain HTTP.
    ``kubeconfig``: a path to write a kubeconfig for the server to (also ``.kubeconfig_path``).
    Extra keywords go to :class:`APIServer` (``compaction_window``, ``bookmark_interval`` …).
    """
    tok = secrets.token_hex(16) if token == "" else token
    server = build_server(data_dir, token=tok, faults=faults, simulate_kubelets=simulate_kubelets, **server_kw)
    pki, tmpdir = server_pki(data_dir, host) if tls else (None, None)
    ctx = pki.server_context() if pki is not None else None
    loop = asyncio.new_event_loop()
    started: Future[int] = Future()

    def main() -> None:
        asyncio.set_event_loop(loop)

        async def boot() -> None:
            try:
                started.set_result(await server.start(host, port, ctx))
            except BaseException as e:  # noqa: BLE001 - surfaced to the caller
                started.set_exception(e)

        loop.create_task(boot())
        loop.run_forever()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    t = threading.Thread(target=main, name="kubesched-apiserver", daemon=True)
    t.start()
    try:
        started.result(timeout=30)
    except BaseException:
        loop.call_soon_threadsafe(loop.stop)
        t.join(timeout=10)
        server.store.close()
        raise
    kc = (write_kubeconfig(kubeconfig, server.url, tok, ca_pem=pki.ca_pem() if pki else None)
          if kubeconfig is not None else None)
    return ServerHandle(server, loop, t, kc, pki, tmpdir)


@asynccontextmanager
async def start_server(kubeconfig: str | os.PathLike[str] | None = None, *,
                       data_dir: str | os.PathLike[str] | None = None, token: str | None = "",
                       host: str = "127.0.0.1", port: int = 0, tls: bool = True, simulate_kubelets: bool = False,
                       faults: Faults | None = None, **server_kw: Any) -> AsyncIterator[APIServer]:
    """Run a server in the current event loop for the duration of the ``async with`` block.

    Yields the :class:`APIServer` (``.url``, ``.token``, ``.faults``, ``.store``, ``.pki``
    (None without TLS; ``.pki.client_context()`` for clients), ``.kubeconfig_path``).
    """
    tok = secrets.token_hex(16) if token == "" else token
    server = build_server(data_dir, token=tok, faults=faults, simulate_kubelets=simulate_kubelets, **server_kw)
    pki, tmpdir = server_pki(data_dir, host) if tls else (None, None)
    await server.start(host, port, pki.server_context() if pki is not None else None)
    server.pki = pki
    server.kubeconfig_path = (write_kubeconfig(kubeconfig, server.url, tok, ca_pem=pki.ca_pem() if pki else None)
                              if kubeconfig is not None else None)
    try:
        yield server
    finally:
        await server.stop()
        server.store.close()
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _define_fixtures() -> Any:
    try:
        import pytest
    except ImportError:  # pytest is a test dependency only
        return None

    @pytest.fixture
    def box_server(tmp_path: Path) -> Any:
        """pytest fixture: a :class:`ServerHandle` (in memory, TLS, token, kubeconfig in
        ``tmp_path``), stopped after the test. Use with ``from kubesched.apiserver.launcher
        import box_server`` in a conftest."""
        with run_server(tmp_path / "kubeconfig") as srv:
            yield srv

    return box_server


box_server = _define_fixtures()
