"""VolumeBinding and DynamicResources promise ``scores_zero`` (Score 0 on every node, left 0 by
NormalizeScore) for pods without claims; the framework then leaves them out of unrecorded
cycles. Scheduling the examples (PVCs, DRA claims, pods without either) with recording on (every
Score plugin runs) and off must place every pod alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.features import FeatureGate
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("example", ["quickstart", "dra"])
@pytest.mark.parametrize("version", [(1, 35), (1, 37)])
def test_recorded_and_plain_runs_place_alike(example: str, version: tuple[int, int]) -> None:
    fg = FeatureGate(emulated_version=version)
    plain = simulate(load_manifests([str(EXAMPLES / example)]), seed=1, features=fg)
    recorded = simulate(load_manifests([str(EXAMPLES / example)]), seed=1, features=fg, record=True)
    assert [(o.key, o.node, o.message) for o in plain.outcomes] == \
        [(o.key, o.node, o.message) for o in recorded.outcomes]
