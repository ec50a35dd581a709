"""Reading a kubeconfig: the fields ``kubesched run`` uses, as client-go's ``clientcmd`` reads them.

Follows ``staging/src/k8s.io/client-go/tools/clientcmd/api/v1/types.go`` (field names),
``tools/clientcmd/loader.go`` (``ResolveLocalPaths``: relative files are relative to the
kubeconfig's folder), ``tools/clientcmd/client_config.go`` (the context choice) and
``rest/config.go`` (``InClusterConfig``). What is read (everything else, e.g. ``preferences`` and
``extensions``, is ignored; ``tls-server-name``, ``proxy-url`` and ``disable-compression`` only reach an
exec plugin's ``provideClusterInfo``):

- ``current-context`` or an explicit context; its ``cluster``, ``user`` and ``namespace``
  (``default`` when unset);
- a cluster's ``server`` (default ``http://localhost:8080``), ``certificate-authority`` /
  ``certificate-authority-data`` and ``insecure-skip-tls-verify``;
- a user's ``token``, ``tokenFile``, ``username``/``password``, ``client-certificate(-data)``,
  ``client-key(-data)`` and ``exec`` (``apiVersion`` v1alpha1/v1beta1/v1, ``command``, ``args``, ``env``,
  ``interactiveMode``, ``provideClusterInfo``; validated and defaulted as ``clientcmd`` does, run as
  ``plugin/pkg/client/auth/exec/exec.go`` runs it, :func:`exec_command` and :func:`exec_credential`);
  ``auth-provider`` is kept only to be refused when a request needs it.

Replaces lightkube's ``KubeConfig`` and ``verify_cluster`` (same fields, same errors): importing
lightkube pulled in its HTTP clients (httpx2, ~70 modules) just to read this file.

Errors: :class:`KubeconfigError` (a :class:`~kubesched.errors.KubeschedError`), one line; a field of
the wrong type names its path (``invalid content: Expected `str`, got `int` - at
`$.clusters[0].cluster.server```).
"""

from __future__ import annotations

import base64
import os
import ssl
from pathlib import Path
from typing import Any

import msgspec

from kubesched.errors import KubeschedError

__all__ = [
    "DEFAULT_NAMESPACE",
    "EXEC_API_VERSIONS",
    "Cluster",
    "Context",
    "KubeconfigError",
    "SingleConfig",
    "User",
    "UserExec",
    "exec_cluster",
    "exec_command",
    "exec_credential",
    "from_server",
    "from_service_account",
    "load_file",
    "pem_material",
    "ssl_context",
]

DEFAULT_NAMESPACE = "default"
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1alpha1", "client.authentication.k8s.io/v1beta1",
                     "client.authentication.k8s.io/v1")
"""The ``exec`` plugin API versions accepted (client-go ``plugin/pkg/client/auth/exec`` ``apiVersions``)."""
EXEC_INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")
"""``exec.interactiveMode`` values (clientcmd ``api.ExecInteractiveMode``)."""


class KubeconfigError(KubeschedError):
    """A kubeconfig (or the in-cluster service account) that cannot be used; one line."""


class Context(msgspec.Struct, omit_defaults=True):
    """A context: the names of its ``cluster`` and ``user``, and its ``namespace``."""

    cluster: str
    user: str | None = None
    namespace: str | None = None


class NameValue(msgspec.Struct):
    """One ``env`` entry of an exec plugin."""

    name: str
    value: str


class UserExec(msgspec.Struct, omit_defaults=True):
    """An exec credential plugin (``users[].user.exec``; clientcmd ``api/v1`` ``ExecConfig``). ``interactiveMode``
    is defaulted by :func:`load_file` (``IfAvailable`` for v1alpha1/v1beta1, required for v1)."""

    apiVersion: str = ""
    command: str = ""
    env: list[NameValue] | None = None
    args: list[str] | None = None
    installHint: str | None = None
    interactiveMode: str | None = None
    provideClusterInfo: bool = False


class User(msgspec.Struct, omit_defaults=True):
    """A user's credentials (``users[].user``); paths as written (see :meth:`SingleConfig.abs_file`)."""

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
    """A cluster (``clusters[].cluster``): its URL and how its serving certificate is trusted."""

    server: str = "http://localhost:8080"
    certificate_auth: str | None = msgspec.field(name="certificate-authority", default=None)
    certificate_auth_data: str | None = msgspec.field(name="certificate-authority-data", default=None)
    insecure: bool = msgspec.field(name="insecure-skip-tls-verify", default=False)
    tls_server_name: str | None = msgspec.field(name="tls-server-name", default=None)
    """Only passed on to an exec plugin's ``provideClusterInfo`` (the client verifies the URL's host)."""
    proxy_url: str | None = msgspec.field(name="proxy-url", default=None)
    """Only passed on to an exec plugin's ``provideClusterInfo`` (the client does not use a proxy)."""
    disable_compression: bool = msgspec.field(name="disable-compression", default=False)


class _NamedCluster(msgspec.Struct):
    name: str
    cluster: Cluster


class _NamedContext(msgspec.Struct):
    name: str
    context: Context


class _NamedUser(msgspec.Struct):
    name: str
    user: User


class _File(msgspec.Struct, rename={"current_context": "current-context"}):
    clusters: list[_NamedCluster] = []
    contexts: list[_NamedContext] = []
    users: list[_NamedUser] | None = None
    current_context: str | None = None


class SingleConfig(msgspec.Struct):
    """The chosen context: its ``cluster``, ``user`` (None: no credentials) and the file it came
    from (None: built from a URL or the service account)."""

    context_name: str
    context: Context
    cluster: Cluster
    user: User | None = None
    fname: Path | None = None

    @property
    def namespace(self) -> str:
        """The context's namespace, ``default`` when unset."""
        return self.context.namespace or DEFAULT_NAMESPACE

    def abs_file(self, fname: str) -> str:
        """``fname`` relative to the kubeconfig's folder (client-go ``ResolveLocalPaths``).
        Raises :class:`KubeconfigError` for a relative path without a file to resolve it against."""
        if os.path.isabs(fname):
            return fname
        if self.fname is None:
            raise KubeconfigError(f"{fname} is relative, but kubeconfig path unknown")
        return str(self.fname.parent / fname)


def load_file(path: str, context: str | None = None) -> SingleConfig:
    """The kubeconfig at ``path`` (``~`` expanded), context ``context`` or its ``current-context``.

    Raises :class:`KubeconfigError`: the file missing or unreadable, not YAML, a field of the wrong
    type (with its path), no or an unknown context, a context naming an unknown cluster or user."""
    import yaml

    p = Path(path).expanduser()
    if not p.is_file():
        raise KubeconfigError(f"Configuration file {path} not found")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise KubeconfigError(f"kubeconfig {path}: {getattr(e, 'strerror', None) or e}") from None
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise KubeconfigError(f"kubeconfig {path}: invalid YAML: {first}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise KubeconfigError(f"kubeconfig {path}: invalid content: expected a mapping, got {type(doc).__name__}")
    try:
        f = msgspec.convert(doc, _File, str_keys=True)
    except msgspec.ValidationError as e:
        raise KubeconfigError(f"kubeconfig {path}: invalid content: {e}") from None
    name = context or f.current_context
    if not name:
        raise KubeconfigError("No current context set and no default provided")
    ctx = next((c.context for c in f.contexts if c.name == name), None)
    if ctx is None:
        raise KubeconfigError(f"Context '{name}' not found")
    cluster = next((c.cluster for c in f.clusters if c.name == ctx.cluster), None)
    if cluster is None:
        raise KubeconfigError(f"kubeconfig {path}: invalid content: context '{name}': cluster '{ctx.cluster}' "
                              "not found in clusters")
    user = None
    if ctx.user:
        user = next((u.user for u in f.users or () if u.name == ctx.user), None)
        if user is None:
            raise KubeconfigError(f"kubeconfig {path}: invalid content: context '{name}': user '{ctx.user}' "
                                  "not found in users")
        if user.exec is not None:
            user = msgspec.structs.replace(user, exec=_valid_exec(user.exec, ctx.user))
    return SingleConfig(name, ctx, cluster, user, p)


def _valid_exec(spec: UserExec, user_name: str) -> UserExec:
    """``spec`` defaulted (clientcmd ``api/v1/defaults.go`` ``SetDefaults_ExecConfig``) and validated
    (``validation.go`` ``validateAuthInfo``: upstream's messages; the first error raised)."""
    if spec.interactiveMode is None and spec.apiVersion in EXEC_API_VERSIONS[:2]:
        spec = msgspec.structs.replace(spec, interactiveMode="IfAvailable")
    what = f"for {user_name} to use exec authentication plugin"
    if not spec.command:
        raise KubeconfigError(f"command must be specified {what}")
    if not spec.apiVersion:
        raise KubeconfigError(f"apiVersion must be specified {what}")
    if any(not v.name for v in spec.env or ()):
        raise KubeconfigError(f"env variable name must be specified {what}")
    if not spec.interactiveMode:
        raise KubeconfigError(f"interactiveMode must be specified {what}")
    if spec.interactiveMode not in EXEC_INTERACTIVE_MODES:
        raise KubeconfigError(f'invalid interactiveMode for {user_name}: "{spec.interactiveMode}"')
    return spec


def from_server(url: str) -> SingleConfig:
    """Only a server URL (``--master`` without a kubeconfig): no credentials, namespace ``default``."""
    return SingleConfig("default", Context(cluster="default"), Cluster(server=url))


def from_service_account(account_dir: str) -> SingleConfig:
    """The in-cluster configuration (client-go ``rest.InClusterConfig``): ``https://$KUBERNETES_SERVICE_HOST:
    $KUBERNETES_SERVICE_PORT`` (an IPv6 host bracketed), the mounted ``token`` (its file kept for
    rotation), ``ca.crt`` and ``namespace`` under ``account_dir``.

    Raises :class:`KubeconfigError` (a file missing) or ``KeyError`` (an environment variable unset)."""
    d = Path(account_dir)
    token_file = str(d / "token")
    try:
        token = Path(token_file).read_text()
        namespace = (d / "namespace").read_text()
    except FileNotFoundError as e:
        raise KubeconfigError(str(e)) from e
    host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
    if ":" in host:
        host = f"[{host}]"
    return SingleConfig("default", Context(cluster="default", user="default", namespace=namespace),
                        Cluster(server=f"https://{host}:{port}", certificate_auth=str(d / "ca.crt")),
                        User(token=token, token_file=token_file))


def pem_material(single: SingleConfig) -> tuple[bytes | None, bytes | None, bytes | None]:
    """The cluster's CA and the user's client certificate and key as PEM bytes (files read,
    ``-data`` fields base64-decoded); None where not configured.
    Raises ``OSError`` (an unreadable file) or ``ValueError`` (bad base64)."""
    cluster, user = single.cluster, single.user
    ca = _pem(single, cluster.certificate_auth, cluster.certificate_auth_data)
    cert = key = None
    if user is not None and (user.client_cert or user.client_cert_data):
        cert = _pem(single, user.client_cert, user.client_cert_data)
        key = _pem(single, user.client_key, user.client_key_data)
    return ca, cert, key


def _pem(single: SingleConfig, path: str | None, data: str | None) -> bytes | None:
    """``data`` base64-decoded, else the file ``path`` (relative to the kubeconfig) read; None if neither."""
    if data:
        return base64.b64decode(data, validate=False)
    if path:
        with open(single.abs_file(path), "rb") as f:
            return f.read()
    return None


def ssl_context(single: SingleConfig, ca: bytes | None, cert: bytes | None, key: bytes | None) -> ssl.SSLContext:
    """The client TLS context of ``single`` (``ca``/``cert``/``key`` from :func:`pem_material`):
    verified against ``ca``, else not verified with ``insecure-skip-tls-verify``, else against the
    system store (``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured, as Go's ``crypto/x509``); the client
    certificate loaded when given. Raises ``ssl.SSLError`` / ``OSError`` / ``ValueError``."""
    if ca is not None:
        ctx = ssl.create_default_context(cadata=ca.decode("ascii") if b"-----BEGIN" in ca else ca)
    elif single.cluster.insecure:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = ssl.create_default_context()
    if cert is not None:
        user = single.user
        assert user is not None
        if not user.client_cert_data and not user.client_key_data:
            ctx.load_cert_chain(single.abs_file(user.client_cert or ""), single.abs_file(user.client_key or ""))
        else:  # ssl loads a chain from files only: a private folder, removed at once
            import tempfile  # here: only this case needs it

            with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as d:
                cert_path, key_path = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
                for p, data in ((cert_path, cert), (key_path, key or b"")):
                    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "wb") as f:
                        f.write(data)
                ctx.load_cert_chain(cert_path, key_path)
    return ctx


def exec_cluster(single: SingleConfig, server: str) -> dict[str, Any] | None:
    """The ``spec.cluster`` an exec plugin with ``provideClusterInfo`` is given (client-go
    ``rest/exec.go`` ``ConfigToExecCluster``, JSON of ``clientauthentication/v1`` ``Cluster``), for the
    context's user; None when the user has no such plugin. ``server`` is the URL the client uses
    (``--master`` wins over the file). Raises :class:`KubeconfigError` when the CA cannot be read
    (``failed to load CA bundle for execProvider: ...``, upstream's words)."""
    user = single.user
    if user is None or user.exec is None or not user.exec.provideClusterInfo:
        return None
    c = single.cluster
    out: dict[str, Any] = {"server": server}
    if c.tls_server_name:
        out["tls-server-name"] = c.tls_server_name
    if c.insecure:
        out["insecure-skip-tls-verify"] = True
    try:
        ca = _pem(single, c.certificate_auth, c.certificate_auth_data)
    except (OSError, ValueError) as e:
        raise KubeconfigError(f"failed to load CA bundle for execProvider: {e}") from None
    if ca:
        out["certificate-authority-data"] = base64.b64encode(ca).decode()
    if c.proxy_url:
        out["proxy-url"] = c.proxy_url
    if c.disable_compression:
        out["disable-compression"] = True
    out["config"] = None  # the cluster's client.authentication.k8s.io/exec extension: not read
    return out


def exec_command(spec: UserExec, cluster: dict[str, Any] | None = None,
                 stdin_is_terminal: bool | None = None) -> tuple[list[str], dict[str, str], bool]:
    """The command line, environment and interactivity of one run of an exec credential plugin
    (client-go ``exec.go`` ``refreshCredsLocked``): ``command`` + ``args``; this process's environment
    with the plugin's ``env`` entries over it and ``KUBERNETES_EXEC_INFO`` (the ``ExecCredential`` JSON:
    ``spec.interactive``, and ``spec.cluster`` = ``cluster`` when given); interactive (give the plugin
    this process's stdin) per ``interactiveMode`` and whether stdin is a terminal (default: asked).

    Raises :class:`KubeconfigError` for an ``apiVersion`` not in :data:`EXEC_API_VERSIONS`, or
    ``interactiveMode: Always`` without a terminal (upstream's messages)."""
    if spec.apiVersion not in EXEC_API_VERSIONS:
        raise KubeconfigError(f'exec plugin: invalid apiVersion "{spec.apiVersion}"')
    mode = spec.interactiveMode or "IfAvailable"
    if mode == "Never":
        interactive = False
    else:
        if stdin_is_terminal is None:
            import sys

            stdin_is_terminal = sys.stdin is not None and sys.stdin.isatty()
        if mode == "Always" and not stdin_is_terminal:
            raise KubeconfigError("exec plugin cannot support interactive mode: standard input is not a terminal")
        interactive = stdin_is_terminal
    spec_json: dict[str, Any] = {"interactive": interactive}
    if cluster is not None:
        spec_json = {"cluster": cluster, **spec_json}
    info = {"kind": "ExecCredential", "apiVersion": spec.apiVersion, "spec": spec_json}
    env = dict(os.environ)
    env.update((v.name, v.value) for v in spec.env or ())
    env["KUBERNETES_EXEC_INFO"] = msgspec.json.encode(info).decode() + "\n"  # as runtime.Encode writes it
    return [spec.command, *(spec.args or ())], env, interactive


def exec_credential(spec: UserExec, stdout: bytes) -> tuple[str, str | None]:
    """``(token, expirationTimestamp or None)`` from an exec plugin's stdout (an ``ExecCredential``),
    checked as client-go ``exec.go`` checks it.

    Raises :class:`KubeconfigError` with upstream's message: not JSON (``decoding stdout: ...``), another
    ``apiVersion`` (one missing counts as ``__internal``, as upstream's decoder reports it), no ``status``,
    neither a token nor a certificate/key pair, only one of certificate and key; and — a kubesched
    limit — a certificate/key pair instead of a token (client certificates from plugins are not used)."""
    try:
        cred = msgspec.json.decode(stdout)
    except msgspec.DecodeError as e:
        raise KubeconfigError(f"decoding stdout: {e}") from None
    if not isinstance(cred, dict):
        raise KubeconfigError(f"decoding stdout: expected an ExecCredential object, got {type(cred).__name__}")
    got = cred.get("apiVersion") or "client.authentication.k8s.io/__internal"
    if got != spec.apiVersion:
        raise KubeconfigError(f"exec plugin is configured to use API version {spec.apiVersion}, "
                              f"plugin returned version {got}")
    status = cred.get("status")
    if not status:
        raise KubeconfigError("exec plugin didn't return a status field")
    if not isinstance(status, dict):
        raise KubeconfigError(f"decoding stdout: status: expected an object, got {type(status).__name__}")
    token, cert, key = status.get("token"), status.get("clientCertificateData"), status.get("clientKeyData")
    if not token and not cert and not key:
        raise KubeconfigError("exec plugin didn't return a token or cert/key pair")
    if bool(cert) != bool(key):
        raise KubeconfigError("exec plugin returned only certificate or key, not both")
    if not token:
        raise KubeconfigError("exec plugin returned a client certificate and key: kubesched uses tokens from "
                              "exec plugins only (use a token, client-certificate-data or a token file)")
    if not isinstance(token, str):
        raise KubeconfigError(f"decoding stdout: status.token: expected a string, got {type(token).__name__}")
    ts = status.get("expirationTimestamp")
    return token, ts if isinstance(ts, str) and ts else None
