"""``kubesched run`` flag handling without a server: --write-config-to, precedence, bad flags."""

from __future__ import annotations

import logging

import yaml
from click.testing import CliRunner

from kubesched.cli.main import main
from kubesched.config import load_config
from kubesched.kube.runner import RunOptions, effective_config


def test_write_config_to_applies_flags_and_exits(tmp_path) -> None:
    out = tmp_path / "effective.yaml"
    r = CliRunner().invoke(main, ["run", "--kubeconfig", "/nowhere", "--kube-api-qps", "20", "--kube-api-burst",
                                  "30", "--leader-elect=false", "--leader-elect-resource-name", "other",
                                  "--write-config-to", str(out)])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["kind"] == "KubeSchedulerConfiguration"
    assert doc["clientConnection"]["kubeconfig"] == "/nowhere"
    assert (doc["clientConnection"]["qps"], doc["clientConnection"]["burst"]) == (20, 30)
    assert doc["leaderElection"]["leaderElect"] is False
    assert doc["leaderElection"]["resourceName"] == "other"
    assert doc["leaderElection"]["leaseDuration"] == "15s"


def test_config_file_wins_over_deprecated_flags_but_not_leader_election_flags(tmp_path) -> None:
    cfg_file = tmp_path / "sched.yaml"
    cfg_file.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                        "clientConnection:\n  kubeconfig: /from/file\n  qps: 7\n"
                        "leaderElection:\n  leaderElect: true\n  leaseDuration: 30s\n")
    opts = RunOptions(config=load_config(str(cfg_file)), config_file=str(cfg_file), kubeconfig="/from/flag",
                      kube_api_qps=99, leader_elect=False, renew_deadline="5s")
    cfg = effective_config(opts)
    assert cfg.client_connection.kubeconfig == "/from/file" and cfg.client_connection.qps == 7
    assert cfg.leader_election.leader_elect is False
    assert (cfg.leader_election.lease_duration, cfg.leader_election.renew_deadline) == ("30s", "5s")


def test_bad_flags_are_one_line_errors(tmp_path) -> None:
    runner = CliRunner()
    for args, text in ((["--leader-elect=maybe"], 'invalid argument "maybe" for "--leader-elect" flag'),
                       (["--leader-elect-lease-duration=fast"], '"--leader-elect-lease-duration"'),
                       (["-v=x"], 'for "-v, --v" flag'),
                       (["--leader-elect-resource-lock=endpoints"], "only \"leases\""),
                       (["--tls-cert-file=a.crt"], "must be given together")):
        r = runner.invoke(main, ["run", *args, "--write-config-to", str(tmp_path / "x.yaml")])
        assert r.exit_code == 2, (args, r.output)
        assert text in r.output and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "leaderElection:\n  leaseDuration: 1s\n  renewDeadline: 10s\n")
    r = runner.invoke(main, ["run", "--config", str(bad)])
    assert r.exit_code == 2 and "leaderElection" in r.output and "Traceback" not in r.output


def test_no_kubeconfig_outside_a_cluster_fails_with_one_line(monkeypatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    try:
        r = CliRunner().invoke(main, ["run", "--leader-elect=false", "--secure-port=0", "--bind-address=127.0.0.1"])
    finally:
        logging.getLogger().handlers.clear()  # `run` configured klog logging on the runner's stream
    assert r.exit_code == 1
    assert "no configuration has been provided" in r.output


def test_bad_kubeconfig_field_is_one_line_with_its_path(tmp_path) -> None:
    kc = tmp_path / "kc"
    kc.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
                  "    server: https://127.0.0.1:6443\n    insecure-skip-tls-verify: maybe\n"
                  "contexts:\n- name: c\n  context: {cluster: k}\n")
    try:
        r = CliRunner().invoke(main, ["run", "--kubeconfig", str(kc), "--leader-elect=false", "--secure-port=0",
                                      "--bind-address=127.0.0.1"])
    finally:
        logging.getLogger().handlers.clear()  # `run` configured klog logging on the runner's stream
    assert r.exit_code == 1
    errors = [line for line in r.output.splitlines() if line.startswith("E")]
    assert len(errors) == 1 and "Traceback" not in r.output
    assert f"kubeconfig {kc}: invalid content: Expected `bool`, got `str` - at " \
           "`$.clusters[0].cluster.insecure-skip-tls-verify`" in errors[0]


def test_garbage_collection_is_off_while_starting_and_on_again_after(monkeypatch, tmp_path) -> None:
    """`kubesched run` starts with the cyclic GC off (the start-up's objects are long-lived) and the
    runner turns it on once the caches are synced; whatever way the command ends, it is on again."""
    import gc

    import kubesched.kube.runner as runner_mod

    seen: list[bool] = []

    def fake_run(opts: object, loop_factory: object = None) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(runner_mod, "run", fake_run)
    assert gc.isenabled()
    r = CliRunner().invoke(main, ["run", "--kubeconfig", "/nowhere", "--leader-elect=false"])
    assert r.exit_code == 0, r.output
    assert seen == [False] and gc.isenabled()
    r = CliRunner().invoke(main, ["run", "--kubeconfig", "/nowhere", "--leader-elect-resource-lock", "endpoints"])
    assert r.exit_code == 2 and gc.isenabled()
