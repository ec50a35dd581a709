"""pod_requests / pod_non_zero_requests per upstream resource.PodRequests (v1.34) and the
scheduler's calculateResource, from the documented behaviour (KEP-753 sidecars, init max,
overhead, pod-level resources)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.objects import Container, Pod, PodSpec, ResourceRequirements
from kubesched.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    is_best_effort,
    is_pod_level_requests_set,
    pod_non_zero_requests,
    pod_requests,
    resource_list_to_ints,
)
from kubesched.errors import QuantityError

MI = 1024 * 1024


def c(requests=None, limits=None, restart=None, name="c"):
    return Container(name=name, resources=ResourceRequirements(requests=requests or {}, limits=limits or {}), restart_policy=restart)


def pod(containers=(), init=(), overhead=None, pod_requests_=None, pod_limits=None):
    res = None
    if pod_requests_ is not None or pod_limits is not None:
        res = ResourceRequirements(requests=pod_requests_ or {}, limits=pod_limits or {})
    return Pod(spec=PodSpec(containers=list(containers), init_containers=list(init), overhead=overhead or {}, resources=res))


def test_containers_summed():
    p = pod([c({"cpu": "100m", "memory": "1Gi"}), c({"cpu": "0.5", "example.com/gpu": 2})])
    assert pod_requests(p) == {"cpu": 600, "memory": 2**30, "example.com/gpu": 2}


def test_init_containers_max():
    p = pod([c({"cpu": "1"}), c({"cpu": "2"})], [c({"cpu": "5", "memory": "1Mi"}), c({"cpu": "1"})])
    assert pod_requests(p) == {"cpu": 5000, "memory": MI}
    p = pod([c({"cpu": "4"})], [c({"cpu": "3"})])
    assert pod_requests(p) == {"cpu": 4000}


def test_sidecars_kep_753():
    # sidecar1(1) -> init1(2) -> sidecar2(3); containers 1.
    p = pod(
        [c({"cpu": "1"})],
        [c({"cpu": "1"}, restart="Always"), c({"cpu": "2"}), c({"cpu": "3"}, restart="Always")],
    )
    # running: 1 + 1 + 3 = 5; init peaks: 1, 2+1=3, 1+3=4 -> 5
    assert pod_requests(p)["cpu"] == 5000
    # a big init container after a sidecar runs together with it
    p = pod([c({"cpu": "1"})], [c({"cpu": "1"}, restart="Always"), c({"cpu": "10"})])
    assert pod_requests(p)["cpu"] == 11000
    # ...but not with sidecars declared after it
    p = pod([c({"cpu": "1"})], [c({"cpu": "10"}), c({"cpu": "1"}, restart="Always")])
    assert pod_requests(p)["cpu"] == 10000
    # restartPolicy other than Always is a regular init container
    p = pod([c({"cpu": "1"})], [c({"cpu": "2"}, restart="OnFailure")])
    assert pod_requests(p)["cpu"] == 2000


def test_overhead_added_after_max():
    p = pod([c({"cpu": "1"})], [c({"cpu": "3"})], overhead={"cpu": "250m", "memory": "120Mi"})
    assert pod_requests(p) == {"cpu": 3250, "memory": 120 * MI}


def test_pod_level_requests_override_cpu_memory():
    p = pod([c({"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"})], pod_requests_={"cpu": "2"}, overhead={"cpu": "100m"})
    assert is_pod_level_requests_set(p)
    assert pod_requests(p) == {"cpu": 2100, "memory": 2**30, "ephemeral-storage": 2**30}
    # only unsupported names at pod level: not "set", nothing overridden
    p = pod([c({"cpu": "1"})], pod_requests_={"example.com/gpu": "1"})
    assert not is_pod_level_requests_set(p)
    assert pod_requests(p) == {"cpu": 1000}
    p = pod([c({"hugepages-2Mi": "4Mi"})], pod_requests_={"hugepages-2Mi": "8Mi"})
    assert pod_requests(p) == {"hugepages-2Mi": 8 * MI}


def test_rounding_is_on_the_exact_sum():
    # upstream sums exact quantities, then rounds: 0.5m + 0.5m = 1m
    assert pod_requests(pod([c({"cpu": "0.5m"}), c({"cpu": "0.5m"})]))["cpu"] == 1
    assert pod_requests(pod([c({"memory": "0.5"}), c({"memory": "0.5"})]))["memory"] == 1


def test_zero_requests_are_present():
    assert pod_requests(pod([c({"cpu": "0"})])) == {"cpu": 0}
    assert pod_requests(pod([c()])) == {}


def test_non_zero_defaults_per_container():
    d_cpu, d_mem = DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST
    assert pod_non_zero_requests(pod([c()])) == (d_cpu, d_mem)
    assert pod_non_zero_requests(pod([c({"cpu": "200m"}), c()])) == (300, 2 * d_mem)
    assert pod_non_zero_requests(pod([c({"cpu": "0", "memory": "0"})])) == (0, 0)  # explicit zero kept
    assert pod_non_zero_requests(pod([c()], [c()])) == (d_cpu, d_mem)
    assert pod_non_zero_requests(pod([c()], [c({"cpu": "1"})])) == (1000, d_mem)
    assert pod_non_zero_requests(pod([c()], overhead={"cpu": "10m"})) == (d_cpu + 10, d_mem)
    assert pod_non_zero_requests(pod()) == (0, 0)
    assert pod_non_zero_requests(pod([c({"cpu": "1", "memory": "1Gi"})])) == (1000, 2**30)


def test_non_zero_with_pod_level_requests():
    d_mem = DEFAULT_MEMORY_REQUEST
    # pod-level cpu set; memory missing everywhere -> default per container
    assert pod_non_zero_requests(pod([c(), c()], pod_requests_={"cpu": "2"})) == (2000, 2 * d_mem)
    # memory present in a container -> no defaults for memory at all
    assert pod_non_zero_requests(pod([c({"memory": "1Mi"}), c()], pod_requests_={"cpu": "2"})) == (2000, MI)


def test_invalid_quantity_has_field_path():
    with pytest.raises(QuantityError) as ei:
        pod_requests(pod([c(), c({"cpu": "12x"})]))
    assert ei.value.path == "spec.containers[1].resources.requests[cpu]"
    with pytest.raises(QuantityError) as ei:
        pod_requests(pod(overhead={"memory": "bad"}))
    assert ei.value.path == "spec.overhead[memory]"


def test_resource_list_to_ints():
    assert resource_list_to_ints({"cpu": "3500m", "memory": "8Gi", "pods": "110"}) == {"cpu": 3500, "memory": 8 * 2**30, "pods": 110}
    with pytest.raises(QuantityError) as ei:
        resource_list_to_ints({"cpu": "x"}, "status.allocatable")
    assert ei.value.path == "status.allocatable[cpu]"


def test_is_best_effort():
    assert is_best_effort(pod([c()]))
    assert is_best_effort(pod([c({"cpu": "0"})]))
    assert is_best_effort(pod([c({"example.com/gpu": "1"})]))
    assert not is_best_effort(pod([c(limits={"memory": "1Gi"})]))
    assert not is_best_effort(pod([c()], [c({"cpu": "1"})]))
    assert not is_best_effort(pod([c()], pod_requests_={"cpu": "1"}))


def _model(containers, inits):
    """Direct reading of the KEP formula: max(sum(containers)+sum(sidecars), max_i InitUse(i))."""
    running = sum(containers) + sum(v for v, side in inits if side)
    peaks, sidecars = [], 0
    for v, side in inits:
        if side:
            sidecars += v
            peaks.append(sidecars)
        else:
            peaks.append(v + sidecars)
    return max([running, *peaks])


@given(
    st.lists(st.integers(0, 5000), max_size=4),
    st.lists(st.tuples(st.integers(0, 5000), st.booleans()), max_size=4),
)
def test_property_sidecar_formula(containers, inits):
    p = pod(
        [c({"cpu": f"{v}m"}) for v in containers],
        [c({"cpu": f"{v}m"}, restart="Always" if side else None) for v, side in inits],
    )
    got = pod_requests(p).get("cpu", 0)
    assert got == (_model(containers, inits) if containers or inits else 0)
