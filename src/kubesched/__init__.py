"""kubesched — the Kubernetes scheduler, written in Python.

Same decisions as upstream kube-scheduler (v1.34) for the same cluster and the same
``KubeSchedulerConfiguration``; one engine for live clusters and offline simulation.
See ``DESIGN.md`` (shared) for the architecture: ``api`` → ``config`` → ``framework`` →
``plugins`` / ``cache`` / ``queue`` → ``scheduler`` → ``sim`` / ``kube`` → ``cli``.
"""

__version__ = "0.1.0"
