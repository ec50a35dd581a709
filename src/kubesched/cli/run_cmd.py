"""``kubesched run`` — schedule a live cluster, a drop-in for kube-scheduler (upstream
``cmd/kube-scheduler/app/options``: the same flag names and defaults).

Flags that take Go-style values accept them: ``--leader-elect=false``, ``-v=2`` / ``--v=2``,
durations as ``15s``/``1m30s``. Bad flags or configuration print one ``error: …`` line and exit 2.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import click

from kubesched.cli._exit import command_exit_code
from kubesched.cli._features import build_features, feature_gate_options
from kubesched.errors import ConfigError, InputError

__all__ = ["run_command"]


def _bool(value: str | None, name: str) -> bool | None:
    if value is None:
        return None
    v = value.strip().lower()
    if v in ("true", "1", "t", "yes", ""):
        return True
    if v in ("false", "0", "f", "no"):
        return False
    raise InputError(f'invalid argument "{value}" for "--{name}" flag: strconv.ParseBool: parsing '
                     f'"{value}": invalid syntax')


def _duration(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    from kubesched.config.types import parse_duration

    try:
        if parse_duration(value) <= 0:
            raise ValueError("must be positive")
    except ValueError as e:
        raise InputError(f'invalid argument "{value}" for "--{name}" flag: {e}') from None
    return value


@click.command("run")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="The path to the configuration file (KubeSchedulerConfiguration).")
@click.option("--write-config-to", type=click.Path(dir_okay=False), default=None,
              help="If set, write the configuration values to this file and exit.")
@click.option("--kubeconfig", default=None,
              help="Path to kubeconfig file with authorization and master location information "
                   "(ignored if --config is given: use clientConnection.kubeconfig).")
@click.option("--master", default=None,
              help="The address of the Kubernetes API server (overrides any value in kubeconfig).")
@click.option("--kube-api-qps", type=float, default=None,
              help="QPS to use while talking with kubernetes apiserver (ignored with --config). <=0: unlimited.")
@click.option("--kube-api-burst", type=int, default=None,
              help="Burst to use while talking with kubernetes apiserver (ignored with --config).")
@click.option("--leader-elect", "leader_elect", default=None, is_flag=False, flag_value="true", metavar="BOOL",
              help="Start a leader election client and gain leadership before executing the main loop "
                   "(default true).")
@click.option("--leader-elect-lease-duration", default=None, metavar="DURATION", help="Default 15s.")
@click.option("--leader-elect-renew-deadline", default=None, metavar="DURATION", help="Default 10s.")
@click.option("--leader-elect-retry-period", default=None, metavar="DURATION", help="Default 2s.")
@click.option("--leader-elect-resource-lock", default=None, help="Only 'leases' is supported.")
@click.option("--leader-elect-resource-name", default=None, help="Default kube-scheduler.")
@click.option("--leader-elect-resource-namespace", default=None, help="Default kube-system.")
@click.option("--secure-port", type=int, default=10259, show_default=True,
              help="The port on which to serve HTTPS (0: an ephemeral port).")
@click.option("--bind-address", default="0.0.0.0", show_default=True, help="The IP address to listen on.")
@click.option("--tls-cert-file", default=None, help="x509 certificate for HTTPS (default: self-signed).")
@click.option("--tls-private-key-file", default=None, help="x509 private key matching --tls-cert-file.")
@click.option("--cert-dir", default=None,
              help="The directory where the TLS certs are located (kube-scheduler.crt/.key: a self-signed pair is "
                   "written there and reused by the next start). Ignored with --tls-cert-file/--tls-private-key-file.")
@click.option("--authorization-always-allow-paths", default="/healthz,/readyz,/livez", show_default=True,
              help="Paths served without authorization (comma-separated).")
@click.option("-v", "--v", "verbosity", default="0", metavar="LEVEL", help="Log level verbosity (klog -v).")
@click.option("--logging-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--plugin", "plugins", multiple=True, metavar="NAME=module:factory",
              help="Load an out-of-tree Python plugin (enable it in a profile of --config). Repeatable.")
@feature_gate_options
def run_command(config_file: str | None, write_config_to: str | None, kubeconfig: str | None,
                master: str | None, kube_api_qps: float | None, kube_api_burst: int | None,
                leader_elect: str | None, leader_elect_lease_duration: str | None,
                leader_elect_renew_deadline: str | None, leader_elect_retry_period: str | None,
                leader_elect_resource_lock: str | None, leader_elect_resource_name: str | None,
                leader_elect_resource_namespace: str | None, secure_port: int, bind_address: str,
                tls_cert_file: str | None, tls_private_key_file: str | None, cert_dir: str | None,
                authorization_always_allow_paths: str, verbosity: str, logging_format: str,
                plugins: tuple[str, ...], emulated_version: str | None = None,
                feature_gates: tuple[str, ...] = (), min_compatibility_version: str | None = None) -> None:
    """Schedule pods of a live cluster (a drop-in kube-scheduler)."""
    kw = locals()
    sys.exit(command_exit_code(lambda: _run(**kw)))


def _run(**kw: Any) -> int:
    # no garbage collection while starting: imports and the initial LISTs make hundreds of
    # thousands of long-lived objects and few cycles, and each full collection would walk them all
    # (~25 % of the CPU to ready on 5,000 nodes); the runner collects once, freezes what is left
    # and turns it back on when the caches are synced (kube/runner.py)
    gc.disable()
    try:
        return _start(**kw)
    finally:
        gc.enable()


def _start(**kw: Any) -> int:
    from kubesched.config import encode_config, load_config
    from kubesched.config.validation import validate_config
    from kubesched.kube.klog import configure_logging
    from kubesched.kube.runner import RunOptions, effective_config, run

    v_text = kw["verbosity"].lstrip("=")
    try:
        v = int(v_text)
    except ValueError:
        raise InputError(f'invalid argument "{kw["verbosity"]}" for "-v, --v" flag: strconv.ParseInt: '
                         f'parsing "{v_text}": invalid syntax') from None
    lock = kw["leader_elect_resource_lock"]
    if lock is not None and lock != "leases":
        raise InputError(f'resource lock "{lock}" is not supported: only "leases"', "--leader-elect-resource-lock")
    if (kw["tls_cert_file"] is None) != (kw["tls_private_key_file"] is None):
        raise InputError("--tls-cert-file and --tls-private-key-file must be given together")
    features = build_features(kw["emulated_version"], kw["feature_gates"], kw["min_compatibility_version"])
    cfg = load_config(kw["config_file"], features)
    if cfg.extenders:  # bad extender settings (httpTimeout, TLS files) are one error line, before start-up
        from kubesched.scheduler.extender import build_extenders

        for ext in build_extenders(cfg)[0]:
            ext.close()  # type: ignore[attr-defined]
    registry = None
    if kw["plugins"]:
        from kubesched.cli._inputs import plugin_registry

        registry = plugin_registry(kw["plugins"])
    opts = RunOptions(
        config=cfg, config_file=kw["config_file"], kubeconfig=kw["kubeconfig"], master=kw["master"],
        kube_api_qps=kw["kube_api_qps"], kube_api_burst=kw["kube_api_burst"],
        leader_elect=_bool(kw["leader_elect"], "leader-elect"),
        lease_duration=_duration(kw["leader_elect_lease_duration"], "leader-elect-lease-duration"),
        renew_deadline=_duration(kw["leader_elect_renew_deadline"], "leader-elect-renew-deadline"),
        retry_period=_duration(kw["leader_elect_retry_period"], "leader-elect-retry-period"),
        resource_name=kw["leader_elect_resource_name"], resource_namespace=kw["leader_elect_resource_namespace"],
        secure_port=kw["secure_port"], bind_address=kw["bind_address"], tls_cert_file=kw["tls_cert_file"],
        tls_private_key_file=kw["tls_private_key_file"], cert_dir=kw["cert_dir"] or None,
        authorization_always_allow_paths=tuple(p for p in kw["authorization_always_allow_paths"].split(",") if p),
        registry=registry, features=features)
    effective_config(opts)
    try:
        validate_config(cfg, features)
    except ConfigError as e:
        raise InputError(str(e)) from None
    if kw["write_config_to"]:
        import yaml

        with open(kw["write_config_to"], "w", encoding="utf-8") as f:
            yaml.safe_dump(encode_config(cfg), f, sort_keys=False)
        click.echo(f"Wrote configuration to: {kw['write_config_to']}", err=True)
        return 0
    configure_logging(kw["logging_format"], v)
    from kubesched.cli._loop import loop_factory

    return run(opts, loop_factory())
