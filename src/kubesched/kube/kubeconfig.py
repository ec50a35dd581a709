"""Reading a kubeconfig (or the in-cluster service account) into what :class:`~kubesched.kube.client.APIClient`
needs: the server URL, a TLS context, the credentials, the namespace.

The kubeconfig format is client-go's ``tools/clientcmd/api/v1`` (``types.go``: ``clusters``,
``contexts``, ``users``, ``current-context``); which context is taken and how files are found
follow ``tools/clientcmd`` (``loader.go`` ``ResolveLocalPaths``: relative paths are relative to
the kubeconfig's folder — CA, client certificate and key, token file, an exec command
that is a path; ``client_config.go``: ``--context`` or ``current-context``), the in-cluster
configuration ``rest.InClusterConfig`` (``rest/config.go``: ``KUBERNETES_SERVICE_HOST``/``_PORT``,
the mounted token — re-read for rotation — and CA). The fields read are those lightkube's
``lightkube.config`` models read (this module replaces it: importing lightkube imports its httpx
client, ~0.1–0.2 CPU-s of ``kubesched run``'s start-up for a file the YAML and msgspec libraries
already loaded can read), with the same selection rules and error texts.

TLS (``rest/transport.go``): ``certificate-authority`` / ``-data`` are the only roots trusted when
given; without them the system roots (OpenSSL's default paths, ``SSL_CERT_FILE``/``SSL_CERT_DIR``
honoured); ``insecure-skip-tls-verify`` without a CA turns verification off; client certificates
from ``client-certificate`` / ``-data`` and ``client-key`` / ``-data``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import yaml

from kubesched.errors import KubeschedError

__all__ = [
    "SERVICE_ACCOUNT",
    "Cluster",
    "Context",
    "KubeconfigError",
    "NameValue",
    "SingleConfig",
    "User",
    "UserExec",
    "exec_credential",
    "from_file",
    "from_server",
    "from_service_account",
    "ssl_context",
]

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_NAMESPACE = "default"
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1alpha1", "client.authentication.k8s.io/v1beta1")


class KubeconfigError(KubeschedError):
    """The configuration cannot be used (file missing, no such context, unreadable service account…)."""


class Context(msgspec.Struct, omit_defaults=True):
    cluster: str
    user: str | None = None
    namespace: str | None = None


class NameValue(msgspec.Struct, omit_defaults=True):
    name: str
    value: str


class UserExec(msgspec.Struct, omit_defaults=True):
    """An exec credential plugin (``users[].user.exec``)."""

    apiVersion: str
    command: str
    env: list[NameValue] | None = None
    args: list[str] | None = None
    installHint: str | None = None


class User(msgspec.Struct, omit_defaults=True):
    """``users[].user``: one way to authenticate (token file, token, exec plugin, basic auth) plus
    an optional client certificate."""

    exec: UserExec | None = None
    username: str | None = None
    password: str | None = None
    token: str | None = None
    token_file: str | None = msgspec.field(name="tokenFile", default=None)
    auth_provider: dict[str, Any] | None = msgspec.field(name="auth-provider", default=None)
    client_cert: str | None = msgspec.field(name="client-certificate", default=None)
    client_cert_data: str | None = msgspec.field(name="client-certificate-data", default=None)
    client_key: str | None = msgspec.field(name="client-key", default=None)
    client_key_data: str | None = msgspec.field(name="client-key-data", default=None)


class Cluster(msgspec.Struct, omit_defaults=True):
    """``clusters[].cluster``: the server URL and how to trust it."""

    server: str = "http://localhost:8080"
    certificate_auth: str | None = msgspec.field(name="certificate-authority", default=None)
    certificate_auth_data: str | None = msgspec.field(name="certificate-authority-data", default=None)
    insecure: bool = msgspec.field(name="insecure-skip-tls-verify", default=False)


@dataclass(frozen=True)
class SingleConfig:
    """The selected context: its cluster, user (None: no credentials) and the file it came from."""

    context_name: str
    context: Context
    cluster: Cluster
    user: User | None = None
    fname: Path | None = None

    @property
    def namespace(self) -> str:
        return self.context.namespace or DEFAULT_NAMESPACE

    def abs_file(self, fname: str) -> str:
        """``fname`` relative to the kubeconfig's folder (client-go ``ResolveLocalPaths``)."""
        if Path(fname).is_absolute():
            return fname
        if self.fname is None:
            raise KubeconfigError(f"{fname} is relative, but kubeconfig path unknown")
        return str(self.fname.parent / fname)


def _mapping(items: Any, key: str, kind: type[Any]) -> dict[str, Any]:
    return {obj["name"]: msgspec.convert(obj[key], kind) for obj in items}


def from_file(fname: str, context: str | None = None) -> SingleConfig:
    """The context ``context`` (default: ``current-context``) of the kubeconfig at ``fname``.

    Raises:
        KubeconfigError: no such file, no current context, no such context.
        yaml.YAMLError: not YAML. KeyError / TypeError / msgspec.ValidationError: not a kubeconfig
            (a context naming a missing cluster or user included).
    """
    path = Path(fname).expanduser()
    if not path.is_file():
        raise KubeconfigError(f"Configuration file {fname} not found")
    conf = yaml.safe_load(path.read_text())
    clusters = _mapping(conf["clusters"], "cluster", Cluster)
    contexts = _mapping(conf["contexts"], "context", Context)
    users = _mapping(conf.get("users") or [], "user", User)
    name = context if context is not None else conf.get("current-context")
    if name is None:
        raise KubeconfigError("No current context set and no default provided")
    try:
        ctx = contexts[name]
    except KeyError:
        raise KubeconfigError(f"Context '{name}' not found") from None
    user: User | None = users[ctx.user] if ctx.user else None
    if user is not None:  # client-go GetAuthInfoFileReferences: the token file and a path-like exec command
        base = path.parent
        if user.token_file and not os.path.isabs(user.token_file):
            user = msgspec.structs.replace(user, token_file=str(base / user.token_file))
        if user.exec and os.sep in user.exec.command and not os.path.isabs(user.exec.command):
            user = msgspec.structs.replace(user, exec=msgspec.structs.replace(
                user.exec, command=str(base / user.exec.command)))
    return SingleConfig(name, ctx, clusters[ctx.cluster], user, path)


def from_server(url: str) -> SingleConfig:
    """Only a server URL (``--master`` without a kubeconfig): no credentials."""
    return SingleConfig("default", Context(cluster="default"), Cluster(server=url))


def from_service_account(account_dir: str | None = None) -> SingleConfig:
    """The in-cluster configuration (``rest.InClusterConfig``): ``https://$KUBERNETES_SERVICE_HOST:
    $KUBERNETES_SERVICE_PORT``, the mounted CA, the token file (re-read for rotation) and namespace,
    from ``account_dir`` (default :data:`SERVICE_ACCOUNT`).

    Raises:
        KubeconfigError: the token or namespace file is missing. KeyError: the variables are unset.
    """
    d = Path(account_dir or SERVICE_ACCOUNT)
    token_file = str(d / "token")
    try:
        token = Path(token_file).read_text()
        namespace = (d / "namespace").read_text()
    except FileNotFoundError as e:
        raise KubeconfigError(str(e)) from e
    host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return SingleConfig("default", Context(cluster="default", user="default", namespace=namespace),
                        Cluster(server=f"https://{host}:{port}", certificate_auth=str(d / "ca.crt")),
                        User(token=token, token_file=token_file))


def ssl_context(single: SingleConfig) -> ssl.SSLContext:
    """The client TLS context of ``single`` (see the module: CA, system roots or no verification,
    client certificate).

    Raises:
        OSError / ssl.SSLError: unreadable or invalid CA, certificate or key.
        binascii.Error (ValueError): a ``-data`` field that is not base64.
    """
    cluster, user = single.cluster, single.user
    if cluster.certificate_auth:
        ctx = ssl.create_default_context(cafile=single.abs_file(cluster.certificate_auth))
    elif cluster.certificate_auth_data:
        raw = base64.b64decode(cluster.certificate_auth_data)
        ctx = ssl.create_default_context(cadata=raw.decode() if raw.lstrip().startswith(b"-----") else raw)
    elif cluster.insecure:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl.create_default_context()
    if user is not None and (user.client_cert or user.client_cert_data):
        if user.client_cert_data or user.client_key_data:
            # ssl loads a certificate and key from files only: a private temporary folder
            with tempfile.TemporaryDirectory(prefix="kubesched-kubeconfig-") as d:
                cert = _data_or_file(d, "tls.crt", user.client_cert_data, user.client_cert, single)
                key = _data_or_file(d, "tls.key", user.client_key_data, user.client_key, single)
                ctx.load_cert_chain(cert, key)
        else:
            ctx.load_cert_chain(single.abs_file(user.client_cert or ""), single.abs_file(user.client_key or ""))
    return ctx


def _data_or_file(folder: str, name: str, data: str | None, fname: str | None, single: SingleConfig) -> str:
    if not data:
        return single.abs_file(fname or "")
    path = os.path.join(folder, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64decode(data))
    return path


async def exec_credential(plugin: UserExec) -> bytes:
    """Run an exec credential plugin (``client.authentication.k8s.io`` v1alpha1/v1beta1) and return
    its standard output (the ``ExecCredential`` JSON): the command with its ``args``, the process
    environment plus the plugin's ``env``.

    Raises:
        KubeconfigError: another apiVersion, or the plugin exited non-zero (its stderr in the message).
        OSError: the command cannot be started.
    """
    if plugin.apiVersion not in EXEC_API_VERSIONS:
        raise KubeconfigError(f"auth exec api version {plugin.apiVersion} not implemented")
    env = dict(os.environ)
    env.update((v.name, v.value) for v in plugin.env or ())
    command = [plugin.command, *(plugin.args or ())]
    proc = await asyncio.create_subprocess_exec(*command, env=env, stdin=None, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await proc.communicate()
    if proc.returncode != 0:
        raise KubeconfigError(f"Exec {command[0]} returned {proc.returncode}: {stderr.decode()}")
    return stdout
