"""Pod resource math, per upstream ``staging/src/k8s.io/component-helpers/resource/helpers.go``
(``PodRequests``, v1.34, PodLevelResources on) and the scheduler's ``calculateResource`` /
``getNonMissingContainerRequests`` (``pkg/scheduler/framework/types.go``).

Amounts are summed exactly (in nano-units, like upstream's exact Quantity arithmetic) and
converted once at the end to canonical ints: cpu → millicores, everything else → bytes or
counts (:func:`kubesched.api.quantity.to_int`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from kubesched.api.quantity import nano_value_trimmed, nanos_to_int
from kubesched.errors import QuantityError

if TYPE_CHECKING:
    from kubesched.api.objects import Container, Pod, Quantity

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "HUGEPAGES_PREFIX",
    "MEMORY",
    "PODS",
    "is_best_effort",
    "is_pod_level_requests_set",
    "pod_non_zero_requests",
    "pod_requests",
    "resource_list_to_ints",
]

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"
HUGEPAGES_PREFIX = "hugepages-"
#: Scheduler defaults for a container without a cpu / memory request (``schedutil``).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_NANO = 10**9
_RESTART_ALWAYS = "Always"


def _is_pod_level_resource(name: str) -> bool:
    """Upstream ``IsSupportedPodLevelResource``: cpu, memory, hugepages-*."""
    return name == CPU or name == MEMORY or name.startswith(HUGEPAGES_PREFIX)


def _nanos(rl: Mapping[str, Quantity], where: str) -> dict[str, int]:
    out = {}
    for name, q in rl.items():
        try:
            out[name] = nano_value_trimmed(q)
        except QuantityError as exc:
            raise exc.at(f"{where}[{name}]") from None
    return out


def _add(into: dict[str, int], rl: Mapping[str, int]) -> None:
    for k, v in rl.items():
        into[k] = into.get(k, 0) + v


def _max(into: dict[str, int], rl: Mapping[str, int]) -> None:
    for k, v in rl.items():
        cur = into.get(k)
        if cur is None or v > cur:
            into[k] = v


def is_pod_level_requests_set(pod: Pod) -> bool:
    """Upstream ``IsPodLevelRequestsSet``: ``spec.resources.requests`` names cpu, memory or hugepages-*."""
    res = pod.spec.resources
    return res is not None and any(_is_pod_level_resource(n) for n in res.requests)


def _container_nanos(c: Container, where: str, non_missing: Mapping[str, int] | None) -> dict[str, int]:
    reqs = _nanos(c.resources.requests, f"{where}.resources.requests")
    if non_missing:
        for k, v in non_missing.items():
            if k not in reqs:  # explicitly set requests, even zero, are kept
                reqs[k] = v
    return reqs


def _pod_request_nanos(pod: Pod, non_missing: Mapping[str, int] | None = None,
                       skip_pod_level: bool = False) -> dict[str, int]:
    spec = pod.spec
    result: dict[str, int] = {}
    for i, c in enumerate(spec.containers):
        _add(result, _container_nanos(c, f"spec.containers[{i}]", non_missing))
    # Init containers: while the i-th regular init container runs, the restartable init
    # containers (sidecars) started before it are running too; sidecars keep running.
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for i, c in enumerate(spec.init_containers):
        reqs = _container_nanos(c, f"spec.initContainers[{i}]", non_missing)
        if c.restart_policy == _RESTART_ALWAYS:
            _add(result, reqs)
            _add(sidecars, reqs)
            _max(init_peak, sidecars)
        else:
            combined = dict(reqs)
            _add(combined, sidecars)
            _max(init_peak, combined)
    _max(result, init_peak)
    if not skip_pod_level and spec.resources is not None and is_pod_level_requests_set(pod):
        for name, n in _nanos(spec.resources.requests, "spec.resources.requests").items():
            if _is_pod_level_resource(name):
                result[name] = n
    if spec.overhead:
        _add(result, _nanos(spec.overhead, "spec.overhead"))
    return result


def _to_ints(nanos: Mapping[str, int]) -> dict[str, int]:
    return {name: nanos_to_int(name, n) for name, n in nanos.items()}


def pod_requests(pod: Pod, *, skip_pod_level_resources: bool = False) -> dict[str, int]:
    """Effective resource requests of ``pod`` as canonical ints (upstream ``PodRequests``).

    Shape: ``{resource name: amount}``, cpu in millicores, memory/storage/hugepages in bytes,
    pods and extended resources as counts. Rules: regular containers are summed; restartable
    init containers (``restartPolicy: Always``, sidecars) add to that sum; the result is then
    max'ed per resource with the peak init phase (each regular init container's requests plus
    the sidecars declared before it, and the running sidecar sums); pod-level
    ``spec.resources.requests`` replace cpu/memory/hugepages-* when set; ``spec.overhead``
    is added last. Names that any container mentions are present, possibly with 0.
    Container status resources (in-place resize) are not modelled.
    ``skip_pod_level_resources``: upstream's ``PodResourcesOptions.SkipPodLevelResources``
    (component-helpers resource/helpers.go L152-173): pod-level requests are not applied.
    Raises :class:`QuantityError` (with the field path) for an invalid quantity.
    """
    return _to_ints(_pod_request_nanos(pod, skip_pod_level=skip_pod_level_resources))


def pod_non_zero_requests(pod: Pod, *, skip_pod_level_resources: bool = False) -> tuple[int, int]:
    """``(cpu millicores, memory bytes)`` used for scoring (upstream ``calculateResource``).

    Without pod-level requests, each container (and init container) missing a cpu / memory
    request counts as :data:`DEFAULT_MILLI_CPU_REQUEST` millicores /
    :data:`DEFAULT_MEMORY_REQUEST` bytes (an explicit ``0`` is kept). With pod-level requests,
    the defaults apply per container only for a resource missing from the pod's total
    requests. The same sidecar / init / overhead rules as :func:`pod_requests` then apply.
    ``skip_pod_level_resources``: pod-level requests are ignored and every container gets the
    defaults (upstream ``calculatePodResourceRequest`` of a scorer without
    ``enablePodLevelResources``, v1.37.2 resource_allocation.go L236-262).
    """
    default_cpu = DEFAULT_MILLI_CPU_REQUEST * 10**6
    default_mem = DEFAULT_MEMORY_REQUEST * _NANO
    if skip_pod_level_resources:
        non0 = _pod_request_nanos(pod, {CPU: default_cpu, MEMORY: default_mem}, skip_pod_level=True)
        return nanos_to_int(CPU, non0.get(CPU, 0)), nanos_to_int(MEMORY, non0.get(MEMORY, 0))
    reqs = _pod_request_nanos(pod)
    if not is_pod_level_requests_set(pod):
        non_missing = {CPU: default_cpu, MEMORY: default_mem}
    else:
        non_missing = {}
        if CPU not in reqs:
            non_missing[CPU] = default_cpu
        if MEMORY not in reqs:
            non_missing[MEMORY] = default_mem
    non0 = _pod_request_nanos(pod, non_missing) if non_missing else reqs
    return nanos_to_int(CPU, non0.get(CPU, 0)), nanos_to_int(MEMORY, non0.get(MEMORY, 0))


def resource_list_to_ints(rl: Mapping[str, Quantity], where: str = "") -> dict[str, int]:
    """A raw resource list (e.g. node allocatable) as canonical ints; errors carry ``where[name]``."""
    return _to_ints(_nanos(rl, where))


def is_best_effort(pod: Pod) -> bool:
    """True when the pod's QoS class is BestEffort (upstream ``qos.ComputePodQOS``): no positive
    cpu/memory request or limit, taken from pod-level resources when those are set, else from
    all containers and init containers.
    """
    res = pod.spec.resources
    if res is not None and any(_is_pod_level_resource(n) for n in (*res.requests, *res.limits)):
        lists = [res.requests, res.limits]
    else:
        lists = []
        for c in (*pod.spec.containers, *pod.spec.init_containers):
            lists.append(c.resources.requests)
            lists.append(c.resources.limits)
    for rl in lists:
        for name in (CPU, MEMORY):
            q = rl.get(name)
            if q is not None and nano_value_trimmed(q) > 0:
                return False
    return True
