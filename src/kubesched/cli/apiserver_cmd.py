"""``kubesched apiserver``: serve the box API server until interrupted.

Signals: SIGINT/SIGTERM stop cleanly; SIGUSR1 compacts the store now (the next watch from an
older resourceVersion gets 410 Expired); SIGUSR2 toggles pausing every request.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
import sys

import click

from kubesched.cli._features import build_features, feature_gate_options
from kubesched.cli._loop import run as run_loop
from kubesched.errors import InputError
from kubesched.features import FeatureGate

__all__ = ["apiserver"]


def _parse_fail_writes(spec: str) -> tuple[str, str, float, int]:
    """``RESOURCE[/SUBRESOURCE]=FRACTION[:CODE]`` → (resource, subresource, fraction, code)."""
    try:
        target, rest = spec.split("=", 1)
        frac_s, _, code_s = rest.partition(":")
        fraction = float(frac_s)
        code = int(code_s) if code_s else 500
    except ValueError:
        raise InputError(f"expected RESOURCE[/SUBRESOURCE]=FRACTION[:CODE], got {spec!r}",
                         "--fault-fail-writes") from None
    resource, _, sub = target.partition("/")
    if not 0.0 <= fraction <= 1.0:
        raise InputError(f"fraction must be in [0, 1], got {fraction}", "--fault-fail-writes")
    if code not in (409, 500):
        raise InputError(f"code must be 409 or 500, got {code}", "--fault-fail-writes")
    return resource, sub, fraction, code


@click.command("apiserver")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Persist the store in DIR/state.db (SQLite WAL); a restart continues where it stopped.")
@click.option("--in-memory", is_flag=True, help="Keep everything in memory (the default without --data-dir).")
@click.option("--bind-address", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=6443, show_default=True, help="Port (0 = any free port).")
@click.option("--write-kubeconfig", "kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="Write a kubeconfig for this server (with its token) to FILE.")
@click.option("--token", default=None, help="Bearer token clients must send (default: a random one).")
@click.option("--insecure-http", is_flag=True,
              help="Serve plain HTTP instead of HTTPS (kubectl then sends no token: use with --token '').")
@click.option("--simulate-kubelets", is_flag=True,
              help="Nodes Ready; bound pods Running; pods annotated kubesched.io/complete-after-seconds finish.")
@click.option("--pod-termination-seconds", type=float, default=0.0, show_default=True, metavar="SECONDS",
              help="With --simulate-kubelets: seconds a kubelet takes to stop a deleted pod (0: at once, as KWOK; "
                   "never more than the pod's grace period); -1: wait out each pod's grace period.")
@click.option("--compaction-window", type=int, default=10000, show_default=True,
              help="Revisions kept by the periodic compactor (older watches get 410 Expired).")
@click.option("--compaction-interval", type=float, default=60.0, show_default=True, help="Seconds between compactions.")
@click.option("--event-ttl", type=float, default=3600.0, show_default=True,
              help="Seconds after which Events are deleted (as kube-apiserver --event-ttl).")
@click.option("--fault-close-watches-every", type=float, default=None, metavar="SECONDS",
              help="Fault: end every watch stream after SECONDS.")
@click.option("--fault-latency", type=float, default=0.0, metavar="SECONDS", help="Fault: delay every request.")
@click.option("--fault-fail-writes", "fail_writes", multiple=True, metavar="RESOURCE[/SUB]=FRACTION[:CODE]",
              help="Fault: fail FRACTION of writes to a resource (e.g. pods/binding=0.2:500). Repeatable.")
@click.option("--max-requests-inflight", type=click.IntRange(min=0), default=400, show_default=True,
              help="Read-only requests served at once; more are answered 429 (0 = no limit), as kube-apiserver.")
@click.option("--max-mutating-requests-inflight", type=click.IntRange(min=0), default=200, show_default=True,
              help="Mutating requests served at once; more are answered 429 (0 = no limit).")
@click.option("--encryption-provider-config", "encryption_config", type=click.Path(dir_okay=False), default=None,
              help="EncryptionConfiguration (apiserver.config.k8s.io/v1) encrypting the listed resources at rest "
                   "(aescbc, aesgcm, secretbox, identity), as kube-apiserver's flag of the same name.")
@click.option("--unsafe-no-fsync", is_flag=True,
              help="Acknowledge writes before they are synced to disk (etcd's flag of the same name): faster, "
                   "but a power loss or kernel crash loses the last acknowledged writes. Default: every write is "
                   "fsynced before the API answers.")
@click.option("--anonymous-auth/--no-anonymous-auth", default=True, show_default=True,
              help="Requests without credentials are system:anonymous (then 403 unless RBAC allows them) "
                   "instead of 401, as kube-apiserver's flag.")
@click.option("--authorization-mode", type=click.Choice(["RBAC", "AlwaysAllow"]), default="RBAC", show_default=True,
              help="RBAC: system:masters (the box's token) may do anything, everyone else what the stored "
                   "Roles/ClusterRoles and bindings allow (access reviews, anonymous requests); AlwaysAllow: "
                   "everything (and anonymous authentication off).")
@feature_gate_options
def apiserver(data_dir: str | None, in_memory: bool, bind_address: str, port: int, kubeconfig: str | None,
              token: str | None, insecure_http: bool, simulate_kubelets: bool, compaction_window: int,
              compaction_interval: float, event_ttl: float, fault_close_watches_every: float | None,
              fault_latency: float, fail_writes: tuple[str, ...], max_requests_inflight: int = 400,
              max_mutating_requests_inflight: int = 200, encryption_config: str | None = None,
              unsafe_no_fsync: bool = False, anonymous_auth: bool = True, authorization_mode: str = "RBAC",
              emulated_version: str | None = None, feature_gates: tuple[str, ...] = (),
              min_compatibility_version: str | None = None, pod_termination_seconds: float = 0.0) -> None:
    """Serve a Kubernetes-compatible API server backed by SQLite (the cluster in a box).

    ``--emulated-version`` / ``--feature-gates``: the API of that release (schemas, gated fields,
    admission and validation rules; see :class:`kubesched.apiserver.server.APIServer`)."""
    from kubesched.apiserver.storage import CorruptStore

    _raise_open_files_limit()
    try:
        if data_dir and in_memory:
            raise InputError("--data-dir and --in-memory are mutually exclusive", "--in-memory")
        features = build_features(emulated_version, feature_gates, min_compatibility_version)
        faults_spec = [_parse_fail_writes(s) for s in fail_writes]
        tok = secrets.token_hex(16) if token is None else (token or None)
        run_loop(_serve(data_dir, bind_address, port, kubeconfig, tok, not insecure_http,
                           simulate_kubelets, compaction_window, compaction_interval, event_ttl,
                           fault_close_watches_every, fault_latency, faults_spec, not unsafe_no_fsync,
                           (max_requests_inflight, max_mutating_requests_inflight), features, encryption_config,
                           (anonymous_auth, authorization_mode),
                           None if pod_termination_seconds < 0 else pod_termination_seconds))
    except InputError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    except CorruptStore as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)


def _raise_open_files_limit() -> None:
    """Raise the soft RLIMIT_NOFILE to the hard limit, as the Go runtime does for kube-apiserver
    (Go ≥ 1.19): a 1,024-descriptor soft limit would let a thousand idle clients lock out kubectl."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


async def _serve(data_dir: str | None, host: str, port: int, kubeconfig: str | None, token: str | None,
                 tls: bool, simulate_kubelets: bool, window: int, interval: float, event_ttl: float,
                 close_every: float | None,
                 latency: float, fail_writes: list[tuple[str, str, float, int]], fsync: bool = True,
                 inflight: tuple[int, int] = (400, 200), features: FeatureGate | None = None,
                 encryption_config: str | None = None, auth: tuple[bool, str] = (True, "RBAC"),
                 pod_termination_seconds: float | None = 0.0) -> None:
    import shutil

    from kubesched.apiserver.encryption import EncryptionConfigError
    from kubesched.apiserver.launcher import build_server, server_pki, write_kubeconfig
    from kubesched.apiserver.storage import DataDirLocked

    try:
        server = build_server(data_dir, token=token, simulate_kubelets=simulate_kubelets, fsync=fsync,
                              compaction_window=window, compaction_interval=interval, event_ttl=event_ttl,
                              max_requests_inflight=inflight[0], max_mutating_requests_inflight=inflight[1],
                              features=features, encryption_config=encryption_config,
                              anonymous_auth=auth[0], authorization_mode=auth[1],
                              pod_termination_seconds=pod_termination_seconds)
    except DataDirLocked as e:
        raise InputError(str(e), "--data-dir") from None
    except EncryptionConfigError as e:
        raise InputError(str(e), "--encryption-provider-config") from None
    f = server.faults
    f.watch_close_every = close_every
    f.latency = latency
    for resource, sub, fraction, code in fail_writes:
        f.fail_writes(resource, subresource=sub, fraction=fraction, code=code)
    client_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    pki, tmpdir = server_pki(data_dir, client_host) if tls else (None, None)
    try:
        await server.start(host, port, pki.server_context() if pki is not None else None)
    except OSError as e:
        server.store.close()
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}", "--port") from None
    server.freeze_startup_heap()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, stop.set)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, server.compact_now)
    loop.add_signal_handler(signal.SIGUSR2, lambda: f.resume() if f.paused else f.pause())
    where = data_dir or "memory"
    click.echo(f"kubesched apiserver listening on {server.url} (store: {where}, revision {server.store.current_rev})",
               err=True)
    server.host = client_host
    if kubeconfig:
        write_kubeconfig(kubeconfig, server.url, token, ca_pem=pki.ca_pem() if pki is not None else None)
        click.echo(f"kubeconfig written to {kubeconfig}; try: KUBECONFIG={kubeconfig} kubectl get nodes", err=True)
    elif token:
        click.echo(f"token: {token}", err=True)
    sys.stderr.flush()
    try:
        await stop.wait()
    finally:
        await server.stop()
        server.store.close()
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
        click.echo("kubesched apiserver stopped", err=True)
