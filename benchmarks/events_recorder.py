"""Event recorder throughput against the box API server (issue 7 §3: events never block scheduling).

The box runs as its own process (``kubesched apiserver --insecure-http``, in memory; with
``--in-process`` in a background thread of this process instead, sharing the GIL). Two
figures: distinct events (one POST each: the Scheduled event of N different pods) and repeats of
one event (aggregated into a series: 2 writes whatever N). Also how long ``emit`` takes, i.e. what
the scheduling loop pays per event.

    PYTHONPATH=src python benchmarks/events_recorder.py --events 5000 [--in-process]

Prints figures; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

from kubesched.apiserver.launcher import run_server
from kubesched.kube.client import APIClient
from kubesched.kube.events import EventRecorder


@contextlib.contextmanager
def box_process() -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kubesched.cli.main", "apiserver", "--in-memory",
                             "--insecure-http", "--token", "", f"--port={port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
                break
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def box_thread() -> Iterator[str]:
    with run_server(token=None) as box:
        yield box.url


async def main(n: int, in_flight: int, in_process: bool) -> None:
    with (box_thread() if in_process else box_process()) as url:
        async with APIClient.for_server(url) as client:
            rec = EventRecorder(client, "default-scheduler", queue_size=max(1000, n), max_in_flight=in_flight)
            task = asyncio.create_task(rec.run())
            await asyncio.sleep(0.1)  # the discovery probe
            t0 = time.perf_counter()
            for i in range(n):
                rec.emit({"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": f"p{i}", "uid": f"u{i}"},
                         None, "Normal", "Scheduled", "Binding", f"Successfully assigned default/p{i} to n1")
            t_emit = time.perf_counter() - t0
            await rec.stop(flush_timeout=600)
            t_all = time.perf_counter() - t0
            print(f"distinct events: {n}  emit: {t_emit / n * 1e6:.1f} µs/event  written: {rec.written}  "
                  f"failed: {rec.failed}  dropped: {rec.dropped}  throughput: {rec.written / t_all:.0f} events/s")
            task.cancel()

            rec = EventRecorder(client, "default-scheduler", queue_size=max(1000, n), max_in_flight=in_flight)
            task = asyncio.create_task(rec.run())
            await asyncio.sleep(0.1)
            t0 = time.perf_counter()
            for _ in range(n):
                rec.emit({"kind": "Pod", "apiVersion": "v1", "namespace": "default", "name": "same", "uid": "u"},
                         None, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes are available")
            await rec.stop(flush_timeout=600)
            t_all = time.perf_counter() - t0
            print(f"repeated event: {n}  written: {rec.written} (POST + series PATCH)  time: {t_all * 1e3:.0f} ms")
            task.cancel()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--in-flight", type=int, default=16)
    ap.add_argument("--in-process", action="store_true")
    a = ap.parse_args()
    asyncio.run(main(a.events, a.in_flight, a.in_process))
