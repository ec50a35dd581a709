"""kubesched.apiserver — the cluster in a box: a Kubernetes-compatible API server on SQLite.

Usage (tests, the live adapter, benchmarks)::

    from kubesched.apiserver.launcher import run_server, start_server

    # background thread with its own event loop; 127.0.0.1, ephemeral port, random token
    with run_server(tmp_path / "kubeconfig") as srv:
        srv.url              # "https://127.0.0.1:PORT"  (TLS, self-signed CA; bearer token auth)
        srv.ssl_context()    # client ssl.SSLContext trusting the CA (aiohttp: ssl=srv.ssl_context())
        srv.ca_path          # the CA PEM (also inlined as certificate-authority-data in the kubeconfig)
        srv.token            # the bearer token (run_server(token=None) disables auth)
        srv.kubeconfig_path  # kubeconfig for kubectl / clients (KUBECONFIG=...)
        # run_server(tls=False) serves plain http:// (kubectl then sends no token: pair with token=None)
        srv.faults           # fault injection: .compact(), .close_watches(), .watch_close_every = 2.0 (0 = at once),
                             # .fail_writes("pods", subresource="binding", fraction=0.5, code=500|409),
                             # .latency = 0.05, .pause()/.resume(), .clear()
        srv.call(lambda s: s.store.current_rev)   # run code on the server loop
        srv.create(manifest_dict)  # in-process create, same pipeline as POST (admission, defaults)

    # or inside your own running loop
    async with start_server(tmp_path / "kubeconfig") as server:
        server.url, server.token, server.faults, server.store, server.pki.client_context()

    # data_dir=... persists to <dir>/state.db (restart continues RVs); default in memory.
    # stop(): bounded; from its start every request gets 429 Retry-After: 1 + Connection: close
    # (kube-apiserver --shutdown-send-retry-after), so no client is served by a stopped server.
    # simulate_kubelets=True: bound pods go Running (+conditions, podIP), nodes Ready,
    # pods annotated kubesched.io/complete-after-seconds: "N" finish (Succeeded) after N s.

CLI: ``kubesched apiserver [--data-dir DIR | --in-memory] [--port 6443|0] --write-kubeconfig FILE
[--simulate-kubelets] [--insecure-http] [--fault-...]``.

Served: core/v1, apps/v1, batch/v1, policy/v1, scheduling.k8s.io/v1, storage.k8s.io/v1,
coordination.k8s.io/v1, events.k8s.io/v1, resource.k8s.io/v1 (see resources.py). Semantics:
list (label/field selectors, limit/continue, resourceVersion[Match]), watch (NDJSON, bookmarks,
timeoutSeconds, selector transitions as DELETED/ADDED, 200+ERROR 410 for compacted RVs,
sendInitialEvents), PUT with RV preconditions, JSON/merge/strategic patch, status subresources,
pods/binding, pods/eviction (PDBs), graceful deletion, finalizers, namespace lifecycle.

Layers: storage.py (revision log), resources.py (served resources), registry.py (generic store),
handlers.py / listwatch.py / subresources.py / discovery.py / authn.py / authz.py (what the server
serves), server.py (HTTP: filters, routing), controllermanager.py (controllers, GC), faults.py,
launcher.py (run_server, start_server: the production launcher), kubelet.py (simulated kubelets).
Imports kubesched.api, kubesched.features and kubesched.errors only (see docs/architecture.md).
"""
