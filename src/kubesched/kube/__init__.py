"""kubesched.kube — the live adapter: ``kubesched run`` against a Kubernetes API server.

Modules (upstream counterparts in parentheses):

- :mod:`~kubesched.kube.client` — ``APIClient`` (client-go ``rest``): libcurl and aiohttp,
  QPS/burst token bucket, retries, watch streams, binding.
- :mod:`~kubesched.kube.kubeconfig` — the kubeconfig and the in-cluster configuration
  (client-go ``clientcmd``, ``rest.InClusterConfig``).
- :mod:`~kubesched.kube.reflector`, :mod:`~kubesched.kube.informer` — list/watch/relist with
  tombstones, stores, ordered handlers, the informer factory and the lister the plugins read
  (client-go ``tools/cache``).
- :mod:`~kubesched.kube.adapter` — informer handlers → ``Scheduler.on_*`` (``eventhandlers.go``),
  the live ``ClusterClient`` (binding, status patches, preemption writes), the scheduling loop.
- :mod:`~kubesched.kube.runner` — the process: start-up order, leader election, shutdown
  (``cmd/kube-scheduler/app/server.go``); :mod:`~kubesched.kube.klog` — klog text/JSON logs.
- :mod:`~kubesched.kube.leaderelection`, :mod:`~kubesched.kube.events`,
  :mod:`~kubesched.kube.metrics`, :mod:`~kubesched.kube.endpoints` — Lease leader election,
  events.k8s.io recorder, Prometheus metrics, HTTPS health/metrics/configz endpoints.

May import :mod:`kubesched.scheduler` and below, never :mod:`kubesched.apiserver`.
"""
