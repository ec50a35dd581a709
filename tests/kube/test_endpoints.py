"""The HTTPS endpoints over real TLS on 127.0.0.1 (ephemeral port): upstream healthz output,
the checks kube-scheduler installs, authorization of /metrics and /configz."""

from __future__ import annotations

import ssl
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from kubesched.kube.endpoints import EndpointsServer, self_signed_cert
from kubesched.kube.metrics import SchedulerMetrics


class State:
    synced = False
    le_error: str | None = None


def client_ctx(srv: EndpointsServer) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    assert srv.self_signed_cert is not None
    ctx.load_verify_locations(cadata=srv.self_signed_cert.decode())  # verifies the SANs too
    return ctx


@pytest_asyncio.fixture
async def server() -> AsyncIterator[tuple[EndpointsServer, State, str]]:
    st = State()
    m = SchedulerMetrics()
    m.leader_on("kube-scheduler")
    srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, leader_election_check=lambda: st.le_error,
                          handlers_synced=lambda: st.synced, metrics=m,
                          configz={"apiVersion": "kubescheduler.config.k8s.io/v1", "parallelism": 16},
                          static_tokens={"s3cret": "ops"})
    await srv.start()
    try:
        yield srv, st, f"https://127.0.0.1:{srv.port}"
    finally:
        await srv.stop()


async def get(srv: EndpointsServer, url: str, token: str | None = None, host: str = "127.0.0.1") -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as s, s.get(url, ssl=client_ctx(srv), headers=headers) as r:
        return r.status, await r.text()


@pytest.mark.asyncio
async def test_livez_and_readyz_follow_sync_and_shutdown(server: Any) -> None:
    srv, st, base = server
    assert await get(srv, base + "/livez") == (200, "ok")
    assert await get(srv, base + "/livez?verbose") == (200, "[+]ping ok\nlivez check passed\n")
    code, body = await get(srv, base + "/readyz")
    assert code == 500
    assert body == ("[+]leaderElection ok\n[+]shutdown ok\n[-]sched-handler-sync failed: reason withheld\n"
                    "readyz check failed\n")
    st.synced = True
    assert await get(srv, base + "/readyz") == (200, "ok")
    assert await get(srv, base + "/readyz?verbose") == (
        200, "[+]leaderElection ok\n[+]shutdown ok\n[+]sched-handler-sync ok\nreadyz check passed\n")
    srv.begin_shutdown()
    code, body = await get(srv, base + "/readyz")
    assert code == 500 and "[-]shutdown failed: reason withheld\n" in body
    assert await get(srv, base + "/readyz?exclude=shutdown") == (200, "ok")
    code, body = await get(srv, base + "/readyz?exclude=shutdown&exclude=nope&verbose")
    assert code == 200
    assert '[+]shutdown excluded: ok\n' in body
    assert 'warn: some health checks cannot be excluded: no matches for "nope"\n' in body


@pytest.mark.asyncio
async def test_healthz_leader_watchdog(server: Any) -> None:
    srv, st, base = server
    assert await get(srv, base + "/healthz?verbose") == (200, "[+]leaderElection ok\nhealthz check passed\n")
    st.le_error = "failed election to renew leadership on lease kube-scheduler"
    code, body = await get(srv, base + "/healthz")
    assert (code, body) == (500, "[-]leaderElection failed: reason withheld\nhealthz check failed\n")
    assert "renew" not in body  # the reason is withheld from the public endpoint
    # the per-check path shows the reason, but it is not an always-allowed path
    assert (await get(srv, base + "/healthz/leaderElection"))[0] == 403
    code, body = await get(srv, base + "/healthz/leaderElection", token="s3cret")
    assert code == 500 and body == (
        "internal server error: failed election to renew leadership on lease kube-scheduler\n")


@pytest.mark.asyncio
async def test_metrics_and_configz_need_authorization(server: Any) -> None:
    srv, _, base = server
    for path in ("/metrics", "/configz"):
        code, body = await get(srv, base + path)
        assert code == 403 and f'User \\"system:anonymous\\" cannot get path \\"{path}\\"' in body
        assert (await get(srv, base + path, token="wrong"))[0] == 401
    code, body = await get(srv, base + "/metrics", token="s3cret")
    assert code == 200 and 'leader_election_master_status{name="kube-scheduler"} 1.0' in body
    await get(srv, base + "/livez")
    code, body = await get(srv, base + "/metrics/slis", token="s3cret")
    assert code == 200
    assert 'kubernetes_healthcheck{name="ping",type="livez"} 1.0' in body
    assert 'kubernetes_healthchecks_total{name="ping",status="success",type="livez"}' in body
    assert (await get(srv, base + "/metrics/slis"))[0] == 403
    code, body = await get(srv, base + "/configz", token="s3cret")
    assert code == 200
    import json
    assert json.loads(body) == {"componentconfig": {"apiVersion": "kubescheduler.config.k8s.io/v1",
                                                    "parallelism": 16}}
    assert (await get(srv, base + "/nope", token="s3cret"))[0] == 404
    assert (await get(srv, base + "/nope"))[0] == 403
    async with aiohttp.ClientSession() as s, s.get(base + "/metrics", ssl=client_ctx(srv)) as r:
        assert r.headers["Cache-Control"] == "no-cache, private"
        assert await r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                  "message": 'forbidden: User "system:anonymous" cannot get path "/metrics"',
                                  "reason": "Forbidden", "details": {}, "code": 403}


@pytest.mark.asyncio
async def test_always_allow_paths_and_given_certificate() -> None:
    cert, key = self_signed_cert()
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "c.pem").write_bytes(cert)
        (Path(d) / "k.pem").write_bytes(key)
        srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, cert_file=str(Path(d) / "c.pem"),
                              key_file=str(Path(d) / "k.pem"), metrics=SchedulerMetrics(),
                              always_allow_paths=["/healthz", "/metrics*"])
        assert srv.self_signed_cert is None
        await srv.start()
        try:
            ctx = ssl.create_default_context()
            ctx.load_verify_locations(cadata=cert.decode())
            async with aiohttp.ClientSession() as s:
                async with s.get(f"https://127.0.0.1:{srv.port}/metrics", ssl=ctx) as r:
                    assert r.status == 200
                    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                    assert "scheduler_pending_pods" in await r.text()
                async with s.get(f"https://127.0.0.1:{srv.port}/readyz", ssl=ctx) as r:
                    assert r.status == 403  # not in this always-allow list
                async with s.get(f"https://127.0.0.1:{srv.port}/healthz", ssl=ctx) as r:
                    assert (r.status, await r.text()) == (200, "ok")  # no leader election: ping only
        finally:
            await srv.stop()


def test_half_a_certificate_is_an_error() -> None:
    with pytest.raises(ValueError, match="must be given together"):
        EndpointsServer(cert_file="/x.pem")


@pytest.mark.asyncio
async def test_delegated_auth_unknown_token_is_unauthorized_and_anonymous_forbidden() -> None:
    """With a delegate API server that authenticates no token (a box without a token: no token
    authenticator), a bearer token authenticates no one (401) and nobody gets /metrics; health stays public."""
    from kubesched.apiserver.launcher import start_server
    from kubesched.kube.client import APIClient

    async with start_server(token=None) as box, APIClient.for_server(box.url) as delegate:
        srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, metrics=SchedulerMetrics(),
                              delegate=delegate)
        await srv.start()
        try:
            base = f"https://127.0.0.1:{srv.port}"
            assert (await get(srv, base + "/metrics", token="whoever"))[0] == 401
            assert (await get(srv, base + "/metrics"))[0] == 403
            assert await get(srv, base + "/livez") == (200, "ok")
            assert (await get(srv, base + "/livez", token="whoever"))[0] == 401  # as upstream: bad creds fail
        finally:
            await srv.stop()



@pytest.mark.asyncio
async def test_metrics_resources_only_while_leading() -> None:
    from kubesched.kube.metrics import pod_resource_metrics
    from kubesched.testing.wrappers import MakePod

    leading = [False]
    pods = [MakePod().name("a").namespace("ns").req(cpu="1").obj()]
    srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, static_tokens={"t": "ops"},
                          resource_metrics=lambda: pod_resource_metrics(pods), is_leader=lambda: leading[0])
    await srv.start()
    try:
        base = f"https://127.0.0.1:{srv.port}"
        assert await get(srv, base + "/metrics/resources", token="t") == (200, "")
        leading[0] = True
        code, body = await get(srv, base + "/metrics/resources", token="t")
        assert code == 200 and 'kube_pod_resource_request{namespace="ns",node="",pod="a"' in body
    finally:
        await srv.stop()


@pytest.mark.asyncio
async def test_healthz_fails_when_the_real_elector_holds_the_lease_without_renewing() -> None:
    """The production watchdog wired to the production elector (a fake clock stands for a renew
    loop that stopped running, e.g. a wedged event loop or a stuck task)."""
    from fakeapi import FakeAPI

    from kubesched.kube.leaderelection import LeaderElector

    now = [100.0]
    el = LeaderElector(FakeAPI(), identity="me", clock=lambda: now[0])
    assert await el.try_acquire_or_renew()
    srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, leader_election_check=el.check)
    await srv.start()
    try:
        base = f"https://127.0.0.1:{srv.port}"
        assert await get(srv, base + "/healthz") == (200, "ok")
        now[0] += 15 + 20 + 1  # lease duration + the 20 s tolerance, without a renewal
        assert await get(srv, base + "/healthz") == (
            500, "[-]leaderElection failed: reason withheld\nhealthz check failed\n")
        code, body = await get(srv, base + "/readyz")
        assert code == 500 and "[-]leaderElection failed" in body
        assert await el.try_acquire_or_renew()  # a renewal heals it
        assert await get(srv, base + "/healthz") == (200, "ok")
    finally:
        await srv.stop()


@pytest.mark.asyncio
async def test_delegated_auth_against_the_box_lets_its_admin_scrape_metrics() -> None:
    """The box answers TokenReview (its token is a system:masters admin) and SubjectAccessReview, so
    ``kubesched run``'s /metrics can be scraped with the box's token; another token is 401."""
    import tempfile

    from kubesched.apiserver.launcher import start_server
    from kubesched.kube.client import APIClient, load_config

    kc = Path(tempfile.mkdtemp()) / "kubeconfig"
    async with start_server(kc) as box, APIClient(load_config(str(kc), qps=-1)) as delegate:
        srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, metrics=SchedulerMetrics(),
                              delegate=delegate)
        await srv.start()
        try:
            base = f"https://127.0.0.1:{srv.port}"
            code, body = await get(srv, base + "/metrics", token=box.token)
            assert code == 200 and "scheduler_pending_pods" in body
            assert (await get(srv, base + "/metrics", token="not-the-token"))[0] == 401
        finally:
            await srv.stop()


class FakeReviewer:
    """A delegate API server's review endpoints: tokens in ``users`` authenticate, SubjectAccessReviews
    are allowed for ``allowed`` users; counts the reviews it answers; ``fail`` makes them raise."""

    def __init__(self, users: dict[str, str], allowed: set[str]) -> None:
        self.users, self.allowed = users, allowed
        self.token_reviews: list[str] = []
        self.access_reviews: list[dict[str, Any]] = []
        self.fail = False

    async def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import asyncio

        await asyncio.sleep(0.01)  # an answer takes a while: concurrent requests overlap
        if self.fail:
            raise ConnectionError("reviewer unreachable")
        if body["kind"] == "TokenReview":
            token = body["spec"]["token"]
            self.token_reviews.append(token)
            if token in self.users:
                return {"status": {"authenticated": True,
                                   "user": {"username": self.users[token], "groups": ["system:authenticated"]}}}
            return {"status": {"authenticated": False}}
        self.access_reviews.append(body["spec"])
        return {"status": {"allowed": body["spec"]["user"] in self.allowed}}


@pytest.mark.asyncio
async def test_token_reviews_are_cached_10s_shared_and_not_kept_in_clear() -> None:
    """cached_token_authenticator.go: answers (authenticated or not) cached for the 10 s TTL of the
    delegating options; concurrent lookups of one token share a review (singleflight); the cache key
    is an HMAC of the token; reviews that fail are not cached; expired entries are dropped."""
    import asyncio

    now = [1000.0]
    rev = FakeReviewer({"good": "alice"}, {"alice"})
    srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, metrics=SchedulerMetrics(), delegate=rev,
                          clock=lambda: now[0])
    await srv.start()
    try:
        base = f"https://127.0.0.1:{srv.port}"
        codes = await asyncio.gather(*(get(srv, base + "/metrics", token="unknown") for _ in range(20)))
        assert {c for c, _ in codes} == {401}
        assert rev.token_reviews == ["unknown"]  # 20 concurrent requests, one TokenReview
        assert (await get(srv, base + "/metrics", token="unknown"))[0] == 401
        now[0] += 9.9
        assert (await get(srv, base + "/metrics", token="unknown"))[0] == 401
        assert rev.token_reviews == ["unknown"]  # still within the TTL
        now[0] += 0.2
        assert (await get(srv, base + "/metrics", token="unknown"))[0] == 401
        assert rev.token_reviews == ["unknown", "unknown"]  # expired: reviewed again
        assert all(b"unknown" not in k for k in srv._authn_cache)  # keyed by an HMAC, not the token

        # a flood of distinct tokens: one review each; once they expire they leave the cache
        for i in range(50):
            assert (await get(srv, base + "/metrics", token=f"flood-{i}"))[0] == 401
        assert len(rev.token_reviews) == 52 and len(srv._authn_cache) == 51
        now[0] += 11
        assert (await get(srv, base + "/metrics", token="flood-new"))[0] == 401
        assert len(srv._authn_cache) == 1

        # a failing reviewer: 401 and nothing cached, the next request asks again
        rev.fail = True
        assert (await get(srv, base + "/metrics", token="good"))[0] == 401
        rev.fail = False
        assert (await get(srv, base + "/metrics", token="good"))[0] == 200
        assert rev.token_reviews[-1] == "good" and srv.token_reviews == len(rev.token_reviews) + 1
    finally:
        await srv.stop()


@pytest.mark.asyncio
async def test_access_reviews_are_cached_allowed_and_denied_through_their_own_client() -> None:
    """webhook.go: SubjectAccessReview answers cached (allowed and denied, 10 s each, an LRU of 8192);
    the authorizer's reviews go through the authz delegate, TokenReviews through the authn one."""
    now = [0.0]
    authn = FakeReviewer({"a": "alice", "b": "bob"}, set())
    authz = FakeReviewer({}, {"alice"})
    srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, metrics=SchedulerMetrics(),
                          configz={"k": 1}, delegate=authn, authz_delegate=authz, clock=lambda: now[0])
    await srv.start()
    try:
        base = f"https://127.0.0.1:{srv.port}"
        for _ in range(3):
            assert (await get(srv, base + "/metrics", token="a"))[0] == 200
            assert (await get(srv, base + "/metrics", token="b"))[0] == 403
        assert [(s["user"], s["nonResourceAttributes"]) for s in authz.access_reviews] == [
            ("alice", {"path": "/metrics", "verb": "get"}), ("bob", {"path": "/metrics", "verb": "get"})]
        assert authn.access_reviews == [] and authz.token_reviews == []
        assert (await get(srv, base + "/configz", token="a"))[0] == 200  # another path: another review
        assert len(authz.access_reviews) == 3
        now[0] += 10.5
        assert (await get(srv, base + "/metrics", token="b"))[0] == 403
        assert len(authz.access_reviews) == 4 and len(authn.token_reviews) == 3
    finally:
        await srv.stop()


@pytest.mark.asyncio
async def test_cert_dir_keeps_the_self_signed_pair_for_the_next_start(tmp_path: Path) -> None:
    """``--cert-dir`` as apiserver's ``MaybeDefaultWithSelfSignedCerts``: the first start writes
    ``kube-scheduler.crt`` (0644) and ``.key`` (0600) there and serves them; the next start serves the
    same pair without generating one; a lone half of the pair is an error."""
    d = tmp_path / "certs"
    first = EndpointsServer(bind_address="127.0.0.1", secure_port=0, cert_dir=str(d))
    assert first.self_signed_cert is not None
    crt, key = d / "kube-scheduler.crt", d / "kube-scheduler.key"
    assert crt.read_bytes() == first.self_signed_cert
    assert (crt.stat().st_mode & 0o777, key.stat().st_mode & 0o777) == (0o644, 0o600)
    again = EndpointsServer(bind_address="127.0.0.1", secure_port=0, cert_dir=str(d))
    assert again.self_signed_cert is None  # loaded, not generated
    await again.start()
    try:
        ctx = ssl.create_default_context()
        ctx.load_verify_locations(cadata=crt.read_text())  # the served certificate is the kept one
        async with aiohttp.ClientSession() as s, s.get(f"https://127.0.0.1:{again.port}/livez", ssl=ctx) as r:
            assert (r.status, await r.text()) == (200, "ok")
    finally:
        await again.stop()
    key.unlink()
    with pytest.raises(ValueError, match="certificate and key must be supplied as a pair"):
        EndpointsServer(bind_address="127.0.0.1", secure_port=0, cert_dir=str(d))


@pytest.mark.asyncio
async def test_self_signed_pair_is_ecdsa_p256_and_go_clients_accept_it(tmp_path: Path) -> None:
    """The generated serving pair (client-go ``GenerateSelfSignedCertKey`` makes RSA-2048; kubesched an
    ECDSA P-256 key, ~0.2 ms instead of 0.05–0.15 CPU-s per generation): SHA-256, CN ``localhost@<time>``,
    SANs ``localhost``/``127.0.0.1``, serverAuth, key in an ``EC PRIVATE KEY`` block (what client-go's
    ``keyutil.ParsePrivateKeyPEM`` reads from ``--cert-dir``), and Go's TLS client (kubectl) verifies it."""
    import asyncio
    import shutil

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    cert_pem, key_pem = self_signed_cert()
    cert = x509.load_pem_x509_certificate(cert_pem)
    pub = cert.public_key()
    assert isinstance(pub, ec.EllipticCurvePublicKey) and pub.curve.name == "secp256r1"
    assert isinstance(cert.signature_hash_algorithm, hashes.SHA256)
    assert key_pem.startswith(b"-----BEGIN EC PRIVATE KEY-----")
    assert cert.subject.rfc4514_string().startswith("CN=localhost@")
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert (san.get_values_for_type(x509.DNSName), [str(i) for i in san.get_values_for_type(x509.IPAddress)]) \
        == (["localhost"], ["127.0.0.1"])
    assert cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value == \
        x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH])
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not on PATH")
    srv = EndpointsServer(bind_address="127.0.0.1", secure_port=0, cert_dir=str(tmp_path / "certs"),
                          static_tokens={"s3cret": "ops"})
    await srv.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            kubectl, f"--server=https://127.0.0.1:{srv.port}", "--kubeconfig=/dev/null", "--token=s3cret",
            f"--certificate-authority={tmp_path}/certs/kube-scheduler.crt", "get", "--raw", "/livez",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
    finally:
        await srv.stop()
    assert (proc.returncode, out.decode(), err.decode()) == (0, "ok", "")
