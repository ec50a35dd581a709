# ruff: noqa: E501  (upstream comment lines, verbatim)
"""Upstream v1.37.2 scheduler_perf templates for :mod:`kubesched.sim.bench_events`, verbatim
(``test/integration/scheduler_perf/<path>``; checked by ``tests/sim/test_bench_events.py``)."""

from __future__ import annotations

__all__ = ["EVENTS_TEMPLATES"]

EVENTS_TEMPLATES: dict[str, str] = {
    'event_handling/templates/nodeadd-node-high-capacity.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: node-high-capacity-
spec:
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "200"
    memory: 200Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeadd-node-low-capacity.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: node-low-capacity-
spec:
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "0.1"
    memory: 100Mi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeadd-node-unschedulable.yaml': r"""# Node unschedulable is similar to node unblocker but has unschedulable: true.
apiVersion: v1
kind: Node
metadata:
  generateName: node-unschedulable-
  labels:
    topology.kubernetes.io/zone: zone1
    affinity: allow
    topology: allow
spec:
  unschedulable: true
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeadd-node-with-labels.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: node-unblocker-
  labels:
    topology.kubernetes.io/zone: zone1
    affinity: allow
    topology: allow
spec:
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeadd-node-with-taint.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: node-with-taint-
spec:
  taints:
    - key: toleration
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeadd-pod-interpodaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    color: green
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: topology.kubernetes.io/zone
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeadd-pod-nodeaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: affinity
            operator: In
            values:
            - allow
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeadd-pod-noderesources.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.2
        memory: 200Mi
""",
    'event_handling/templates/nodeadd-pod-nodeunschedulable.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10
    name: pause
""",
    'event_handling/templates/nodeadd-pod-podtopologyspread.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    color: blue
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  topologySpreadConstraints:
    - maxSkew: 1000
      minDomains: 10000
      topologyKey: topology
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          color: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeadd-pod-tainttoleration.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: toleration
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeupdate-node-low-capacity-update.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-low-capacity-{{ .Index }}
spec:
  taints:
  - key: allow-noderesources
    effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-low-capacity.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-low-capacity-{{ .Index }}
spec:
  taints:
  - key: allow-noderesources
    effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "0.0001"
    memory: 1Mi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-unschedulable-update.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-unschedulable-{{ .Index }}
spec:
  taints:
  - key: allow
    effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-unschedulable.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-unschedulable-{{ .Index }}
spec:
  unschedulable: true
  taints:
  - key: allow
    effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-without-labels-update.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-without-labels-{{ .Index }}
  labels:
    topology.kubernetes.io/zone: zone1
    affinity: allow
    topology: allow
spec:
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-without-labels.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-without-labels-{{ .Index }}
spec:
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-without-taints-update.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-without-taints-{{ .Index }}
spec:
  taints:
    - key: toleration-{{ .Index }}
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-node-without-taints.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-without-taints-{{ .Index }}
spec:
  taints:
    - key: allow
      effect: NoSchedule
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/nodeupdate-pod-interpodaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    color: green
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: topology.kubernetes.io/zone
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeupdate-pod-nodeaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: affinity
            operator: In
            values:
            - allow
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeupdate-pod-noderesources.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: allow-noderesources
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.35
        memory: 3Gi
""",
    'event_handling/templates/nodeupdate-pod-nodeunschedulable.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeupdate-pod-podtopologyspread.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    color: blue
spec:
  tolerations:
  - key: allow
    operator: Exists
    effect: NoSchedule
  topologySpreadConstraints:
    - maxSkew: 1
      minDomains: 1
      topologyKey: topology
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          color: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/nodeupdate-pod-tainttoleration.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
spec:
  tolerations:
  - key: toleration-{{ DivideInt .Index 10 }}
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podadd-node.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: scheduler-perf-
spec: {}
status:
  capacity:
    pods: "3000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/podadd-pod-interpodaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-interpodaffinity-
  labels:
    type: unsched
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: yellow-{{ .Index }}
        topologyKey: kubernetes.io/hostname
        namespaces: ["interpodaffinity"]
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podadd-pod-podtopologyspread.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-podtopologyspread-
  labels:
    type: unsched
    topology: blue
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: kubernetes.io/hostname
        namespaces: ["podtopologyspread"]
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          topology: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podadd-pod-unblocker-affinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unblocker-affinity-
  labels:
    color: yellow-{{ .Index }}
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podadd-pod-unblocker-topology.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unblocker-topology-
  labels:
    topology: blue
    color: green
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: kubernetes.io/hostname
        namespaces: ["podtopologyspread"]
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podadd-pod-with-label.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-with-label-
  labels:
    color: green
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/poddelete-pod-blocker-affinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-blocker-affinity-
  labels:
    color: green
    type: blocker
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
  terminationGracePeriodSeconds: 0
""",
    'event_handling/templates/poddelete-pod-blocker-topology-ports-resources.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-blocker-topology-
  labels:
    topology: blue
    type: blocker
spec:
  topologySpreadConstraints:
    - maxSkew: 10
      minDomains: 10000
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          topology: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - hostPort: 8{{ Mod .Index 12 }}
      containerPort: 8{{ Mod .Index 12 }}
    resources:
      requests:
        cpu: 0.35
        memory: 3Gi
  terminationGracePeriodSeconds: 0
""",
    'event_handling/templates/poddelete-pod-interpodaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    color: green
    type: unsched
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green
        topologyKey: kubernetes.io/hostname
        namespaces: ["blockeraffinity"]
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/poddelete-pod-nodeports.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - hostPort: 8{{ Mod .Index 12 }}
      containerPort: 8{{ Mod .Index 12 }}
""",
    'event_handling/templates/poddelete-pod-noderesources.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.2
        memory: 1Gi
""",
    'event_handling/templates/poddelete-pod-nodevolumelimits.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/poddelete-pod-podtopologyspread.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    topology: blue
    type: unsched
spec:
  topologySpreadConstraints:
    - maxSkew: 11
      minDomains: 10000
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          topology: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/poddelete-pod-volumerestrictions.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-unsched-
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
  volumes:
  - name: vol
    persistentVolumeClaim:
      claimName: pvc-{{ .Index }}
""",
    'event_handling/templates/podupdate-node-unschedulable.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: unschedulable-node
spec:
  unschedulable: true
status:
  capacity:
    pods: "90000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/podupdate-node-with-taint.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: node-with-taint
spec:
  taints:
    - key: toleration
      effect: NoSchedule
status:
  capacity:
    pods: "90000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'event_handling/templates/podupdate-pod-blocker-scale-down.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-blocker-{{ .Index }}
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.0001
        memory: 1Mi
  nodeName: scheduler-perf-node
""",
    'event_handling/templates/podupdate-pod-blocker-update.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-blocker-{{ .Index }}
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.0001
        memory: {{ DivideInt 30000 .Count }}Mi
  nodeName: scheduler-perf-node
""",
    'event_handling/templates/podupdate-pod-blocker.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-blocker-{{ .Index }}
  labels:
    color: green-{{ .Index }}
    topology: blue
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.0001
        memory: {{ DivideInt 30000 .Count }}Mi
""",
    'event_handling/templates/podupdate-pod-interpodaffinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-interpodaffinity-
  labels:
    color: green-{{ .Index }}
    type: unsched
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            color: green-{{ .Index }}
        topologyKey: kubernetes.io/hostname
        namespaces: [blocker]
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-noderesources.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-noderesources-{{ .Index }}
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      requests:
        cpu: 0.0001
        memory: {{ DivideInt 30000 .Count }}Mi
""",
    'event_handling/templates/podupdate-pod-nodeunschedulable-update.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-nodeunschedulable-{{ .Index }}
  labels:
    type: unsched
spec:
  tolerations:
  - key: node.kubernetes.io/unschedulable
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-nodeunschedulable.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-nodeunschedulable-{{ .Index }}
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-podtopologyspread.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-podtopologyspread-
  labels:
    type: unsched
    topology: blue
spec:
  topologySpreadConstraints:
    - maxSkew: {{ .Count }}
      minDomains: 100
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: DoNotSchedule
      labelSelector:
        matchLabels:
          topology: blue
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-schedulinggates-update.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-schedulinggates-{{ .Index }}
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-schedulinggates.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-schedulinggates-{{ .Index }}
  labels:
    type: unsched
spec:
  schedulingGates:
  - name: test.k8s.io/hold
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-tainttoleration-update.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-tainttoleration-{{ .Index }}
  labels:
    type: unsched
spec:
  tolerations:
  - key: toleration
    operator: Exists
    effect: NoSchedule
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'event_handling/templates/podupdate-pod-tainttoleration.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: pod-tainttoleration-{{ .Index }}
  labels:
    type: unsched
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'default_preemption/templates/gang-pod.yaml': r"""# Template for PodGroup member pods or regular pods used in default preemption benchmark suites.
# Supported template parameters:
#   - Index: Pod index (required)
#   - podsPerGroup: Number of pods in each gang (required for PodGroup pods)
#   - priority: Priority value (default: 1000)
#   - cpuRequest: Container CPU request (e.g. 300m)
#   - disruptionMode: If set ("single" or "all"), attaches the pod to its PodGroup. If empty, creates a regular pod without PodGroup.
apiVersion: v1
kind: Pod
metadata:
  generateName: gang-pod-
spec:
  priority: {{if .priority}}{{AddInt 0 .priority}}{{else}}1000{{end}}
  {{if .disruptionMode}}
  schedulingGroup:
    podGroupName: gang-{{DivideInt .Index .podsPerGroup}}
  {{end}}

  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    resources:
      limits:
        cpu: {{if .cpuRequest}}{{.cpuRequest}}{{else}}50m{{end}}
        memory: 50Mi
      requests:
        cpu: {{if .cpuRequest}}{{.cpuRequest}}{{else}}50m{{end}}
        memory: 50Mi
""",
    'default_preemption/templates/pod-high-priority.yaml': r"""# High-priority preemptor pod manifest used in preemption benchmark suites.
apiVersion: v1
kind: Pod
metadata:
  generateName: pod-high-priority-
spec:
  terminationGracePeriodSeconds: 0
  priority: 9999999
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    resources:
      limits:
        cpu: 3970m
        memory: 500Mi
      requests:
        cpu: 3970m
        memory: 500Mi
""",
    'misc/templates/node-with-extended-resource.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: scheduler-perf-extended-resource-
  labels:
    node-with-extended-resource: "true"
spec: {}
status:
  capacity:
    pods: "110"
    cpu: "4"
    memory: 32Gi
    foo.com/bar-{{.Index}}: 1
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'misc/templates/pod-with-extended-resource.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: test-extended-resource-{{.Index}}
spec:
  containers:
  - image: registry.k8s.io/pause:3.9
    name: pause
    resources:
      requests:
        foo.com/bar-{{.Index}}: 1
      limits:
        foo.com/bar-{{.Index}}: 1
""",
    'templates/churn/node-default.yaml': r"""apiVersion: v1
kind: Node
metadata:
  generateName: node-churn-
status:
  capacity:
    pods: "0"
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'templates/churn/service-default.yaml': r"""apiVersion: v1
kind: Service
metadata:
  generateName: service-churn-
spec:
  selector:
    app: foo
  ports:
  - protocol: TCP
    port: 8080
    targetPort: 8080
""",
    'templates/gated-pod-with-pod-affinity.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
  labels:
    app: scheduler-perf
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            app: scheduler-perf
        topologyKey: kubernetes.io/hostname
  schedulingGates:
  - name: "scheduling-gate-1"
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'templates/gated-pod.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: gated-pod-
spec:
  schedulingGates:
  - name: test.k8s.io/hold
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'templates/light-pod.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: light-pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
  terminationGracePeriodSeconds: 0
""",
    'templates/node-with-name.yaml': r"""apiVersion: v1
kind: Node
metadata:
  name: scheduler-perf-node
  labels:
    kubernetes.io/hostname: scheduler-perf-node
spec: {}
status:
  capacity:
    pods: "90000"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'templates/pod-default.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.2
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 100m
        memory: 500Mi
      requests:
        cpu: 100m
        memory: 500Mi
""",
    'templates/pod-high-priority-large-cpu.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-h-
spec:
  priority: 10
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      requests:
        cpu: 9
        memory: 500Mi
""",
    'templates/pod-low-priority.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    ports:
    - containerPort: 80
    resources:
      limits:
        cpu: 900m
        memory: 500Mi
      requests:
        cpu: 900m
        memory: 500Mi
""",
    'templates/pod-with-finalizer.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
  finalizers:
  - test.k8s.io/finalizer
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'templates/pod-with-label.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: pod-
  labels:
    app: scheduler-perf
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
""",
    'templates/podgroup.yaml': r"""# Template for PodGroup (Coscheduling / Gang Scheduling).
# Parameters:
#   - Index: Group index (required)
#   - minCount: Minimum pod count required for gang scheduling (required)
#   - priority: Priority value (default: 1000)
#   - disruptionMode: Eviction behavior ("single" or "all", defaults to "all")
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata:
  name: gang-{{.Index}}
spec:
  priority: {{if .priority}}{{AddInt 0 .priority}}{{else}}1000{{end}}
{{if .disruptionMode}}
  disruptionMode:
    {{if eq .disruptionMode "single"}}single: {}{{else}}all: {}{{end}}
{{end}}
  schedulingPolicy:
    gang:
      minCount: {{.minCount}}
""",
    'templates/pv-csi.yaml': r"""apiVersion: v1
kind: PersistentVolume
spec:
  accessModes:
  - ReadOnlyMany
  capacity:
    storage: 1Gi
  csi:
    driver: ebs.csi.aws.com
  persistentVolumeReclaimPolicy: Retain
""",
    'templates/pvc-once-pod.yaml': r"""apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations:
    pv.kubernetes.io/bind-completed: "true"
spec:
  accessModes:
  - ReadWriteOncePod
  resources:
    requests:
      storage: 1Gi
""",
    'templates/pvc.yaml': r"""apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  annotations:
    pv.kubernetes.io/bind-completed: "true"
spec:
  accessModes:
  - ReadOnlyMany
  resources:
    requests:
      storage: 1Gi
""",
}
