"""Run ``python -m MODULE ARGS...`` under cProfile, switched on and off by signals (a benchmark helper).

    python benchmarks/profile_child.py OUT.prof MODULE [ARGS...]

The profiler starts off; ``START`` (SIGRTMIN+3) enables it, ``STOP`` (SIGRTMIN+4) disables it and writes the stats
(``pstats`` format) to OUT.prof, so a driver profiles only the phase it measures (live.py's
``KUBESCHED_BENCH_BOX_PROFILE``). The stats' total call count is a load-independent measure of
Python work, for comparing commits on a busy machine where CPU seconds are noisy.
``KUBESCHED_PROFILE_TIMER=cpu``: the profile's times are the process's CPU time
(``time.process_time``) instead of wall time, so a ``send()`` preempted by the peer's wake-up is not
billed its wait.
"""

from __future__ import annotations

import cProfile
import os
import runpy
import signal
import sys
import time
from typing import Any

#: the signals that switch the profiler on and off (real-time ones: the box uses SIGUSR1/2 itself)
START = signal.SIGRTMIN + 3
STOP = signal.SIGRTMIN + 4


def main() -> None:
    out, module, *rest = sys.argv[1:]
    cpu = os.environ.get("KUBESCHED_PROFILE_TIMER") == "cpu"
    prof = cProfile.Profile(time.process_time) if cpu else cProfile.Profile()

    def on(*_: Any) -> None:
        prof.enable()

    def off(*_: Any) -> None:
        prof.disable()
        prof.dump_stats(out)

    signal.signal(START, on)
    signal.signal(STOP, off)
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
