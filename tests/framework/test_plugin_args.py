"""Typed args for out-of-tree plugins (``kubesched.framework.plugin_args``) and plugins loaded
from a file path (``--plugin NAME=path/file.py:factory``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.errors import ConfigError, InputError, PluginConfigError
from kubesched.framework.plugin_args import PluginArgs, plugin_args
from kubesched.framework.registry import load_out_of_tree
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Scheduler


class DiceArgs(PluginArgs):
    faces: int = 6
    labels: list[str] = []

    def validate(self) -> None:
        if self.faces < 2:
            raise InputError(f"must be at least 2, got {self.faces}", "faces")


@dataclass
class PlainArgs:
    weight: int = 1


class Dice:
    name = "Dice"

    def __init__(self, args: Any) -> None:
        self.args = args

    def filter(self, state, pod, node_info):
        return None


@plugin_args(DiceArgs)
def new_dice(args: DiceArgs, handle: Any) -> Dice:
    return Dice(args)


@plugin_args(PlainArgs)
def new_plain(args: PlainArgs, handle: Any) -> Dice:
    d = Dice(args)
    d.name = "Plain"
    return d


def _sched(plugin_config: list[dict] | None) -> Scheduler:
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler",
                                       "plugins": {"filter": {"enabled": [{"name": "Dice"}, {"name": "Plain"}]}},
                                       "pluginConfig": plugin_config or []}]})
    return Scheduler(cfg, registry={**in_tree_registry(), "Dice": new_dice, "Plain": new_plain})


def _args(sched: Scheduler, name: str = "Dice") -> Any:
    return sched.profiles["default-scheduler"].plugins[name].args


def test_defaults_without_plugin_config() -> None:
    assert _args(_sched(None)) == DiceArgs()
    assert _args(_sched(None), "Plain") == PlainArgs()


def test_decoded_from_plugin_config_with_api_version_and_kind() -> None:
    s = _sched([{"name": "Dice", "args": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DiceArgs",
                                          "faces": 20, "labels": ["d20"]}},
                {"name": "Plain", "args": {"weight": 3}}])
    assert _args(s) == DiceArgs(faces=20, labels=["d20"])
    assert _args(s, "Plain") == PlainArgs(weight=3)


@pytest.mark.parametrize(("args", "where", "message"), [
    ({"faces": 1}, "profiles[0].pluginConfig[0].args.faces", "must be at least 2, got 1"),
    ({"faces": "six"}, "profiles[0].pluginConfig[0].args.faces", "expected int, got str"),
    ({"labels": [1]}, "profiles[0].pluginConfig[0].args.labels[0]", "expected str, got int"),
    ({"sides": 3}, "profiles[0].pluginConfig[0].args", 'unknown field "sides"'),
    ({"kind": "OtherArgs"}, "profiles[0].pluginConfig[0].args",
     "args for plugin Dice were not of type DiceArgs, got OtherArgs"),
    ([1, 2], "profiles[0].pluginConfig[0].args", "args for plugin Dice must be an object, got list"),
])
def test_bad_args_are_one_error_with_the_field_path(args: Any, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as ei:
        _sched([{"name": "Dice", "args": args}])
    assert str(ei.value) == f"{where}: {message}"


def test_plugin_from_a_file_path(tmp_path: Path) -> None:
    f = tmp_path / "my_plugin.py"
    f.write_text("class P:\n    name = 'P'\n\ndef new(args, handle):\n    return P()\n\ndef other(args, handle):\n"
                 "    return P()\n")
    name, factory = load_out_of_tree(f"P={f}:new")
    assert name == "P" and factory(None, None).name == "P"
    _, other = load_out_of_tree(f"Q={f}:other")  # the same file: one module
    assert other.__module__ == factory.__module__
    _, default = load_out_of_tree(f"P={f}")  # factory defaults to new
    assert default is factory
    with pytest.raises(PluginConfigError, match="no such file"):
        load_out_of_tree(f"P={tmp_path / 'missing.py'}:new")
    with pytest.raises(PluginConfigError, match="has no attribute 'nope'"):
        load_out_of_tree(f"P={f}:nope")
    bad = tmp_path / "broken.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(PluginConfigError, match="RuntimeError: boom"):
        load_out_of_tree(f"P={bad}:new")
