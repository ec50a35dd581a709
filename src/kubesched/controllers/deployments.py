"""Pure pieces of the Deployment and ReplicaSet controllers that :mod:`kubesched.controllers.workloads`
runs (in ``simulate`` and in the box), ported from ``k8s.io/kubernetes@v1.37.2``:

- ``pkg/controller/deployment/util/deployment_util.go``: :func:`resolve_fenceposts`
  (``maxSurge`` rounded up, ``maxUnavailable`` rounded down, both 0 → 1 unavailable),
  :func:`new_rs_new_replicas`, :func:`replica_set_proportion` (``GetReplicaSetProportion`` /
  ``getReplicaSetFraction``), :func:`set_new_rs_annotations` (``SetNewReplicaSetAnnotations``:
  the Deployment's annotations copied but for ``annotationsToSkip``, the revision bumped with
  ``deployment.kubernetes.io/revision-history``), :func:`set_replicas_annotations`;
- ``pkg/controller/controller_utils.go``: the ReplicaSet orderings (:func:`by_creation`,
  :func:`by_size_older`, :func:`by_size_newer`, :func:`by_revision`) and
  ``ActivePodsWithRanks.Less`` (:func:`pods_to_delete`, with ``getPodsRankedByRelatedPodsOnSameNode``
  of ``replicaset/replica_set.go``): the pods a ReplicaSet scales down first.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "DESIRED_REPLICAS", "MAX_REPLICAS", "REVISION", "REVISION_HISTORY", "by_creation", "by_revision",
    "by_size_newer", "by_size_older", "int_or_percent", "max_surge", "new_rs_new_replicas", "pods_to_delete",
    "replica_set_proportion", "resolve_fenceposts", "revision", "set_new_rs_annotations",
    "set_replicas_annotations", "template_key",
]

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
#: ``annotationsToSkip``: never copied from a Deployment to its ReplicaSets
_SKIP = frozenset({"kubectl.kubernetes.io/last-applied-configuration", REVISION, REVISION_HISTORY,
                   DESIRED_REPLICAS, MAX_REPLICAS, "deprecated.deployment.rollback.to"})
#: ``maxRevHistoryLengthInChars``
MAX_REV_HISTORY_CHARS = 2000
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _map(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _int(v: Any, default: int = 0) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def replicas(obj: Mapping[str, Any]) -> int:
    """``spec.replicas`` (default 1)."""
    return _int(_map(obj.get("spec")).get("replicas"), 1)


def int_or_percent(v: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: ``"25%"`` of ``total`` rounded up or down, or an int."""
    if isinstance(v, str) and v.endswith("%"):
        try:
            pct = int(v[:-1])
        except ValueError:
            return 0
        return -(-pct * total // 100) if round_up else pct * total // 100
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return _int(v)


def resolve_fenceposts(d: Mapping[str, Any]) -> tuple[int, int]:
    """``(maxSurge, maxUnavailable)`` of a RollingUpdate Deployment (defaults 25 %/25 %)."""
    ru = _map(_map(_map(d.get("spec")).get("strategy")).get("rollingUpdate"))
    want = replicas(d)
    surge = int_or_percent(ru.get("maxSurge", "25%"), want, True)
    unavailable = int_or_percent(ru.get("maxUnavailable", "25%"), want, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling(d: Mapping[str, Any]) -> bool:
    return _map(_map(d.get("spec")).get("strategy")).get("type", "RollingUpdate") == "RollingUpdate"


def max_surge(d: Mapping[str, Any]) -> int:
    """``MaxSurge``: 0 unless RollingUpdate."""
    return resolve_fenceposts(d)[0] if is_rolling(d) else 0


def max_unavailable(d: Mapping[str, Any]) -> int:
    """``MaxUnavailable``: 0 unless RollingUpdate (or 0 replicas); at most ``replicas``."""
    if not is_rolling(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], replicas(d))


def new_rs_new_replicas(d: Mapping[str, Any], all_rss: Iterable[Mapping[str, Any]], new_rs_replicas: int) -> int:
    """``NewRSNewReplicas``: the new ReplicaSet's size for this step of the rollout."""
    if not is_rolling(d):
        return replicas(d)
    current = sum(replicas(rs) for rs in all_rss)
    max_total = replicas(d) + max_surge(d)
    if current >= max_total:
        return new_rs_replicas
    return new_rs_replicas + min(max_total - current, replicas(d) - new_rs_replicas)


def replica_set_proportion(rs: Mapping[str, Any], d: Mapping[str, Any], to_add: int, added: int) -> int:
    """``GetReplicaSetProportion``: replicas to add to (or remove from) ``rs`` when a Deployment in
    the middle of a rollout is scaled, in proportion to its share (``max-replicas`` annotation)."""
    if replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    if replicas(d) == 0:
        fraction = -replicas(rs)
    else:
        dmax = replicas(d) + max_surge(d)
        before = _map(_map(rs.get("metadata")).get("annotations")).get(MAX_REPLICAS)
        base = int(before) if isinstance(before, str) and before.isdigit() else 0
        if base == 0:
            base = _int(_map(d.get("status")).get("replicas"))
        if base == 0:
            fraction = 0
        else:
            # integer.RoundToInt32: round half away from zero
            fraction = int(math.floor(replicas(rs) * dmax / base + 0.5)) - replicas(rs)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def revision(rs: Mapping[str, Any]) -> int | None:
    v = _map(_map(rs.get("metadata")).get("annotations")).get(REVISION)
    return int(v) if isinstance(v, str) and v.isdigit() else None


def set_replicas_annotations(rs: dict[str, Any], desired: int, maximum: int) -> bool:
    """``SetReplicasAnnotations``; True when something changed."""
    ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for k, v in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if ann.get(k) != v:
            ann[k] = v
            changed = True
    return changed


def set_new_rs_annotations(d: Mapping[str, Any], rs: dict[str, Any], new_revision: int, exists: bool) -> bool:
    """``SetNewReplicaSetAnnotations`` on ``rs`` (in place); True when something changed."""
    ann = rs.setdefault("metadata", {}).setdefault("annotations", {})
    changed = False
    for k, v in _map(_map(d.get("metadata")).get("annotations")).items():
        if k in _SKIP or ann.get(k) == v:
            continue
        ann[k] = v
        changed = True
    old = ann.get(REVISION)
    if old is not None and not str(old).isdigit():
        return False
    old_int = int(old) if old is not None else 0
    if old_int < new_revision:
        ann[REVISION] = str(new_revision)
        changed = True
        if old is not None:
            hist = str(ann.get(REVISION_HISTORY) or "")
            parts = hist.split(",") if hist else []
            if not parts:
                ann[REVISION_HISTORY] = str(old)
            else:
                total = len(hist) + len(str(old)) + 1
                start = 0
                while total > MAX_REV_HISTORY_CHARS and start < len(parts):
                    total -= len(parts[start]) + 1
                    start += 1
                if total <= MAX_REV_HISTORY_CHARS:
                    ann[REVISION_HISTORY] = ",".join([*parts[start:], str(old)])
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def _semantic(v: Any) -> Any:
    """Empty maps, lists and nulls dropped (``apiequality.Semantic.DeepEqual`` treats them as unset)."""
    if isinstance(v, dict):
        out = {k: _semantic(x) for k, x in v.items()}
        return {k: x for k, x in out.items() if x not in (None, {}, [])}
    if isinstance(v, list):
        return [_semantic(x) for x in v]
    return v


def template_key(template: Mapping[str, Any]) -> str:
    """``EqualIgnoreHash``'s view of a pod template: canonical JSON without ``pod-template-hash``
    and without empty or null fields; two templates are equal when their keys are."""
    t = _semantic(dict(template))
    labels = _map(_map(t.get("metadata")).get("labels"))
    labels.pop("pod-template-hash", None)
    return json.dumps(_semantic(t), sort_keys=True, separators=(",", ":"))


# ---- orderings -----------------------------------------------------------------------------

def _created(o: Mapping[str, Any]) -> str:
    # not created yet (this pass): after every stored one
    return str(_map(o.get("metadata")).get("creationTimestamp") or "9999")


def by_creation(o: Mapping[str, Any]) -> tuple[str, str]:
    """``ReplicaSetsByCreationTimestamp`` sort key (oldest first, then name)."""
    return _created(o), str(_map(o.get("metadata")).get("name"))


def by_size_older(rss: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``ReplicaSetsBySizeOlder``: larger first, then older first."""
    return sorted(rss, key=lambda r: (-replicas(r), *by_creation(r)))


def by_size_newer(rss: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``ReplicaSetsBySizeNewer``: larger first, then newer first."""
    return sorted(sorted(rss, key=by_creation, reverse=True), key=lambda r: -replicas(r))


def by_revision(rss: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``ReplicaSetsByRevision``: lower revision first (unparsable: by creation)."""
    def cmp(a: dict[str, Any], b: dict[str, Any]) -> int:
        ra, rb = revision(a), revision(b)
        if ra is None or rb is None or ra == rb:
            ka, kb = by_creation(a), by_creation(b)
            return -1 if ka < kb else (1 if ka > kb else 0)
        return -1 if ra < rb else 1
    return sorted(rss, key=functools.cmp_to_key(cmp))


# ---- ReplicaSet scale-down -------------------------------------------------------------------

def _ts(v: Any) -> datetime | None:
    if not isinstance(v, str) or not v:
        return None
    try:
        return datetime.strptime(v[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def _ready_since(pod: Mapping[str, Any]) -> tuple[bool, datetime | None]:
    for c in _map(pod.get("status")).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            ok = c.get("status") == "True"
            return ok, _ts(c.get("lastTransitionTime")) if ok else None
    return False, None


def _log_rank(t: datetime, now: datetime) -> int:
    d = (now - t).total_seconds() * 1e9  # Go durations are nanoseconds
    return int(math.log2(d)) if d > 0 else -1


def _restarts(pod: Mapping[str, Any]) -> tuple[int, int]:
    st, spec = _map(pod.get("status")), _map(pod.get("spec"))
    regular = max((_int(_map(c).get("restartCount")) for c in st.get("containerStatuses") or []), default=0)
    sidecars = {_map(c).get("name") for c in spec.get("initContainers") or []
                if _map(c).get("restartPolicy") == "Always"}
    side = max((_int(_map(c).get("restartCount")) for c in st.get("initContainerStatuses") or []
                if _map(c).get("name") in sidecars), default=0)
    return regular, side


def _less(a: tuple[Mapping[str, Any], int], b: tuple[Mapping[str, Any], int], now: datetime,
          deletion_cost: bool) -> bool:
    """``ActivePodsWithRanks.Less``: ``a`` goes before ``b`` (is deleted first)."""
    pa, ra = a
    pb, rb = b
    na, nb = _map(pa.get("spec")).get("nodeName") or "", _map(pb.get("spec")).get("nodeName") or ""
    if na != nb and (not na or not nb):  # 1. unassigned < assigned
        return not na
    oa = _PHASE_ORDINAL.get(str(_map(pa.get("status")).get("phase")), 0)
    ob = _PHASE_ORDINAL.get(str(_map(pb.get("status")).get("phase")), 0)
    if oa != ob:  # 2. Pending < Unknown < Running
        return oa < ob
    ready_a, since_a = _ready_since(pa)
    ready_b, since_b = _ready_since(pb)
    if ready_a != ready_b:  # 3. not ready < ready
        return not ready_a
    if deletion_cost:  # 4. lower controller.kubernetes.io/pod-deletion-cost first
        ca, cb = _deletion_cost(pa), _deletion_cost(pb)
        if ca != cb:
            return ca < cb
    if ra != rb:  # 5. more co-located related pods first
        return ra > rb
    ua, ub = str(_map(pa.get("metadata")).get("uid") or ""), str(_map(pb.get("metadata")).get("uid") or "")
    if ready_a and ready_b and since_a != since_b:  # 6. ready for less time first (log2 buckets)
        if since_a is None or since_b is None:
            return since_a is None
        diff = _log_rank(since_a, now) - _log_rank(since_b, now)
        return ua < ub if diff == 0 else diff < 0
    res_a, res_b = _restarts(pa), _restarts(pb)
    if res_a[0] != res_b[0]:  # 7. more restarts first
        return res_a[0] > res_b[0]
    if res_a[1] != res_b[1]:
        return res_a[1] > res_b[1]
    ca_t = _ts(_map(pa.get("metadata")).get("creationTimestamp"))
    cb_t = _ts(_map(pb.get("metadata")).get("creationTimestamp"))
    if ca_t != cb_t:  # 8. no creation time < newer < older
        if ca_t is None or cb_t is None:
            return ca_t is None
        diff = _log_rank(ca_t, now) - _log_rank(cb_t, now)
        return ua < ub if diff == 0 else diff < 0
    return False


def _deletion_cost(pod: Mapping[str, Any]) -> int:
    v = _map(_map(pod.get("metadata")).get("annotations")).get("controller.kubernetes.io/pod-deletion-cost")
    try:
        return int(v) if v is not None else 0
    except (TypeError, ValueError):
        return 0


def pods_to_delete(pods: list[Mapping[str, Any]], related: Iterable[Mapping[str, Any]], diff: int, *,
                   now: datetime | None = None, deletion_cost: bool = True) -> list[Mapping[str, Any]]:
    """``getPodsToDelete``: the ``diff`` pods of ``pods`` (active pods of one ReplicaSet) a
    scale-down removes first, ranked against ``related`` (the active pods of every ReplicaSet of
    the same owner) by how many share their node. ``deletion_cost``: gate PodDeletionCost."""
    if diff >= len(pods):
        return list(pods[:diff])
    on_node: dict[str, int] = {}
    for p in related:
        n = str(_map(p.get("spec")).get("nodeName") or "")
        on_node[n] = on_node.get(n, 0) + 1
    when = now or datetime.now(UTC)
    ranked = [(p, on_node.get(str(_map(p.get("spec")).get("nodeName") or ""), 0)) for p in pods]

    def cmp(a: tuple[Mapping[str, Any], int], b: tuple[Mapping[str, Any], int]) -> int:
        if _less(a, b, when, deletion_cost):
            return -1
        return 1 if _less(b, a, when, deletion_cost) else 0

    ranked.sort(key=functools.cmp_to_key(cmp))
    return [p for p, _ in ranked[:diff]]
