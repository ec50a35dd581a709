"""Simulated kubelets (KWOK-style) for the box: ``--simulate-kubelets``.

What they do, driven by the store's own event stream (no polling):

- **nodes** report ``Ready=True`` (and the pressure conditions ``False``), an ``InternalIP``
  address, ``nodeInfo`` (kubelet v1.34) and ``allocatable`` defaulted from ``capacity``;
- **pods bound to an existing node** move to ``Running``: conditions ``PodReadyToStartContainers``,
  ``Initialized``, ``ContainersReady``, ``Ready`` (all ``True``), ``podIP``/``podIPs``, ``hostIP``,
  ``startTime`` and running ``containerStatuses``;
- **pods annotated** ``kubesched.io/complete-after-seconds: "N"`` finish N seconds after they
  started: ``Succeeded`` (containers terminated, reason ``Completed``, exit code 0), or ``Failed``
  (exit code 1) with ``kubesched.io/complete-phase: Failed`` — so Jobs' pods and churn run;
  ``kubesched.io/exit-code: "N"`` (or ``"NAME=N,NAME=N"`` per container) sets the containers'
  exit codes (non-zero: ``Failed``, reason ``Error``), for Jobs' ``podFailurePolicy`` rules;
- **pods marked for deletion** on an existing node are stopped and removed (deleted with grace
  0, as the kubelet's status manager does once the containers are gone) after
  ``termination_seconds`` (default 0: at once, as KWOK; ``kubectl delete pod`` and ``kubectl
  drain`` return without waiting), never later than their grace period; with
  ``termination_seconds=None`` the whole grace period is waited out (the server's reaper removes
  the pod then, as it does without kubelets).

Upstream counterparts: ``pkg/kubelet/status/status_manager.go`` (pod status),
``pkg/kubelet/kubelet_node_status.go`` (node conditions); KWOK's default Stages.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.apiserver.managers import KUBELET, track_write
from kubesched.apiserver.storage import Conflict, Event, KeyExists, KeyNotFound

if TYPE_CHECKING:
    from collections.abc import Callable

    from kubesched.apiserver.registry import Registry

__all__ = ["COMPLETE_AFTER_ANNOTATION", "COMPLETE_PHASE_ANNOTATION", "EXIT_CODE_ANNOTATION", "KubeletSimulator",
           "attach_kubelets", "exit_codes"]

log = logging.getLogger("kubesched.apiserver.kubelet")

#: Pod annotation: seconds after start at which the pod's containers exit.
COMPLETE_AFTER_ANNOTATION = "kubesched.io/complete-after-seconds"
#: Pod annotation: ``Succeeded`` (default) or ``Failed`` — the phase reached at completion.
COMPLETE_PHASE_ANNOTATION = "kubesched.io/complete-phase"
#: Pod annotation: the containers' exit codes at completion: ``"42"`` (all) or ``"main=42,side=0"``.
EXIT_CODE_ANNOTATION = "kubesched.io/exit-code"

_KUBELET_VERSION = "v1.34.0"
_POD_NET = ipaddress.ip_network("10.244.0.0/16")
_NODE_NET = ipaddress.ip_network("172.18.0.0/16")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def exit_codes(value: str | None) -> tuple[int | None, dict[str, int]]:
    """``(exit code of every container, {container: exit code})`` from an ``EXIT_CODE_ANNOTATION``
    value; ``(None, {})`` when absent; raises ``ValueError`` for a malformed one."""
    if value is None or not value.strip():
        return None, {}
    if "=" not in value:
        return int(value), {}
    per: dict[str, int] = {}
    for part in value.split(","):
        name, _, code = part.partition("=")
        per[name.strip()] = int(code)
    return None, per


def _parse(ts: str) -> datetime | None:
    try:
        return datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return None


class KubeletSimulator:
    """One simulator for every node of a server (attach with :func:`attach_kubelets`)."""

    def __init__(self, server: Registry, termination_seconds: float | None = 0.0) -> None:
        self.server = server
        self.termination_seconds = termination_seconds
        """Seconds a kubelet takes to stop a deleted pod (None: its whole grace period)."""
        self._stopping: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._queue: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._pod_ips = (str(ip) for ip in _POD_NET.hosts())
        self._node_ips = (str(ip) for ip in _NODE_NET.hosts())
        self._used_pod_ips: set[str] = set()
        self._waiting: dict[str, set[tuple[str, str]]] = {}  # node name -> pods bound to it before it existed

    # ----------------------------------------------------------------- start
    async def start(self) -> None:
        store = self.server.store
        for e in store.list("pods"):
            o = e.obj()
            ip = (o.get("status") or {}).get("podIP")
            if ip:
                self._used_pod_ips.add(ip)
        store.subscribe("nodes", self._on_event)
        store.subscribe("pods", self._on_event)
        for e in store.list("nodes"):
            self._queue.put_nowait(("nodes", "", e.obj()["metadata"]["name"]))
        for e in store.list("pods"):
            md = e.obj()["metadata"]
            self._queue.put_nowait(("pods", md.get("namespace", ""), md["name"]))
        self.server.spawn(self._run())

    def _on_event(self, ev: Event) -> None:
        if ev.type != "DELETED":
            self._queue.put_nowait((ev.space, ev.ns, ev.name))
        elif ev.space == "nodes":  # the garbage collector removes the node's Lease (ownerReference)
            self._queue.put_nowait(("leases", "kube-node-lease", ev.name))
        elif ev.space == "pods":
            for timers in (self._timers, self._stopping):
                h = timers.pop((ev.ns, ev.name), None)
                if h is not None:
                    h.cancel()

    async def _run(self) -> None:
        try:
            while True:
                space, ns, name = await self._queue.get()
                try:
                    if space == "nodes":
                        self._sync_node(name)
                    elif space == "leases":
                        self._drop_lease(name)
                    else:
                        self._sync_pod(ns, name)
                except Exception:  # a kubelet bug must not stop the others
                    log.exception("simulated kubelet failed on %s %s/%s", space, ns, name)
        finally:
            store = self.server.store
            store.unsubscribe("nodes", self._on_event)
            store.unsubscribe("pods", self._on_event)
            for h in [*self._timers.values(), *self._stopping.values()]:
                h.cancel()

    # ------------------------------------------------------------- mutation
    def _mutate(self, space: str, ns: str, name: str, fn: Callable[[dict[str, Any]], bool]) -> None:
        """Read-modify-write the live object; ``fn`` returns False for no change."""
        store = self.server.store
        for _ in range(5):
            e = store.get(space, ns, name)
            if e is None:
                return
            obj = e.obj()
            if not fn(obj):
                return
            track_write(self.server, space, e.obj(), obj, KUBELET, "status")  # status_manager's PatchPodStatus
            try:
                store.update(space, ns, name, obj, expect_rv=e.rv)
                return
            except (Conflict, KeyNotFound):
                continue

    # ------------------------------------------------------------------ nodes
    def _sync_node(self, name: str) -> None:
        def fn(node: dict[str, Any]) -> bool:
            st = node.setdefault("status", {})
            conds = {c.get("type"): c for c in st.get("conditions") or []}
            ready = conds.get("Ready")
            if ready is not None and ready.get("status") == "True" and st.get("nodeInfo") and st.get("addresses"):
                return False
            now = _now()
            want = [
                ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ]
            for typ, status, reason, msg in want:
                if typ not in conds:  # keep conditions the user set (e.g. a NotReady node in a manifest)
                    conds[typ] = {"type": typ, "status": status, "lastHeartbeatTime": now,
                                  "lastTransitionTime": now, "reason": reason, "message": msg}
            st["conditions"] = list(conds.values())
            if not st.get("addresses"):
                st["addresses"] = [{"type": "InternalIP", "address": next(self._node_ips)},
                                   {"type": "Hostname", "address": name}]
            st.setdefault("nodeInfo", {
                "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "6.8.0-kubesched",
                "osImage": "kubesched simulated node", "containerRuntimeVersion": "containerd://2.0.0",
                "kubeletVersion": _KUBELET_VERSION, "kubeProxyVersion": "", "operatingSystem": "linux",
                "architecture": "amd64"})
            if "capacity" in st and "allocatable" not in st:
                st["allocatable"] = dict(st["capacity"])
            st.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": 10250}})
            return True

        self._mutate("nodes", "", name, fn)
        self._ensure_lease(name)
        for key in self._waiting.pop(name, ()):
            self._queue.put_nowait(("pods", *key))

    def _drop_lease(self, name: str) -> None:
        store = self.server.store
        if store.get("nodes", "", name) is not None:
            return
        try:
            store.delete("coordination.k8s.io/leases", "kube-node-lease", name)
        except KeyNotFound:
            pass

    def _ensure_lease(self, name: str) -> None:
        """The node's heartbeat Lease in ``kube-node-lease`` (created once; not renewed)."""
        store = self.server.store
        if store.get("coordination.k8s.io/leases", "kube-node-lease", name) is not None:
            return
        node = store.get("nodes", "", name)
        if node is None or store.get("namespaces", "", "kube-node-lease") is None:
            return
        nmd = node.obj()["metadata"]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": name, "namespace": "kube-node-lease", "uid": str(uuid.uuid4()),
                              "creationTimestamp": _now(),
                              "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name,
                                                   "uid": nmd.get("uid", "")}]},
                 "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": now}}
        try:
            store.create("coordination.k8s.io/leases", "kube-node-lease", name, lease)
        except KeyExists:
            pass

    # ------------------------------------------------------------------- pods
    def _next_pod_ip(self) -> str:
        for ip in self._pod_ips:
            if ip not in self._used_pod_ips:
                self._used_pod_ips.add(ip)
                return ip
        return "10.244.255.254"  # pool exhausted: reuse one address

    def _sync_pod(self, ns: str, name: str) -> None:
        e = self.server.store.get("pods", ns, name)
        if e is None:
            return
        pod = e.obj()
        spec, st, md = pod.get("spec") or {}, pod.get("status") or {}, pod["metadata"]
        node_name = spec.get("nodeName")
        if not node_name:
            return
        node = self.server.store.get("nodes", "", node_name)
        if md.get("deletionTimestamp"):
            if node is not None:
                self._arm_termination(ns, name, pod)
            return
        if node is None:
            self._waiting.setdefault(node_name, set()).add((ns, name))
            return
        phase = st.get("phase")
        if phase == "Pending":
            host_ip = ""
            for a in (node.obj().get("status") or {}).get("addresses") or []:
                if a.get("type") == "InternalIP":
                    host_ip = a.get("address", "")
            self._mutate("pods", ns, name, lambda p: self._start_pod(p, host_ip))
            return
        if phase == "Running":
            self._arm_completion(ns, name, pod)

    def _start_pod(self, pod: dict[str, Any], host_ip: str) -> bool:
        st = pod.setdefault("status", {})
        if st.get("phase") != "Pending" or not (pod.get("spec") or {}).get("nodeName"):
            return False
        now = _now()
        ip = pod["spec"].get("hostNetwork") and host_ip or self._next_pod_ip()
        conds = {c.get("type"): c for c in st.get("conditions") or []}
        for typ in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"):
            c = conds.get(typ)
            if c is None or c.get("status") != "True":
                conds[typ] = {"type": typ, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
        order = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
        st["conditions"] = [conds[t] for t in order] + [c for t, c in conds.items() if t not in order]
        st["phase"] = "Running"
        st["hostIP"] = host_ip
        st["hostIPs"] = [{"ip": host_ip}] if host_ip else []
        st["podIP"] = ip
        st["podIPs"] = [{"ip": ip}]
        st["startTime"] = now
        st["containerStatuses"] = [
            {"name": c.get("name", ""), "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
             "restartCount": 0, "containerID": f"containerd://{pod['metadata'].get('uid', '')[:12]}{i}",
             "state": {"running": {"startedAt": now}}}
            for i, c in enumerate(pod["spec"].get("containers") or [])
        ]
        return True

    def _arm_termination(self, ns: str, name: str, pod: dict[str, Any]) -> None:
        """Stop a pod marked for deletion after ``termination_seconds`` (at most its grace period)."""
        md = pod["metadata"]
        if self.termination_seconds is None or (ns, name) in self._stopping \
                or md.get("deletionGracePeriodSeconds") == 0 and not md.get("finalizers"):
            return
        left = self.termination_seconds
        end = _parse(md.get("deletionTimestamp", ""))
        if end is not None:
            left = min(left, max(0.0, (end - datetime.now(UTC)).total_seconds()))
        loop = asyncio.get_running_loop()
        self._stopping[(ns, name)] = loop.call_later(left, self._terminated, ns, name, md.get("uid", ""))

    def _terminated(self, ns: str, name: str, uid: str) -> None:
        """The containers are gone: the kubelet deletes the pod with grace 0 (finalizers may keep it)."""
        from kubesched.apiserver import resources as res
        from kubesched.apiserver.errors import APIError

        self._stopping.pop((ns, name), None)
        e = self.server.store.get("pods", ns, name)
        if e is None or e.obj()["metadata"].get("uid") != uid:
            return
        info = res.find("", "v1", "pods")
        assert info is not None
        try:
            self.server.delete_object(info, ns, name, {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}}, e)
        except APIError as err:
            log.debug("simulated kubelet: delete %s/%s: %s", ns, name, err)

    def _arm_completion(self, ns: str, name: str, pod: dict[str, Any]) -> None:
        md = pod["metadata"]
        after = (md.get("annotations") or {}).get(COMPLETE_AFTER_ANNOTATION)
        if after is None or (ns, name) in self._timers:
            return
        try:
            secs = max(0.0, float(after))
        except ValueError:
            log.warning("pod %s/%s: %s=%r is not a number of seconds", ns, name, COMPLETE_AFTER_ANNOTATION, after)
            return
        started = _parse((pod.get("status") or {}).get("startTime", "")) or datetime.now(UTC)
        delay = max(0.0, secs - (datetime.now(UTC) - started).total_seconds())
        loop = asyncio.get_running_loop()
        self._timers[(ns, name)] = loop.call_later(delay, self._complete, ns, name, md.get("uid", ""))

    def _complete(self, ns: str, name: str, uid: str) -> None:
        self._timers.pop((ns, name), None)

        def fn(pod: dict[str, Any]) -> bool:
            md, st = pod["metadata"], pod.setdefault("status", {})
            if md.get("uid") != uid or st.get("phase") != "Running":
                return False
            ann = md.get("annotations") or {}
            try:
                every, per = exit_codes(ann.get(EXIT_CODE_ANNOTATION))
            except ValueError:
                log.warning("pod %s/%s: %s=%r is not an exit code (N or NAME=N,...)", ns, name,
                            EXIT_CODE_ANNOTATION, ann.get(EXIT_CODE_ANNOTATION))
                every, per = None, {}
            phase = ann.get(COMPLETE_PHASE_ANNOTATION)
            codes = {cs.get("name"): per.get(cs.get("name"), every if every is not None else 0)
                     for cs in st.get("containerStatuses") or []}
            failed = phase == "Failed" or (phase is None and any(codes.values()))
            now = _now()
            st["phase"] = "Failed" if failed else "Succeeded"
            for c in st.get("conditions") or []:
                if c.get("type") in ("Ready", "ContainersReady", "PodReadyToStartContainers"):
                    c["status"] = "False"
                    c["lastTransitionTime"] = now
                    if c["type"] != "PodReadyToStartContainers":
                        c["reason"] = "PodCompleted"
            for cs in st.get("containerStatuses") or []:
                started = ((cs.get("state") or {}).get("running") or {}).get("startedAt", now)
                cs["ready"] = False
                cs["started"] = False
                code = codes.get(cs.get("name"), 0) if every is not None or per else (1 if failed else 0)
                cs["state"] = {"terminated": {"exitCode": code,
                                              "reason": "Error" if code else "Completed",
                                              "startedAt": started, "finishedAt": now}}
            return True

        self._mutate("pods", ns, name, fn)


def attach_kubelets(server: Registry, termination_seconds: float | None = 0.0) -> None:
    """Run simulated kubelets with ``server`` (started with it, stopped with it);
    ``termination_seconds``: see :class:`KubeletSimulator`."""

    async def start(srv: Registry) -> None:
        sim = KubeletSimulator(srv, termination_seconds)
        srv.kubelets = sim  # type: ignore[attr-defined]
        await sim.start()

    server.on_started.append(start)
