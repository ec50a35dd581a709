"""PodInfo's requests, non-zero requests, host ports and container-only requests, memoised per
distinct container/resources content (``framework/node_info._spec_derived``), are what the plain
functions give for every pod — repeated specs, specs changed in place, bad quantities, a full memo
— and the scorers' request vector read through the PodInfo equals the one computed from the pod."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.objects import Pod, decode
from kubesched.api.resources import is_pod_level_requests_set, pod_non_zero_requests, pod_requests
from kubesched.errors import QuantityError
from kubesched.framework import node_info
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import PodInfo, host_ports
from kubesched.plugins.noderesources.resource_allocation import pod_request_vector

_QTY = st.sampled_from(["0", "100m", "1", "250m", "1Gi", "512Mi", "2", 0, 1, 3, "1.5"])
_RL = st.dictionaries(st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi"]), _QTY, max_size=3)
_PORT = st.fixed_dictionaries({"containerPort": st.integers(1, 5)},
                              optional={"hostPort": st.integers(0, 3), "protocol": st.sampled_from(["TCP", "UDP"]),
                                        "hostIP": st.sampled_from(["", "10.0.0.1"])})
_CONTAINER = st.fixed_dictionaries({"name": st.just("c")}, optional={
    "resources": st.fixed_dictionaries({}, optional={"requests": _RL, "limits": _RL}),
    "ports": st.lists(_PORT, max_size=2)})
_INIT = st.fixed_dictionaries({"name": st.just("i")}, optional={
    "resources": st.fixed_dictionaries({}, optional={"requests": _RL}),
    "restartPolicy": st.just("Always"), "ports": st.lists(_PORT, max_size=1)})
_SPEC = st.fixed_dictionaries({"containers": st.lists(_CONTAINER, min_size=1, max_size=2)}, optional={
    "initContainers": st.lists(_INIT, max_size=2), "overhead": _RL,
    "resources": st.fixed_dictionaries({}, optional={"requests": _RL})})


def _plain(pod: Pod) -> tuple:
    skip = (pod_requests(pod, skip_pod_level_resources=True),
            *pod_non_zero_requests(pod, skip_pod_level_resources=True))
    return (pod_requests(pod), *pod_non_zero_requests(pod), host_ports(pod), skip, is_pod_level_requests_set(pod))


def _derived(info: PodInfo) -> tuple:
    own = (info.requests, info.non_zero_cpu, info.non_zero_memory)
    return (*own, info.ports, info.container_requests or own, info.container_requests is not None)


_NAMES = ["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage"]


@settings(max_examples=80, deadline=None)
@given(st.lists(_SPEC, min_size=1, max_size=4), st.lists(st.integers(0, 3), min_size=1, max_size=12))
def test_memoised_derived_data_is_the_plain_functions_for_any_pods(specs: list, picks: list) -> None:
    node_info._DERIVED.clear()
    for n, i in enumerate(picks):  # pods sharing specs by content (each decoded afresh) and by object
        pod = decode(Pod, {"metadata": {"name": f"p{n}", "namespace": "ns"}, "spec": specs[i % len(specs)]})
        info = PodInfo(pod)
        assert _derived(info) == _plain(pod)
        # the scorers' request vector through the cycle's PodInfo is the one computed from the pod
        for use_requested in (False, True):
            for pod_level in (False, True):
                assert pod_request_vector(CycleState(info), pod, _NAMES, use_requested, pod_level) == \
                    pod_request_vector(None, pod, _NAMES, use_requested, pod_level)


def test_a_spec_changed_in_place_is_not_given_stale_data() -> None:
    node_info._DERIVED.clear()
    pod = decode(Pod, {"metadata": {"name": "p", "namespace": "ns"},
                       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
    assert PodInfo(pod).requests == {"cpu": 1000}
    pod.spec.containers[0].resources.requests["cpu"] = "2"
    assert PodInfo(pod).requests == {"cpu": 2000} == pod_requests(pod)


def test_a_bad_quantity_raises_each_time_and_is_not_memoised() -> None:
    node_info._DERIVED.clear()
    pod = Pod(spec=msgspec.convert({"containers": [{"name": "c", "resources": {"requests": {"cpu": "x"}}}]},
                                   type(Pod().spec)))
    for _ in range(2):
        with pytest.raises(QuantityError):
            PodInfo(pod)
    assert not node_info._DERIVED


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    node_info._DERIVED.clear()
    monkeypatch.setattr(node_info, "_DERIVED_MAX", 3)
    for cpu in range(1, 10):
        pod = decode(Pod, {"metadata": {"name": "p", "namespace": "ns"},
                           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": str(cpu)}}}]}})
        assert PodInfo(pod).requests == {"cpu": cpu * 1000}
        assert len(node_info._DERIVED) <= 3
