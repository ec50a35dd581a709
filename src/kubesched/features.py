"""Feature gates and the emulated version, as kube-scheduler has them.

Follows ``k8s.io/component-base/featuregate/feature_gate.go`` (v0.37.2) and
``k8s.io/component-base/compatibility`` / ``k8s.io/apiserver/pkg/util/compatibility``: a binary of
version 1.37 can emulate 1.34 … 1.37 (``--emulated-version``); each gate has *versioned specs*
(default, stage, lock) and the spec in force is the last one whose version is ≤ the emulated
version (and whose ``minCompatibilityVersion``, if any, is ≤ ``--min-compatibility-version``).
A gate with no such spec is *PreAlpha*: off, and it cannot be set.

The table (``kubesched/data/feature_gates.json``) is generated from the upstream kube-scheduler
binary's own registrations by ``tools/upstream/gen_feature_gates.sh`` — never typed by hand.

As upstream, the emulated version changes only which spec of each gate applies; code paths are
the 1.37 ones, and everything version-dependent in kubesched is expressed through a gate, or
(for the few differences upstream made without one, e.g. NodeResourcesBalancedAllocation's 1.36
formula) through :meth:`FeatureGate.at_least`.

The gate registry's own emulation version (upstream ``featureGate.EmulationVersion()``) is the
emulated version, except in one place: upstream's scheduler_perf harness runs v1.37.2's code with
the registry alone at 1.36 when a workload disables the locked NodeDeclaredFeatures
(``featuregatetesting.SetFeatureGateEmulationVersionDuringTest``);
:meth:`FeatureGate.with_gate_emulation_version` gives that gate set, whose
:meth:`~FeatureGate.at_least` still answers for the emulated (behaviour) version.

    >>> fg = FeatureGate.from_flags(emulated_version="1.34", feature_gates="PodLevelResources=false")
    >>> fg.enabled("PodLevelResources"), fg.enabled("NodeDeclaredFeatures")
    (False, False)
    >>> FeatureGate().enabled("NodeDeclaredFeatures")
    True
"""

from __future__ import annotations

import functools
import json
import pkgutil
from dataclasses import dataclass
from typing import Any

from kubesched.errors import ConfigError

__all__ = [
    "BINARY_VERSION",
    "DEFAULT_EMULATED_VERSION",
    "MIN_EMULATED_VERSION",
    "FeatureGate",
    "FeatureSpec",
    "default_feature_gate",
    "known_features",
    "parse_version",
]

#: The upstream release kubesched's code paths follow (``kube-scheduler --version``).
BINARY_VERSION = (1, 37)
#: Default of ``--emulated-version``: the binary version.
DEFAULT_EMULATED_VERSION = BINARY_VERSION
#: Floor of ``--emulated-version`` and ``--min-compatibility-version``: binary − 3 minors, never
#: below 1.31 (``compatibility.DefaultKubeEffectiveVersionForTest`` / ``NewEffectiveVersion``).
MIN_EMULATED_VERSION = (1, max(31, BINARY_VERSION[1] - 3))

ALPHA, BETA, GA, DEPRECATED, PRE_ALPHA = "ALPHA", "BETA", "", "DEPRECATED", "PRE-ALPHA"
_ALL_ALPHA, _ALL_BETA = "AllAlpha", "AllBeta"

Version = tuple[int, int]


@dataclass(frozen=True)
class FeatureSpec:
    """One versioned spec of a gate (``featuregate.FeatureSpec``)."""

    version: Version
    default: bool
    pre_release: str  # "ALPHA", "BETA", "" (GA), "DEPRECATED"
    lock_to_default: bool = False
    min_compatibility_version: Version | None = None


_PRE_ALPHA = FeatureSpec((0, 0), False, PRE_ALPHA)


def parse_version(text: str, what: str = "version") -> Version:
    """``"1.35"`` (or ``"v1.35"``, ``"kube=1.35"``) → ``(1, 35)``.

    Only major.minor is accepted, as ``--emulated-version`` takes it. Raises :class:`ConfigError`.
    """
    s = text.strip()
    if "=" in s:
        component, _, s = s.partition("=")
        if component.strip() not in ("kube", ""):
            raise ConfigError(f"component not registered: {component.strip()}", f"--{what}")
    s = s.strip().removeprefix("v")
    parts = s.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ConfigError(f"illegal version string {text.strip()!r}: expected major.minor, e.g. 1.37", f"--{what}")
    return int(parts[0]), int(parts[1])


def _fmt(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


def _parse_spec_version(s: str) -> Version:
    major, minor = s.split(".")[:2]
    return int(major), int(minor)


@functools.cache
def known_features() -> dict[str, tuple[tuple[FeatureSpec, ...], tuple[str, ...]]]:
    """Every gate the kube-scheduler binary registers: name → (specs in version order, dependencies)."""
    # pkgutil, not importlib.resources: the latter imports tempfile, shutil, bz2, lzma (~10 ms of every start)
    data = pkgutil.get_data("kubesched.data", "feature_gates.json")
    assert data is not None, "kubesched.data/feature_gates.json is part of the package"
    raw = json.loads(data)
    out: dict[str, tuple[tuple[FeatureSpec, ...], tuple[str, ...]]] = {}
    for g in raw:
        specs = []
        for s in g["specs"]:
            mcv = s.get("minCompatibilityVersion")
            specs.append(FeatureSpec(_parse_spec_version(s["version"]) if s.get("version") else (0, 0),
                                     bool(s["default"]), s.get("preRelease", ""), bool(s.get("lockToDefault")),
                                     _parse_spec_version(mcv) if mcv else None))
        out[g["name"]] = (tuple(specs), tuple(g.get("dependencies") or ()))
    return out


def _spec_at(specs: tuple[FeatureSpec, ...], emulated: Version, min_compat: Version) -> FeatureSpec:
    """``featureSpecAtEmulationAndMinCompatVersion``."""
    for s in reversed(specs):
        if s.version > emulated:
            continue
        if s.min_compatibility_version is not None and min_compat < s.min_compatibility_version:
            continue
        return s
    return _PRE_ALPHA


def _parse_bool(text: str) -> bool | None:
    """Go ``strconv.ParseBool``."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


class FeatureGate:
    """The feature gates of one kube-scheduler at one emulated version (immutable once built).

    ``enabled(name)`` is upstream ``featureGate.Enabled``; an unknown name raises ``KeyError``
    (upstream panics: a typo in kubesched's own code, never user input). Build one from flags with
    :meth:`from_flags`; every user error is a :class:`ConfigError` carrying upstream's text.
    """

    __slots__ = ("emulated_version", "gate_emulation_version", "min_compatibility_version", "_overrides", "_cache")

    def __init__(self, emulated_version: Version = DEFAULT_EMULATED_VERSION,
                 overrides: dict[str, bool] | None = None,
                 min_compatibility_version: Version | None = None,
                 gate_emulation_version: Version | None = None) -> None:
        self.emulated_version = emulated_version
        """The release whose behaviour is reproduced (:meth:`at_least`; ``--emulated-version``)."""
        self.gate_emulation_version = emulated_version if gate_emulation_version is None else gate_emulation_version
        """The gate registry's emulation version (upstream ``featureGate.EmulationVersion()``): which
        spec of each gate applies. Equal to ``emulated_version`` except for
        :meth:`with_gate_emulation_version`."""
        gv = self.gate_emulation_version
        self.min_compatibility_version = (
            min_compatibility_version if min_compatibility_version is not None
            else max(MIN_EMULATED_VERSION, (gv[0], gv[1] - 1)))
        self._overrides = dict(overrides or {})
        self._cache: dict[str, bool] = {}

    # -- construction from flags ------------------------------------------------------------

    @classmethod
    def from_flags(cls, emulated_version: str | None = None, feature_gates: str | list[str] | None = None,
                   min_compatibility_version: str | None = None) -> FeatureGate:
        """Parse ``--emulated-version``, ``--min-compatibility-version`` and ``--feature-gates``
        (a ``key=bool,…`` string, or a list of them for a repeated flag) as kube-scheduler does.

        Raises :class:`ConfigError` with upstream's message (``unrecognized feature gate: X``,
        ``cannot set feature gate X to true, feature is locked to false``, ``emulation version
        1.33 is not between [1.34, 1.37.0]``, dependency errors, …).
        """
        emu = DEFAULT_EMULATED_VERSION if not emulated_version else parse_version(emulated_version,
                                                                                  "emulated-version")
        if not (MIN_EMULATED_VERSION <= emu <= BINARY_VERSION):
            raise ConfigError(f"emulation version {_fmt(emu)} is not between "
                              f"[{_fmt(MIN_EMULATED_VERSION)}, {_fmt(BINARY_VERSION)}.0]", "--emulated-version")
        mcv: Version | None = None
        if min_compatibility_version:
            mcv = parse_version(min_compatibility_version, "min-compatibility-version")
            if not (MIN_EMULATED_VERSION <= mcv <= emu):
                raise ConfigError(f"minCompatibilityVersion version {_fmt(mcv)} is not between "
                                  f"[{_fmt(MIN_EMULATED_VERSION)}, {_fmt(emu)}.0]",
                                  "--min-compatibility-version")
        fg = cls(emu, None, mcv)
        values: dict[str, bool] = {}
        flags = [feature_gates] if isinstance(feature_gates, str) else list(feature_gates or [])
        for flag in flags:
            values.update(cls.parse_flag(flag))
        fg._set_from_map(values)
        return fg

    @staticmethod
    def parse_flag(value: str) -> dict[str, bool]:
        """``"A=true,B=false"`` → ``{"A": True, "B": False}`` (``featureGate.Set``); a
        ``kube:`` component prefix on a key is accepted. Raises :class:`ConfigError`."""
        out: dict[str, bool] = {}
        for s in value.split(","):
            if not s:
                continue
            k, sep, v = s.partition("=")
            k = k.strip()
            if k.startswith("kube:"):
                k = k[len("kube:"):]
            if not sep:
                raise ConfigError(f"missing bool value for {k}", "--feature-gates")
            b = _parse_bool(v.strip())
            if b is None:
                raise ConfigError(f'invalid value of {k}={v.strip()}, err: strconv.ParseBool: parsing '
                                  f'"{v.strip()}": invalid syntax', "--feature-gates")
            out[k] = b
        return out

    def _set_from_map(self, m: dict[str, bool]) -> None:
        """``unsafeSetFromMap``: validate and apply; all problems in one :class:`ConfigError`."""
        known = known_features()
        errs: list[str] = []
        for k, v in m.items():
            entry = known.get(k)
            if entry is None:
                raise ConfigError(f"unrecognized feature gate: {k}", "--feature-gates")
            spec = _spec_at(entry[0], self.gate_emulation_version, self.min_compatibility_version)
            if spec.lock_to_default and spec.default != v:
                errs.append(f"cannot set feature gate {k} to {str(v).lower()}, feature is locked to "
                            f"{str(spec.default).lower()}")
                continue
            if k in (_ALL_ALPHA, _ALL_BETA):
                self._overrides[k] = v
                continue
            if spec.pre_release == PRE_ALPHA:
                errs.append(f"cannot set feature gate {k} to {str(v).lower()}, feature is PreAlpha at emulated "
                            f"version {_fmt(self.gate_emulation_version)}, min compatibility version "
                            f"{_fmt(self.min_compatibility_version)}")
                continue
            self._overrides[k] = v
        if not errs:
            for name, (_, deps) in sorted(known.items()):
                if not deps or not self.enabled(name):
                    continue
                off = [d for d in deps if not self.enabled(d)]
                if off:
                    errs.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
        if errs:
            self._overrides.clear()
            self._cache.clear()
            raise ConfigError("; ".join(errs), "--feature-gates")

    # -- queries --------------------------------------------------------------------------

    def spec(self, name: str) -> FeatureSpec:
        """The spec of ``name`` in force at the emulated version (PreAlpha if none)."""
        return _spec_at(known_features()[name][0], self.gate_emulation_version, self.min_compatibility_version)

    def enabled(self, name: str) -> bool:
        """Whether ``name`` is on (upstream ``featureGate.Enabled``). ``KeyError`` if unknown."""
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        spec = self.spec(name)
        if name in self._overrides:
            value = self._overrides[name]
        elif spec.pre_release == PRE_ALPHA:
            value = False
        elif spec.pre_release == ALPHA and not spec.lock_to_default and _ALL_ALPHA in self._overrides:
            value = self._overrides[_ALL_ALPHA]
        elif spec.pre_release == BETA and not spec.lock_to_default and _ALL_BETA in self._overrides:
            value = self._overrides[_ALL_BETA]
        else:
            value = spec.default
        self._cache[name] = value
        return value

    def at_least(self, major: int, minor: int) -> bool:
        """The emulated version is ≥ ``major.minor`` (for the changes upstream made without a gate)."""
        return self.emulated_version >= (major, minor)

    def explicitly_set(self) -> dict[str, bool]:
        """The ``--feature-gates`` values given (a copy)."""
        return dict(self._overrides)

    def with_overrides(self, **gates: bool) -> FeatureGate:
        """A copy with ``gates`` set, validated as ``--feature-gates`` (tests, programmatic use)."""
        fg = FeatureGate(self.emulated_version, self._overrides, self.min_compatibility_version,
                         self.gate_emulation_version)
        fg._set_from_map(gates)
        return fg

    def with_gate_emulation_version(self, version: Version) -> FeatureGate:
        """A copy whose gate registry emulates ``version`` (min compatibility version one minor
        below) while :meth:`at_least` keeps answering for :attr:`emulated_version`.

        Upstream ``featuregatetesting.SetFeatureGateEmulationVersionDuringTest``
        (k8s.io/component-base@v0.37.2 featuregate/testing/feature_gate.go →
        ``SetEmulationVersionAndMinCompatibilityVersion``): every gate not set explicitly takes its
        default at ``version`` (a gate locked at 1.37 but beta at 1.36 is beta again, and can be
        set; a gate new in 1.37 is PreAlpha, off); the gates set so far are validated again at
        ``version`` (:class:`ConfigError` as ``--feature-gates``). Used by ``kubesched bench`` only.
        """
        fg = FeatureGate(self.emulated_version, None, (version[0], version[1] - 1), version)
        fg._set_from_map(self._overrides)
        return fg

    def with_test_overrides(self, gates: dict[str, bool]) -> FeatureGate:
        """A copy with ``gates`` set as a test sets them: upstream
        ``featuregatetesting.SetFeatureGatesDuringTest`` (same file), which also disables every gate
        that is on, not in ``gates``, and depends (transitively, through gates not in ``gates``) on
        a gate ``gates`` turns off; then validated as ``--feature-gates`` (:class:`ConfigError`).
        ``AllAlpha``/``AllBeta`` keep their ``--feature-gates`` meaning (upstream's test helper
        expands them to every alpha/beta gate; not ported).
        """
        known = known_features()

        def disabled_dependency(name: str) -> bool:  # hasDisabledDependency
            if name in gates:
                return not gates[name]
            return any(disabled_dependency(d) for d in known[name][1])

        overrides = dict(gates)
        for name, (_, deps) in known.items():
            if deps and name not in overrides and self.enabled(name) and disabled_dependency(name):
                overrides[name] = False
        return self.with_overrides(**overrides)

    def __repr__(self) -> str:
        sets = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self._overrides.items()))
        gates = ("" if self.gate_emulation_version == self.emulated_version
                 else f", gate_emulation_version={_fmt(self.gate_emulation_version)!r}")
        return (f"FeatureGate(emulated_version={_fmt(self.emulated_version)!r}" + gates
                + (f", {sets}" if sets else "") + ")")

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, FeatureGate) and self.emulated_version == other.emulated_version
                and self.gate_emulation_version == other.gate_emulation_version
                and self.min_compatibility_version == other.min_compatibility_version
                and self._overrides == other._overrides)

    def __hash__(self) -> int:
        return hash((self.emulated_version, self.gate_emulation_version, self.min_compatibility_version,
                     tuple(sorted(self._overrides.items()))))


@functools.cache
def default_feature_gate() -> FeatureGate:
    """The gates of a kube-scheduler v1.37 started without flags."""
    return FeatureGate()
