"""``kubesched.kube.kubeconfig`` through ``load_config`` and a real request: each credential and trust
form of a kubeconfig (client-go ``tools/clientcmd/api/v1`` fields), the context choice, relative
paths resolved against the kubeconfig's folder (``ResolveLocalPaths``), the in-cluster service
account (``rest.InClusterConfig``), exec credential plugins, and one error line for each bad input.

The TLS cases talk to an aiohttp server with a CA-issued serving certificate that requires a
client certificate signed by the same CA, as kube-apiserver with ``--client-ca-file``."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from kubesched.errors import KubeschedError
from kubesched.kube.client import APIClient, APIConnectionError, load_config
from kubesched.testing.upstream import _issue, _new_ca, _pem_cert


def _write(tmp: Path, name: str, doc: dict[str, Any]) -> str:
    p = tmp / name
    p.write_text(yaml.safe_dump(doc))
    return str(p)


def _kubeconfig(server: str, user: dict[str, Any], cluster: dict[str, Any] | None = None,
                **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "k", "cluster": {"server": server, **(cluster or {})}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}},
                         {"name": "other", "context": {"cluster": "k", "user": "v", "namespace": "team"}}],
            "users": [{"name": "u", "user": user}, {"name": "v", "user": {"token": "from-other"}}], **extra}


async def _echo_server(tls: ssl.SSLContext | None = None) -> tuple[web.AppRunner, str, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        seen.append({"auth": request.headers.get("Authorization"), "peer": peer})
        return web.json_response({"kind": "Namespace"})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
    await site.start()
    scheme = "https" if tls else "http"
    return runner, f"{scheme}://127.0.0.1:{runner.addresses[0][1]}", seen


async def _get(cfg_path: str, **kw: Any) -> None:
    async with APIClient(load_config(cfg_path, qps=-1, **kw)) as c:
        await c.get("/api/v1/namespaces/default")


@pytest.mark.asyncio
async def test_bearer_token_forms_and_context_choice(tmp_path: Path) -> None:
    runner, url, seen = await _echo_server()
    try:
        (tmp_path / "tok").write_text("from-file\n")
        await _get(_write(tmp_path, "a", _kubeconfig(url, {"token": "static"})))
        await _get(_write(tmp_path, "b", _kubeconfig(url, {"tokenFile": "tok"})))  # relative to the file
        await _get(_write(tmp_path, "c", _kubeconfig(url, {"username": "ann", "password": "pw"})))
        await _get(_write(tmp_path, "a2", _kubeconfig(url, {"token": "static"})), context="other")
        await _get(_write(tmp_path, "d", _kubeconfig(url, {})))
    finally:
        await runner.cleanup()
    basic = "Basic " + base64.b64encode(b"ann:pw").decode()
    assert [s["auth"] for s in seen] == ["Bearer static", "Bearer from-file", basic, "Bearer from-other", None]
    cfg = load_config(str(tmp_path / "a2"), context="other")
    assert (cfg.namespace, load_config(str(tmp_path / "a")).namespace) == ("team", "default")


_PLUGIN = """import json, os, sys
out = sys.argv[1]
open(out + '.info', 'w').write(os.environ.get('KUBERNETES_EXEC_INFO', ''))
reply = json.loads(open(out).read())
if reply is None:
    sys.stderr.write('no login\\n'); sys.exit(3)
print(json.dumps(reply))
"""


def _exec_user(tmp: Path, name: str, api: str, reply: Any, **fields: Any) -> dict[str, Any]:
    """A user whose exec plugin prints ``reply`` (None: fails with exit code 3) and saves its
    KUBERNETES_EXEC_INFO next to the reply file."""
    (tmp / "plugin.py").write_text(_PLUGIN)
    (tmp / name).write_text(json.dumps(reply))
    return {"exec": {"apiVersion": f"client.authentication.k8s.io/{api}", "command": sys.executable,
                     "args": [str(tmp / "plugin.py"), str(tmp / name)], **fields}}


def _cred(api: str, **status: Any) -> dict[str, Any]:
    return {"apiVersion": f"client.authentication.k8s.io/{api}", "kind": "ExecCredential", "status": status}


@pytest.mark.asyncio
async def test_exec_credential_plugin(tmp_path: Path) -> None:
    """client-go ``plugin/pkg/client/auth/exec``: v1alpha1/v1beta1/v1, the plugin's env, its answer checked."""
    runner, url, seen = await _echo_server()
    try:
        for api in ("v1alpha1", "v1beta1", "v1"):
            user = _exec_user(tmp_path, api, api, _cred(api, token=f"tok-{api}"),
                              env=[{"name": "PREFIX", "value": "x"}], interactiveMode="Never")
            await _get(_write(tmp_path, f"k-{api}", _kubeconfig(url, user)))
            info = json.loads((tmp_path / f"{api}.info").read_text())
            assert info == {"kind": "ExecCredential", "apiVersion": f"client.authentication.k8s.io/{api}",
                            "spec": {"interactive": False}}
        bad = {  # the plugin's answer -> upstream's message
            "fails": (None, "exec: executable .* failed with exit code 3: no login"),
            "other-version": (_cred("v1beta1", token="t"), "configured to use API version client.authentication"
                              ".k8s.io/v1, plugin returned version client.authentication.k8s.io/v1beta1"),
            "no-version": ({"kind": "ExecCredential", "status": {"token": "t"}},
                           "plugin returned version client.authentication.k8s.io/__internal"),
            "no-status": ({"apiVersion": "client.authentication.k8s.io/v1"}, "didn't return a status field"),
            "empty": (_cred("v1"), "didn't return a status field"),
            "nothing": (_cred("v1", expirationTimestamp="2030-01-01T00:00:00Z"),
                        "didn't return a token or cert/key pair"),
            "cert-only": (_cred("v1", clientCertificateData="x"), "returned only certificate or key, not both"),
            "cert-pair": (_cred("v1", clientCertificateData="x", clientKeyData="y"), "tokens from exec plugins only"),
            "not-json": ("not json", "decoding stdout"),
        }
        for name, (reply, msg) in bad.items():
            user = _exec_user(tmp_path, name, "v1", reply, interactiveMode="IfAvailable")
            if name == "not-json":
                (tmp_path / name).write_text('"x"')
            with pytest.raises(APIConnectionError, match="getting credentials: " if name != "fails" else msg) as e:
                await _get(_write(tmp_path, f"k-{name}", _kubeconfig(url, user)))
            assert e.match(msg), name
        missing = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(tmp_path / "nope"),
                            "interactiveMode": "Never", "installHint": "install nope"}}
        with pytest.raises(APIConnectionError, match=r"exec: executable \S+/nope not found; install nope"):
            await _get(_write(tmp_path, "k-missing", _kubeconfig(url, missing)))
        old = {"exec": {"apiVersion": "client.authentication.k8s.io/v0", "command": sys.executable,
                        "interactiveMode": "Never"}}
        with pytest.raises(APIConnectionError, match='invalid apiVersion "client.authentication.k8s.io/v0"'):
            await _get(_write(tmp_path, "old", _kubeconfig(url, old)))
        always = _exec_user(tmp_path, "always", "v1", _cred("v1", token="t"), interactiveMode="Always")
        with pytest.raises(APIConnectionError, match="cannot support interactive mode: standard input is not a"):
            await _get(_write(tmp_path, "k-always", _kubeconfig(url, always)))
    finally:
        await runner.cleanup()
    assert [s["auth"] for s in seen] == ["Bearer tok-v1alpha1", "Bearer tok-v1beta1", "Bearer tok-v1"]


@pytest.mark.parametrize(("exec_fields", "message"), [
    ({"apiVersion": "client.authentication.k8s.io/v1", "command": "p"},
     "interactiveMode must be specified for u to use exec authentication plugin"),
    ({"apiVersion": "client.authentication.k8s.io/v1", "command": "p", "interactiveMode": "Sometimes"},
     'invalid interactiveMode for u: "Sometimes"'),
    ({"apiVersion": "client.authentication.k8s.io/v1beta1"}, "command must be specified for u to use exec"),
    ({"command": "p"}, "apiVersion must be specified for u to use exec authentication plugin"),
    ({"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "p", "env": [{"name": "", "value": "1"}]},
     "env variable name must be specified for u"),
])
def test_exec_plugin_config_is_validated_as_clientcmd(tmp_path: Path, exec_fields: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(KubeschedError, match=message):
        load_config(_write(tmp_path, "k", _kubeconfig("https://127.0.0.1:1", {"exec": exec_fields})))


@pytest.mark.asyncio
async def test_exec_plugin_cluster_info_is_what_kubectl_gives(tmp_path: Path) -> None:
    """``provideClusterInfo``: KUBERNETES_EXEC_INFO byte for byte as kubectl (client-go) sets it."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not on PATH")
    ca = _new_ca("exec-ca")
    srv_cert, srv_key = _issue(ca, "server", ips=["127.0.0.1"], server=True)
    (tmp_path / "srv.crt").write_bytes(srv_cert)
    (tmp_path / "srv.key").write_bytes(srv_key)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)  # client-go runs exec plugins for https servers only
    tls.load_cert_chain(tmp_path / "srv.crt", tmp_path / "srv.key")
    runner, url, _ = await _echo_server(tls)
    try:
        cluster = {"certificate-authority-data": base64.b64encode(_pem_cert(ca.cert)).decode()}
        for api, mode in (("v1", "Never"), ("v1beta1", None)):
            fields = {"provideClusterInfo": True, **({"interactiveMode": mode} if mode else {})}
            user = _exec_user(tmp_path, f"r-{api}", api, _cred(api, token="t"), **fields)
            cfg = _write(tmp_path, f"k-{api}", _kubeconfig(url, user, cluster))
            await _get(cfg)
            ours = (tmp_path / f"r-{api}.info").read_text()
            (tmp_path / f"r-{api}.info").unlink()  # kubectl's plugin run writes it again
            proc = await asyncio.create_subprocess_exec(  # the echo server runs on this loop
                kubectl, "--kubeconfig", cfg, "get", "--raw", "/api/v1/namespaces/default",
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            assert proc.returncode == 0, err
            theirs = (tmp_path / f"r-{api}.info").read_text()
            assert json.loads(ours)["spec"]["cluster"]["server"] == url
            assert ours == theirs, api
    finally:
        await runner.cleanup()


@pytest.mark.asyncio
async def test_tls_ca_and_client_certificates_as_data_and_as_relative_files(tmp_path: Path) -> None:
    ca = _new_ca("test-ca")
    srv_cert, srv_key = _issue(ca, "server", ips=["127.0.0.1"], server=True)
    cli_cert, cli_key = _issue(ca, "ann", organizations=["team"], server=False)
    ca_pem = _pem_cert(ca.cert)
    for name, data in (("ca.crt", ca_pem), ("srv.crt", srv_cert), ("srv.key", srv_key),
                       ("cli.crt", cli_cert), ("cli.key", cli_key)):
        (tmp_path / name).write_bytes(data)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(tmp_path / "srv.crt", tmp_path / "srv.key")
    tls.load_verify_locations(cafile=tmp_path / "ca.crt")
    tls.verify_mode = ssl.CERT_REQUIRED
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    runner, url, seen = await _echo_server(tls)
    try:
        await _get(_write(tmp_path, "data", _kubeconfig(
            url, {"client-certificate-data": b64(cli_cert), "client-key-data": b64(cli_key)},
            {"certificate-authority-data": b64(ca_pem)})))
        await _get(_write(tmp_path, "files", _kubeconfig(
            url, {"client-certificate": "cli.crt", "client-key": "cli.key"}, {"certificate-authority": "ca.crt"})))
        # no CA in the kubeconfig: the system roots do not know this CA; insecure-skip-tls-verify does not check
        with pytest.raises(APIConnectionError, match="certificate verify failed"):
            await _get(_write(tmp_path, "system", _kubeconfig(
                url, {"client-certificate": "cli.crt", "client-key": "cli.key"})))
        await _get(_write(tmp_path, "insecure", _kubeconfig(
            url, {"client-certificate": "cli.crt", "client-key": "cli.key"}, {"insecure-skip-tls-verify": True})))
    finally:
        await runner.cleanup()
    subjects = [dict(x[0] for x in s["peer"]["subject"]) for s in seen]
    assert subjects == [{"organizationName": "team", "commonName": "ann"}] * 3


def test_in_cluster_service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubesched.kube import client as kubeclient

    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    (sa / "namespace").write_text("kube-system")
    (sa / "ca.crt").write_bytes(_pem_cert(_new_ca("cluster-ca").cert))
    monkeypatch.setattr(kubeclient, "SERVICE_ACCOUNT", str(sa))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    cfg = load_config()
    assert (cfg.server, cfg.namespace, cfg.user.token_file) == ("https://[fd00::1]:443", "kube-system",
                                                                str(sa / "token"))
    assert cfg.ssl is not None and cfg.ssl.cert_store_stats()["x509_ca"] == 1  # only the mounted CA
    (sa / "token").unlink()
    with pytest.raises(KubeschedError, match="no configuration has been provided"):
        load_config()


@pytest.mark.parametrize(("content", "error"), [
    (None, "Configuration file .* not found"),
    ("clusters: [", "invalid YAML"),
    ("clusters: 3\n", "invalid content"),
    (json.dumps(_kubeconfig("http://x", {}, **{"current-context": None})), "No current context set"),
    (json.dumps(_kubeconfig("http://x", {}, **{"current-context": "nope"})), "Context 'nope' not found"),
    (json.dumps(_kubeconfig("http://x", {}, **{"users": []})), "invalid content: context 'c': user 'u' not found"),
    (json.dumps(_kubeconfig("http://x", {}, **{"clusters": []})), "invalid content: context 'c': cluster 'k' not"),
    # a field of the wrong type: its path
    (json.dumps(_kubeconfig("http://x", {}, **{"clusters": [{"name": "k", "cluster": {"server": 3}}]})),
     r"invalid content: Expected `str`, got `int` - at `\$\.clusters\[0\]\.cluster\.server`"),
    (json.dumps(_kubeconfig("http://x", {"tokenFile": ["a"]})), r"at `\$\.users\[0\]\.user\.tokenFile`"),
    ("- a list\n", "invalid content: expected a mapping"),
    (json.dumps(_kubeconfig("https://x", {}, {"certificate-authority": "missing.crt"})), "TLS configuration"),
])
def test_bad_kubeconfigs_are_one_error_line(tmp_path: Path, content: str | None, error: str) -> None:
    p = tmp_path / "kc"
    if content is not None:
        p.write_text(content)
    with pytest.raises(KubeschedError, match=error) as e:
        load_config(str(p))
    assert "\n" not in str(e.value)


def test_reading_a_kubeconfig_imports_no_http_client_library(tmp_path: Path) -> None:
    """The kubeconfig reader is kubesched's own: ``kubesched run``'s start-up no longer imports
    lightkube and its httpx2 (~70 modules) to read the file."""
    import subprocess

    path = _write(tmp_path, "kc", _kubeconfig("https://127.0.0.1:1", {"token": "t"},
                                              {"insecure-skip-tls-verify": True}))
    code = ("import sys; import kubesched.cli.main; from kubesched.kube.client import load_config; "
            "from kubesched.kube import adapter, endpoints, events, informer, metrics, runner; "
            f"c = load_config({path!r}); assert c.tls is not None and c.tls.insecure; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lightkube', 'httpx', 'httpx2')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_mixed_client_certificate_file_and_key_data(tmp_path: Path) -> None:
    """A client certificate from a file with its key as ``-data`` (each field read on its own, as
    client-go's ``tls.Config`` loading): both reach the TLS context and libcurl's material."""
    ca = _new_ca("test-ca")
    cli_cert, cli_key = _issue(ca, "ann", organizations=["team"], server=False)
    (tmp_path / "cli.crt").write_bytes(cli_cert)
    path = _write(tmp_path, "kc", _kubeconfig(
        "https://127.0.0.1:1", {"client-certificate": "cli.crt", "client-key-data": base64.b64encode(cli_key).decode()},
        {"certificate-authority-data": base64.b64encode(_pem_cert(ca.cert)).decode()}))
    cfg = load_config(path)
    assert cfg.tls is not None and (cfg.tls.cert, cfg.tls.key, cfg.tls.insecure) == (cli_cert, cli_key, False)
    assert cfg.ssl is not None and cfg.ssl.cert_store_stats()["x509_ca"] == 1
