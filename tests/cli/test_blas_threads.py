"""The ``kubesched`` command starts numpy with one OpenBLAS thread unless the user chose a number
(kubesched/cli/__init__.py: kubesched makes no BLAS calls; the idle threads cost start-up CPU)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_PROBE = ("import kubesched.cli.main, numpy, os; "
          "print(os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in __import__('sys').modules)")


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("3", "3")])
def test_openblas_threads_default_to_one_but_the_user_wins(given: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [expected, "True"]
