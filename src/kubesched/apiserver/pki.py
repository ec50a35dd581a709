"""Serving certificates for the box: a self-signed CA and a server certificate signed by it.

kubectl (client-go ``clientcmd``) sends credentials only over TLS, so a token-protected
server must speak HTTPS; the kubeconfig then carries the CA as ``certificate-authority-data``.
Keys are ECDSA P-256 (fast to make); certificates last 10 years (CA) / 1 year (server).
With a data dir the files live in ``<dir>/pki`` and are reused across restarts as long as
they cover the requested hosts, so an old kubeconfig keeps working.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["PKI", "ensure_pki", "write_private"]


@dataclass(frozen=True)
class PKI:
    """Paths of the CA certificate, the server certificate and its key (PEM)."""

    ca_cert: Path
    server_cert: Path
    server_key: Path

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(self.server_cert), str(self.server_key))
        return ctx

    def client_context(self) -> ssl.SSLContext:
        """An SSL context trusting this CA (for Python clients, e.g. aiohttp ``ssl=``)."""
        return ssl.create_default_context(cafile=str(self.ca_cert))

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()


def _sans(hosts: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for h in dict.fromkeys(hosts):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            out.append(x509.DNSName(h))
    return out


def _covers(cert_path: Path, hosts: list[str]) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, x509.ExtensionNotFound):
        return False
    if cert.not_valid_after_utc < dt.datetime.now(dt.UTC) + dt.timedelta(days=1):
        return False
    have = {str(v) for v in san.get_values_for_type(x509.IPAddress)} | set(san.get_values_for_type(x509.DNSName))
    return all(h in have for h in hosts)


def ensure_pki(directory: str | os.PathLike[str], hosts: list[str]) -> PKI:
    """CA + server certificate for ``hosts`` (IPs or DNS names) in ``directory``; reused if valid."""
    d = Path(directory)
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    pki = PKI(d / "ca.crt", d / "server.crt", d / "server.key")
    hosts = [*hosts, "127.0.0.1", "localhost", "kubernetes", "kubernetes.default"]
    if pki.ca_cert.exists() and pki.server_key.exists() and _covers(pki.server_cert, hosts):
        return pki
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    ca_key_path = d / "ca.key"
    if pki.ca_cert.exists() and ca_key_path.exists():
        ca_cert = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
        loaded = serialization.load_pem_private_key(ca_key_path.read_bytes(), password=None)
        assert isinstance(loaded, ec.EllipticCurvePrivateKey)
        ca_key = loaded
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-ca")])
        ca_cert = (
            x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
            .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        _write(ca_key_path, ca_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                 serialization.NoEncryption()))
        _write(pki.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesched-apiserver")]))
        .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now).not_valid_after(now + dt.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(_sans(hosts)), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write(pki.server_key, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))
    _write(pki.server_cert, cert.public_bytes(serialization.Encoding.PEM))
    return pki


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, the file created 0600 (never readable by others, even
    for an instant: no chmod after the fact)."""
    write_private(path, data)


def write_private(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` by a file holding ``data``, created with mode 0600."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)
