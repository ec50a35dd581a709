"""Controllers of the simulated cluster (run with ``--simulate-kubelets``).

:class:`DisruptionController` keeps ``PodDisruptionBudget.status`` current, as
kube-controller-manager's disruption controller does (``pkg/controller/disruption/disruption.go``):
``expectedPods`` (matching, non-terminal pods), ``currentHealthy`` (Ready and not being
deleted), ``desiredHealthy`` (from ``minAvailable`` or ``expectedPods - maxUnavailable``,
percentages rounded up), ``disruptionsAllowed = max(0, currentHealthy - desiredHealthy)``,
``observedGeneration`` and the ``DisruptionAllowed`` condition. The scheduler's preemption
reads ``disruptionsAllowed`` (``filterPodsWithPDBViolation``). Simplification: expected pods
are counted from the pods themselves, not from their controllers' scale.
"""

from __future__ import annotations

import asyncio
import logging
import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.apiserver.storage import Conflict, Event, KeyNotFound

if TYPE_CHECKING:
    from kubesched.apiserver.server import APIServer

__all__ = ["DisruptionController", "attach_controllers", "pdb_status"]

log = logging.getLogger("kubesched.apiserver.controllers")

PDBS = "policy/poddisruptionbudgets"


def _ready(pod: dict[str, Any]) -> bool:
    st = pod.get("status") or {}
    if st.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])


def pdb_status(pdb: dict[str, Any], pods: list[dict[str, Any]], now: str) -> dict[str, Any]:
    """The status the disruption controller computes for ``pdb`` over the namespace's ``pods``."""
    from kubesched.apiserver.server import _pdb_selects

    live = [p for p in pods if _pdb_selects(pdb, p)
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    expected = len(live)
    healthy = sum(1 for p in live if _ready(p))
    spec = pdb.get("spec") or {}

    def resolve(v: Any) -> int:
        if isinstance(v, str) and v.endswith("%"):
            return math.ceil(int(v[:-1]) * expected / 100)
        return int(v)

    if spec.get("maxUnavailable") is not None:
        desired = max(0, expected - resolve(spec["maxUnavailable"]))
    elif spec.get("minAvailable") is not None:
        desired = resolve(spec["minAvailable"])
    else:
        desired = expected
    allowed = max(0, healthy - desired)
    gen = (pdb.get("metadata") or {}).get("generation", 1)
    old = pdb.get("status") or {}
    ok = allowed > 0
    cond = {"type": "DisruptionAllowed", "status": "True" if ok else "False",
            "reason": "SufficientPods" if ok else "InsufficientPods", "message": "",
            "observedGeneration": gen, "lastTransitionTime": now}
    for c in old.get("conditions") or []:
        if c.get("type") == "DisruptionAllowed" and c.get("status") == cond["status"]:
            cond["lastTransitionTime"] = c.get("lastTransitionTime", now)
    return {"observedGeneration": gen, "disruptionsAllowed": allowed, "currentHealthy": healthy,
            "desiredHealthy": desired, "expectedPods": expected, "conditions": [cond]}


class DisruptionController:
    """Recomputes PDB statuses of namespaces whose pods or PDBs changed (debounced)."""

    def __init__(self, server: APIServer, period: float = 0.1) -> None:
        self.server = server
        self.period = period
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()

    async def start(self) -> None:
        store = self.server.store
        store.subscribe("pods", self._on_event)
        store.subscribe(PDBS, self._on_event)
        for e in store.list(PDBS):
            self._dirty.add(e.obj()["metadata"].get("namespace", ""))
        self._wake.set()
        self.server.spawn(self._run())

    def _on_event(self, ev: Event) -> None:
        if ev.space == PDBS and ev.type == "MODIFIED" and ev.prev is not None:
            # our own status writes: only spec/metadata changes matter
            new, old = ev.entry.obj(), ev.prev.obj()
            if new.get("spec") == old.get("spec") and new["metadata"].get("generation") == \
                    old["metadata"].get("generation"):
                return
        if ev.ns not in self._dirty:
            self._dirty.add(ev.ns)
            self._wake.set()

    async def _run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                await asyncio.sleep(self.period)
                dirty, self._dirty = self._dirty, set()
                for ns in dirty:
                    try:
                        self._sync(ns)
                    except Exception:  # keep the controller alive
                        log.exception("disruption controller failed on namespace %s", ns)
        finally:
            self.server.store.unsubscribe("pods", self._on_event)
            self.server.store.unsubscribe(PDBS, self._on_event)

    def _sync(self, ns: str) -> None:
        store = self.server.store
        pdbs = store.list(PDBS, ns)
        if not pdbs:
            return
        pods = [e.obj() for e in store.list("pods", ns)]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for e in pdbs:
            pdb = e.obj()
            status = pdb_status(pdb, pods, now)
            if status == pdb.get("status"):
                continue
            pdb["status"] = status
            try:
                store.update(PDBS, ns, pdb["metadata"]["name"], pdb, expect_rv=e.rv)
            except (Conflict, KeyNotFound):
                self._dirty.add(ns)
                self._wake.set()


def attach_controllers(server: APIServer) -> None:
    """Run the simulated cluster's controllers with ``server``."""

    async def start(srv: APIServer) -> None:
        ctl = DisruptionController(srv)
        srv.disruption_controller = ctl  # type: ignore[attr-defined]
        await ctl.start()
        from kubesched.apiserver.workloadcontrollers import WorkloadController

        workloads = WorkloadController(srv)
        srv.workload_controller = workloads  # type: ignore[attr-defined]
        await workloads.start()

    server.on_started.append(start)
