"""``Handle.SharedDRAManager()`` (upstream ``framework.Handle``; ``scheduler.New`` builds one
``DefaultDRAManager`` shared by every profile): one manager per scheduler, on every profile's
Handle, fed by the scheduler's informer events; none when no profile runs DynamicResources."""

from __future__ import annotations

from typing import Any

from kubesched.config import decode_config
from kubesched.scheduler import Scheduler


def _config(*profiles: dict[str, Any]) -> Any:
    return decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                          "profiles": list(profiles)})


def test_one_manager_shared_by_every_profile() -> None:
    sched = Scheduler(_config({"schedulerName": "a"}, {"schedulerName": "b"}))
    mgr = sched.dra_manager
    assert mgr is not None
    assert [fw.handle.shared_dra_manager for fw in sched.profiles.values()] == [mgr, mgr]
    plugins = [fw.plugins["DynamicResources"] for fw in sched.profiles.values()]
    assert all(pl._manager() is mgr for pl in plugins)
    assert mgr.on_event in sched.object_listeners  # the informer events reach it


def test_no_manager_without_dynamic_resources() -> None:
    off = {"multiPoint": {"disabled": [{"name": "DynamicResources"}]}}
    sched = Scheduler(_config({"schedulerName": "a", "plugins": off}))
    assert sched.dra_manager is None
    assert sched.profiles["a"].handle.shared_dra_manager is None
    assert sched.object_listeners == []
