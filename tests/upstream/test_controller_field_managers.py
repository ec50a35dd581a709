"""Controllers write as their own field managers: the managedFields of a Deployment → ReplicaSet →
pod chain (``tools/upstream/managers_compare.py``) on the box and on a real control plane
(kube-apiserver, etcd, kube-controller-manager and kube-scheduler v1.37.2; skipped when the
binaries are absent).

The expected entries are what kube-controller-manager v1.37.2 recorded (observed with
``managers_compare.py``): the Deployment controller's ``UpdateStatus`` (status, and the
``deployment.kubernetes.io/revision`` annotation it sets in ``getNewReplicaSet``), the ReplicaSet it
creates (``Update``, the fields it sent plus the decoding defaults) and the ReplicaSet's status,
the pods the ReplicaSet controller creates; the kubelet's ``pods/status`` writes as ``kubelet``;
the scheduler's successful binding records no entry (``BindingREST`` writes around the field
manager).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubesched.testing.upstream import UpstreamNotBuilt, find_binaries

TOOL = Path(__file__).resolve().parents[2] / "tools" / "upstream" / "managers_compare.py"
KCM = "kube-controller-manager"
_COND = {".": {}, "f:lastTransitionTime": {}, "f:lastUpdateTime": {}, "f:message": {}, "f:reason": {},
         "f:status": {}, "f:type": {}}
_CONTAINERS = {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                                      "f:resources": {}, "f:terminationMessagePath": {},
                                      "f:terminationMessagePolicy": {}}}
_POD_SPEC = {"f:containers": _CONTAINERS, "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {},
             "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}
_LABELS = {".": {}, "f:app": {}, "f:pod-template-hash": {}}
_OWNER = {".": {}, "k:{\"uid\":\"<uid>\"}": {}}
#: kube-controller-manager's entries, per object of the chain
EXPECTED: dict[str, list[tuple[str, str, str, Any]]] = {
    "Deployment": [(KCM, "Update", "status", {
        "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}},
        "f:status": {"f:availableReplicas": {},
                     "f:conditions": {".": {}, "k:{\"type\":\"Available\"}": _COND,
                                      "k:{\"type\":\"Progressing\"}": _COND},
                     "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:terminatingReplicas": {},
                     "f:updatedReplicas": {}}})],
    "ReplicaSet": [
        (KCM, "Update", "", {
            "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/desired-replicas": {},
                                             "f:deployment.kubernetes.io/max-replicas": {},
                                             "f:deployment.kubernetes.io/revision": {}},
                           "f:labels": _LABELS, "f:ownerReferences": _OWNER},
            "f:spec": {"f:replicas": {}, "f:selector": {},
                       "f:template": {"f:metadata": {"f:labels": _LABELS}, "f:spec": _POD_SPEC}}}),
        (KCM, "Update", "status", {"f:status": {
            "f:availableReplicas": {}, "f:fullyLabeledReplicas": {}, "f:observedGeneration": {},
            "f:readyReplicas": {}, "f:replicas": {}, "f:terminatingReplicas": {}}})],
    "Pod": [(KCM, "Update", "", {
        "f:metadata": {"f:generateName": {}, "f:labels": _LABELS, "f:ownerReferences": _OWNER},
        "f:spec": {**_POD_SPEC, "f:enableServiceLinks": {}}})],
}
#: every manager per object: (manager, operation, subresource)
MANAGERS = {"Deployment": [(KCM, "Update", "status"), ("kubectl-create", "Update", "")],
            "ReplicaSet": [(KCM, "Update", ""), (KCM, "Update", "status")],
            "Pod": [(KCM, "Update", ""), ("kubelet", "Update", "status")]}


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kubesched_managers_compare", TOOL)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _check(chain: dict[str, list[Any]]) -> None:
    for kind, want in EXPECTED.items():
        got = chain[kind]
        assert sorted((m, op, sub) for m, op, sub, _ in got) == MANAGERS[kind], (kind, got)
        assert [tuple(e) for e in got if e[0] == KCM] == want, kind


def test_box_controllers_and_kubelet_write_as_their_managers(tool: ModuleType, tmp_path: Path) -> None:
    chain = tool.box_chain(tmp_path)
    _check(chain)
    # the simulated kubelet's node status, a ``kubelet`` status entry beside the creator's
    assert ("kubelet", "Update", "status") in {(m, op, sub) for m, op, sub, _ in chain["Node"]}


def test_real_control_plane_records_the_same_managers(tool: ModuleType, tmp_path: Path) -> None:
    try:
        binaries = find_binaries()
    except UpstreamNotBuilt as e:
        pytest.skip(str(e))
    kcm = binaries.bin_dir / "kube-controller-manager"
    if not kcm.exists():
        pytest.skip(f"no kube-controller-manager beside {binaries.kube_apiserver}")
    _check(tool.upstream_chain(str(kcm), tmp_path))
