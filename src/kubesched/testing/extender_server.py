"""A scheduler-extender HTTP server for tests and demos (aiohttp, on its own thread).

It speaks upstream's extender protocol (``staging/src/k8s.io/kube-scheduler/extender/v1``):
``POST /filter``, ``/prioritize``, ``/preempt``, ``/bind`` with the Go-field-name JSON keys.
Its decisions are plain Python callables, and faults are injected per verb::

    with ExtenderServer(filter=lambda pod, names: ({n for n in names if n != "bad"}, {"bad": "no"}, {})) as srv:
        srv.url                  # "http://127.0.0.1:<port>"
        srv.faults["filter"] = 500          # answer 500
        srv.delays["prioritize"] = 2.0      # answer after 2 s (to trip httpTimeout)
        srv.holds["filter"] = threading.Event()   # answer once it is set
        srv.requests             # [(verb, decoded JSON body), ...]

The scheduler's HTTP client is synchronous, so the server runs on a separate thread with its
own event loop; ``ssl_context`` serves HTTPS. Bound to 127.0.0.1 on an ephemeral port.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

__all__ = ["ExtenderServer"]

FilterFn = Callable[[dict[str, Any], list[str]], tuple[set[str], dict[str, str], dict[str, str]]]
PrioritizeFn = Callable[[dict[str, Any], list[str]], dict[str, int]]
PreemptFn = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def _node_names(body: dict[str, Any]) -> list[str]:
    if body.get("NodeNames") is not None:
        return list(body["NodeNames"])
    items = (body.get("Nodes") or {}).get("items") or []
    return [i["metadata"]["name"] for i in items]


class ExtenderServer:
    """See the module docstring. ``filter(pod, node_names) -> (passing names, failedNodes,
    failedAndUnresolvableNodes)``; ``prioritize(pod, node_names) -> {host: score}``;
    ``preempt(pod, NodeNameToMetaVictims-or-NodeNameToVictims) -> NodeNameToMetaVictims``;
    ``bind`` answers success and records ``(namespace, name, node)`` in :attr:`bound`
    (``bind_error`` makes it answer an ``Error``)."""

    def __init__(self, *, filter: FilterFn | None = None, prioritize: PrioritizeFn | None = None,
                 preempt: PreemptFn | None = None, ssl_context: Any = None) -> None:
        self.filter_fn = filter or (lambda pod, names: (set(names), {}, {}))
        self.prioritize_fn = prioritize or (lambda pod, names: {})
        self.preempt_fn = preempt
        self.ssl_context = ssl_context
        self.faults: dict[str, int] = {}
        self.delays: dict[str, float] = {}
        self.answers: dict[str, Any] = {}
        """verb → a JSON value answered as is (malformed answers for tests)."""
        self.holds: dict[str, threading.Event] = {}
        """verb → an event: requests for that verb are answered only once it is set."""
        self.bind_error = ""
        self.bind_fn: Callable[[str, str, str, str], Awaitable[str]] | None = None
        """``await bind_fn(namespace, name, uid, node)`` on this server's event loop performs the
        binding (e.g. through the API server); a non-empty result is answered as the ``Error``."""
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.bound: list[tuple[str, str, str]] = []
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._lock = threading.Lock()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        verb = request.match_info["verb"]
        body = await request.json()
        with self._lock:
            self.requests.append((verb, body))
            delay = self.delays.get(verb, 0.0)
            fault = self.faults.get(verb)
            hold = self.holds.get(verb)
        if delay:
            await asyncio.sleep(delay)
        for _ in range(6000):  # at most 60 s
            if hold is None or hold.is_set():
                break
            await asyncio.sleep(0.01)
        if fault:
            return web.Response(status=fault, text="injected fault")
        if verb in self.answers:
            return web.json_response(self.answers[verb])
        pod = body.get("Pod") or {}
        if verb == "filter":
            names = _node_names(body)
            ok, failed, unresolvable = self.filter_fn(pod, names)
            keep = [n for n in names if n in ok]
            out: dict[str, Any] = {"FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable, "Error": ""}
            if body.get("NodeNames") is not None:
                out["NodeNames"] = keep
                out["Nodes"] = None
            else:
                items = [i for i in (body.get("Nodes") or {}).get("items") or [] if i["metadata"]["name"] in ok]
                out["Nodes"] = {"items": items}
                out["NodeNames"] = None
            return web.json_response(out)
        if verb == "prioritize":
            scores = self.prioritize_fn(pod, _node_names(body))
            return web.json_response([{"Host": h, "Score": s} for h, s in scores.items()])
        if verb == "bind":
            if self.bind_error:
                return web.json_response({"Error": self.bind_error})
            if self.bind_fn is not None:
                err = await self.bind_fn(body["PodNamespace"], body["PodName"], body["PodUID"], body["Node"])
                if err:
                    return web.json_response({"Error": err})
            with self._lock:
                self.bound.append((body["PodNamespace"], body["PodName"], body["Node"]))
            return web.json_response({"Error": ""})
        if verb == "preempt":
            victims = body.get("NodeNameToMetaVictims")
            if victims is None:
                victims = {n: {"Pods": [{"UID": p["metadata"].get("uid", "")} for p in v.get("Pods") or []],
                               "NumPDBViolations": v.get("NumPDBViolations", 0)}
                           for n, v in (body.get("NodeNameToVictims") or {}).items()}
            result = self.preempt_fn(pod, victims) if self.preempt_fn is not None else victims
            return web.json_response({"NodeNameToMetaVictims": result})
        return web.Response(status=404)

    # ───────────────────────────── lifecycle ─────────────────────────────

    def start(self) -> ExtenderServer:
        ready = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                app = web.Application()
                app.router.add_post("/{verb}", self._handle)
                runner = web.AppRunner(app, access_log=None)
                loop.run_until_complete(runner.setup())
                site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self.ssl_context)
                loop.run_until_complete(site.start())
                self._runner = runner
                port = runner.addresses[0][1]
                self.url = f"{'https' if self.ssl_context else 'http'}://127.0.0.1:{port}"
            except BaseException as e:  # noqa: BLE001 - reported to start()
                errors.append(e)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=run, name="extender-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("extender server did not start")
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> ExtenderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def calls(self, verb: str) -> list[dict[str, Any]]:
        """The decoded bodies of the requests received for ``verb``."""
        with self._lock:
            return [b for v, b in self.requests if v == verb]
