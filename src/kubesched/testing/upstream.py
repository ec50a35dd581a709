"""Real etcd + kube-apiserver on loopback for tests, the way envtest runs them.

Test and benchmark helper only: production code never imports this module. The binaries are
built from Go modules by ``make upstream`` (``tools/upstream/build.sh``) into
``<repo>/.cache/upstream/<k8s version>/bin`` or ``$KUBESCHED_UPSTREAM_DIR/bin``; two versions sit
side by side: v1.37.2 (``tools/upstream/v1.37/go.mod``, the default) and v1.34.12
(``tools/upstream/go.mod``). ``version="1.34"`` (or ``$UPSTREAM_VERSION``, as ``build.sh``) picks one.

    with ControlPlane.start() as cp:       # raises UpstreamNotBuilt when there are no binaries
        cp.kubectl("get", "nodes")          # kubectl as the ``kubectl`` user
        cp.kubeconfig                       # Path; current context = the ``kubesched`` user
    ControlPlane.start(version="1.34", feature_gates={"PodLevelResources": False})

What it starts (modelled on controller-runtime's envtest ``pkg/internal/testing/controlplane``
and upstream's ``cmd/kube-apiserver/app/testing/testserver.go``):

- etcd on ``127.0.0.1`` (free client and peer ports, data dir in a temp folder,
  ``--unsafe-no-fsync`` as envtest does);
- kube-apiserver on ``127.0.0.1:<free port>`` over TLS: a throw-away CA (ECDSA P-256) and a
  serving certificate for ``127.0.0.1``/``localhost``/``kubernetes.default``, an RSA
  service-account signing key, ``--service-cluster-ip-range=10.0.0.0/16``, and static bearer
  tokens (``--token-auth-file``) for ``kubesched`` and ``kubectl`` (both in
  ``system:masters``) and ``system:kube-scheduler`` (no groups: only what the default RBAC
  bootstrap roles grant the real scheduler). The CA also signs client certificates
  (:meth:`ControlPlane.client_cert`).
- ``--authorization-mode=RBAC``, not ``AlwaysAllow``: it is what clusters run, so the
  ``system:kube-scheduler`` token shows whether a scheduler gets by with upstream's own
  ClusterRoles; the ``system:masters`` tokens are allowed everything either way.
- As upstream's integration tests and scheduler_perf do (``test/integration/framework``
  ``DefaultTestServerFlags``, ``test/integration/scheduler_perf/util.go``):
  ``--disable-admission-plugins=ServiceAccount,TaintNodesByCondition`` (no service-account
  controller runs, so pods would wait for a ``default`` ServiceAccount; no node controller
  runs, so the ``node.kubernetes.io/not-ready:NoSchedule`` taint added to every new Node
  would never go) and ``--endpoint-reconciler-type=none``. The other default admission
  plugins (Priority, DefaultTolerationSeconds, …) stay on, as on a real cluster.

Readiness = ``GET /readyz`` answers 200 and the ``default`` namespace exists. Stopping sends
SIGTERM (then SIGKILL after a grace period) to kube-apiserver, then etcd, and removes the
temp folder. The children get ``PR_SET_PDEATHSIG`` so that they die with the test process.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Self

import yaml

__all__ = [
    "DEFAULT_VERSION",
    "VERSIONS",
    "ControlPlane",
    "UpstreamBinaries",
    "UpstreamNotBuilt",
    "UpstreamStartError",
    "find_binaries",
    "format_feature_gates",
    "http_request",
    "http_watch",
    "parse_feature_gates",
    "pinned_version",
    "resolve_version",
    "unique_name",
]

_REPO = Path(__file__).resolve().parents[3]
_TOOLS = _REPO / "tools" / "upstream"

#: Service ClusterIP range given to kube-apiserver (upstream's test server uses the same).
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/16"

#: Kubernetes minors with a reference build: version → folder of its go.mod (tools/upstream/build.sh).
VERSIONS = {"1.37": _TOOLS / "v1.37", "1.34": _TOOLS}
#: The version used when none is asked for (kubesched's default ``--emulated-version``).
DEFAULT_VERSION = "1.37"


class UpstreamNotBuilt(RuntimeError):
    """The upstream binaries are not there; the message says how to build them."""


class UpstreamStartError(RuntimeError):
    """etcd or kube-apiserver did not come up; the message carries the tail of its log."""


@dataclass(frozen=True)
class UpstreamBinaries:
    """Paths of the reference binaries and the Kubernetes version they were built from."""

    bin_dir: Path
    version: str

    @property
    def kube_apiserver(self) -> Path:
        return self.bin_dir / "kube-apiserver"

    @property
    def kube_scheduler(self) -> Path:
        return self.bin_dir / "kube-scheduler"

    @property
    def etcd(self) -> Path:
        return self.bin_dir / "etcd"

    @property
    def minor(self) -> tuple[int, int]:
        """(major, minor) of :attr:`version` (``v1.37.2`` → (1, 37)); (0, 0) if unknown."""
        m = re.match(r"v?(\d+)\.(\d+)", self.version)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def resolve_version(version: str | None = None) -> str:
    """``"1.37"``/``"v1.34"``/None → a key of :data:`VERSIONS` (None: ``$UPSTREAM_VERSION``, else
    :data:`DEFAULT_VERSION`). Raises ValueError for a version without a reference build."""
    v = (version or os.environ.get("UPSTREAM_VERSION") or DEFAULT_VERSION).strip().removeprefix("v")
    v = ".".join(v.split(".")[:2])
    if v not in VERSIONS:
        raise ValueError(f"no upstream reference build for version {version!r}; known: {', '.join(VERSIONS)}")
    return v


def pinned_version(version: str | None = None) -> str | None:
    """The ``k8s.io/kubernetes`` version required by the go.mod of ``version`` (default
    :func:`resolve_version`), e.g. ``v1.37.2``, or None when this is not a source checkout."""
    try:
        text = (VERSIONS[resolve_version(version)] / "go.mod").read_text()
    except OSError:
        return None
    m = re.search(r"^\s*k8s\.io/kubernetes\s+(v\S+)", text, re.MULTILINE)
    return m.group(1) if m else None


def _binary_version(path: Path) -> str | None:
    """``v1.37.2`` from ``<binary> --version`` ("Kubernetes v1.37.2"), None if it does not say."""
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except OSError:
        return None
    m = re.search(r"\bv(\d+\.\d+\.\d+)", out)
    return f"v{m.group(1)}" if m else None


def find_binaries(version: str | None = None) -> UpstreamBinaries:
    """Locate kube-apiserver, kube-scheduler and etcd of ``version`` (``"1.37"`` or ``"1.34"``;
    default :func:`resolve_version`).

    Looks in ``$KUBESCHED_UPSTREAM_DIR/bin`` (or ``$KUBESCHED_UPSTREAM_DIR`` itself) when the
    variable is set — and then takes them unless ``kube-scheduler --version`` names another minor —
    else in ``<repo>/.cache/upstream/<version>/bin``, where ``tools/upstream/build.sh`` puts them.
    Raises :class:`UpstreamNotBuilt` (with the command that builds them) when one is missing.
    """
    minor = resolve_version(version)
    pinned = pinned_version(minor) or f"v{minor}"
    env = os.environ.get("KUBESCHED_UPSTREAM_DIR")
    if env:
        candidates = [Path(env) / "bin", Path(env)]
    else:
        candidates = [_REPO / ".cache" / "upstream" / pinned / "bin"]
    names = ("kube-apiserver", "kube-scheduler", "etcd")
    for d in candidates:
        if all(os.access(d / n, os.X_OK) for n in names):
            if not env:
                return UpstreamBinaries(bin_dir=d, version=pinned)
            got = _binary_version(d / "kube-scheduler")
            if got is None or got.startswith(f"v{minor}."):
                return UpstreamBinaries(bin_dir=d, version=got or pinned)
            raise UpstreamNotBuilt(f"upstream binaries in {d} are {got}, not {minor}; point "
                                   f"KUBESCHED_UPSTREAM_DIR at a {minor} build (`tools/upstream/build.sh "
                                   f"--version {minor}`) or unset it")
    where = " or ".join(str(d) for d in candidates)
    raise UpstreamNotBuilt(
        f"upstream kube-apiserver/kube-scheduler/etcd {pinned} not built (looked in {where}); "
        f"run `make upstream` or `tools/upstream/build.sh --version {minor}` (needs a Go toolchain and "
        "the Go module proxy) or point KUBESCHED_UPSTREAM_DIR at a folder holding them"
    )


def parse_feature_gates(gates: Mapping[str, bool] | str | None) -> dict[str, bool]:
    """``{"A": True}`` or ``"A=true,B=false"`` (``--feature-gates`` syntax) → ``{"A": True, "B": False}``.
    Raises ValueError on an entry that is not ``Name=true|false``."""
    if gates is None:
        return {}
    if not isinstance(gates, str):
        return {str(k): bool(v) for k, v in gates.items()}
    out: dict[str, bool] = {}
    for item in filter(None, (x.strip() for x in gates.split(","))):
        k, sep, v = item.partition("=")
        if not sep or v.strip().lower() not in ("true", "false"):
            raise ValueError(f"feature gate {item!r}: expected Name=true or Name=false")
        out[k.strip()] = v.strip().lower() == "true"
    return out


def format_feature_gates(gates: Mapping[str, bool]) -> str:
    """``{"B": False, "A": True}`` → ``"A=true,B=false"`` (sorted), the ``--feature-gates`` value."""
    return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))


def unique_name(prefix: str) -> str:
    """``prefix-<8 hex>``: a name no other test of a shared server uses."""
    return f"{prefix}-{secrets.token_hex(4)}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- certificates


@dataclass
class _CA:
    key: Any
    cert: Any


def _pem_cert(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(cert.public_bytes(serialization.Encoding.PEM))


def _pem_key(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _new_ca(common_name: str) -> _CA:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _CA(key=key, cert=cert)


def _issue(
    ca: _CA,
    common_name: str,
    *,
    organizations: Sequence[str] = (),
    dns_names: Sequence[str] = (),
    ips: Sequence[str] = (),
    server: bool,
) -> tuple[bytes, bytes]:
    """A leaf certificate signed by ``ca``; returns (cert PEM, key PEM)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(attrs))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=True,
                data_encipherment=False, key_agreement=False, key_cert_sign=False,
                crl_sign=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False
        )
    )
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(ca.key, hashes.SHA256())
    return _pem_cert(cert), _pem_key(key)


def _rsa_key_pair() -> tuple[bytes, bytes]:
    """(private PEM, public PEM) of a fresh RSA-2048 key, for service-account tokens."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _pem_key(key), bytes(public)


# --------------------------------------------------------------------------- processes


def _set_pdeathsig() -> None:  # pragma: no cover - runs in the child
    """Ask Linux to SIGKILL the child when the test process dies (PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace: float = 15.0) -> int | None:
        """SIGTERM, wait up to ``grace`` seconds, then SIGKILL. Returns the exit code."""
        p = self.popen
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        self.log_file.close()
        return p.returncode


def _spawn(name: str, argv: list[str], workdir: Path, env: dict[str, str] | None = None) -> _Proc:
    log_path = workdir / f"{name}.log"
    log_file = open(log_path, "ab")  # closed by _Proc.stop
    popen = subprocess.Popen(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        cwd=workdir,
        # prctl only; tests start these from the main thread
        preexec_fn=_set_pdeathsig if sys.platform.startswith("linux") else None,
    )
    return _Proc(name=name, popen=popen, log_path=log_path, log_file=log_file)


# --------------------------------------------------------------------------- control plane


@dataclass
class ControlPlane:
    """A running etcd + kube-apiserver pair; build it with :meth:`start`.

    Attributes: ``url`` (``https://127.0.0.1:<port>``), ``ca_file`` (PEM), ``tokens``
    (user name → bearer token), ``kubeconfig`` (contexts ``kubesched`` [current], ``kubectl``,
    ``system:kube-scheduler``), ``etcd_url``, ``workdir`` (certs, data, logs), ``binaries``
    (their ``version``/``minor``), ``feature_gates`` (given to kube-apiserver and, unless told
    otherwise, to every kube-scheduler started here).
    """

    binaries: UpstreamBinaries
    workdir: Path
    url: str
    etcd_url: str
    ca_file: Path
    kubeconfig: Path
    tokens: dict[str, str]
    _ca: _CA
    _procs: list[_Proc] = field(default_factory=list)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    _apiserver_argv: list[str] = field(default_factory=list)
    _owns_workdir: bool = True

    # ---- lifecycle

    @classmethod
    def start(
        cls,
        *,
        binaries: UpstreamBinaries | None = None,
        version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None,
        extra_apiserver_args: Sequence[str] = (),
        extra_etcd_args: Sequence[str] = (),
        workdir: Path | None = None,
        ready_timeout: float = 120.0,
    ) -> ControlPlane:
        """Start etcd, then kube-apiserver, and wait until the API server is ready.

        ``version`` (``"1.37"``, ``"1.34"``; default :func:`resolve_version`) picks the binaries
        unless ``binaries`` are given. ``feature_gates`` (``{"Gate": bool}`` or ``"A=true,B=false"``)
        become kube-apiserver's ``--feature-gates`` and the default of :meth:`start_kube_scheduler`'s;
        they must be gates that version knows (1.37 no longer knows e.g. SchedulerQueueingHints,
        SidecarContainers: upstream-v137 §1.2). ``extra_*_args`` are appended (later flags win).
        ``workdir`` defaults to a new temp folder, removed by :meth:`stop`. Raises
        :class:`UpstreamNotBuilt` without binaries, :class:`UpstreamStartError` when a process
        exits or is not ready in ``ready_timeout`` seconds (each is retried once on fresh ports,
        in case a port was taken meanwhile).
        """
        bins = binaries or find_binaries(version)
        gates = parse_feature_gates(feature_gates)
        owns = workdir is None
        wd = Path(tempfile.mkdtemp(prefix="kubesched-upstream-")) if workdir is None else workdir
        wd.mkdir(parents=True, exist_ok=True)
        cp: ControlPlane | None = None
        try:
            ca = _new_ca("kubesched-test-ca")
            ca_file = wd / "ca.crt"
            ca_file.write_bytes(_pem_cert(ca.cert))
            (wd / "ca.key").write_bytes(_pem_key(ca.key))
            crt, key = _issue(
                ca, "kube-apiserver", server=True,
                dns_names=["localhost", "kubernetes", "kubernetes.default",
                           "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"],
                ips=["127.0.0.1", "10.0.0.1"],
            )
            (wd / "apiserver.crt").write_bytes(crt)
            (wd / "apiserver.key").write_bytes(key)
            sa_key, sa_pub = _rsa_key_pair()
            (wd / "sa.key").write_bytes(sa_key)
            (wd / "sa.pub").write_bytes(sa_pub)
            tokens = {
                "kubesched": secrets.token_hex(16),
                "kubectl": secrets.token_hex(16),
                "system:kube-scheduler": secrets.token_hex(16),
            }
            groups = {"kubesched": "system:masters", "kubectl": "system:masters",
                      "system:kube-scheduler": ""}
            (wd / "tokens.csv").write_text(
                "".join(f'{t},{u},uid-{i},"{groups[u]}"\n' for i, (u, t) in enumerate(tokens.items()))
            )
            cp = cls(binaries=bins, workdir=wd, url="", etcd_url="", ca_file=ca_file,
                     kubeconfig=wd / "kubeconfig", tokens=tokens, _ca=ca, feature_gates=gates,
                     _owns_workdir=owns)
            cp._start_etcd(list(extra_etcd_args), ready_timeout)
            cp._start_apiserver(list(extra_apiserver_args), ready_timeout)
            cp._write_kubeconfig()
            return cp
        except BaseException:
            if cp is not None:
                cp.stop()
            elif owns:
                shutil.rmtree(wd, ignore_errors=True)
            raise

    def _start_etcd(self, extra: list[str], timeout: float) -> None:
        data = self.workdir / "etcd-data"
        for attempt in (1, 2):
            client, peer = free_port(), free_port()
            self.etcd_url = f"http://127.0.0.1:{client}"
            peer_url = f"http://127.0.0.1:{peer}"
            shutil.rmtree(data, ignore_errors=True)
            argv = [
                str(self.binaries.etcd),
                "--name=default",
                f"--data-dir={data}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=default={peer_url}",
                "--unsafe-no-fsync",
                "--log-level=warn",
                *extra,
            ]
            proc = _spawn("etcd", argv, self.workdir)
            try:
                self._wait(proc, f"{self.etcd_url}/health", timeout, tls=False,
                           ok=lambda body: b'"health":"true"' in body)
            except UpstreamStartError:
                proc.stop(grace=5)
                if attempt == 2:
                    raise
                continue
            self._procs.append(proc)
            return

    def _start_apiserver(self, extra: list[str], timeout: float) -> None:
        wd = self.workdir
        for attempt in (1, 2):
            port = free_port()
            self.url = f"https://127.0.0.1:{port}"
            argv = [
                str(self.binaries.kube_apiserver),
                f"--etcd-servers={self.etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={wd / 'apiserver-certs'}",
                f"--tls-cert-file={wd / 'apiserver.crt'}",
                f"--tls-private-key-file={wd / 'apiserver.key'}",
                f"--client-ca-file={self.ca_file}",
                f"--token-auth-file={wd / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={wd / 'sa.pub'}",
                f"--service-account-signing-key-file={wd / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
                "--allow-privileged=true",
                "--endpoint-reconciler-type=none",
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                "--profiling=false",
                *([f"--feature-gates={format_feature_gates(self.feature_gates)}"] if self.feature_gates else []),
                *extra,
            ]
            try:
                self._run_apiserver(argv, timeout)
            except UpstreamStartError:
                if attempt == 2:
                    raise
                continue
            return

    def _run_apiserver(self, argv: list[str], timeout: float) -> None:
        proc = _spawn("kube-apiserver", argv, self.workdir)
        try:
            self._wait(proc, f"{self.url}/readyz", timeout, tls=True, ok=lambda body: True)
            self._wait(proc, f"{self.url}/api/v1/namespaces/default", timeout, tls=True,
                       ok=lambda body: True)
        except UpstreamStartError:
            proc.stop(grace=5)
            raise
        self._apiserver_argv = argv
        self._procs.append(proc)

    def restart_apiserver(self, timeout: float = 120.0) -> None:
        """Stop kube-apiserver (SIGTERM) and start it again on the same port and etcd; returns
        once it is ready. Its watch caches start over from etcd's current revision, so every
        older resourceVersion is then "too old" for watches (410 Expired), as after a real
        restart. Raises :class:`UpstreamStartError` if it does not come back."""
        for i, p in enumerate(self._procs):
            if p.name == "kube-apiserver":
                self._procs.pop(i).stop()
                break
        self._run_apiserver(self._apiserver_argv, timeout)

    def _wait(self, proc: _Proc, url: str, timeout: float, *, tls: bool, ok: Any,
              insecure: bool = False) -> None:
        """Poll ``url`` every 0.2 s until it answers 200 and ``ok(body)``; bounded by ``timeout``."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if proc.popen.poll() is not None:
                raise UpstreamStartError(
                    f"{proc.name} exited with code {proc.popen.returncode}; log tail:\n{proc.log_tail()}"
                )
            try:
                status, body = self._get(url, tls=tls, timeout=5, insecure=insecure)
                if status == 200 and ok(body):
                    return
                last = f"HTTP {status}: {body[:300]!r}"
            except (OSError, urllib.error.URLError) as e:
                last = repr(e)
            time.sleep(0.2)
        raise UpstreamStartError(
            f"{proc.name} not ready at {url} after {timeout:.0f} s (last: {last}); log tail:\n"
            f"{proc.log_tail()}"
        )

    def _get(self, url: str, *, tls: bool, timeout: float, insecure: bool = False) -> tuple[int, bytes]:
        req = urllib.request.Request(url)
        ctx: ssl.SSLContext | None = None
        if tls:
            req.add_header("Authorization", f"Bearer {self.tokens['kubesched']}")
            ctx = self.ssl_context()
        elif insecure:  # kube-scheduler's self-signed serving certificate
            ctx = ssl._create_unverified_context()
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
                return int(r.status), bytes(r.read())
        except urllib.error.HTTPError as e:
            return int(e.code), bytes(e.read() or b"")

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd (SIGTERM, SIGKILL after 15 s); remove the temp folder
        when :meth:`start` made it. Idempotent."""
        while self._procs:
            self._procs.pop().stop()
        if self._owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self._owns_workdir = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- clients

    def ssl_context(self) -> ssl.SSLContext:
        """An SSL context that trusts this control plane's CA."""
        return ssl.create_default_context(cafile=str(self.ca_file))

    def client_cert(self, user: str, groups: Sequence[str] = ()) -> tuple[Path, Path]:
        """Write a client certificate (CN=user, O=groups) signed by the cluster CA; returns
        (cert path, key path). kube-apiserver trusts it through ``--client-ca-file``."""
        crt, key = _issue(self._ca, user, organizations=groups, server=False)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", user)
        cp, kp = self.workdir / f"client-{safe}.crt", self.workdir / f"client-{safe}.key"
        cp.write_bytes(crt)
        kp.write_bytes(key)
        return cp, kp

    def _write_kubeconfig(self) -> None:
        ca_data = base64.b64encode(self.ca_file.read_bytes()).decode()
        users = list(self.tokens)
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "upstream", "cluster": {
                "server": self.url, "certificate-authority-data": ca_data}}],
            "users": [{"name": u, "user": {"token": self.tokens[u]}} for u in users],
            "contexts": [{"name": u, "context": {"cluster": "upstream", "user": u,
                                                 "namespace": "default"}} for u in users],
            "current-context": "kubesched",
            "preferences": {},
        }
        self.kubeconfig.write_text(yaml.safe_dump(doc, sort_keys=False))
        self.kubeconfig.chmod(0o600)

    def kubectl(
        self,
        *args: str,
        user: str = "kubectl",
        input: str | bytes | None = None,
        timeout: float = 60.0,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``kubectl`` (from PATH) against this server as ``user``; bounded by ``timeout``.
        With ``check`` a non-zero exit raises :class:`subprocess.CalledProcessError` carrying
        stderr. A private ``--cache-dir`` keeps discovery from other servers out."""
        data = input.decode() if isinstance(input, bytes) else input
        argv = ["kubectl", f"--kubeconfig={self.kubeconfig}", f"--context={user}",
                f"--cache-dir={self.workdir / 'kubectl-cache'}", *args]
        return subprocess.run(argv, input=data, capture_output=True, text=True,
                              timeout=timeout, check=check)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        user: str = "kubesched",
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
    ) -> tuple[int, dict[str, str], Any]:
        """One HTTP request as ``user`` (:func:`http_request`)."""
        return http_request(self.url + path, self.tokens[user], self.ssl_context(), method, body,
                            headers=headers, timeout=timeout)

    def watch(
        self,
        path: str,
        *,
        user: str = "kubesched",
        max_events: int = 1000,
        timeout: float = 10.0,
    ) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
        """Open a watch as ``user`` (:func:`http_watch`)."""
        return http_watch(self.url + path, self.tokens[user], self.ssl_context(),
                          max_events=max_events, timeout=timeout)

    def etcd_revision(self) -> int:
        """etcd's current revision (through etcd's gRPC gateway, ``POST /v3/kv/range``)."""
        return int(self._etcd("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})
                   ["header"]["revision"])

    def etcd_compact(self, revision: int | None = None) -> int:
        """Compact etcd's history up to ``revision`` (default: the current one), as
        kube-apiserver's compactor does every ``--etcd-compaction-interval``. Returns it."""
        rev = self.etcd_revision() if revision is None else revision
        self._etcd("/v3/kv/compaction", {"revision": str(rev), "physical": True})
        return rev

    def _etcd(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(self.etcd_url + path, data=json.dumps(body).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            out: dict[str, Any] = json.loads(r.read())
            return out

    def kubeconfig_for(self, user: str) -> Path:
        """A kubeconfig file whose current context is ``user`` (one of :attr:`tokens`)."""
        if user not in self.tokens:
            raise KeyError(f"no token for user {user!r}; known: {sorted(self.tokens)}")
        doc = yaml.safe_load(self.kubeconfig.read_text())
        doc["current-context"] = user
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", user)
        path = self.workdir / f"kubeconfig-{safe}"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        path.chmod(0o600)
        return path

    def _scheduler_config(self, config: dict[str, Any] | None, kubeconfig: Path, name: str) -> Path:
        """Write ``config`` (a ``KubeSchedulerConfiguration`` dict) with ``clientConnection.
        kubeconfig`` filled in and leader election off unless it says otherwise; its path."""
        cfg: dict[str, Any] = dict(config or {})
        cfg.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
        cfg.setdefault("kind", "KubeSchedulerConfiguration")
        cfg["clientConnection"] = {**cfg.get("clientConnection", {}), "kubeconfig": str(kubeconfig)}
        cfg.setdefault("leaderElection", {"leaderElect": False})
        path = self.workdir / f"{name}-config.yaml"
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return path

    def _start_ready(self, name: str, argv_for: Callable[[int], list[str]], ready_timeout: float,
                     env: dict[str, str] | None = None) -> _Proc:
        """Spawn ``argv_for(port)`` on a free port and wait for its ``/readyz`` (two tries: a
        free port can be taken between the check and the bind)."""
        last: UpstreamStartError | None = None
        for _attempt in (1, 2):
            port = free_port()
            proc = _spawn(name, argv_for(port), self.workdir, env)
            try:
                self._wait(proc, f"https://127.0.0.1:{port}/readyz", ready_timeout,
                           tls=False, ok=lambda body: True, insecure=True)
            except UpstreamStartError as e:
                proc.stop(grace=5)
                last = e
                continue
            self._procs.append(proc)
            return proc
        assert last is not None
        raise last

    def start_kube_scheduler(
        self,
        config: dict[str, Any] | None = None,
        *,
        user: str = "system:kube-scheduler",
        verbosity: int = 2,
        feature_gates: Mapping[str, bool] | str | None = None,
        extra_args: Sequence[str] = (),
        ready_timeout: float = 60.0,
    ) -> _Proc:
        """Start upstream kube-scheduler against this API server and wait for its ``/readyz``
        (informers and handlers synced). ``feature_gates`` (default: the control plane's) are its
        ``--feature-gates``. ``config`` is a ``KubeSchedulerConfiguration``
        (``kubescheduler.config.k8s.io/v1``) as a dict; ``clientConnection.kubeconfig`` is
        filled in, and leader election is off unless the config says otherwise. It runs as
        ``user`` (default: the ``system:kube-scheduler`` identity with upstream's bootstrap
        RBAC, as kubeadm's scheduler.conf does), serving on a free port of 127.0.0.1.
        ``verbosity`` 10 logs every plugin score. Stopped by :meth:`stop` or
        :meth:`stop_kube_scheduler`; its log is ``workdir/kube-scheduler.log``."""
        kubeconfig = self.kubeconfig_for(user)
        cfg_path = self._scheduler_config(config, kubeconfig, "kube-scheduler")
        gates = self.feature_gates if feature_gates is None else parse_feature_gates(feature_gates)
        return self._start_ready("kube-scheduler", lambda port: [
            str(self.binaries.kube_scheduler),
            f"--config={cfg_path}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.workdir / 'scheduler-certs'}",
            f"-v={verbosity}",
            *([f"--feature-gates={format_feature_gates(gates)}"] if gates else []),
            *extra_args,
        ], ready_timeout)

    def start_kubesched_run(
        self,
        config: dict[str, Any] | None = None,
        *,
        user: str = "system:kube-scheduler",
        verbosity: int = 2,
        extra_args: Sequence[str] = (),
        ready_timeout: float = 60.0,
    ) -> _Proc:
        """Start ``kubesched run`` (this checkout's, with the running interpreter) against this
        API server, exactly as :meth:`start_kube_scheduler` starts upstream's: same
        configuration handling, same identity, and waits for its ``/readyz``. Its log is
        ``workdir/kubesched-run.log``; stopped by :meth:`stop` or :meth:`stop_kubesched_run`."""
        cfg_path = self._scheduler_config(config, self.kubeconfig_for(user), "kubesched-run")
        # this checkout's package first, whatever the child's working directory
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])}
        return self._start_ready("kubesched-run", lambda port: [
            sys.executable, "-m", "kubesched.cli.main", "run", f"--config={cfg_path}",
            "--bind-address=127.0.0.1", f"--secure-port={port}", f"-v={verbosity}", *extra_args,
        ], ready_timeout, env)

    def stop_kubesched_run(self) -> int | None:
        """Stop a ``kubesched run`` started by :meth:`start_kubesched_run`; its exit code."""
        for i, p in enumerate(self._procs):
            if p.name == "kubesched-run":
                return self._procs.pop(i).stop()
        return None

    def stop_kube_scheduler(self) -> int | None:
        """Stop a kube-scheduler started by :meth:`start_kube_scheduler`; returns its exit
        code (None if none runs)."""
        for i, p in enumerate(self._procs):
            if p.name == "kube-scheduler":
                return self._procs.pop(i).stop()
        return None

    def logs(self) -> Iterator[tuple[str, str]]:
        """(process name, log tail) for each running process, for failure reports."""
        for p in self._procs:
            yield p.name, p.log_tail()


def http_request(url: str, token: str | None, context: ssl.SSLContext | None, method: str, body: Any = None, *,
                 headers: dict[str, str] | None = None, timeout: float = 30.0) -> tuple[int, dict[str, str], Any]:
    """One HTTP request with a bearer ``token``: returns (status, headers, decoded JSON body or
    raw bytes). ``body`` that is not bytes is sent as JSON."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            status, hdrs, raw = int(r.status), dict(r.headers.items()), r.read()
    except urllib.error.HTTPError as e:
        status, hdrs, raw = int(e.code), dict(e.headers.items()), e.read()
    try:
        return status, hdrs, json.loads(raw)
    except ValueError:
        return status, hdrs, raw


def http_watch(url: str, token: str | None, context: ssl.SSLContext | None, *, max_events: int = 1000,
               timeout: float = 10.0) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
    """Open a watch (``url`` must carry ``watch=1`` and should carry ``timeoutSeconds``) and
    read events, one JSON object per line, until the server ends the stream, ``max_events``
    arrived, or a read waits ``timeout`` seconds. Returns (status, headers, events); on a
    non-200 answer the events list holds the decoded error body."""
    req = urllib.request.Request(url, method="GET")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Accept", "application/json")
    events: list[dict[str, Any]] = []
    try:
        r = urllib.request.urlopen(req, timeout=timeout, context=context)
    except urllib.error.HTTPError as e:
        return int(e.code), dict(e.headers.items()), [json.loads(e.read())]
    with r:
        hdrs = dict(r.headers.items())
        try:
            while len(events) < max_events:
                line = r.readline()
                if not line:
                    break
                if line.strip():
                    events.append(json.loads(line))
        except TimeoutError:
            pass
        return int(r.status), hdrs, events


@contextlib.contextmanager
def control_plane(**kwargs: Any) -> Iterator[ControlPlane]:
    """``with control_plane() as cp:`` — :meth:`ControlPlane.start` then :meth:`ControlPlane.stop`."""
    cp = ControlPlane.start(**kwargs)
    try:
        yield cp
    finally:
        cp.stop()
