"""``--emulated-version``, ``--min-compatibility-version`` and ``--feature-gates`` for every command
that schedules or serves (run, simulate, up, apiserver, replay, bench, capacity, compare).

Upstream: ``cmd/kube-scheduler/app/options/options.go`` registers ``compatibility.DefaultKubeComponent``
with ``utilfeature.DefaultMutableFeatureGate``; the flags are component-base's
(``k8s.io/component-base/compatibility``, ``featuregate.AddFlag``). kubesched builds one
:class:`~kubesched.features.FeatureGate` from them and hands it to the configuration defaults and the
engine (never a global).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.features import BINARY_VERSION, MIN_EMULATED_VERSION, FeatureGate

__all__ = ["build_features", "feature_gate_options"]

F = TypeVar("F", bound=Callable[..., Any])

_V = f"{BINARY_VERSION[0]}.{BINARY_VERSION[1]}"
_MIN = f"{MIN_EMULATED_VERSION[0]}.{MIN_EMULATED_VERSION[1]}"


def feature_gate_options(fn: F) -> F:
    """Add the three flags; the command receives ``emulated_version``, ``feature_gates`` (a tuple,
    the flag is repeatable) and ``min_compatibility_version`` and calls :func:`build_features`."""
    fn = click.option(
        "--min-compatibility-version", "min_compatibility_version", default=None, metavar="MAJOR.MINOR",
        help="The oldest version the control plane must stay compatible with (default: emulated version − 1, "
             f"at least {_MIN}); only gates whose spec names one care.")(fn)
    fn = click.option(
        "--feature-gates", "feature_gates", multiple=True, metavar="KEY=BOOL,...",
        help="Feature gates as kube-scheduler takes them (e.g. GenericWorkload=true,PodLevelResources=false); "
             "repeatable. Unknown, locked or PreAlpha gates are errors, as upstream.")(fn)
    fn = click.option(
        "--emulated-version", "emulated_version", default=None, metavar="MAJOR.MINOR",
        help=f"Decide as the kube-scheduler of this release: {_MIN}–{_V} (default {_V}). Chooses the "
             "feature-gate defaults, the default plugins and args, the API and the release's behaviour.")(fn)
    return fn


def build_features(emulated_version: str | None = None, feature_gates: tuple[str, ...] | list[str] | None = None,
                   min_compatibility_version: str | None = None) -> FeatureGate:
    """The :class:`FeatureGate` of the flags. Raises :class:`~kubesched.errors.ConfigError` with
    upstream's message (the commands print it as one ``error:`` line, exit 2)."""
    return FeatureGate.from_flags(emulated_version, list(feature_gates or ()), min_compatibility_version)
