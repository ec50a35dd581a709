"""scheduler_perf's ``nodedeclaredfeatures`` topic (new in v1.37) for ``kubesched bench``.

Upstream (v1.37.2 ``test/integration/scheduler_perf/nodedeclaredfeatures/``): the test case
``NodeDeclaredFeaturesEnabled`` replaces the registry of node features
(``ndffeatures.AllFeatures``) with ``numNodeDeclaredFeatures`` mock features ``Feature1`` …
``FeatureN``, each of which a pod requires when it has pod-level resources
(``mockFeature.InferForScheduling``: ``Spec.Resources != nil``); every node created from
``templates/node-base.yaml`` then gets all of them, sorted, in ``status.declaredFeatures``
(``updateNodesWithDeclaredFeatures``); init and measured pods come from
``templates/pod-with-pod-level-resources.yaml``. So NodeDeclaredFeatures' PreFilter infers N
features for every pod and its Filter checks them on every node.

Here the same: the workloads run through :func:`kubesched.sim.bench_runner.execute` with the
NodeDeclaredFeatures plugin built over a :class:`~kubesched.plugins.nodedeclaredfeatures.FeatureFramework`
of the mock features (the registry override), the nodes created with the declared list, and the
gate on as the workloads set it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kubesched.features import FeatureGate
from kubesched.plugins.nodedeclaredfeatures import Feature, FeatureFramework, NodeDeclaredFeatures
from kubesched.sim.bench_runner import BenchResult, CreateNodes, CreatePods, Workload, execute, register_templates

__all__ = ["NDF_TEMPLATES", "NDF_WORKLOADS", "mock_features"]

NDF_TEMPLATES: dict[str, str] = {
    "nodedeclaredfeatures/templates/node-base.yaml": """apiVersion: v1
kind: Node
metadata:
  generateName: node-
spec: {}
status:
  capacity:
    cpu: "128"
    memory: "16Gi"
    pods: "110"
  allocatable:
    cpu: "128"
    memory: "16Gi"
    pods: "110"
  phase: Running
  # DeclaredFeatures will be added dynamically by the test based on numNodeDeclaredFeatures param in the config.

""",
    "nodedeclaredfeatures/templates/pod-with-pod-level-resources.yaml": """apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  resources:
    requests:
      cpu: "100m"
      memory: "200Mi"
  containers:
  - name: container-a
    image: registry.k8s.io/pause:3.10.1
""",
}
"""Upstream's templates of the topic, verbatim (keys: paths under ``scheduler_perf/``)."""

register_templates(NDF_TEMPLATES)

_NODE = "nodedeclaredfeatures/templates/node-base.yaml"
_POD = "nodedeclaredfeatures/templates/pod-with-pod-level-resources.yaml"
CASE = "NodeDeclaredFeaturesEnabled"


def _uses_pod_level_resources(spec: Any) -> bool:
    """``mockFeature.InferForScheduling``: ``podInfo.Spec != nil && podInfo.Spec.Resources != nil``."""
    return spec.resources is not None


def mock_features(n: int) -> list[Feature]:
    """``setupFeatures(n)``: ``Feature1`` … ``FeatureN``, no MaxVersion."""
    return [Feature(f"Feature{i}", _uses_pod_level_resources) for i in range(1, n + 1)]


def _runner(n_features: int) -> Any:
    def run(workload: Workload, *, registry: dict[str, Any] | None = None, features: FeatureGate | None = None,
            **kw: Any) -> BenchResult:
        if registry is None:
            from kubesched.plugins.registry import in_tree_registry

            registry = dict(in_tree_registry())
        fw = FeatureFramework(mock_features(n_features))

        def factory(args: Any, handle: Any) -> NodeDeclaredFeatures:
            from kubesched.plugins.helper.gates import features_of

            return NodeDeclaredFeatures(features_of(handle), framework=fw)

        registry = {**registry, "NodeDeclaredFeatures": factory}
        gates = (features or FeatureGate()).with_overrides(NodeDeclaredFeatures=True)  # the workloads' featureGates
        return execute(dataclasses.replace(workload, runner=None), registry=registry, features=gates, **kw)

    return run


def _workload(name: str, nodes: int, init: int, measure: int, n_features: int, threshold: float | None,
              labels: tuple[str, ...]) -> Workload:
    declared = tuple(sorted(f"Feature{i}" for i in range(1, n_features + 1)))
    ops = (CreateNodes(nodes, _NODE, declared_features=declared), CreatePods(init, _POD, "init"),
           CreatePods(measure, _POD, "test", collect_metrics=True))
    return Workload(CASE, name, ops, threshold, None, None, labels, runner=_runner(n_features))


NDF_WORKLOADS: dict[str, Workload] = {w.key: w for w in (
    _workload("5Nodes5DeclaredFeatures", 5, 0, 10, 5, None, ("integration-test", "short")),
    _workload("5000Nodes20DeclaredFeatures", 5000, 5000, 50000, 20, 890, ("performance",)),
    _workload("5000Nodes40DeclaredFeatures", 5000, 5000, 50000, 40, 890, ("performance",)),
    _workload("5000Nodes100DeclaredFeatures", 5000, 5000, 50000, 100, 890, ("performance",)),
)}
"""``nodedeclaredfeatures/performance-config.yaml``: every workload, upstream's params and thresholds."""
