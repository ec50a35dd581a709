"""kubesched.controllers — what kube-controller-manager's controllers do, as pure functions on objects.

Both simulated clusters run them, so that they answer alike: ``simulate`` (``kubesched.sim``:
the workload expansion and the in-memory store's PV binding) and the box API server
(``kubesched.apiserver``: its controller loops write the results through its own create path).
Objects in, objects out; no I/O, no clock of its own.

Modules: :mod:`.workloads` (Deployment, ReplicaSet, ReplicationController, StatefulSet,
DaemonSet, Job: the objects one pass creates, scales or deletes), :mod:`.workloadstatus` (their
``.status``), :mod:`.deployments` (the Deployment and ReplicaSet controllers' pure pieces),
:mod:`.pvcontroller` (PV binding, provisioning, default StorageClass, ephemeral claims).

A layer of its own (docs/architecture.md "Layers"): above ``api``, beside ``scheduler``,
imported by ``sim`` and ``apiserver``; it imports only ``api``, ``features`` and ``errors``
(contract ``controllers`` in pyproject.toml).
"""
