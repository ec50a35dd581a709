"""mergePlugins / mergePluginSet semantics (pkg/scheduler/apis/config/v1/default_plugins_test.go)."""

from __future__ import annotations

from kubesched.config import Plugin, Plugins, PluginSet, decode_config, default_plugins
from kubesched.config.defaults import merge_plugin_set, merge_plugins

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def P(name: str, weight: int | None = None) -> Plugin:
    return Plugin(name=name, weight=weight)


def ps(enabled=(), disabled=()) -> PluginSet:
    return PluginSet(enabled=list(enabled), disabled=list(disabled))


DEFAULT = ps([P("DefaultPlugin1"), P("DefaultPlugin2", 2), P("DefaultPlugin3")])


def test_no_custom_keeps_defaults():
    assert merge_plugin_set(DEFAULT, PluginSet()) == DEFAULT
    d = default_plugins()
    assert merge_plugins(d, None) is d


def test_insert_custom_plugins_appended_after_defaults():
    got = merge_plugin_set(DEFAULT, ps([P("Custom1"), P("Custom2", 5)]))
    assert got.enabled == DEFAULT.enabled + [P("Custom1"), P("Custom2", 5)]
    assert got.disabled == []


def test_disable_some_default_plugins():
    got = merge_plugin_set(DEFAULT, ps(disabled=[P("DefaultPlugin2")]))
    assert got.enabled == [P("DefaultPlugin1"), P("DefaultPlugin3")]
    assert got.disabled == [P("DefaultPlugin2")]


def test_disable_star_drops_all_defaults():
    got = merge_plugin_set(DEFAULT, ps([P("Custom1")], [P("*")]))
    assert got.enabled == [P("Custom1")]
    assert got.disabled == [P("*")]


def test_reverse_default_order_by_disabling_all_and_reenabling():
    custom = ps([P("DefaultPlugin3"), P("DefaultPlugin2", 7), P("DefaultPlugin1")], [P("*")])
    got = merge_plugin_set(DEFAULT, custom)
    assert got.enabled == [P("DefaultPlugin3"), P("DefaultPlugin2", 7), P("DefaultPlugin1")]


def test_reenabled_default_is_overridden_in_place_with_new_weight():
    got = merge_plugin_set(DEFAULT, ps([P("Custom1"), P("DefaultPlugin2", 9)]))
    assert got.enabled == [P("DefaultPlugin1"), P("DefaultPlugin2", 9), P("DefaultPlugin3"), P("Custom1")]


def test_override_without_weight_clears_default_weight():
    got = merge_plugin_set(DEFAULT, ps([P("DefaultPlugin2")]))
    assert got.enabled[1] == P("DefaultPlugin2", None)


def test_disabled_and_reenabled_default_is_appended_not_in_place():
    got = merge_plugin_set(DEFAULT, ps([P("DefaultPlugin1", 4)], [P("DefaultPlugin1")]))
    assert got.enabled == [P("DefaultPlugin2", 2), P("DefaultPlugin3"), P("DefaultPlugin1", 4)]


def test_duplicate_custom_plugins_are_kept():
    got = merge_plugin_set(DEFAULT, ps([P("Custom1"), P("Custom1")]))
    assert got.enabled[-2:] == [P("Custom1"), P("Custom1")]


def test_duplicate_custom_override_of_default_last_one_replaces():
    got = merge_plugin_set(DEFAULT, ps([P("DefaultPlugin1", 4), P("DefaultPlugin1", 5)]))
    assert got.enabled == [P("DefaultPlugin1", 5), P("DefaultPlugin2", 2), P("DefaultPlugin3"), P("DefaultPlugin1", 4)]


def test_default_disabled_entries_are_carried():
    default = ps([P("A"), P("B")], [P("C")])
    got = merge_plugin_set(default, ps(disabled=[P("A", 3)]))
    assert got.enabled == [P("B")]
    assert got.disabled == [P("A"), P("C")]  # names only, custom first


def test_merge_plugins_on_real_defaults_per_point():
    custom = Plugins(
        score=ps([P("TaintToleration", 10), P("MyScore", 4)], [P("ImageLocality")]),
        filter=ps([P("MyFilter")]),
    )
    got = merge_plugins(default_plugins(), custom)
    assert got.multi_point == default_plugins().multi_point
    assert got.score.enabled == [P("TaintToleration", 10), P("MyScore", 4)]
    assert got.score.disabled == [P("ImageLocality")]
    assert got.filter.enabled == [P("MyFilter")]
    assert got.queue_sort == PluginSet()


def test_multi_point_override_in_place_from_yaml():
    cfg = decode_config(HEADER + """
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: NodeAffinity
        weight: 7
      - name: MyPlugin
        weight: 3
      disabled:
      - name: ImageLocality
""")
    mp = cfg.profiles[0].plugins.multi_point
    names = [p.name for p in mp.enabled]
    assert names.index("NodeAffinity") == 5
    assert mp.enabled[5] == P("NodeAffinity", 7)
    assert "ImageLocality" not in names
    assert mp.enabled[-1] == P("MyPlugin", 3)
    assert mp.disabled == [P("ImageLocality")]
    assert len(mp.enabled) == 20  # v1.37 default: 18 kept + NodeDeclaredFeatures + MyPlugin


def test_multi_point_star_disable_from_yaml():
    cfg = decode_config(HEADER + """
profiles:
- plugins:
    multiPoint:
      enabled: [{name: PrioritySort}, {name: DefaultBinder}]
      disabled: [{name: "*"}]
""")
    mp = cfg.profiles[0].plugins.multi_point
    assert mp.enabled == [P("PrioritySort"), P("DefaultBinder")]
    assert mp.disabled == [P("*")]


def test_point_level_disable_star_keeps_multi_point_defaults():
    cfg = decode_config(HEADER + """
profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
""")
    plugins = cfg.profiles[0].plugins
    assert len(plugins.multi_point.enabled) == 20  # v1.37: 19 + NodeDeclaredFeatures
    assert plugins.score == PluginSet(enabled=[], disabled=[P("*")])


from hypothesis import given, strategies as st  # noqa: E402

_names = st.sampled_from(["A", "B", "C", "D", "E", "F"])
_plugins = st.lists(st.builds(Plugin, name=_names, weight=st.none() | st.integers(0, 5)), max_size=6)


@given(default=st.lists(_names, unique=True, max_size=6), enabled=_plugins,
       disabled=st.lists(st.sampled_from(["A", "B", "*"]), max_size=2))
def test_merge_properties(default, enabled, disabled):
    d = ps([P(n, 1) for n in default])
    c = ps(enabled, [P(n) for n in disabled])
    got = merge_plugin_set(d, c)
    # every custom plugin is present exactly as often as it was given, with its own weight
    custom_names = [p.name for p in enabled]
    kept_defaults = [] if "*" in disabled else [n for n in default if n not in disabled]
    assert len(got.enabled) == len(kept_defaults) + len(enabled) - sum(n in custom_names for n in kept_defaults)
    # kept defaults keep their relative order, at the front
    assert [p.name for p in got.enabled[:len(kept_defaults)]] == kept_defaults
    for p in got.enabled[:len(kept_defaults)]:
        if p.name in custom_names:
            assert p == [q for q in enabled if q.name == p.name][-1]
        else:
            assert p.weight == 1
    assert [p.name for p in got.disabled] == disabled
