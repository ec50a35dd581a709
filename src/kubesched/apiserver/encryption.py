"""Encryption at rest, as kube-apiserver's ``--encryption-provider-config``.

Reads an ``EncryptionConfiguration`` (``apiserver.config.k8s.io/v1``; upstream
``staging/src/k8s.io/apiserver/pkg/server/options/encryptionconfig/config.go`` and
``pkg/storage/value/encrypt/{aes,secretbox,identity}``). For each listed resource the first provider
encrypts what is written to disk; every provider is tried, by its prefix, to read. Objects in memory
(and on the wire) stay plaintext, as in kube-apiserver, whose watch cache holds decrypted objects.

Stored forms (byte-compatible with upstream's envelopes):

- ``aescbc``: ``k8s:enc:aescbc:v1:<key name>:`` + 16-byte IV + AES-CBC ciphertext (PKCS#7 padding);
- ``aesgcm``: ``k8s:enc:aesgcm:v1:<key name>:`` + 12-byte nonce + AES-GCM ciphertext and tag;
- ``secretbox``: ``k8s:enc:secretbox:v1:<key name>:`` + 24-byte nonce + XSalsa20-Poly1305 box (PyNaCl);
- ``identity``: the plaintext.

Keys are base64 (16, 24 or 32 bytes for AES; 32 for secretbox). Errors are :class:`EncryptionConfigError`
(a bad file) or :class:`DecryptError` (stored data no provider can read).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["DecryptError", "EncryptionConfigError", "Transformers", "load_encryption_config"]


class EncryptionConfigError(Exception):
    """The encryption configuration file is unusable (message names the field)."""


class DecryptError(Exception):
    """Stored data that no configured provider can decrypt."""


@dataclass(frozen=True)
class _Provider:
    prefix: bytes
    encrypt: Callable[[bytes], bytes]
    decrypt: Callable[[bytes], bytes]


def _aes_key(secret: Any, where: str) -> bytes:
    try:
        key = base64.b64decode(str(secret), validate=True)
    except (binascii.Error, ValueError):
        raise EncryptionConfigError(f"{where}.secret: Invalid value: secret is not a valid base64 string") from None
    if len(key) not in (16, 24, 32):
        raise EncryptionConfigError(f"{where}.secret: Invalid value: expected a 16, 24 or 32 byte key, got {len(key)}")
    return key


def _aescbc(name: str, key: bytes) -> _Provider:
    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    prefix = f"k8s:enc:aescbc:v1:{name}:".encode()

    def enc(data: bytes) -> bytes:
        iv = os.urandom(16)
        p = padding.PKCS7(128).padder()
        e = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        return prefix + iv + e.update(p.update(data) + p.finalize()) + e.finalize()

    def dec(data: bytes) -> bytes:
        body = data[len(prefix):]
        if len(body) < 16 or (len(body) - 16) % 16:
            raise DecryptError("the stored data was shorter than the required block size")
        d = Cipher(algorithms.AES(key), modes.CBC(body[:16])).decryptor()
        u = padding.PKCS7(128).unpadder()
        try:
            return u.update(d.update(body[16:]) + d.finalize()) + u.finalize()
        except ValueError:
            raise DecryptError("invalid PKCS7 data (empty or not padded)") from None

    return _Provider(prefix, enc, dec)


def _aesgcm(name: str, key: bytes) -> _Provider:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    prefix = f"k8s:enc:aesgcm:v1:{name}:".encode()
    aead = AESGCM(key)

    def enc(data: bytes) -> bytes:
        nonce = os.urandom(12)
        return prefix + nonce + aead.encrypt(nonce, data, None)

    def dec(data: bytes) -> bytes:
        body = data[len(prefix):]
        try:
            return aead.decrypt(body[:12], body[12:], None)
        except (InvalidTag, ValueError):
            raise DecryptError("cipher: message authentication failed") from None

    return _Provider(prefix, enc, dec)


def _secretbox(name: str, secret: Any, where: str) -> _Provider:
    try:
        import nacl.exceptions  # type: ignore[import-not-found,import-untyped,unused-ignore]
        import nacl.secret  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise EncryptionConfigError(f"{where}: the secretbox provider needs PyNaCl (pip install pynacl)") from None
    try:
        key = base64.b64decode(str(secret), validate=True)
    except (binascii.Error, ValueError):
        raise EncryptionConfigError(f"{where}.secret: Invalid value: secret is not a valid base64 string") from None
    if len(key) != 32:
        raise EncryptionConfigError(f"{where}.secret: Invalid value: expected a 32 byte key, got {len(key)}")
    box = nacl.secret.SecretBox(key)
    prefix = f"k8s:enc:secretbox:v1:{name}:".encode()

    def enc(data: bytes) -> bytes:
        return prefix + bytes(box.encrypt(data))

    def dec(data: bytes) -> bytes:
        try:
            return bytes(box.decrypt(data[len(prefix):]))
        except nacl.exceptions.CryptoError:
            raise DecryptError("output array was not large enough for encryption") from None

    return _Provider(prefix, enc, dec)


_IDENTITY = _Provider(b"", lambda d: d, lambda d: d)


class Transformers:
    """Per store key space (``secrets``, ``configmaps``, ``apps/deployments``): how to write and read.

    ``encrypt(space, data)`` with the first provider of the space's rule (identity if none);
    ``decrypt(space, data)`` by prefix over all the rule's providers; data no provider reads raises
    :class:`DecryptError`; a space without a rule is stored as it is.
    """

    def __init__(self, rules: dict[str, list[_Provider]], wildcard: list[_Provider] | None = None) -> None:
        self._rules = rules
        self._wildcard = wildcard

    def _providers(self, space: str) -> list[_Provider] | None:
        return self._rules.get(space, self._wildcard)

    def encrypt(self, space: str, data: bytes) -> bytes:
        providers = self._providers(space)
        return data if not providers else providers[0].encrypt(data)

    def decrypt(self, space: str, data: bytes) -> bytes:
        providers = self._providers(space)
        if not providers:
            return data
        for p in providers:
            if p.prefix and data.startswith(p.prefix):
                return p.decrypt(data)
        if any(p is _IDENTITY for p in providers) and data.startswith(b"{"):
            return data
        raise DecryptError(f"no matching prefix found for the data stored for {space}")


def _space_of(resource: str) -> str:
    """``secrets`` → ``secrets``; ``deployments.apps`` → ``apps/deployments`` (the store's key space)."""
    plural, _, group = resource.partition(".")
    return f"{group}/{plural}" if group else plural


def load_encryption_config(path: str) -> Transformers:
    """Read and check an ``EncryptionConfiguration`` file. Raises :class:`EncryptionConfigError`."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except OSError as e:
        raise EncryptionConfigError(f"cannot read {path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        raise EncryptionConfigError(f"{path}: invalid YAML: {e}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "EncryptionConfiguration" or \
            doc.get("apiVersion") not in ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1"):
        raise EncryptionConfigError(f"{path}: not an apiserver.config.k8s.io/v1 EncryptionConfiguration")
    rules: dict[str, list[_Provider]] = {}
    wildcard: list[_Provider] | None = None
    for i, rule in enumerate(doc.get("resources") or []):
        where = f"resources[{i}]"
        resources = (rule or {}).get("resources") or []
        if not resources:
            raise EncryptionConfigError(f"{where}.resources: Required value: resource must be provided")
        providers: list[_Provider] = []
        for j, prov in enumerate((rule or {}).get("providers") or []):
            pw = f"{where}.providers[{j}]"
            if not isinstance(prov, dict) or len(prov) != 1:
                raise EncryptionConfigError(f"{pw}: Invalid value: more than one provider specified in a single "
                                            "element, should split into different list elements")
            kind, body = next(iter(prov.items()))
            if kind == "identity":
                providers.append(_IDENTITY)
                continue
            if kind not in ("aescbc", "aesgcm", "secretbox"):
                raise EncryptionConfigError(f"{pw}: Unsupported value: {kind!r} (kubesched supports aescbc, aesgcm, "
                                            "secretbox and identity; kms needs a plugin)")
            keys = (body or {}).get("keys") or []
            if not keys:
                raise EncryptionConfigError(f"{pw}.{kind}.keys: Required value: keys must contain at least one key")
            for k, key in enumerate(keys):
                kw = f"{pw}.{kind}.keys[{k}]"
                name = str((key or {}).get("name") or "")
                if not name:
                    raise EncryptionConfigError(f"{kw}.name: Required value: key name is required")
                if kind == "secretbox":
                    providers.append(_secretbox(name, key.get("secret"), kw))
                else:
                    secret = _aes_key(key.get("secret"), kw)
                    providers.append((_aescbc if kind == "aescbc" else _aesgcm)(name, secret))
        if not providers:
            raise EncryptionConfigError(f"{where}.providers: Required value: provider must be provided")
        for r in resources:
            if r in ("*.*", "*."):
                wildcard = providers
            else:
                rules.setdefault(_space_of(str(r)), providers)
    return Transformers(rules, wildcard)
