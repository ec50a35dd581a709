"""Framework construction (upstream runtime/framework.go NewFramework + expandMultiPointPlugins)."""

from __future__ import annotations

import pytest

from kubesched.config import decode_config
from kubesched.errors import PluginConfigError
from kubesched.framework.handle import Handle
from kubesched.framework.node_table import NodeTable
from kubesched.framework.runtime import Framework


class _P:
    def __init__(self, name: str) -> None:
        self.name = name


class QS(_P):
    def less(self, a, b):  # noqa: ANN001, ANN201
        return False


class F(_P):
    def filter(self, state, pod, ni):  # noqa: ANN001, ANN201
        return None


class FS(_P):
    def filter(self, state, pod, ni):  # noqa: ANN001, ANN201
        return None

    def score(self, state, pod, ni):  # noqa: ANN001, ANN201
        return 0, None


class S(_P):
    def score(self, state, pod, ni):  # noqa: ANN001, ANN201
        return 0, None


class B(_P):
    def bind(self, state, pod, node):  # noqa: ANN001, ANN201
        return None


REG = {n: (lambda cls, n: (lambda a, h: cls(n)))(cls, n) for n, cls in
       {"QS": QS, "F1": F, "F2": F, "FS": FS, "S1": S, "S2": S, "B": B}.items()}


def _fw(plugins: dict) -> Framework:
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "x", "plugins": plugins}]})
    return Framework(cfg.profiles[0], REG, Handle(nodes=NodeTable()))


BASE = [{"name": "QS"}, {"name": "B"}]


def names(lst) -> list[str]:  # noqa: ANN001
    return [p.name for p in lst]


def test_multipoint_expands_to_each_implemented_point() -> None:
    fw = _fw({"multiPoint": {"enabled": [*BASE, {"name": "F1"}, {"name": "FS", "weight": 3}, {"name": "S1"}],
                             "disabled": [{"name": "*"}]}})
    assert names(fw.filter_plugins) == ["F1", "FS"]
    assert names(fw.score_plugins) == ["FS", "S1"]
    assert fw.score_weights == {"FS": 3, "S1": 1}


def test_specific_point_overrides_multipoint_and_goes_first() -> None:
    # upstream order: explicit overrides, then multiPoint, then other explicit plugins
    fw = _fw({"multiPoint": {"enabled": [*BASE, {"name": "S1"}, {"name": "FS", "weight": 2}],
                             "disabled": [{"name": "*"}]},
              "score": {"enabled": [{"name": "S2"}, {"name": "FS", "weight": 5}]}})
    assert names(fw.score_plugins) == ["FS", "S1", "S2"]
    assert fw.score_weights["FS"] == 5


def test_disabled_at_point_drops_multipoint_plugin() -> None:
    fw = _fw({"multiPoint": {"enabled": [*BASE, {"name": "FS"}], "disabled": [{"name": "*"}]},
              "score": {"disabled": [{"name": "FS"}]}})
    assert names(fw.filter_plugins) == ["FS"]
    assert names(fw.score_plugins) == []


def test_unknown_plugin_error_has_field_path() -> None:
    with pytest.raises(PluginConfigError) as ei:
        _fw({"multiPoint": {"enabled": [*BASE], "disabled": [{"name": "*"}]},
             "filter": {"enabled": [{"name": "Nope"}]}})
    assert ei.value.path == "profiles[0].plugins.filter.enabled[0].name"
    assert 'plugin "Nope" does not exist' in str(ei.value)


def test_plugin_at_point_it_does_not_implement() -> None:
    with pytest.raises(PluginConfigError, match='plugin "S1" does not extend filter plugin'):
        _fw({"multiPoint": {"enabled": [*BASE], "disabled": [{"name": "*"}]},
             "filter": {"enabled": [{"name": "S1"}]}})


def test_exactly_one_queue_sort_and_a_binder() -> None:
    with pytest.raises(PluginConfigError, match="only one queue sort plugin required"):
        _fw({"multiPoint": {"enabled": [{"name": "B"}], "disabled": [{"name": "*"}]}})
    with pytest.raises(PluginConfigError, match="at least one bind plugin is needed"):
        _fw({"multiPoint": {"enabled": [{"name": "QS"}], "disabled": [{"name": "*"}]}})
