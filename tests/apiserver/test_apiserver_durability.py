"""The box's store on disk: durable by default, private, and one clear line for a corrupt database.

What it matches: etcd syncs its WAL before a write is acknowledged (``--unsafe-no-fsync`` turns that
off and says it loses data); etcd keeps its data dir 0700 and files 0600 (``fileutil.PrivateDirMode``,
``PrivateFileMode``); kube-apiserver / etcd refuse to start on a corrupt store with one error, no
crash dump. Issue "The box as an API server people can trust", items 1 and 2.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kubesched.apiserver.pki import ensure_pki
from kubesched.apiserver.storage import CorruptStore, Store
from kubesched.apiserver.launcher import write_kubeconfig

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def _cm(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "ns"}, "data": {"v": name}}


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_store_is_durable_by_default_and_unsafe_only_when_asked(tmp_path: Path) -> None:
    s = Store(str(tmp_path / "a"))
    assert s._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL: the WAL is synced at each commit
    s.close()
    s = Store(str(tmp_path / "b"), fsync=False)
    assert s._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL: synced at checkpoints only
    s.close()


_WRITER = textwrap.dedent("""
    import sys
    from kubesched.apiserver.storage import Store
    s = Store(sys.argv[1], fsync=sys.argv[2] == "1")
    for i in range(int(sys.argv[3])):
        s.create("configmaps", "ns", f"c{i}", {"metadata": {"name": f"c{i}", "namespace": "ns"}})
    s.close()
""")


def _sync_calls(tmp_path: Path, fsync: bool, writes: int) -> int:
    """fsync + fdatasync system calls of a process making ``writes`` acknowledged writes (strace -c)."""
    out = tmp_path / f"strace-{fsync}.txt"
    data = tmp_path / f"data-{fsync}"
    r = subprocess.run(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", str(out),
                        sys.executable, "-c", _WRITER, str(data), "1" if fsync else "0", str(writes)],
                       env=ENV, capture_output=True, text=True, check=False)
    if r.returncode != 0 and ("ptrace" in r.stderr or "Operation not permitted" in r.stderr):
        pytest.skip(f"strace cannot trace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    calls = 0
    for line in out.read_text().splitlines():
        parts = line.split()
        if parts and parts[-1] in ("fsync", "fdatasync"):
            calls += int(parts[3])  # % time, seconds, usecs/call, calls, [errors,] syscall
    return calls


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_every_acknowledged_write_is_synced_unless_unsafe(tmp_path: Path) -> None:
    writes = 60
    assert _sync_calls(tmp_path, True, writes) >= writes
    assert _sync_calls(tmp_path, False, writes) < writes // 4


def test_data_dir_and_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0)  # nothing may rely on the caller's umask
    try:
        d = tmp_path / "data"
        s = Store(str(d))
        s.create("secrets", "ns", "s", {"metadata": {"name": "s", "namespace": "ns"}, "data": {"k": "dg=="}})
        assert _mode(d) == 0o700
        for name in ("state.db", "state.db-wal", "state.db-shm", "lock"):
            assert _mode(d / name) == 0o600, name
        s.close()
        pki = ensure_pki(d / "pki", ["127.0.0.1"])
        assert _mode(d / "pki") == 0o700
        for f in (pki.server_key, d / "pki" / "ca.key", pki.server_cert, pki.ca_cert):
            assert _mode(f) == 0o600, f
        kc = write_kubeconfig(d / "kubeconfig", "https://127.0.0.1:1", "tok")
        assert _mode(kc) == 0o600
    finally:
        os.umask(old)


def test_an_existing_open_data_dir_is_tightened(tmp_path: Path) -> None:
    d = tmp_path / "data"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    Store(str(d)).close()
    assert _mode(d) == 0o700


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_store_is_one_clear_error(tmp_path: Path, damage: str) -> None:
    d = tmp_path / "data"
    s = Store(str(d))
    for i in range(200):
        s.create("configmaps", "ns", f"c{i}", _cm(f"c{i}" * 40))
    s._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    s.close()
    db = d / "state.db"
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    else:
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptStore) as e:
        Store(str(d))
    assert str(d / "state.db") in str(e.value)
    # the directory is not left locked: a repaired store opens again
    db.unlink()
    Store(str(d)).close()


def test_cli_on_a_corrupt_store_prints_one_line_and_exits_1(tmp_path: Path) -> None:
    d = tmp_path / "data"
    d.mkdir()
    (d / "state.db").write_bytes(b"\x00garbage" * 512)
    r = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0", "--data-dir", str(d)],
                       env=ENV, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot read the store "), r.stderr
    assert "Traceback" not in r.stderr


def test_sqlite_reports_the_damage_it_is_given(tmp_path: Path) -> None:
    """Guard for the test above: the damage really is unreadable to SQLite."""
    p = tmp_path / "x.db"
    p.write_bytes(b"this is not a database" * 100)
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(p).execute("PRAGMA journal_mode=WAL")


def _enc_config(tmp_path: Path, providers: str) -> str:
    p = tmp_path / "enc.yaml"
    p.write_text("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n"
                 "- resources: [secrets]\n  providers:\n" + providers)
    return str(p)


KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="  # 32 bytes, base64


@pytest.mark.parametrize("provider", ["aescbc", "aesgcm"])
def test_secrets_are_encrypted_at_rest(tmp_path: Path, provider: str) -> None:
    """--encryption-provider-config (kube-apiserver's EncryptionConfiguration): the first provider
    encrypts Secrets on disk (``k8s:enc:<provider>:v1:<key>:`` envelope), reads stay plaintext, a
    restart decrypts, other kinds are untouched; with identity first, old encrypted rows still read."""
    from kubesched.apiserver.encryption import load_encryption_config

    cfg = _enc_config(tmp_path, f"  - {provider}:\n      keys:\n      - {{name: key1, secret: {KEY}}}\n"
                                "  - identity: {}\n")
    d = tmp_path / "data"
    s = Store(str(d), transformers=load_encryption_config(cfg))
    secret = {"metadata": {"name": "s", "namespace": "ns"}, "data": {"password": "aHVudGVyMg=="}}
    s.create("secrets", "ns", "s", secret)
    s.create("configmaps", "ns", "c", _cm("c"))
    assert s.get("secrets", "ns", "s").obj()["data"]["password"] == "aHVudGVyMg=="
    s.close()
    raw = {space: bytes(v) for space, v in sqlite3.connect(d / "state.db").execute("SELECT space, value FROM log")}
    assert raw["secrets"].startswith(f"k8s:enc:{provider}:v1:key1:".encode())
    assert b"aHVudGVyMg" not in raw["secrets"]
    assert raw["configmaps"].startswith(b"{")
    s = Store(str(d), transformers=load_encryption_config(cfg))  # restart
    assert s.get("secrets", "ns", "s").obj()["data"]["password"] == "aHVudGVyMg=="
    s.close()
    rotated = _enc_config(tmp_path, "  - identity: {}\n"
                                    f"  - {provider}:\n      keys:\n      - {{name: key1, secret: {KEY}}}\n")
    s = Store(str(d), transformers=load_encryption_config(rotated))
    assert s.get("secrets", "ns", "s").obj()["data"]["password"] == "aHVudGVyMg=="
    s.close()
    # a key the store was not written with: one clear error at start, nothing half-loaded
    wrong = _enc_config(tmp_path, "  - aesgcm:\n      keys:\n      - {name: other, secret: " + KEY + "}\n")
    with pytest.raises(CorruptStore, match="no matching prefix"):
        Store(str(d), transformers=load_encryption_config(wrong))


@pytest.mark.parametrize("providers, message", [
    ("  - aescbc:\n      keys:\n      - {name: k, secret: notbase64!}\n", "secret is not a valid base64 string"),
    ("  - aescbc:\n      keys:\n      - {name: k, secret: YWJj}\n", "expected a 16, 24 or 32 byte key, got 3"),
    ("  - aescbc:\n      keys: []\n", "keys must contain at least one key"),
    ("  - kms: {name: x}\n", "kms needs a plugin"),
])
def test_bad_encryption_configs_are_one_line(tmp_path: Path, providers: str, message: str) -> None:
    cfg = _enc_config(tmp_path, providers)
    r = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--port", "0",
                        "--encryption-provider-config", cfg], env=ENV, capture_output=True, text=True, timeout=60,
                       check=False)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and lines[0].startswith("error: --encryption-provider-config")
