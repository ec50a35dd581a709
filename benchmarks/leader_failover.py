"""Leader fail-over times with the production LeaderElector against the box API server.

Two candidates on one Lease; the leader is stopped either by a crash (its task cancelled without
releasing: the standby must wait for the lease to expire) or by a graceful stop (release: empty
holder, 1 s duration). Prints the time from the stop to the standby leading, per trial.

    PYTHONPATH=src python benchmarks/leader_failover.py                      # 15/10/2 s, 3 trials each
    PYTHONPATH=src python benchmarks/leader_failover.py --lease 2 --renew 1.5 --retry 0.25 --trials 10

Expected (client-go semantics): crash → the lease duration + up to one jittered retry period
(retry × [1, 2.2)); release → up to one jittered retry period (an empty holder is free at once).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from kubesched.apiserver.launcher import run_server
from kubesched.kube.client import APIClient
from kubesched.kube.leaderelection import LeaderElector


async def trial(url: str, name: str, lease: float, renew: float, retry: float, release: bool) -> float:
    clients = [APIClient.for_server(url) for _ in range(2)]
    els = [LeaderElector(c, "kube-system", name, f"c{i}", lease, renew, retry, release_on_cancel=release)
           for i, c in enumerate(clients)]

    async def lead() -> None:
        await asyncio.Event().wait()

    tasks = [asyncio.create_task(el.run(lead, lambda: None)) for el in els]
    try:
        while not any(el.is_leader() for el in els):
            await asyncio.sleep(0.01)
        await asyncio.sleep(retry * 3)  # a few renewals
        i = 0 if els[0].is_leader() else 1
        tasks[i].cancel()
        await asyncio.gather(tasks[i], return_exceptions=True)
        t0 = time.monotonic()
        while not els[1 - i].is_leader():
            await asyncio.sleep(0.005)
        return time.monotonic() - t0
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in clients:
            await c.close()


async def main(a: argparse.Namespace) -> None:
    with run_server(token=None) as box:
        for release in (False, True):
            times = [await trial(box.url, f"lease-{release}-{k}", a.lease, a.renew, a.retry, release)
                     for k in range(a.trials)]
            what = "release on stop" if release else "crash (no release)"
            print(f"{what:20s} lease={a.lease}s renew={a.renew}s retry={a.retry}s: takeover after "
                  f"{', '.join(f'{t:.2f}' for t in times)} s (median {statistics.median(times):.2f} s)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lease", type=float, default=15.0)
    ap.add_argument("--renew", type=float, default=10.0)
    ap.add_argument("--retry", type=float, default=2.0)
    ap.add_argument("--trials", type=int, default=3)
    asyncio.run(main(ap.parse_args()))
