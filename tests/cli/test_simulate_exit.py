"""``kubesched simulate`` as a process: exit codes and one-line errors, never a traceback
(issue 10 §1): invalid input (2), unwritable outputs, broken pipes, Ctrl-C (130)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO / "src")}
CMD = [sys.executable, "-m", "kubesched.cli.main", "simulate"]


def run(*args: str, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CMD, *args], env=ENV, capture_output=True, text=True, timeout=timeout,
                          **kw)  # type: ignore[call-overload]


def cluster(path: Path, nodes: int, pods: int, *, bad: dict | None = None) -> Path:
    items: list[dict] = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                          "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "500"}}}
                         for i in range(nodes)]
    items += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "10m"}}}]}}
              for i in range(pods)]
    if bad:
        items.append(bad)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
    return path


def assert_one_line(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1, stderr


def test_invalid_input_exits_2_with_the_field_line(tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"
                 "    image: x\n    resources:\n      requests:\n        cpu: '-1'\n")
    r = run("-f", str(f), "-o", "yaml")
    assert r.returncode == 2
    assert_one_line(r.stderr)
    assert r.stderr.strip() == (f'error: {f}:11: Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: '
                                'Invalid value: "-1": must be greater than or equal to 0')


def test_unknown_kind_and_validate_modes(tmp_path: Path) -> None:
    f = tmp_path / "k.yaml"
    f.write_text("apiVersion: v1\nkind: Pood\nmetadata: {name: p}\n")
    r = run("-f", str(f), "-o", "yaml")
    assert r.returncode == 2 and r.stderr.strip() == f'error: {f}:1: no matches for kind "Pood" in version "v1"'
    g = tmp_path / "u.yaml"
    g.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {foo: 1}\n")
    assert run("-f", str(g), "-o", "yaml").returncode == 2
    r = run("-f", str(g), "-o", "yaml", "--validate=warn")
    assert r.returncode == 0 and r.stderr.startswith('Warning: unknown field "spec.foo"')
    r = run("-f", str(g), "-o", "yaml", "--validate=false")
    assert r.returncode == 0 and r.stderr == ""
    r = run("-f", str(g), "--validate=maybe")
    assert r.returncode == 2
    assert_one_line(r.stderr)
    assert "--validate" in r.stderr


def test_unwritable_results_file_is_one_line(tmp_path: Path) -> None:
    f = cluster(tmp_path / "c.json", 2, 3)
    r = run("-f", str(f), "-o", "yaml", "--results-file", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert r.returncode == 2
    assert_one_line(r.stderr)
    assert r.stderr.startswith("error: --results-file: cannot write") and "No such file or directory" in r.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line(tmp_path: Path) -> None:
    f = cluster(tmp_path / "c.json", 2, 50)
    with open("/dev/full", "w") as full:
        r = subprocess.run([*CMD, "-f", str(f), "-o", "yaml"], env=ENV, stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    assert r.returncode == 1
    assert_one_line(r.stderr)
    assert r.stderr.strip() == "error: cannot write output: No space left on device"


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    f = cluster(tmp_path / "c.json", 5, 400)  # output much larger than a pipe buffer
    proc = subprocess.Popen([*CMD, "-f", str(f), "-o", "yaml"], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # as `| head -1`
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    assert first.startswith("apiVersion")
    assert err == "" and code == 0


def test_ctrl_c_is_one_line_and_130(tmp_path: Path) -> None:
    f = cluster(tmp_path / "c.json", 200, 6000)
    results = tmp_path / "r.jsonl"
    proc = subprocess.Popen([*CMD, "-f", str(f), "-o", "yaml", "--results-file", str(results)], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.stat().st_size > 0:
                break  # scheduling has started
            time.sleep(0.05)
        assert proc.poll() is None, "finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert code == 130
    assert err.strip() == "interrupted"


def test_alias_bomb_fails_fast(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    f = tmp_path / "bomb.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + "".join(f"  {x}\n" for x in lines))
    r = run("-f", str(f), "-o", "yaml", timeout=60)
    assert r.returncode == 2
    assert_one_line(r.stderr)
    assert r.stderr.strip().endswith("error converting YAML to JSON: yaml: document contains excessive aliasing")


@pytest.mark.parametrize(("spec", "expected"), [
    ("nope", "--plugin nope: no plugin 'nope' in entry-point group 'kubesched.plugins' "
             "(expected NAME=module:factory, or an entry point name in 'kubesched.plugins')"),
    ("X=no.such.mod:new", "--plugin X=no.such.mod:new: cannot load plugin 'X' from 'no.such.mod:new'"),
    ("X=", "invalid --plugin 'X=': expected NAME=module:factory (or an entry point name in 'kubesched.plugins')"),
])
def test_plugin_errors_show_the_expected_form(tmp_path: Path, spec: str, expected: str) -> None:
    f = cluster(tmp_path / "c.json", 1, 1)
    r = run("-f", str(f), "--plugin", spec)
    assert r.returncode == 2
    assert_one_line(r.stderr)
    assert expected in r.stderr and "NAME=module:factory" in r.stderr
