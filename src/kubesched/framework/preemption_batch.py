"""The dry run's victim selection for many nodes at once, by vector arithmetic (issue 18 §1).

Upstream ``SelectVictimsOnNode`` (v1.37.2 ``pkg/scheduler/framework/plugins/defaultpreemption/
default_preemption.go``), called by ``DryRunPreemption`` (``pkg/scheduler/framework/preemption/
preemption.go``) once per potential node, removes every pod of lower priority than the preemptor
from a copy of the node, checks that the preemptor then fits (``RunFilterPluginsWithNominatedPods``),
and reprieves the removed pods in ``MoreImportantPod`` order (the PDB-violating ones first): a pod
that still leaves room stays, the others are the victims.

:meth:`kubesched.framework.preemption.Evaluator._fast_victims` already does this by arithmetic for
one row when NodeResourcesFit is the only Filter plugin whose verdict depends on the row's pods
(``_DryRunPlan.exact``). :func:`batch_victims` gives the same answers for a whole window of rows
in one pass: the row's slack per checked resource (``ExactPrecheck.batch``: allocatable minus
requested minus the preemptor's request, the pod count first) plus the summed requests of its
potential victims says whether the preemptor fits with all of them gone; the reprieve then runs
rank by rank over all rows together (the k-th most important victim of every row in one numpy
step), spending a kept pod's requests from its row's slack. Only the rows the caller hands in are
decided: no pod nominated to the node (the second pass of ``RunFilterPluginsWithNominatedPods``
would need its own slack), no pod-group members, the default ``is_eligible_pod`` and
``more_important_pod`` hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["alone_victims", "batch_victims", "single_lower_pod_rows"]

VictimsResult = Any
"""What :meth:`Evaluator._fast_victims` returns for a row: ``(victim pods, PDB-violating count,
Status)`` or its ``_REJECTED`` marker."""


def batch_victims(table: NodeTable, rows: Sequence[int], priority: int,
                  batch: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, Callable[[PodInfo], list[int]]] | None],
                  importance: Callable[[PodInfo], Any],
                  split_pdb: Callable[[list[PodInfo]], tuple[list[PodInfo], list[PodInfo]]] | None,
                  success: Any, rejected: VictimsResult) -> dict[int, VictimsResult] | None:
    """``{row: answer}`` for each of ``rows`` (table rows holding at least one pod of priority <
    ``priority``), each answer the one :meth:`Evaluator._fast_victims` gives for the row:
    ``(victims most important first, PDB-violating count, success)`` or ``rejected`` (the
    preemptor does not fit even with every potential victim removed). None when ``batch``
    (``ExactPrecheck.batch``) cannot answer for these rows.

    ``batch(rows)`` → ``(slack, taken, cost)``, ``int64[len(rows), m]`` each and a function: the
    rows' slack per check as they are (the preemptor fits where every entry is ≥ 0), what all of
    a row's pods take from it, and ``cost(pod_info)``, the ``m`` amounts one pod takes (asked
    only where a row's victims are not all of its pods or more than one).
    ``importance``: sort key, most important first (stable, as ``Evaluator._sort_importance``);
    ``split_pdb``: ``filter_pods_with_pdb_violation`` over the PDBs (None: there are none, every
    victim is non-violating)."""
    if not rows:
        return {}
    got = batch(np.asarray(rows, np.int64))
    if got is None:
        return None
    slack, taken, cost = got
    orders: list[list[PodInfo]] = []
    n_violating: list[int] = []
    costs: list[list[int]] = []  # of the pods in ``priced``, in order
    priced: list[int] = []  # flat positions of the pods whose cost is asked for
    alone: list[int] = []  # indices of the rows whose one pod is the only potential victim
    pods_of = table.pods
    pos = 0
    for i, r in enumerate(rows):
        on_row = pods_of[r]
        pot = [pi for pi in on_row if pi.priority < priority]
        k = len(pot)
        if k == 0:
            return None  # a row without a potential victim: the caller's per-row path answers it
        if k == 1 and len(on_row) == 1:
            alone.append(i)
            n_violating.append(len(split_pdb(pot)[0]) if split_pdb is not None else 0)
        else:
            if k > 1:
                pot.sort(key=importance)
            if split_pdb is not None:
                violating, non_violating = split_pdb(pot)
                pot = [*violating, *non_violating]
                n_violating.append(len(violating))
            else:
                n_violating.append(0)
            priced.extend(range(pos, pos + k))
            costs.extend(cost(pi) for pi in pot)
        orders.append(pot)
        pos += k
    cnt = np.fromiter((len(o) for o in orders), np.int64, len(orders))
    starts = np.zeros(len(rows), np.int64)
    np.cumsum(cnt[:-1], out=starts[1:])
    c = np.empty((pos, slack.shape[1]), np.int64)
    if alone:
        a = np.asarray(alone, np.int64)
        c[starts[a]] = taken[a]
    if priced:
        c[np.asarray(priced, np.int64)] = np.asarray(costs, np.int64).reshape(len(costs), slack.shape[1])
    cur = slack + np.add.reduceat(c, starts, axis=0)  # every potential victim removed
    fits = np.all(cur >= 0, axis=1)
    kept = np.zeros(pos, bool)
    live = np.flatnonzero(fits)
    k = 0
    while len(live):  # the reprieve: the k-th victim of every row still reprieving, together
        at = starts[live] + k
        ck = c[at]
        ok = ((cur[live] - ck) >= 0).all(axis=1)
        kept[at[ok]] = True
        cur[live[ok]] -= ck[ok]
        k += 1
        live = live[cnt[live] > k]
    out: dict[int, VictimsResult] = {}
    kept_l: list[bool] = kept.tolist()
    fits_l: list[bool] = fits.tolist()
    starts_l: list[int] = starts.tolist()
    for i, r in enumerate(rows):
        if not fits_l[i]:
            out[r] = rejected
            continue
        s = starts_l[i]
        pot = orders[i]
        nv = n_violating[i]
        if len(pot) == 1:
            out[r] = ([], 0, success) if kept_l[s] else ([pot[0].pod], nv, success)
            continue
        victims = [pi for pi, stays in zip(pot, kept_l[s:s + len(pot)], strict=True) if not stays]
        num_violating = sum(1 for j in range(nv) if not kept_l[s + j]) if nv else 0
        if nv and len(pot) > nv:
            victims.sort(key=importance)
        out[r] = ([pi.pod for pi in victims], num_violating, success)
    return out


def single_lower_pod_rows(table: NodeTable, rows: np.ndarray, priority: int) -> np.ndarray:
    """``bool[len(rows)]``: the rows holding exactly one pod, of priority < ``priority`` (that pod
    is the row's only potential victim and the row's requested vector is its requests), from
    the table's columns (pod count, lowest pod priority)."""
    one: np.ndarray = (table.requested[rows, table.PODS] == 1) & (table.min_pod_priority[rows] < priority)
    return one


def alone_victims(rows: np.ndarray, batch: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, Any] | None]
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`batch_victims` for rows of :func:`single_lower_pod_rows`, without a Python step per
    row: ``(fits, evicts)``, ``bool[len(rows)]`` each — the preemptor fits with the row's pod
    gone; it does not fit with the pod kept (the pod is the victim; else the reprieve keeps it
    and the row has no victim). None when ``batch`` cannot answer."""
    got = batch(rows)
    if got is None:
        return None
    slack, taken, _ = got
    fits: np.ndarray = np.all(slack + taken >= 0, axis=1)
    evicts: np.ndarray = ~np.all(slack >= 0, axis=1)
    return fits, evicts
