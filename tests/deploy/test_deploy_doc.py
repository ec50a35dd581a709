"""docs/deploy.md's walkthrough, run as written: the ``sh`` blocks after a ``<!-- walkthrough -->``
marker, in order, in one bash process (``set -euo pipefail``) against kubesched's own API server.

Skipped: the ``<!-- walkthrough: image -->`` block (``make image`` takes minutes and needs
mmdebstrap and umoci; tests/deploy/test_image.py runs the archive). ``<!-- walkthrough: helm -->``
runs when helm is there (``$HELM``, ``make helm``'s cache, or ``helm`` on PATH), else its
``<!-- walkthrough: no-helm -->`` alternative (``kubectl apply -f deploy/``). The ports 10259/10260
become free ones. Then the outcome is checked: each pod bound by the scheduler it names, the
metrics scraped with a token.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from deployhelpers import REPO, helm_bin

DOC = REPO / "docs" / "deploy.md"
_BLOCK = re.compile(r"<!-- walkthrough(?:: ([a-z-]+))? -->\n```sh\n(.*?)```", re.S)


def walkthrough_blocks() -> list[tuple[str, str]]:
    """(tag, script) of every marked block, in the document's order ('' = always run)."""
    return [(m.group(1) or "", m.group(2)) for m in _BLOCK.finditer(DOC.read_text())]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _helm() -> str | None:
    for cand in (os.environ.get("HELM"), str(helm_bin()), shutil.which("helm")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def test_the_doc_has_the_walkthrough_steps() -> None:
    tags = [t for t, _ in walkthrough_blocks()]
    assert tags == ["image", "", "helm", "no-helm", "", "", ""]


@pytest.mark.skipif(shutil.which("kubectl") is None or shutil.which("curl") is None,
                    reason="needs kubectl and curl on PATH")
def test_walkthrough_runs_against_the_box(tmp_path: Path) -> None:
    helm = _helm()
    skip = {"image", "no-helm" if helm else "helm"}
    ports = {"10259": str(_free_port()), "10260": str(_free_port())}
    body = "\n".join(script for tag, script in walkthrough_blocks() if tag not in skip)
    for old, new in ports.items():
        body = body.replace(old, new)
    script = tmp_path / "walkthrough.sh"
    script.write_text("set -euo pipefail\n" + body + '\necho "DEMO=$DEMO"\n')
    bindir = tmp_path / "bin"  # `kubesched` as installed: this checkout's code
    bindir.mkdir()
    (bindir / "kubesched").write_text(f"#!/bin/sh\nexec {sys.executable} -m kubesched.cli.main \"$@\"\n")
    (bindir / "kubesched").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(REPO / "src"), "HOME": str(tmp_path)}
    env.pop("KUBECONFIG", None)
    if helm:
        env["HELM"] = helm
    proc = subprocess.Popen(["bash", str(script)], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"the walkthrough did not finish in 600 s:\n{out[-4000:]}")
    finally:
        try:  # the API server and the schedulers it left in the background
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, out[-4000:]
    events = {m.group(1): m.group(2) for m in re.finditer(r"^(hello|other)\s+(\S+)\s+Successfully assigned",
                                                           out, re.M)}
    assert events == {"hello": "kubesched", "other": "default-scheduler"}, out[-4000:]
    attempts = [ln for ln in out.splitlines() if ln.startswith("scheduler_schedule_attempts_total{")]
    assert any('profile="kubesched"' in ln and 'result="scheduled"' in ln and ln.endswith(" 1.0") for ln in attempts), \
        out[-4000:]
    assert "readyz check passed" in out
