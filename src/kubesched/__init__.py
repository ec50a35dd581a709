"""kubesched — the Kubernetes scheduler, written in Python.

Same decisions as upstream kube-scheduler (v1.37 by default, v1.34–v1.36 with
``--emulated-version``) for the same cluster and the same ``KubeSchedulerConfiguration``; one
engine for live clusters and offline simulation. See ``docs/architecture.md`` for the
architecture: ``errors`` → ``api`` / ``features`` → ``config`` → ``framework`` → ``plugins`` /
``cache`` / ``queue`` → ``scheduler`` → ``sim`` / ``kube`` / ``apiserver`` → ``box`` → ``cli``.
"""

__version__ = "0.1.0"
