"""Fixtures for tests against a real API server.

``upstream_control_plane`` (session): etcd + kube-apiserver built by ``make upstream``, started
once per test session on loopback (:mod:`kubesched.testing.upstream`), of the default version
(v1.37, or ``$UPSTREAM_VERSION``); every test that needs it is skipped with the build command
when the binaries are missing. ``versioned_control_plane`` is the same per reference version
(1.37, 1.34), for tests whose upstream facts differ between versions; each version is skipped
on its own when not built.

``server`` is parametrised over the API servers the protocol tests hold to the same facts:
the real kube-apiserver (skipped without ``make upstream``) and kubesched's own box
(``kubesched apiserver``, always run). A server object offers
``name``, ``url``, ``kubeconfig``, ``request(method, path, body, headers=...)``,
``watch(path, ...)``, ``kubectl(*args, input=...)`` and ``compact()`` (forget history so
that old resourceVersions expire).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.apiserver.launcher import ServerHandle, run_server
from kubesched.testing.upstream import (
    VERSIONS,
    ControlPlane,
    UpstreamNotBuilt,
    find_binaries,
    http_request,
    http_watch,
    resolve_version,
)

#: API servers the protocol tests run against.
SERVERS = ["kube-apiserver", "kubesched-apiserver"]


class UpstreamServer:
    """The real kube-apiserver + etcd behind the ``server`` fixture's interface."""

    name = "kube-apiserver"

    def __init__(self, cp: ControlPlane) -> None:
        self.cp = cp
        self.url = cp.url
        self.kubeconfig = cp.kubeconfig

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, dict[str, str], Any]:
        return self.cp.request(method, path, body, **kw)

    def watch(self, path: str, **kw: Any) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
        return self.cp.watch(path, **kw)

    def kubectl(self, *args: str, **kw: Any) -> Any:
        return self.cp.kubectl(*args, **kw)

    def compact(self) -> None:
        """Make every resourceVersion before now unavailable: compact etcd to its current
        revision (kube-apiserver's compactor does this every ``--etcd-compaction-interval``,
        5 min by default) and restart kube-apiserver, whose watch cache otherwise keeps
        serving history it holds in memory (watch_cache.go keeps events while they are
        younger than 75 s, up to 100 Ki of them)."""
        self.cp.etcd_compact()
        self.cp.restart_apiserver()


class BoxServer:
    """kubesched's own API server (``kubesched apiserver``, in a background thread over HTTPS)
    behind the same interface."""

    name = "kubesched-apiserver"

    def __init__(self, srv: ServerHandle, workdir: Path) -> None:
        self.srv = srv
        self.url = srv.url
        assert srv.kubeconfig_path is not None
        self.kubeconfig = srv.kubeconfig_path
        self.workdir = workdir

    def request(self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None,
                timeout: float = 30.0, **_: Any) -> tuple[int, dict[str, str], Any]:
        return http_request(self.url + path, self.srv.token, self.srv.ssl_context(), method, body,
                            headers=headers, timeout=timeout)

    def watch(self, path: str, *, max_events: int = 1000, timeout: float = 10.0,
              **_: Any) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
        return http_watch(self.url + path, self.srv.token, self.srv.ssl_context(), max_events=max_events,
                          timeout=timeout)

    def kubectl(self, *args: str, input: str | bytes | None = None, timeout: float = 60.0,
                check: bool = True, **_: Any) -> subprocess.CompletedProcess[str]:
        data = input.decode() if isinstance(input, bytes) else input
        argv = ["kubectl", f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.workdir / 'kubectl-cache'}",
                *args]
        return subprocess.run(argv, input=data, capture_output=True, text=True, timeout=timeout, check=check)

    def compact(self) -> None:
        """Forget all history before now (the store's compaction, as etcd's)."""
        self.srv.call(lambda s: s.store.compact())


@pytest.fixture(scope="session")
def box_api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoxServer]:
    workdir = tmp_path_factory.mktemp("box")
    with run_server(workdir / "kubeconfig") as srv:
        yield BoxServer(srv, workdir)


@pytest.fixture(scope="session")
def upstream_control_plane() -> Iterator[ControlPlane]:
    try:
        binaries = find_binaries()
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    cp = ControlPlane.start(binaries=binaries)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session", params=list(VERSIONS))
def versioned_control_plane(request: pytest.FixtureRequest) -> Iterator[ControlPlane]:
    """A control plane per reference version (the default one is ``upstream_control_plane``)."""
    if request.param == resolve_version():
        yield request.getfixturevalue("upstream_control_plane")
        return
    try:
        binaries = find_binaries(request.param)
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    cp = ControlPlane.start(binaries=binaries)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture
def upstream_server(upstream_control_plane: ControlPlane) -> UpstreamServer:
    """The real kube-apiserver behind the ``server`` interface (for tests comparing the two)."""
    return UpstreamServer(upstream_control_plane)


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest) -> Any:
    if request.param == "kube-apiserver":
        return UpstreamServer(request.getfixturevalue("upstream_control_plane"))
    if request.param == "kubesched-apiserver":
        return request.getfixturevalue("box_api_server")
    raise AssertionError(f"unknown server {request.param}")  # pragma: no cover


@pytest.fixture
def need_kubectl() -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")


@pytest.fixture
def ns(server: Any) -> str:
    """A fresh namespace per test (servers are shared by the session). Not deleted: without a
    namespace controller it would stay Terminating anyway."""
    name = f"t-{secrets.token_hex(4)}"
    status, _, body = server.request("POST", "/api/v1/namespaces",
                                     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert status == 201, body
    return name
