"""``kubesched.kube.kubeconfig`` through ``load_config`` and a real request: each credential and trust
form of a kubeconfig (client-go ``tools/clientcmd/api/v1`` fields), the context choice, relative
paths resolved against the kubeconfig's folder (``ResolveLocalPaths``), the in-cluster service
account (``rest.InClusterConfig``), exec credential plugins, and one error line for each bad input.

The TLS cases talk to an aiohttp server with a CA-issued serving certificate that requires a
client certificate signed by the same CA, as kube-apiserver with ``--client-ca-file``."""

from __future__ import annotations

import base64
import json
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


@pytest.mark.asyncio
async def test_exec_credential_plugin(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text("import json, os, sys\nprint(json.dumps({'kind': 'ExecCredential', 'status': "
                      "{'token': os.environ['PREFIX'] + sys.argv[1]}}))\n")
    fail = tmp_path / "fail.py"
    fail.write_text("import sys\nsys.stderr.write('no login')\nsys.exit(3)\n")
    runner, url, seen = await _echo_server()
    try:
        ok = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                       "args": [str(plugin), "-42"], "env": [{"name": "PREFIX", "value": "tok"}]}}
        await _get(_write(tmp_path, "ok", _kubeconfig(url, ok)))
        bad = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                        "args": [str(fail)]}}
        with pytest.raises(APIConnectionError, match="returned 3: no login"):
            await _get(_write(tmp_path, "bad", _kubeconfig(url, bad)))
        old = {"exec": {"apiVersion": "client.authentication.k8s.io/v0", "command": sys.executable}}
        with pytest.raises(APIConnectionError, match="api version client.authentication.k8s.io/v0 not implemented"):
            await _get(_write(tmp_path, "old", _kubeconfig(url, old)))
    finally:
        await runner.cleanup()
    assert [s["auth"] for s in seen] == ["Bearer tok-42"]


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
