"""Feature gates and the emulated version (kubesched.features), from upstream's behaviour:
k8s.io/component-base@v0.37.2 featuregate/feature_gate.go (Set, unsafeSetFromMap,
featureSpecAtEmulationAndMinCompatVersion, dependencies) and its feature_gate_test.go, and
compatibility's version range (binary 1.37 emulates 1.34-1.37)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.errors import ConfigError
from kubesched.features import (
    BINARY_VERSION,
    MIN_EMULATED_VERSION,
    FeatureGate,
    FeatureSpec,
    _spec_at,
    known_features,
    parse_version,
)


def test_the_table_is_the_binarys_own():
    known = known_features()
    # gates of kube (pkg/features), component-base logs, client-go and apiserver are all registered
    for name in ("GenericWorkload", "NodeDeclaredFeatures", "LoggingBetaOptions", "WatchListClient", "AllAlpha"):
        assert name in known
    # removed from the 1.37 binary (ref: upstream-v137.md §1.2): unknown even when emulating 1.34
    for name in ("SchedulerQueueingHints", "SidecarContainers", "GangScheduling", "WorkloadAwarePreemption"):
        assert name not in known
    specs, deps = known["TopologyAwareWorkloadScheduling"]
    assert "GenericWorkload" in deps
    assert [s.version for s in specs] == sorted(s.version for s in specs)


@pytest.mark.parametrize("gate, by_version", [
    # kube_features.go versioned specs, as upstream-v137.md §1.3 tabulates them
    ("GenericWorkload", {(1, 34): False, (1, 35): False, (1, 37): False}),
    ("NodeDeclaredFeatures", {(1, 34): False, (1, 35): False, (1, 36): True, (1, 37): True}),
    ("StorageCapacityScoring", {(1, 34): False, (1, 36): False, (1, 37): True}),
    ("NominatedNodeNameForExpectation", {(1, 34): False, (1, 35): True, (1, 37): True}),
    ("DRAExtendedResource", {(1, 34): False, (1, 35): False, (1, 36): True, (1, 37): True}),
    ("OpportunisticBatching", {(1, 34): False, (1, 35): True, (1, 37): True}),
    ("PodLevelResources", {(1, 34): True, (1, 37): True}),
])
def test_defaults_per_emulated_version(gate, by_version):
    for version, want in by_version.items():
        assert FeatureGate(emulated_version=version).enabled(gate) is want, (gate, version)


def test_pre_alpha_gates_are_off_and_cannot_be_set():
    fg = FeatureGate(emulated_version=(1, 34))
    assert fg.spec("GenericWorkload").pre_release == "PRE-ALPHA"
    assert not fg.enabled("GenericWorkload")
    with pytest.raises(ConfigError) as e:
        FeatureGate.from_flags("1.34", "GenericWorkload=true")
    assert e.value.message == ("cannot set feature gate GenericWorkload to true, feature is PreAlpha at emulated "
                               "version 1.34, min compatibility version 1.34")


@pytest.mark.parametrize("flag, message", [
    ("Bogus=true", "unrecognized feature gate: Bogus"),
    ("NodeDeclaredFeatures=false", "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
    ("GenericWorkload", "missing bool value for GenericWorkload"),
    ("GenericWorkload=yes", 'invalid value of GenericWorkload=yes, err: strconv.ParseBool: parsing "yes": '
                            "invalid syntax"),
    ("TopologyAwareWorkloadScheduling=true",
     "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
])
def test_flag_errors_carry_upstreams_text(flag, message):
    with pytest.raises(ConfigError) as e:
        FeatureGate.from_flags(None, flag)
    assert e.value.message == message
    assert e.value.path == "--feature-gates"


def test_setting_gates():
    fg = FeatureGate.from_flags("1.37", ["GenericWorkload=true", "TopologyAwareWorkloadScheduling=True"])
    assert fg.enabled("GenericWorkload") and fg.enabled("TopologyAwareWorkloadScheduling")
    assert fg.explicitly_set() == {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}
    # a later flag wins, keys are trimmed, empty items skipped, as featureGate.Set
    fg = FeatureGate.from_flags(None, ["PodLevelResources=false", " PodLevelResources = true ,,"])
    assert fg.enabled("PodLevelResources")


def test_all_beta_turns_on_unlocked_beta_gates_only():
    fg = FeatureGate.from_flags("1.37", "AllBeta=false")
    assert not fg.enabled("OpportunisticBatching")  # beta, on by default
    assert fg.enabled("NodeDeclaredFeatures")  # GA, locked


@pytest.mark.parametrize("text, message", [
    ("1.33", "emulation version 1.33 is not between [1.34, 1.37.0]"),
    ("1.38", "emulation version 1.38 is not between [1.34, 1.37.0]"),
])
def test_emulated_version_range(text, message):
    with pytest.raises(ConfigError) as e:
        FeatureGate.from_flags(text)
    assert e.value.message == message


def test_version_parsing():
    assert parse_version("1.35") == (1, 35)
    assert parse_version("kube=1.36") == (1, 36)
    assert parse_version("v1.34") == (1, 34)
    for bad in ("1", "1.35.2", "one.two"):
        with pytest.raises(ConfigError):
            parse_version(bad)
    assert MIN_EMULATED_VERSION == (1, 34) and BINARY_VERSION == (1, 37)


def test_min_compatibility_version_selects_the_spec():
    """DRAFractionalCapacityRange has two 1.37 specs; the second needs min compatibility ≥ 1.37."""
    assert not FeatureGate().enabled("DRAFractionalCapacityRange")  # default min-compat = 1.36
    assert FeatureGate.from_flags("1.37", None, "1.37").enabled("DRAFractionalCapacityRange")
    with pytest.raises(ConfigError):
        FeatureGate.from_flags("1.35", None, "1.36")  # min compatibility above the emulated version


versions = st.tuples(st.just(1), st.integers(20, 40))


@given(st.lists(st.tuples(versions, st.booleans()), min_size=1, max_size=5, unique_by=lambda x: x[0]),
       versions, versions)
def test_spec_resolution_is_the_last_spec_not_after_the_emulated_version(raw, emulated, min_compat):
    """featureSpecAtEmulationAndMinCompatVersion, without min-compat specs: a plain scan."""
    specs = tuple(FeatureSpec(v, d, "BETA") for v, d in sorted(raw))
    got = _spec_at(specs, emulated, min_compat)
    earlier = [s for s in specs if s.version <= emulated]
    assert got == (earlier[-1] if earlier else FeatureSpec((0, 0), False, "PRE-ALPHA"))


def test_the_generator_output_is_what_is_shipped():
    """The shipped table parses and names each gate once (the generator sorts by name)."""
    from importlib import resources

    raw = json.loads(resources.files("kubesched.data").joinpath("feature_gates.json").read_text())
    names = [g["name"] for g in raw]
    assert names == sorted(set(names))


def test_cli_flags(tmp_path):
    """Every scheduling command takes --emulated-version / --feature-gates; a bad value is one line, exit 2."""
    for cmd in (["simulate", "-f", "examples/quickstart"], ["replay", "alibaba-openb", "--nodes", __file__,
                                                           "--pods", __file__], ["bench", "--list"]):
        out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", *cmd, "--emulated-version", "1.33"],
                             capture_output=True, text=True, check=False)
        assert out.returncode == 2, (cmd, out.stderr)
        assert out.stderr.strip().splitlines() == [
            "error: --emulated-version: emulation version 1.33 is not between [1.34, 1.37.0]"], cmd
    for cmd in (["run"], ["up"], ["capacity", "-f", "x", "--pod", "y"], ["compare", "-f", "x", "--config", "a", "--config", "b"]):
        out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", *cmd, "--feature-gates", "Nope=true"],
                             capture_output=True, text=True, check=False)
        assert out.returncode == 2, (cmd, out.stderr)
        assert "unrecognized feature gate: Nope" in out.stderr, (cmd, out.stderr)


# -- the gate registry at another emulation version than the behaviour (scheduler_perf's harness) ----------
# k8s.io/component-base@v0.37.2 featuregate/testing/feature_gate.go: SetFeatureGateEmulationVersionDuringTest(ver)
# = SetEmulationVersionAndMinCompatibilityVersion(ver, ver-1): every gate not set takes its spec at ver.


def test_gate_emulation_version_gives_every_gate_its_spec_there():
    fg = FeatureGate().with_gate_emulation_version((1, 36))
    at136 = FeatureGate(emulated_version=(1, 36))
    assert (fg.gate_emulation_version, fg.min_compatibility_version) == ((1, 36), (1, 35))
    for name in known_features():
        assert fg.enabled(name) is at136.enabled(name), name
        assert fg.spec(name) == at136.spec(name), name
    # the behaviour stays the emulated version's
    assert fg.emulated_version == (1, 37) and fg.at_least(1, 37)
    assert fg != FeatureGate() and fg != at136 and "gate_emulation_version='1.36'" in repr(fg)


def test_a_gate_locked_at_137_but_beta_at_136_takes_its_136_spec():
    """DRAExtendedResource: GA and locked to true at 1.37, beta (default true) at 1.36 — settable again;
    StorageCapacityScoring: beta default on at 1.37, alpha off at 1.36."""
    fg = FeatureGate().with_gate_emulation_version((1, 36))
    assert FeatureGate().spec("DRAExtendedResource").lock_to_default
    assert fg.spec("DRAExtendedResource") == FeatureSpec((1, 36), True, "BETA")
    assert not fg.with_overrides(DRAExtendedResource=False).enabled("DRAExtendedResource")
    with pytest.raises(ConfigError, match="DRAExtendedResource to false, feature is locked to true"):
        FeatureGate().with_overrides(DRAExtendedResource=False)
    assert FeatureGate().enabled("StorageCapacityScoring") and not fg.enabled("StorageCapacityScoring")
    # a gate new in 1.37 is PreAlpha in the registry at 1.36: off, and the error names the registry's version
    assert fg.spec("SchedulerPreQueueingHints").pre_release == "PRE-ALPHA"
    with pytest.raises(ConfigError) as e:
        fg.with_overrides(SchedulerPreQueueingHints=True)
    assert e.value.message.endswith("PreAlpha at emulated version 1.36, min compatibility version 1.35")


def test_gates_set_before_are_validated_again_at_the_new_gate_version():
    fg = FeatureGate.from_flags(None, "StorageCapacityScoring=false").with_gate_emulation_version((1, 36))
    assert fg.explicitly_set() == {"StorageCapacityScoring": False}
    with pytest.raises(ConfigError, match="SchedulerPreQueueingHints to true, feature is PreAlpha"):
        FeatureGate.from_flags(None, "SchedulerPreQueueingHints=true").with_gate_emulation_version((1, 36))


def test_test_overrides_disable_the_dependents_of_a_disabled_gate():
    """SetFeatureGatesDuringTest: default-on gates that depend on a gate set to false (and are not set
    themselves) are turned off — upstream's scheduler_perf log of NodeDeclaredFeaturesDisabled
    (v1.37.2, 20261128T140409Z): "Updated featureGates={ExtendWebSocketsToKubelet:false,
    InPlacePodLevelResourcesVerticalScaling:false,InPlacePodVerticalScalingInitContainers:false,
    NodeDeclaredFeatures:false,RestartAllContainersOnContainerExits:false}"."""
    at136 = FeatureGate().with_gate_emulation_version((1, 36))
    with pytest.raises(ConfigError, match="InPlacePodVerticalScalingInitContainers is enabled, but depends"):
        at136.with_overrides(NodeDeclaredFeatures=False)  # --feature-gates semantics: no automatic disabling
    fg = at136.with_test_overrides({"NodeDeclaredFeatures": False})
    assert fg.explicitly_set() == dict.fromkeys(
        ["ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
         "InPlacePodVerticalScalingInitContainers", "NodeDeclaredFeatures", "RestartAllContainersOnContainerExits"],
        False)
    # a dependent set explicitly is left alone (and then fails validation, as upstream's setFromMap)
    with pytest.raises(ConfigError, match="RestartAllContainersOnContainerExits is enabled"):
        at136.with_test_overrides({"NodeDeclaredFeatures": False, "RestartAllContainersOnContainerExits": True})
    # disabling a gate nothing on depends on is the same as --feature-gates
    assert FeatureGate().with_test_overrides({"SchedulerAsyncAPICalls": False}) == FeatureGate().with_overrides(
        SchedulerAsyncAPICalls=False)
    # at 1.37 the lock still refuses NodeDeclaredFeatures=false
    with pytest.raises(ConfigError, match="locked to true"):
        FeatureGate().with_test_overrides({"NodeDeclaredFeatures": False})


def test_the_cli_keeps_refusing_the_locked_gate():
    """Only bench's workloads get the harness rule; the flag is kube-scheduler's."""
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "simulate", "-f", "examples/quickstart",
                          "--feature-gates", "NodeDeclaredFeatures=false"], capture_output=True, text=True, check=False)
    assert out.returncode == 2
    assert "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true" in out.stderr
