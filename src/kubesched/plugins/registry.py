"""The in-tree plugin registry (upstream ``pkg/scheduler/framework/plugins/registry.go``).

One place that lists every built-in plugin by its upstream name. Entries are
``"module:factory"`` references resolved on first use, so a plugin module is imported only
when a registry is built.
"""

from __future__ import annotations

import importlib

from kubesched.framework.registry import Registry

__all__ = ["IN_TREE", "in_tree_registry"]

IN_TREE: dict[str, str] = {
    "SchedulingGates": "kubesched.plugins.schedulinggates:new",
    "PrioritySort": "kubesched.plugins.queuesort:new",
    "NodeUnschedulable": "kubesched.plugins.nodeunschedulable:new",
    "NodeName": "kubesched.plugins.nodename:new",
    "TaintToleration": "kubesched.plugins.tainttoleration:new",
    "NodeAffinity": "kubesched.plugins.nodeaffinity:new",
    "NodePorts": "kubesched.plugins.nodeports:new",
    "NodeResourcesFit": "kubesched.plugins.noderesources.fit:new",
    "VolumeRestrictions": "kubesched.plugins.volumerestrictions:new",
    "NodeVolumeLimits": "kubesched.plugins.nodevolumelimits:new",
    "VolumeBinding": "kubesched.plugins.volumebinding:new",
    "VolumeZone": "kubesched.plugins.volumezone:new",
    "PodTopologySpread": "kubesched.plugins.podtopologyspread:new",
    "InterPodAffinity": "kubesched.plugins.interpodaffinity:new",
    "DynamicResources": "kubesched.plugins.dynamicresources:new",
    "DefaultPreemption": "kubesched.plugins.defaultpreemption:new",
    "NodeResourcesBalancedAllocation": "kubesched.plugins.noderesources.balanced_allocation:new",
    "ImageLocality": "kubesched.plugins.imagelocality:new",
    "DefaultBinder": "kubesched.plugins.defaultbinder:new",
    "NodeDeclaredFeatures": "kubesched.plugins.nodedeclaredfeatures:new",
    "DeferredPodScheduling": "kubesched.plugins.deferredpodscheduling:new",
    "GangScheduling": "kubesched.plugins.gangscheduling:new",
    "TopologyPlacementGenerator": "kubesched.plugins.topologyaware:new",
    "PodGroupPodsCount": "kubesched.plugins.podgrouppodscount:new",
}
"""Upstream plugin name → ``module:factory``."""


def _resolve(ref: str):
    mod, _, attr = ref.partition(":")
    return getattr(importlib.import_module(mod), attr)


def in_tree_registry() -> Registry:
    """A fresh :class:`Registry` with every in-tree plugin (upstream ``NewInTreeRegistry``)."""
    reg = Registry()
    for name, ref in IN_TREE.items():
        reg.register(name, _resolve(ref))
    return reg
