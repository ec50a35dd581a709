"""The terminal progress bar (issue 18 item 4): absent for quick runs, drawn after the delay,
fed by ``simulate(progress=...)`` with (pending pods attempted, pending pods)."""

from __future__ import annotations

import pytest

from kubesched.cli.progress import DelayedProgress
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate


def test_simulate_reports_pods_attempted_out_of_pending() -> None:
    seen: list[tuple[int, int]] = []
    result = simulate(load_manifests(["examples/quickstart"]), progress=lambda d, t: seen.append((d, t)))
    total = seen[0][1]
    assert all(t == total for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # never goes back
    assert seen[-1][0] == len({o.key for o in result.outcomes if o.attempts}) <= total
    assert len(seen) == result.attempts


def test_no_bar_before_the_delay(capsys: pytest.CaptureFixture[str]) -> None:
    with DelayedProgress("simulate", "pods", delay=3600, enabled=True) as tick:
        for i in range(100):
            tick(i, 100)
        assert tick._bar is None
    assert capsys.readouterr().err == ""


def test_bar_after_the_delay_and_gone_at_exit() -> None:
    with DelayedProgress("simulate", "pods", delay=0, enabled=True) as tick:
        tick(5, 10)
        bar = tick._bar
        assert bar is not None and bar.tasks[0].completed == 5 and bar.tasks[0].total == 10
    assert tick._bar is None and bar.finished is False  # stopped (transient), not completed


def test_disabled_when_stderr_is_not_a_terminal() -> None:
    tick = DelayedProgress("simulate", "pods", delay=0)  # under pytest stderr is captured, not a tty
    tick(1, 2)
    assert not tick.enabled and tick._bar is None
