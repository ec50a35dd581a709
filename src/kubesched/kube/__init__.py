"""kubesched.kube — the live adapter (reflectors/informers, binder, event recorder, Lease leader
election, HTTP endpoints). Not implemented yet: the engine already takes its inputs through the
``Scheduler.on_*`` handlers and sends decisions through the ``ClusterClient`` protocol
(:mod:`kubesched.framework.handle`), which this package will implement against a real API server.
"""
