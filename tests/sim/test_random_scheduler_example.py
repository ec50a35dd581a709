"""``examples/random-scheduler``: the classic random-scheduler tutorial as two Python plugins and a
second profile, next to the default one — in ``simulate`` (deterministic with ``--seed``) and in
``kubesched up --until-idle``; plus the plugin-author conveniences it shows: typed args decoded
from ``pluginConfig`` (field-path errors), ``PreFilterResult``, plugins loaded from a file path,
a KubeSchedulerConfiguration found among the ``-f`` inputs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import yaml
from test_simulate import items_by_name, run

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "random-scheduler"
PLUGINS = EXAMPLE / "random_plugins.py"
FLAGS = ("--plugin", f"RandomFilter={PLUGINS}:new_filter", "--plugin", f"RandomScore={PLUGINS}:new_score")


def _placements(*extra: str) -> dict[str, tuple[str, str]]:
    code, out, err = run("simulate", "-f", str(EXAMPLE), *FLAGS, "-o", "yaml", *extra)
    assert code == 0, err
    return {n: (i["spec"]["schedulerName"], i["spec"].get("nodeName", "")) for n, i in items_by_name(out).items()
            if i["kind"] == "Pod"}


def test_simulate_schedules_both_profiles_deterministically() -> None:
    placed = _placements("--seed", "3")
    assert {s for s, _ in placed.values()} == {"default-scheduler", "random-scheduler"}
    assert all(node for _, node in placed.values()), placed  # 12 pods, all bound
    assert placed["dice-5"][1] in {"worker-4", "worker-5"}  # RandomFilter's PreFilterResult
    assert _placements("--seed", "3") == placed  # same seed, same dice
    seeds = [_placements("--seed", str(s)) for s in (4, 5, 6)]
    dice = {tuple(sorted((n, v[1]) for n, v in p.items() if n.startswith("dice"))) for p in seeds + [placed]}
    assert len(dice) > 1  # the dice do change with the seed


def _config_with(tmp_path: Path, **args: object) -> Path:
    """The example copied with the RandomFilter args replaced."""
    d = tmp_path / "ex"
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    cfg = yaml.safe_load((d / "scheduler-config.yaml").read_text())
    cfg["profiles"][1]["pluginConfig"][0]["args"] = args
    (d / "scheduler-config.yaml").write_text(yaml.safe_dump(cfg))
    return d


def test_typed_args_errors_name_the_field(tmp_path: Path) -> None:
    d = _config_with(tmp_path, keepPercentage=120)
    code, _, err = run("simulate", "-f", str(d), *FLAGS)
    assert code == 2
    assert err.strip().endswith("profiles[1].pluginConfig[0].args.keepPercentage: must be in the range 0..100, "
                                "got 120"), err
    d = _config_with(tmp_path / "2", keepPercent=10)
    code, _, err = run("simulate", "-f", str(d), *FLAGS)
    assert code == 2 and 'profiles[1].pluginConfig[0].args: unknown field "keepPercent"' in err, err
    d = _config_with(tmp_path / "3", keepPercentage="most")
    code, _, err = run("simulate", "-f", str(d), *FLAGS)
    assert code == 2 and "profiles[1].pluginConfig[0].args.keepPercentage: expected int, got str" in err, err


def test_a_keep_percentage_of_zero_rejects_every_node(tmp_path: Path) -> None:
    d = _config_with(tmp_path, keepPercentage=0)
    code, out, err = run("simulate", "-f", str(d), *FLAGS, "-o", "yaml")
    assert code == 0, err
    pod = items_by_name(out)["dice-0"]
    cond = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"][0]
    assert cond["message"] == "0/6 nodes are available: 6 node(s) were not picked at random."
    assert items_by_name(out)["web-0"]["spec"].get("nodeName")  # the default profile is unaffected


def test_config_in_inputs_and_config_flag_conflict(tmp_path: Path) -> None:
    other = tmp_path / "c.yaml"
    other.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    code, _, err = run("simulate", "-f", str(EXAMPLE), "--config", str(other), *FLAGS)
    assert code == 2 and "KubeSchedulerConfiguration among the inputs: give one" in err


def test_missing_plugin_flag_is_one_error(tmp_path: Path) -> None:
    code, _, err = run("simulate", "-f", str(EXAMPLE))
    assert code == 2 and 'plugin "RandomFilter" does not exist' in err


def test_up_until_idle_schedules_both_profiles(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "up", "-f", str(EXAMPLE), *FLAGS,
                        "--until-idle", "--seed", "3", "--data-dir", str(tmp_path / "data")],
                       capture_output=True, text=True, env=env, timeout=120, check=False, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    bound = {line.split()[1] for line in p.stdout.splitlines() if " bound to " in line}
    assert bound == {f"default/{k}-{i}" for k in ("web", "dice") for i in range(6)}, p.stdout
    assert "12 pod(s) to schedule: 12 bound" in p.stdout, p.stdout
    from kubesched.apiserver.launcher import run_server

    with run_server(data_dir=tmp_path / "data") as srv:
        events = srv.call(lambda s: [e.obj() for e in s.store.list("events")])  # stored in core/v1 form
    random_events = [e for e in events if e.get("reason") == "RandomlyScheduled"]  # RandomScore's PostBind
    assert {e["involvedObject"]["name"] for e in random_events} == {f"dice-{i}" for i in range(6)}
    assert all(e["reportingComponent"] == "random-scheduler" for e in random_events)


def test_random_filter_events_to_register_requeue_only_on_node_events(tmp_path: Path) -> None:
    """RandomFilter's ``events_to_register``: a pod it rejected leaves the unschedulable pool on
    a Node event (its hint says Queue), not on an unrelated one (a PersistentVolume added)."""
    from kubesched.cli._inputs import load_inputs
    from kubesched.cli._inputs import plugin_registry as _registry
    from kubesched.scheduler import Scheduler
    from kubesched.sim.store import ClusterStore
    from kubesched.testing.wrappers import MakeNode, MakePod

    d = _config_with(tmp_path, keepPercentage=0)
    cfg, _, _ = load_inputs([str(d / "scheduler-config.yaml")], None)
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, registry=_registry(FLAGS[1::2]))
    store.scheduler = sched
    store.add("Node", MakeNode().name("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    pod = MakePod().name("dice").namespace("default").uid("dice").obj()
    store.add("Pod", msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec,
                                                                               scheduler_name="random-scheduler")))
    attempt = sched.schedule_one()
    assert attempt.result == "unschedulable"
    store.flush()  # its own PodScheduled=False update is no Node event: it stays parked
    assert "default/dice" in sched.queue.unschedulable
    sched.on_object_event("PersistentVolume", None, {"metadata": {"name": "pv"}})
    assert "default/dice" in sched.queue.unschedulable
    sched.on_node_add(MakeNode().name("n2").capacity(cpu="4", memory="8Gi", pods="110").obj())
    assert "default/dice" not in sched.queue.unschedulable
