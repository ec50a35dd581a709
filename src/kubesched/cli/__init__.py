"""kubesched.cli — the ``kubesched`` command (:mod:`kubesched.cli.main`).

Imported before any command module, so before numpy: ``OPENBLAS_NUM_THREADS`` defaults to 1 here
(a value the user set wins). kubesched makes no BLAS calls — its numpy work is element-wise over
node columns — and OpenBLAS otherwise starts one busy-waiting thread per core at import, ~0.08 CPU-s
of every ``kubesched`` process's start-up on this 2-core machine (``kubesched run``'s 1.3 CPU-s to
ready on 5,000 nodes, ``benchmarks/e2e_upstream.py --startup``).
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
