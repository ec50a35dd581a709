"""Server-side ``Table`` answers (``meta.k8s.io/v1``), as kube-apiserver prints them.

``to_table(resource, items, now=..., include_object="Metadata")`` renders the columns and cells
of ``pkg/printers/internalversion/printers.go`` for the resource (plural name): pods
(NAME READY STATUS RESTARTS AGE, wide: IP NODE NOMINATED NODE READINESS GATES), nodes
(NAME STATUS ROLES AGE VERSION, wide: INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION
CONTAINER-RUNTIME), events (core/v1 and events.k8s.io/v1), namespaces, deployments,
replicasets, leases, priorityclasses, services, configmaps, secrets, serviceaccounts,
poddisruptionbudgets; any other resource gets NAME and AGE.

As the API server (``staging/src/k8s.io/apiserver/pkg/registry/rest/table.go`` users), every
column is returned; the "wide" ones carry ``priority: 1`` and kubectl shows them only for
``-o wide``. ``include_object`` is the request's ``includeObject``: ``None`` → ``object:
null``; ``Metadata`` (the default) → a ``PartialObjectMetadata``; ``Object`` → the object
itself (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go`` ``asTable``).

Ages are ``duration.HumanDuration`` of ``now - creationTimestamp``
(``staging/src/k8s.io/apimachinery/pkg/util/duration``); a missing timestamp prints
``<unknown>``. The pod STATUS column follows ``printPod`` (init containers ``Init:x/y``,
waiting/terminated reasons, ``Completed`` with a running container back to ``Running``,
``Terminating`` once ``deletionTimestamp`` is set, ``SchedulingGated``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from kubesched.api.validation import canonical_quantity

__all__ = ["human_duration", "short_human_duration", "since", "table_resources", "to_table"]

_INCLUDE = {"None", "Metadata", "Object"}


def _parse_time(ts: Any) -> datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    text = ts.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration`` for a duration in seconds."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        sec = s % 60
        return f"{minutes}m" if sec == 0 else f"{minutes}m{sec}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def short_human_duration(seconds: float) -> str:
    """``duration.ShortHumanDuration`` for a duration in seconds."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    hours = s // 3600
    if hours < 24:
        return f"{hours}h"
    if hours < 24 * 365:
        return f"{hours // 24}d"
    return f"{hours // 24 // 365}y"


def _since(ts: Any, now: datetime) -> str:
    """``translateTimestampSince``."""
    dt = _parse_time(ts)
    if dt is None:
        return "<unknown>"
    return human_duration((now - dt).total_seconds())


def since(ts: Any, now: datetime) -> str:
    """The age of an RFC 3339 timestamp at ``now`` (``HumanDuration``; ``<unknown>`` when unparsable)."""
    return _since(ts, now)


def _m(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _i(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _col(name: str, description: str, *, type_: str = "string", fmt: str = "", priority: int = 0) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


_NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow "
    "a client to request the generation of an appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed "
    "to be set in happens-before order across separate operations. Clients may not set this value. It is represented "
    "in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_NAME = _col("Name", _NAME_DESC, fmt="name")
_AGE = _col("Age", _AGE_DESC)

# ---- pods -----------------------------------------------------------------------------------------

_POD_COLUMNS = [
    _NAME,
    _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", "The aggregate status of the containers in this pod."),
    _col("Restarts", "The number of times the containers in this pod have been restarted and when the last container "
                     "in this pod has restarted."),
    _AGE,
    _col("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
         priority=1),
    _col("Node", "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for "
                 "scheduling by the scheduler defined in schedulerName.", priority=1),
    _col("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot "
                           "be scheduled right away as preemption victims receive their graceful termination periods.",
         priority=1),
    _col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", priority=1),
]


def _restartable_init(c: Mapping[str, Any] | None) -> bool:
    return c is not None and c.get("restartPolicy") == "Always"


def _pod_row(pod: Mapping[str, Any], now: datetime) -> tuple[list[Any], list[dict[str, Any]] | None]:
    meta, spec, status = _m(pod.get("metadata")), _m(pod.get("spec")), _m(pod.get("status"))
    restarts = 0
    restartable_restarts = 0
    total = len(_l(spec.get("containers")))
    ready = 0
    last_restart: datetime | None = None
    last_restartable_restart: datetime | None = None
    phase = _s(status.get("phase"))
    reason = _s(status.get("reason")) or phase
    for cond in _l(status.get("conditions")):
        c = _m(cond)
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    conditions = None
    if phase == "Succeeded":
        conditions = [{"type": "Completed", "status": "True", "reason": "Succeeded",
                       "message": "The pod has completed successfully."}]
    elif phase == "Failed":
        conditions = [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]

    init_specs = {_s(_m(c).get("name")): _m(c) for c in _l(spec.get("initContainers"))}
    total += sum(1 for c in init_specs.values() if _restartable_init(c))

    def later(current: datetime | None, ts: Any) -> datetime | None:
        dt = _parse_time(ts)
        if dt is not None and (current is None or current < dt):
            return dt
        return current

    initializing = False
    init_statuses = _l(status.get("initContainerStatuses"))
    for i, raw in enumerate(init_statuses):
        cs = _m(raw)
        restarts += _i(cs.get("restartCount"))
        last_term = _m(_m(cs.get("lastState")).get("terminated"))
        if last_term:
            last_restart = later(last_restart, last_term.get("finishedAt"))
        spec_c = init_specs.get(_s(cs.get("name")))
        if _restartable_init(spec_c):
            restartable_restarts += _i(cs.get("restartCount"))
            if last_term:
                last_restartable_restart = later(last_restartable_restart, last_term.get("finishedAt"))
        state = _m(cs.get("state"))
        term, waiting = state.get("terminated"), state.get("waiting")
        if isinstance(term, dict) and _i(term.get("exitCode")) == 0:
            continue
        if _restartable_init(spec_c) and cs.get("started") is True:
            if cs.get("ready"):
                ready += 1
            continue
        if isinstance(term, dict):
            if not _s(term.get("reason")):
                if _i(term.get("signal")):
                    reason = f"Init:Signal:{_i(term.get('signal'))}"
                else:
                    reason = f"Init:ExitCode:{_i(term.get('exitCode'))}"
            else:
                reason = "Init:" + _s(term.get("reason"))
        elif isinstance(waiting, dict) and _s(waiting.get("reason")) and waiting.get("reason") != "PodInitializing":
            reason = "Init:" + _s(waiting.get("reason"))
        else:
            reason = f"Init:{i}/{len(_l(spec.get('initContainers')))}"
        initializing = True
        break

    initialized = any(
        _m(c).get("type") == "Initialized" and _m(c).get("status") == "True" for c in _l(status.get("conditions"))
    )
    if not initializing or initialized:
        restarts = restartable_restarts
        last_restart = last_restartable_restart
        has_running = False
        for raw in reversed(_l(status.get("containerStatuses"))):
            cs = _m(raw)
            restarts += _i(cs.get("restartCount"))
            last_term = _m(_m(cs.get("lastState")).get("terminated"))
            if last_term:
                last_restart = later(last_restart, last_term.get("finishedAt"))
            state = _m(cs.get("state"))
            waiting, term = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, dict) and _s(waiting.get("reason")):
                reason = _s(waiting.get("reason"))
            elif isinstance(term, dict) and _s(term.get("reason")):
                reason = _s(term.get("reason"))
            elif isinstance(term, dict):
                reason = (f"Signal:{_i(term.get('signal'))}" if _i(term.get("signal"))
                          else f"ExitCode:{_i(term.get('exitCode'))}")
            elif cs.get("ready") and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(
                _m(c).get("type") == "Ready" and _m(c).get("status") == "True" for c in _l(status.get("conditions"))
            )
            reason = "Running" if pod_ready else "NotReady"

    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_text = str(restarts)
    if restarts and last_restart is not None:
        restarts_text = f"{restarts} ({human_duration((now - last_restart).total_seconds())} ago)"

    pod_ips = _l(status.get("podIPs"))
    pod_ip = _s(_m(pod_ips[0]).get("ip")) if pod_ips else ""
    gates = _l(spec.get("readinessGates"))
    gates_text = "<none>"
    if gates:
        true_count = 0
        for g in gates:
            ctype = _m(g).get("conditionType")
            for c in _l(status.get("conditions")):
                if _m(c).get("type") == ctype:
                    if _m(c).get("status") == "True":
                        true_count += 1
                    break
        gates_text = f"{true_count}/{len(gates)}"
    cells = [
        _s(meta.get("name")),
        f"{ready}/{total}",
        reason,
        restarts_text,
        _since(meta.get("creationTimestamp"), now),
        pod_ip or "<none>",
        _s(spec.get("nodeName")) or "<none>",
        _s(status.get("nominatedNodeName")) or "<none>",
        gates_text,
    ]
    return cells, conditions


# ---- nodes --------------------------------------------------------------------------------------

_NODE_COLUMNS = [
    _NAME,
    _col("Status", "The status of the node"),
    _col("Roles", "The roles of the node"),
    _AGE,
    _col("Version", "Deprecated: KubeletVersion reported by the node. For information about the version of the "
                    "kubelet, please see the KubeletVersion field."),
    _col("Internal-IP", "List of addresses reachable to the node. Queried from cloud provider, if available.",
         priority=1),
    _col("External-IP", "List of addresses reachable to the node. Queried from cloud provider, if available.",
         priority=1),
    _col("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
         priority=1),
    _col("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
         priority=1),
    _col("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API "
                              "(e.g. containerd://1.4.2).", priority=1),
]


def _node_roles(labels: Mapping[str, Any]) -> list[str]:
    roles: set[str] = set()
    for k, v in labels.items():
        if k.startswith("node-role.kubernetes.io/"):
            role = k[len("node-role.kubernetes.io/") :]
            if role:
                roles.add(role)
        elif k == "kubernetes.io/role" and v:
            roles.add(str(v))
    return sorted(roles)


def _node_address(node: Mapping[str, Any], kind: str) -> str:
    for a in _l(_m(node.get("status")).get("addresses")):
        if _m(a).get("type") == kind:
            return _s(_m(a).get("address"))
    return "<none>"


def _node_row(node: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = _m(node.get("metadata")), _m(node.get("spec")), _m(node.get("status"))
    conds = {_m(c).get("type"): _m(c) for c in _l(status.get("conditions"))}
    states = []
    ready = conds.get("Ready")
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    info = _m(status.get("nodeInfo"))
    return [
        _s(meta.get("name")),
        ",".join(states),
        ",".join(_node_roles(_m(meta.get("labels")))) or "<none>",
        _since(meta.get("creationTimestamp"), now),
        _s(info.get("kubeletVersion")),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        _s(info.get("osImage")) or "<unknown>",
        _s(info.get("kernelVersion")) or "<unknown>",
        _s(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


# ---- events -------------------------------------------------------------------------------------

_EVENT_COLUMNS = [
    _col("Last Seen", "The last time an event was observed."),
    _col("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
    _col("Reason", "This should be a short, machine understandable string that gives the reason for the transition "
                   "into the object's current status."),
    _col("Object", "The object that this event is about."),
    _col("Subobject", "The subobject that this event is about.", priority=1),
    _col("Source", "The component reporting this event. Should be a short machine understandable string.", priority=1),
    _col("Message", "A human-readable description of the status of this operation."),
    _col("First Seen", "The first time an event was observed.", priority=1),
    _col("Count", "The number of times this event has occurred.", priority=1),
    _col("Name", _NAME_DESC, fmt="name", priority=1),
]


def _event_row(ev: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(ev.get("metadata"))
    new_api = "regarding" in ev or "note" in ev or "deprecatedFirstTimestamp" in ev
    first_ts = ev.get("deprecatedFirstTimestamp") if new_api else ev.get("firstTimestamp")
    last_ts = ev.get("deprecatedLastTimestamp") if new_api else ev.get("lastTimestamp")
    count = _i(ev.get("deprecatedCount") if new_api else ev.get("count"))
    first = _since(first_ts, now) if _parse_time(first_ts) else _since(ev.get("eventTime"), now)
    last = _since(last_ts, now) if _parse_time(last_ts) else first
    series = ev.get("series")
    if isinstance(series, dict):
        last = _since(series.get("lastObservedTime"), now)
        count = _i(series.get("count"))
    elif count == 0:
        count = 1
    involved = _m(ev.get("regarding") if new_api else ev.get("involvedObject"))
    kind = _s(involved.get("kind")).lower()
    target = f"{kind}/{_s(involved.get('name'))}" if involved.get("name") else kind
    source = _m(ev.get("deprecatedSource") if new_api else ev.get("source"))
    # the internal type's ReportingController is core/v1 "reportingComponent", events.k8s.io "reportingController"
    component = _s(source.get("component")) or _s(ev.get("reportingComponent")) or _s(ev.get("reportingController"))
    instance = _s(source.get("host")) or _s(ev.get("reportingInstance"))
    source_text = component if not instance else f"{component}, {instance}"
    message = _s(ev.get("note") if new_api else ev.get("message")).strip()
    return [last, _s(ev.get("type")), _s(ev.get("reason")), target, _s(involved.get("fieldPath")), source_text,
            message, first, count, _s(meta.get("name"))]


# ---- others -------------------------------------------------------------------------------------


def _selector_text(sel: Any) -> str:
    s = _m(sel)
    parts = [f"{k}={v}" for k, v in sorted(_m(s.get("matchLabels")).items())]
    for e in _l(s.get("matchExpressions")):
        em = _m(e)
        op, key, values = _s(em.get("operator")), _s(em.get("key")), sorted(_s(v) for v in _l(em.get("values")))
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) if parts else "<none>"


def _containers_images(obj: Mapping[str, Any]) -> tuple[str, str]:
    containers = _l(_m(_m(_m(obj.get("spec")).get("template")).get("spec")).get("containers"))
    return ",".join(_s(_m(c).get("name")) for c in containers), ",".join(_s(_m(c).get("image")) for c in containers)


def _namespace_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _s(_m(o.get("status")).get("phase")), _since(meta.get("creationTimestamp"), now)]


def _deployment_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    names, images = _containers_images(o)
    desired = spec.get("replicas", 1)
    return [_s(meta.get("name")), f"{_i(status.get('readyReplicas'))}/{_i(desired)}", _i(status.get("updatedReplicas")),
            _i(status.get("availableReplicas")), _since(meta.get("creationTimestamp"), now), names, images,
            _selector_text(spec.get("selector"))]


def _replicaset_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    names, images = _containers_images(o)
    return [_s(meta.get("name")), _i(spec.get("replicas", 1)), _i(status.get("replicas")),
            _i(status.get("readyReplicas")), _since(meta.get("creationTimestamp"), now), names, images,
            _selector_text(spec.get("selector"))]


def _lease_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _s(_m(o.get("spec")).get("holderIdentity")),
            _since(meta.get("creationTimestamp"), now)]


def _priorityclass_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _i(o.get("value")), bool(o.get("globalDefault")),
            _since(meta.get("creationTimestamp"), now), _s(o.get("preemptionPolicy"))]


def _service_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    stype = _s(spec.get("type")) or "ClusterIP"
    cluster_ip = _s(spec.get("clusterIP")) or "<none>"
    if stype == "ExternalName":
        cluster_ip = "<none>"
    external = "<none>"
    if stype == "ExternalName":
        external = _s(spec.get("externalName")) or "<none>"
    elif stype == "LoadBalancer":
        ingress = [
            _s(_m(i).get("ip")) or _s(_m(i).get("hostname")) for i in _l(_m(status.get("loadBalancer")).get("ingress"))
        ]
        ips = ingress + [_s(x) for x in _l(spec.get("externalIPs"))]
        external = ",".join(ips) if ips else "<pending>"
    elif spec.get("externalIPs"):
        external = ",".join(_s(x) for x in _l(spec.get("externalIPs")))
    ports = []
    for p in _l(spec.get("ports")):
        pm = _m(p)
        text = f"{_i(pm.get('port'))}/{_s(pm.get('protocol')) or 'TCP'}"
        if pm.get("nodePort"):
            text = f"{_i(pm.get('port'))}:{_i(pm.get('nodePort'))}/{_s(pm.get('protocol')) or 'TCP'}"
        ports.append(text)
    selector = _m(spec.get("selector"))
    sel_text = ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"
    return [_s(meta.get("name")), stype, cluster_ip, external, ",".join(ports) or "<none>",
            _since(meta.get("creationTimestamp"), now), sel_text]


def _configmap_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), len(_m(o.get("data"))) + len(_m(o.get("binaryData"))),
            _since(meta.get("creationTimestamp"), now)]


def _secret_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _s(o.get("type")), len(_m(o.get("data"))), _since(meta.get("creationTimestamp"), now)]


def _serviceaccount_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), len(_l(o.get("secrets"))), _since(meta.get("creationTimestamp"), now)]


def _pdb_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    min_av = spec.get("minAvailable")
    max_un = spec.get("maxUnavailable")
    return [_s(meta.get("name")), "N/A" if min_av is None else str(min_av), "N/A" if max_un is None else str(max_un),
            _i(status.get("disruptionsAllowed")), _since(meta.get("creationTimestamp"), now)]


def _statefulset_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printStatefulSet."""
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    names, images = _containers_images(o)
    return [_s(meta.get("name")), f"{_i(status.get('readyReplicas'))}/{_i(spec.get('replicas', 1))}",
            _since(meta.get("creationTimestamp"), now), names, images]


def _format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    m = _m(labels)
    return ",".join(f"{k}={v}" for k, v in sorted(m.items())) if m else "<none>"


def _daemonset_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printDaemonSet."""
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    names, images = _containers_images(o)
    node_selector = _m(_m(_m(spec.get("template")).get("spec")).get("nodeSelector"))
    return [_s(meta.get("name")), _i(status.get("desiredNumberScheduled")), _i(status.get("currentNumberScheduled")),
            _i(status.get("numberReady")), _i(status.get("updatedNumberScheduled")), _i(status.get("numberAvailable")),
            _format_labels(node_selector), _since(meta.get("creationTimestamp"), now), names, images,
            _selector_text(spec.get("selector"))]


def _has_condition(status: Mapping[str, Any], ctype: str) -> bool:
    return any(_m(c).get("type") == ctype and _m(c).get("status") == "True" for c in _l(status.get("conditions")))


def _job_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printJob: status from the conditions, completions, duration."""
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    succeeded = _i(status.get("succeeded"))
    if isinstance(spec.get("completions"), int):
        completions = f"{succeeded}/{spec['completions']}"
    else:
        parallelism = _i(spec.get("parallelism"))
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, end = _parse_time(status.get("startTime")), _parse_time(status.get("completionTime"))
    duration = "" if start is None else human_duration(((end or now) - start).total_seconds())
    if _has_condition(status, "Complete"):
        state = "Complete"
    elif _has_condition(status, "Failed"):
        state = "Failed"
    elif meta.get("deletionTimestamp"):
        state = "Terminating"
    elif _has_condition(status, "Suspended"):
        state = "Suspended"
    elif _has_condition(status, "FailureTarget"):
        state = "FailureTarget"
    elif _has_condition(status, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    names, images = _containers_images(o)
    return [_s(meta.get("name")), state, completions, duration, _since(meta.get("creationTimestamp"), now), names,
            images, _selector_text(spec.get("selector"))]


def _cronjob_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printCronJob."""
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    last = _since(status.get("lastScheduleTime"), now) if status.get("lastScheduleTime") else "<none>"
    suspend = spec.get("suspend")
    job_spec = _m(_m(spec.get("jobTemplate")).get("spec"))
    names, images = _containers_images({"spec": job_spec})
    return [_s(meta.get("name")), _s(spec.get("schedule")), _s(spec.get("timeZone")) or "<none>",
            "<unset>" if suspend is None else ("True" if suspend else "False"), len(_l(status.get("active"))), last,
            _since(meta.get("creationTimestamp"), now), names, images, _selector_text(job_spec.get("selector"))]


def _access_modes(modes: Any) -> str:
    """``helper.GetAccessModesAsString``."""
    ms = {_s(m) for m in _l(modes)}
    return ",".join(short for full, short in (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"),
                                              ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")) if full in ms)


def _storage(q: Any) -> str:
    if q is None or q == "":
        return "0"
    try:
        return canonical_quantity(q)
    except Exception:  # noqa: BLE001 - not a quantity: printed as it is
        return _s(q)


def _pv_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printPersistentVolume."""
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    ref = _m(spec.get("claimRef"))
    claim = f"{_s(ref.get('namespace'))}/{_s(ref.get('name'))}" if spec.get("claimRef") else ""
    phase = "Terminating" if meta.get("deletionTimestamp") else _s(status.get("phase"))
    cls = _s(_m(meta.get("annotations")).get("volume.beta.kubernetes.io/storage-class")) \
        or _s(spec.get("storageClassName"))
    return [_s(meta.get("name")), _storage(_m(spec.get("capacity")).get("storage")),
            _access_modes(spec.get("accessModes")), _s(spec.get("persistentVolumeReclaimPolicy")), phase, claim, cls,
            _s(spec.get("volumeAttributesClassName")) or "<unset>", _s(status.get("reason")),
            _since(meta.get("creationTimestamp"), now), _s(spec.get("volumeMode")) or "<unset>"]


def _pvc_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printPersistentVolumeClaim: capacity and access modes once bound."""
    meta, spec, status = _m(o.get("metadata")), _m(o.get("spec")), _m(o.get("status"))
    phase = "Terminating" if meta.get("deletionTimestamp") else _s(status.get("phase"))
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = _access_modes(status.get("accessModes"))
        capacity = _storage(_m(status.get("capacity")).get("storage"))
    cls = _s(_m(meta.get("annotations")).get("volume.beta.kubernetes.io/storage-class")) \
        or _s(spec.get("storageClassName"))
    return [_s(meta.get("name")), phase, _s(spec.get("volumeName")), capacity, modes, cls,
            _s(spec.get("volumeAttributesClassName")) or "<unset>", _since(meta.get("creationTimestamp"), now),
            _s(spec.get("volumeMode")) or "<unset>"]


def _storageclass_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """printers.go printStorageClassInternal (the table path names no effective default)."""
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _s(o.get("provisioner")), _s(o.get("reclaimPolicy")) or "Delete",
            _s(o.get("volumeBindingMode")) or "Immediate", bool(o.get("allowVolumeExpansion")),
            _since(meta.get("creationTimestamp"), now)]


#: Column descriptions of the printers below: upstream's SwaggerDoc() texts (k8s.io/api@v0.37.2
#: */types_swagger_doc_generated.go), as pkg/printers/internalversion/printers.go uses them.
_DOCS: dict[str, str] = {
    'DS_DESIRED': ('The total number of nodes that should be running the daemon pod (including nodes correctly '
        'running the daemon pod). More info: '
        'https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/'),
    'DS_CURRENT': ('The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon '
        'pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/'),
    'DS_READY': ('numberReady is the number of nodes that should be running the daemon pod and have one or more '
        'of the daemon pod running with a Ready Condition.'),
    'DS_UPDATED': ('The total number of nodes that are running updated daemon pod'),
    'DS_AVAILABLE': ('The number of nodes that should be running the daemon pod and have one or more of the daemon '
        'pod running and available (ready for at least spec.minReadySeconds)'),
    'NODE_SELECTOR': ('NodeSelector is a selector which must be true for the pod to fit on a node. Selector which '
        "must match a node's labels for the pod to be scheduled on that node. More info: "
        'https://kubernetes.io/docs/concepts/configuration/assign-pod-node/'),
    'DS_SELECTOR': ('A label query over pods that are managed by the daemon set. Must match in order to be '
        "controlled. It must match the pod template's labels. More info: "
        'https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors'),
    'JOB_SUCCEEDED': ('The number of pods which reached phase Succeeded. The value increases monotonically for a '
        'given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.'),
    'JOB_SELECTOR': ('A label query over pods that should match the pod count. Normally, the system sets this field '
        'for you. More info: '
        'https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors'),
    'CJ_SCHEDULE': ('The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    'CJ_TZ': ('The time zone name for the given schedule, see '
        'https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will '
        'default to the time zone of the kube-controller-manager process. The set of valid time zone '
        'names and the time zone offset is loaded from the system-wide time zone database by the API '
        'server during CronJob validation and the controller manager during execution. If no '
        'system-wide time zone database can be found a bundled version of the database is used instead. '
        'If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in '
        'host configuration, the controller will stop creating new new Jobs and will create a system '
        'event with the reason UnknownTimeZone. More information can be found in '
        'https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones'),
    'CJ_SUSPEND': ('This flag tells the controller to suspend subsequent executions, it does not apply to already '
        'started executions.  Defaults to false.'),
    'CJ_ACTIVE': ('A list of pointers to currently running jobs.'),
    'CJ_LAST': ('Information when was the last time the job was successfully scheduled.'),
    'PV_CAPACITY': ("capacity is the description of the persistent volume's resources and capacity. More info: "
        'https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity'),
    'PV_MODES': ('accessModes contains all ways the volume can be mounted. More info: '
        'https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes'),
    'PV_RECLAIM': ('persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from '
        'its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete '
        '(default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle '
        'must be supported by the volume plugin underlying this PersistentVolume. More info: '
        'https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming'),
    'PV_PHASE': ('phase indicates if a volume is available, bound to a claim, or released by a claim. More info: '
        'https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase'),
    'PV_CLAIM': ('claimRef is part of a bi-directional binding between PersistentVolume and '
        'PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the '
        'authoritative bind between PV and PVC. More info: '
        'https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding'),
    'PV_REASON': ('reason is a brief CamelCase string that describes any failure and is meant for machine parsing '
        'and tidy display in the CLI.'),
    'PV_VOLMODE': ('volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain '
        'in raw block state. Value of Filesystem is implied when not included in spec.'),
    'PVC_PHASE': ('phase represents the current phase of PersistentVolumeClaim.'),
    'PVC_VOLUME': ('volumeName is the binding reference to the PersistentVolume backing this claim.'),
    'PVC_CAPACITY': ('capacity represents the actual resources of the underlying volume.'),
    'PVC_MODES': ('accessModes contains the actual access modes the volume backing the PVC has. More info: '
        'https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1'),
    'PVC_VOLMODE': ('volumeMode defines what type of volume is required by the claim. Value of Filesystem is '
        'implied when not included in claim spec.'),
    'SC_PROVISIONER': ('provisioner indicates the type of the provisioner.'),
    'SC_RECLAIM': ('reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this '
        'storage class. Defaults to Delete.'),
    'SC_BINDING': ('volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When '
        'unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the '
        'VolumeScheduling feature.'),
    'SC_EXPANSION': ('allowVolumeExpansion shows whether the storage class allow volume expand.'),
}


def _policy_workload(spec: Mapping[str, Any]) -> tuple[str, str]:
    policy = "Gang" if _m(spec.get("schedulingPolicy")).get("gang") is not None else "Basic"
    ref = spec.get("workloadRef")
    return policy, (_s(_m(ref).get("workloadName")) if ref is not None else "<none>")


def _podgroup_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """``printPodGroup`` (pkg/printers/internalversion/printers.go L3530): Pending until the
    ``PodGroupInitiallyScheduled`` condition exists (Scheduled when True, else Unschedulable); a
    ``DisruptionTarget`` condition's reason wins."""
    meta = _m(o.get("metadata"))
    policy, workload = _policy_workload(_m(o.get("spec")))
    conds = {_s(_m(c).get("type")): _m(c) for c in _l(_m(o.get("status")).get("conditions"))}
    status = "Pending"
    if "PodGroupInitiallyScheduled" in conds:
        status = "Scheduled" if conds["PodGroupInitiallyScheduled"].get("status") == "True" else "Unschedulable"
    if "DisruptionTarget" in conds:
        status = _s(conds["DisruptionTarget"].get("reason"))
    return [_s(meta.get("name")), policy, workload, status, _since(meta.get("creationTimestamp"), now)]


def _compositepodgroup_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    """``printCompositePodGroup`` (printers.go L3578)."""
    meta = _m(o.get("metadata"))
    policy, workload = _policy_workload(_m(o.get("spec")))
    return [_s(meta.get("name")), policy, workload, _since(meta.get("creationTimestamp"), now)]


def _generic_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _since(meta.get("creationTimestamp"), now)]


def _created_at_row(o: Mapping[str, Any], now: datetime) -> list[Any]:
    meta = _m(o.get("metadata"))
    return [_s(meta.get("name")), _s(meta.get("creationTimestamp"))]


_Printer = tuple[list[dict[str, Any]], Callable[[Mapping[str, Any], datetime], list[Any]]]

_PG_POLICY_DESC = ("schedulingPolicy defines the scheduling policy for this instance of the PodGroup. Controllers are "
                   "expected to fill this field by copying it from a PodGroupTemplate.")
_WORKLOAD_REF_DESC = "Name of the referenced Workload object"

_PRINTERS: dict[str, _Printer] = {
    # printers.go L762-786 (v1.37.2): workloads get NAME and AGE only
    "podgroups": (
        [_NAME, _col("Policy", _PG_POLICY_DESC), _col("Workload", _WORKLOAD_REF_DESC),
         _col("Status", "Status of the PodGroup"), _AGE],
        _podgroup_row,
    ),
    "compositepodgroups": (
        [_NAME, _col("Policy", "schedulingPolicy defines the scheduling policy for this instance of the "
                               "CompositePodGroup. Controllers are expected to fill this field by copying it from a "
                               "CompositePodGroupTemplate. This field is immutable."),
         _col("Workload", _WORKLOAD_REF_DESC), _AGE],
        _compositepodgroup_row,
    ),
    "nodes": (_NODE_COLUMNS, _node_row),
    "events": (_EVENT_COLUMNS, _event_row),
    "namespaces": (
        [_NAME, _col("Status", "The status of the namespace"), _AGE],
        _namespace_row,
    ),
    "deployments": (
        [_NAME, _col("Ready", "Number of the pod with ready state"),
         _col("Up-to-date", "Total number of non-terminated pods targeted by this deployment that have the desired "
                            "template spec.", type_="integer"),
         _col("Available", "Total number of available pods (ready for at least minReadySeconds) targeted by this "
                           "deployment.", type_="integer"), _AGE,
         _col("Containers", "Names of each container in the template.", priority=1),
         _col("Images", "Images referenced by each container in the template.", priority=1),
         _col("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
                          "ones affected by this deployment.", priority=1)],
        _deployment_row,
    ),
    "replicasets": (
        [_NAME, _col("Desired", "Replicas is the number of desired pods.", type_="integer"),
         _col("Current", "Replicas is the most recently observed number of non-terminating pods.", type_="integer"),
         _col("Ready", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
              type_="integer"), _AGE,
         _col("Containers", "Names of each container in the template.", priority=1),
         _col("Images", "Images referenced by each container in the template.", priority=1),
         _col("Selector", "Selector is a label query over pods that should match the replica count.", priority=1)],
        _replicaset_row,
    ),
    "leases": (
        [_NAME, _col("Holder", "holderIdentity contains the identity of the holder of a current lease."), _AGE],
        _lease_row,
    ),
    "priorityclasses": (
        [_NAME, _col("Value", "value represents the integer value of this priority class.", type_="integer"),
         _col("Global-Default", "globalDefault specifies whether this PriorityClass should be considered as the "
                                "default priority for pods that do not have any priority class.", type_="boolean"),
         _AGE, _col("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower priority.")],
        _priorityclass_row,
    ),
    "services": (
        [_NAME, _col("Type", "type determines how the Service is exposed."),
         _col("Cluster-IP", "clusterIP is the IP address of the service."),
         _col("External-IP", "List of IP addresses for which nodes in the cluster will also accept traffic for this "
                             "service."),
         _col("Port(s)", "The list of ports that are exposed by this service."), _AGE,
         _col("Selector", "Route service traffic to pods with label keys and values matching this selector.",
              priority=1)],
        _service_row,
    ),
    "configmaps": (
        [_NAME, _col("Data", "Data contains the configuration data.", type_="integer"), _AGE],
        _configmap_row,
    ),
    "secrets": (
        [_NAME, _col("Type", "Used to facilitate programmatic handling of secret data."),
         _col("Data", "Data contains the secret data.", type_="integer"), _AGE],
        _secret_row,
    ),
    "serviceaccounts": (
        [_NAME, _col("Secrets", "Secrets is a list of the secrets in the same namespace that pods running using this "
                                "ServiceAccount are allowed to use.", type_="integer"), _AGE],
        _serviceaccount_row,
    ),
    "poddisruptionbudgets": (
        [_NAME, _col("Min Available", "The minimum number of pods that must be available simultaneously."),
         _col("Max Unavailable", "The maximum number of pods that may be unavailable simultaneously."),
         _col("Allowed Disruptions", "Calculated number of pods that may be disrupted at this time.",
              type_="integer"), _AGE],
        _pdb_row,
    ),
    "statefulsets": (
        [_NAME, _col("Ready", "Number of the pod with ready state"), _AGE,
         _col("Containers", "Names of each container in the template.", priority=1),
         _col("Images", "Images referenced by each container in the template.", priority=1)],
        _statefulset_row,
    ),
    "daemonsets": (
        [_NAME, _col("Desired", _DOCS["DS_DESIRED"], type_="integer"),
         _col("Current", _DOCS["DS_CURRENT"], type_="integer"), _col("Ready", _DOCS["DS_READY"], type_="integer"),
         _col("Up-to-date", _DOCS["DS_UPDATED"], type_="integer"),
         _col("Available", _DOCS["DS_AVAILABLE"], type_="integer"), _col("Node Selector", _DOCS["NODE_SELECTOR"]),
         _AGE, _col("Containers", "Names of each container in the template.", priority=1),
         _col("Images", "Images referenced by each container in the template.", priority=1),
         _col("Selector", _DOCS["DS_SELECTOR"], priority=1)],
        _daemonset_row,
    ),
    "jobs": (
        [_NAME, _col("Status", "Status of the job."), _col("Completions", _DOCS["JOB_SUCCEEDED"]),
         _col("Duration", "Time required to complete the job."), _AGE,
         _col("Containers", "Names of each container in the template.", priority=1),
         _col("Images", "Images referenced by each container in the template.", priority=1),
         _col("Selector", _DOCS["JOB_SELECTOR"], priority=1)],
        _job_row,
    ),
    "cronjobs": (
        [_NAME, _col("Schedule", _DOCS["CJ_SCHEDULE"]), _col("Timezone", _DOCS["CJ_TZ"]),
         _col("Suspend", _DOCS["CJ_SUSPEND"], type_="boolean"), _col("Active", _DOCS["CJ_ACTIVE"], type_="integer"),
         _col("Last Schedule", _DOCS["CJ_LAST"]), _AGE,
         _col("Containers", "Names of each container in the template.", priority=1),
         _col("Images", "Images referenced by each container in the template.", priority=1),
         _col("Selector", _DOCS["JOB_SELECTOR"], priority=1)],
        _cronjob_row,
    ),
    "persistentvolumes": (
        [_NAME, _col("Capacity", _DOCS["PV_CAPACITY"]), _col("Access Modes", _DOCS["PV_MODES"]),
         _col("Reclaim Policy", _DOCS["PV_RECLAIM"]), _col("Status", _DOCS["PV_PHASE"]),
         _col("Claim", _DOCS["PV_CLAIM"]), _col("StorageClass", "StorageClass of the pv"),
         _col("VolumeAttributesClass", "VolumeAttributesClass of the pv"), _col("Reason", _DOCS["PV_REASON"]), _AGE,
         _col("VolumeMode", _DOCS["PV_VOLMODE"], priority=1)],
        _pv_row,
    ),
    "persistentvolumeclaims": (
        [_NAME, _col("Status", _DOCS["PVC_PHASE"]), _col("Volume", _DOCS["PVC_VOLUME"]),
         _col("Capacity", _DOCS["PVC_CAPACITY"]), _col("Access Modes", _DOCS["PVC_MODES"]),
         _col("StorageClass", "StorageClass of the pvc"),
         _col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"), _AGE,
         _col("VolumeMode", _DOCS["PVC_VOLMODE"], priority=1)],
        _pvc_row,
    ),
    "storageclasses": (
        [_NAME, _col("Provisioner", _DOCS["SC_PROVISIONER"]), _col("ReclaimPolicy", _DOCS["SC_RECLAIM"]),
         _col("VolumeBindingMode", _DOCS["SC_BINDING"]), _col("AllowVolumeExpansion", _DOCS["SC_EXPANSION"]), _AGE],
        _storageclass_row,
    ),
    # the default table convertor (apiserver/pkg/registry/rest/table.go), which the CRD registry uses
    "customresourcedefinitions": ([_NAME, _col("Created At", _AGE_DESC, type_="date")], _created_at_row),
}


def table_resources() -> list[str]:
    """Resources (plural names) with a dedicated printer; others get NAME and AGE."""
    return ["pods", *_PRINTERS]


def _partial(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": dict(_m(obj.get("metadata")))}


def to_table(
    resource: str,
    items: Iterable[Mapping[str, Any]],
    *,
    now: datetime,
    include_object: str = "Metadata",
    list_meta: Mapping[str, Any] | None = None,
    printer: tuple[list[dict[str, Any]], Callable[[Mapping[str, Any], datetime], list[Any]]] | None = None,
) -> dict[str, Any]:
    """A ``meta.k8s.io/v1`` ``Table`` for ``items`` of ``resource`` (plural, e.g. ``pods``).

    ``now``: the server time ages are computed from (timezone-aware; naive means UTC).
    ``include_object``: ``None`` | ``Metadata`` | ``Object`` (anything else raises
    ``ValueError``, which the server answers as 400). ``list_meta``: ``resourceVersion`` /
    ``continue`` for the table's ``metadata``. ``printer``: ``(columns, row function)`` to use
    instead of the resource's own (custom resources: their ``additionalPrinterColumns``).
    """
    if include_object not in _INCLUDE:
        raise ValueError(f'unsupported includeObject "{include_object}": must be one of None, Metadata, Object')
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    rows = []
    if resource == "pods":
        columns = _POD_COLUMNS
        for item in items:
            cells, conditions = _pod_row(item, now)
            row: dict[str, Any] = {"cells": cells, "object": _object(item, include_object)}
            if conditions:
                row["conditions"] = conditions
            rows.append(row)
    else:
        columns, row_fn = printer or _PRINTERS.get(resource, ([_NAME, _AGE], _generic_row))
        for item in items:
            rows.append({"cells": row_fn(item, now), "object": _object(item, include_object)})
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": dict(list_meta or {}),
        "columnDefinitions": [dict(c) for c in columns],
        "rows": rows,
    }


def _object(item: Mapping[str, Any], include_object: str) -> Any:
    if include_object == "None":
        return None
    if include_object == "Object":
        return item
    return _partial(item)
