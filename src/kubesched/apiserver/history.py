"""ControllerRevisions of StatefulSets and DaemonSets: the history ``kubectl rollout history|undo
sts/ds`` reads, as kube-controller-manager keeps it.

Follows (v1.37.2) ``pkg/controller/history/controller_history.go`` (``NewControllerRevision``),
``pkg/controller/statefulset/stateful_set_utils.go`` (``getPatch``, ``newRevision``),
``stateful_set_control.go`` (``getStatefulSetRevisions``, ``truncateHistory``) and
``pkg/controller/daemon/update.go`` (``constructHistory``, ``snapshot``, ``cleanupHistory``).

A revision holds ``data = {"spec": {"template": <the parent's template>, "$patch": "replace"}}``
(the strategic merge patch ``kubectl rollout undo`` sends back), ``revision`` (1, 2, …), the
template's labels plus ``controller-revision-hash``, the parent's annotations and a controller
ownerReference to the parent (the garbage collector deletes it with the parent). Its name is the
one the parent's pods carry: ``<name>-<hash>``. A StatefulSet's hash is upstream's
(:func:`kubesched.api.hashing.statefulset_revision_hash`, ``HashControllerRevision`` over the
patch bytes, label ``controller.kubernetes.io/hash``; its pods' ``controller-revision-hash`` is
the revision name); a DaemonSet's is the one its pods carry in ``controller-revision-hash``
(:func:`kubesched.api.hashing.compute_hash` of the template and ``status.collisionCount``;
upstream's ``ComputeHash`` hashes Go's struct dump, so these names differ from a real cluster's).

Pure: :func:`plan_history` says what to create, renumber and delete; the box's workload
controller (:mod:`kubesched.apiserver.workloadcontrollers`) writes it through the server.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.hashing import compute_hash, statefulset_revision_hash

__all__ = ["HISTORY_KINDS", "HistoryPlan", "new_revision", "plan_history", "revision_name"]

#: parent kinds with a ControllerRevision history (Deployments keep theirs in ReplicaSets)
HISTORY_KINDS = ("StatefulSet", "DaemonSet")
_HASH_LABEL = "controller-revision-hash"
#: history.ControllerRevisionHashLabel, the label NewControllerRevision puts on a StatefulSet's
_REVISION_HASH_LABEL = "controller.kubernetes.io/hash"


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _hash(parent: Mapping[str, Any]) -> str:
    spec, status = _map(parent.get("spec")), _map(parent.get("status"))
    if parent.get("kind") == "StatefulSet":
        return statefulset_revision_hash(_map(spec.get("template")), status.get("collisionCount"))
    return compute_hash(_map(spec.get("template")), status.get("collisionCount"))


def revision_name(parent: Mapping[str, Any]) -> str:
    """``<name>-<hash>`` of the parent's current template (``ControllerRevisionName``)."""
    return f"{_map(parent.get('metadata')).get('name')}-{_hash(parent)}"


def new_revision(parent: Mapping[str, Any], revision: int) -> dict[str, Any]:
    """The ControllerRevision for ``parent``'s current template (``newRevision`` / ``snapshot``),
    numbered ``revision``; without uid/resourceVersion (the server assigns them)."""
    meta, spec = _map(parent.get("metadata")), _map(parent.get("spec"))
    template = copy.deepcopy(dict(_map(spec.get("template"))))
    template["$patch"] = "replace"
    h = _hash(parent)
    key = _REVISION_HASH_LABEL if parent.get("kind") == "StatefulSet" else _HASH_LABEL
    labels = {**_map(_map(template.get("metadata")).get("labels")), key: h}
    out: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": f"{meta.get('name')}-{h}", "namespace": meta.get("namespace") or "default",
                     "labels": labels,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": parent.get("kind"), "name": meta.get("name"),
                                          "uid": meta.get("uid"), "controller": True, "blockOwnerDeletion": True}]},
        "data": {"spec": {"template": template}}, "revision": revision}
    if meta.get("annotations"):
        out["metadata"]["annotations"] = dict(_map(meta.get("annotations")))
    return out


@dataclass
class HistoryPlan:
    """What one parent's history needs: revisions to create, ``(revision, new number)`` to
    renumber (a rollback to an older template), revisions to delete (beyond the limit)."""

    create: list[dict[str, Any]] = field(default_factory=list)
    renumber: list[tuple[Mapping[str, Any], int]] = field(default_factory=list)
    delete: list[Mapping[str, Any]] = field(default_factory=list)


def _owned(parent: Mapping[str, Any], objs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    uid = _map(parent.get("metadata")).get("uid")
    return [o for o in objs if any(r.get("controller") and r.get("uid") == uid
                                   for r in _map(o.get("metadata")).get("ownerReferences") or ())]


def _num(r: Mapping[str, Any]) -> int:
    v = r.get("revision")
    return v if isinstance(v, int) else 0


def plan_history(parent: Mapping[str, Any], revisions: Sequence[Mapping[str, Any]],
                 pods: Sequence[Mapping[str, Any]]) -> HistoryPlan:
    """The history actions for a StatefulSet or DaemonSet ``parent`` given the namespace's
    ControllerRevisions and pods (those it controls are picked by ownerReference uid).

    The current template's revision is created numbered max + 1, or, when it exists but is not
    the newest, renumbered max + 1 (a rollback); then history beyond
    ``spec.revisionHistoryLimit`` (default 10) is deleted, oldest first, sparing revisions
    still in use: a StatefulSet's ``currentRevision``/``updateRevision`` and its pods'
    revisions (``truncateHistory``: the limit counts the unused ones); a DaemonSet's pods'
    hashes (``cleanupHistory``: the limit counts every old revision)."""
    plan = HistoryPlan()
    meta, spec = _map(parent.get("metadata")), _map(parent.get("spec"))
    if not meta.get("uid") or meta.get("deletionTimestamp"):
        return plan
    mine = sorted(_owned(parent, revisions), key=lambda r: (_num(r), str(_map(r.get("metadata")).get("name"))))
    name = revision_name(parent)
    cur = next((r for r in mine if _map(r.get("metadata")).get("name") == name), None)
    others = [r for r in mine if r is not cur]
    top = max((_num(r) for r in others), default=0)
    if cur is None:
        plan.create.append(new_revision(parent, top + 1))
    elif _num(cur) <= top:
        plan.renumber.append((cur, top + 1))
    limit = spec.get("revisionHistoryLimit")
    limit = limit if isinstance(limit, int) else 10
    if limit < 0:
        return plan
    owned_pods = [p for p in _owned(parent, pods)]
    hashes = {str(_map(_map(p.get("metadata")).get("labels")).get(_HASH_LABEL) or "") for p in owned_pods}
    if parent.get("kind") == "StatefulSet":
        status = _map(parent.get("status"))
        live = hashes | {name, str(status.get("currentRevision") or ""), str(status.get("updateRevision") or "")}
        old = [r for r in others if _map(r.get("metadata")).get("name") not in live]
        plan.delete.extend(old[:max(0, len(old) - limit)])
    else:
        to_kill = len(others) - limit
        for r in others:
            if to_kill <= 0:
                break
            if str(_map(_map(r.get("metadata")).get("labels")).get(_HASH_LABEL) or "") in hashes:
                continue
            plan.delete.append(r)
            to_kill -= 1
    return plan
