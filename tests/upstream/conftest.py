"""Fixtures for tests against a real API server.

``upstream_control_plane`` (session): etcd + kube-apiserver built by ``make upstream``, started
once per test session on loopback (:mod:`kubesched.testing.upstream`); every test that needs
it is skipped with the build command when the binaries are missing.

``server`` is parametrised over the API servers the protocol tests hold to the same facts.
Only the real kube-apiserver is wired for now; kubesched's own box (``kubesched apiserver``)
is added here as another param once it exists on this branch. A server object offers
``name``, ``url``, ``kubeconfig``, ``request(method, path, body, headers=...)``,
``watch(path, ...)``, ``kubectl(*args, input=...)`` and ``compact()`` (forget history so
that old resourceVersions expire).
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from kubesched.testing.upstream import ControlPlane, UpstreamNotBuilt, find_binaries

#: API servers the protocol tests run against (``kubesched apiserver`` to be added).
SERVERS = ["kube-apiserver"]


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


@pytest.fixture(params=SERVERS)
def server(request: pytest.FixtureRequest) -> Any:
    if request.param == "kube-apiserver":
        return UpstreamServer(request.getfixturevalue("upstream_control_plane"))
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
