"""The box's Deployment/ReplicaSet controllers against a real kube-controller-manager v1.37.2 for
one kubectl sequence (``tools/upstream/kcm_compare.py``): create (2 replicas) → ``kubectl scale``
to 3 → ``kubectl set image`` → ``kubectl rollout undo`` → ``kubectl delete`` (background
cascade). After each step both sides must hold the same Deployment status, conditions and
revision, the same ReplicaSets per revision (replicas, ready, annotations) and the same live
pods per revision, names and times normalised away.

The upstream half needs kube-apiserver, etcd and kube-controller-manager built from
k8s.io/kubernetes@v1.37.2 (``make upstream``, then ``go build ./cmd/kube-controller-manager``
into the same bin directory; see README); it is skipped when they are absent. The box half
always runs and checks the sequence's own facts (what upstream's controllers produce for it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubesched.testing.upstream import UpstreamNotBuilt, find_binaries

TOOL = Path(__file__).resolve().parents[2] / "tools" / "upstream" / "kcm_compare.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_kcm_compare", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def box_steps(tool: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, Any]]]:
    steps: list[tuple[str, dict[str, Any]]] = tool.box_steps(tmp_path_factory.mktemp("kcm-box"))
    return steps


def test_box_runs_the_whole_sequence(box_steps: list[tuple[str, dict[str, Any]]]) -> None:
    names = [name for name, _ in box_steps]
    assert names == ["create (2 replicas)", "scale to 3", "set image", "rollout undo", "delete (background)"]
    # every step snapshot differs from the one before: scale, the new template and the undo each
    # change what the controllers hold, and the background cascade removes everything
    snaps = [snap for _, snap in box_steps]
    assert all(a != b for a, b in zip(snaps, snaps[1:], strict=False))


def test_real_kube_controller_manager_gives_the_same_steps(
        tool: ModuleType, box_steps: list[tuple[str, dict[str, Any]]], tmp_path: Path) -> None:
    try:
        binaries = find_binaries()
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    kcm = binaries.bin_dir / "kube-controller-manager"
    if not kcm.exists():
        pytest.skip(f"no kube-controller-manager beside {binaries.kube_apiserver}")
    upstream = tool.upstream_steps(str(kcm), tmp_path)
    assert [name for name, _ in upstream] == [name for name, _ in box_steps]
    for (name, want), (_, got) in zip(upstream, box_steps, strict=True):
        assert got == want, name
