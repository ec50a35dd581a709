"""``kubesched up --pod-termination-seconds`` reaches the box's simulated kubelets as
``apiserver --pod-termination-seconds`` does (issue 17)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.cli.up_cmd import up


class _FakeUp:
    seen: list[dict[str, Any]] = []

    def __init__(self, opts: Any, view: Any) -> None:
        _FakeUp.seen.append(dict(opts.extra_server_kw))
        self._stop = None

    def request_stop(self) -> None:
        pass

    async def run(self) -> int:
        return 0


@pytest.mark.parametrize(("args", "want"), [((), 0.0), (("--pod-termination-seconds", "5"), 5.0),
                                            (("--pod-termination-seconds", "-1"), None)])
def test_up_passes_pod_termination_seconds_to_the_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                                         args: tuple[str, ...], want: float | None) -> None:
    import kubesched.box.up as box_up

    monkeypatch.setattr(box_up, "Up", _FakeUp)
    _FakeUp.seen.clear()
    res = CliRunner().invoke(up, ["--data-dir", str(tmp_path), *args])
    assert res.exit_code == 0, res.output
    assert _FakeUp.seen == [{"pod_termination_seconds": want}]


def test_up_help_lists_the_flag() -> None:
    res = CliRunner().invoke(up, ["--help"])
    assert "--pod-termination-seconds" in res.output
