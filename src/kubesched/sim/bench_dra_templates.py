# ruff: noqa: E501  (upstream comment lines, verbatim)
"""Upstream v1.37.2 scheduler_perf DRA templates for :mod:`kubesched.sim.bench_dra137`, verbatim
(``test/integration/scheduler_perf/<path>``; checked by ``tests/sim/test_bench_dra137.py``)."""

from __future__ import annotations

__all__ = ["DRA_TEMPLATES"]

DRA_TEMPLATES: dict[str, str] = {
    'dra/templates/another-resourceclaimtemplate.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: another-test-claim-template
spec:
  spec:
    controller: another-test-driver.cdi.k8s.io
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
""",
    'dra/templates/deviceclass-consumablecapacity.yaml': r"""apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata:
  name: test-class
spec:
  selectors:
  - cel:
      expression: |-
        device.driver == "test-driver.cdi.k8s.io" &&
        device.allowMultipleAllocations == true
""",
    'dra/templates/deviceclass-extended-resource-scoring.yaml': r"""apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata:
  name: scoring-test-class-{{.Index}}
spec:
  selectors:
  - cel:
      expression: device.driver == "test-driver.cdi.k8s.io"
  # All device classes expose the same extended resource name
  # This allows multiple nodes to satisfy the same pod's extended resource request
  extendedResourceName: example.com/gpu
""",
    'dra/templates/deviceclass-extended-resource.yaml': r"""apiVersion: resource.k8s.io/v1beta2
kind: DeviceClass
metadata:
  name: test-class-{{.Index}}
spec:
  selectors:
  - cel:
      expression: device.driver == "test-driver.cdi.k8s.io"
  {{if eq .class "example.com/gpu"}}extendedResourceName: example.com/gpu-{{.Index}}{{end}}
""",
    'dra/templates/deviceclass-no-devices.yaml': r"""apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: no-devices-class
spec:
  selectors:
  - cel:
      expression: device.driver == "no-such-driver.cdi.k8s.io"
""",
    'dra/templates/deviceclass.yaml': r"""apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: test-class
spec:
  selectors:
  - cel:
      expression: device.driver == "test-driver.cdi.k8s.io"
""",
    'dra/templates/devicetaintrule.yaml': r"""apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: taint-all-devices
spec:
  # Empty selector -> all devices!
  deviceSelector:
  taint:
    key: example.com/taint
    value: tainted
    effect: NoSchedule
""",
    'dra/templates/node-with-dra-test-driver.yaml': r"""apiVersion: v1
kind: Node
metadata:
  # The name is relevant for selecting whether the driver has resources for this node.
  # It's deterministic and can be matched with per-node ResourceSlices.
  name: scheduler-perf-dra-{{.Index}}
  # The label can used by the node selector in ResourceSlices to scope devices to nodes
  # that have DRA enabled. Only use this for workloads which simulate network-attached
  # devices, it wouldn't be realistic for node-local devices.
  labels:
    node-with-dra: "true"
spec: {}
status:
  capacity:
    pods: "110"
    cpu: "4"
    memory: 32Gi
  conditions:
    - status: "True"
      type: Ready
  phase: Running
""",
    'dra/templates/pod-in-podgroup-with-claim-ref.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: test-dra
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      claims:
      - name: resource
  resourceClaims:
  - name: resource
    resourceClaimName: test-claim-{{Mod .Index .PodGroupCount}}
  schedulingGroup:
    podGroupName: test-dra-{{Mod .Index .PodGroupCount}}
""",
    'dra/templates/pod-in-podgroup-with-claim-template.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: test-dra
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      claims:
      - name: resource
  resourceClaims:
  - name: resource
    resourceClaimTemplateName: test-claim-template
  schedulingGroup:
    podGroupName: test-dra-{{Mod .Index .PodGroupCount}}
""",
    'dra/templates/pod-with-claim-ref.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: test-dra-{{.Index}}
spec:
  containers:
  - image: registry.k8s.io/pause:3.9
    name: pause
    resources:
      claims:
      - name: resource
  resourceClaims:
  - name: resource
    # Five pods share access to the same claim.
    resourceClaimName: test-claim-{{DivideInt .Index 5}}
""",
    'dra/templates/pod-with-claim-template.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: test-dra
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      claims:
      - name: resource
  resourceClaims:
  - name: resource
    resourceClaimTemplateName: test-claim-template
""",
    'dra/templates/pod-with-extended-resource-scoring.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  name: scoring-test-pod-{{.Index}}
spec:
  containers:
  - image: registry.k8s.io/pause:3.9
    name: pause
    resources:
      requests:
        # All pods request the same extended resource
        # This forces the scheduler to choose between multiple nodes
        example.com/gpu: 1
      limits:
        example.com/gpu: 1
""",
    'dra/templates/pod-with-extended-resource.yaml': r"""# Pod template for extended resource tests.
# Pods cycle through .classes device classes (example.com/gpu-0 through example.com/gpu-24 for .classes == 25).
# The class can be explicit or implicit depending on .class.
# When .classes is 1, all requests use the same class because "X modulo 1" is always zero.
apiVersion: v1
kind: Pod
metadata:
  name: test-dra-{{.Index}}
spec:
  containers:
  - image: registry.k8s.io/pause:3.9
    name: pause
    resources:
      requests:
        {{.class}}-{{Mod .Index .classes}}: 1
      limits:
        {{.class}}-{{Mod .Index .classes}}: 1
""",
    'dra/templates/pod-with-many-claim-templates.yaml': r"""apiVersion: v1
kind: Pod
metadata:
  generateName: test-dra
spec:
  containers:
  - image: registry.k8s.io/pause:3.10.1
    name: pause
    resources:
      claims:
      - name: resource-1a
      - name: resource-1b
      - name: resource-2a
      - name: resource-2b
  resourceClaims:
  - name: resource-1a
    resourceClaimTemplateName: test-claim-template
  - name: resource-1b
    resourceClaimTemplateName: test-claim-template
  - name: resource-2a
    resourceClaimTemplateName: another-test-claim-template
  - name: resource-2b
    resourceClaimTemplateName: another-test-claim-template
""",
    'dra/templates/podgroup-with-claim-ref.yaml': r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: test-dra-{{.Index}}
spec:
  resourceClaims:
  - name: resource
    resourceClaimName: test-claim-{{.Index}}
  schedulingPolicy:
    basic: {}
""",
    'dra/templates/podgroup-with-claim-template.yaml': r"""apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: test-dra-{{.Index}}
spec:
  resourceClaims:
  - name: resource
    resourceClaimTemplateName: test-claim-template
  schedulingPolicy:
    basic: {}
""",
    'dra/templates/resourceclaim-partitionable-backtracking.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: test-claim-{{.Index}}
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: test-class
        count: 7
""",
    'dra/templates/resourceclaim-partitionable.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: test-claim-{{.Index}}
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: test-class
        count: 2
""",
    'dra/templates/resourceclaim.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: test-claim-{{.Index}}
spec:
  devices:
    requests:
    - name: req-0
      exactly:
        deviceClassName: test-class
""",
    'dra/templates/resourceclaimtemplate-backtracking.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
          count: 7
""",
    'dra/templates/resourceclaimtemplate-consumablecapacity.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
          count: 2
          capacity:
            requests:
              bandwidth: 2500M
      constraints:
      - requests:
        - req-0
        distinctAttribute: dra.example.com/index
""",
    'dra/templates/resourceclaimtemplate-first-available.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        firstAvailable:
        - name: sub-0
          deviceClassName: no-devices-class
        - name: sub-1
          deviceClassName: test-class
""",
    'dra/templates/resourceclaimtemplate-for-two-devices.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
          count: 2
""",
    'dra/templates/resourceclaimtemplate-toleration.yaml': r"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      requests:
      - name: req-0
        exactly:
          deviceClassName: test-class
          tolerations:
          - key: example.com/taint
            operator: Exists
""",
    'dra/templates/resourceclaimtemplate.yaml': r"""{{$numRequests := (or .numRequests 1) | Int}}
{{$selectors := (or .selectors nil) | JSON}}
{{$constraints := (or .constraints nil) | JSON}}

apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: test-claim-template
spec:
  spec:
    devices:
      constraints: {{$constraints}}
      requests:{{range $numRequests}}
      - name: req-{{.}}
        exactly:
          deviceClassName: test-class
          selectors: {{$selectors}}{{end}}
""",
    'dra/templates/resourceslice-basic-devices.yaml': r"""{{$numDevices := or .numDevices 10}}
{{$numPCIRoots := or .numPCIRoots 2}}

kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 1
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  devices:{{range ($numDevices | Int)}}
  - name: basic-device-{{.}}
    # This is based on an Intel GPU (https://github.com/intel/intel-resource-drivers-for-kubernetes/blob/main/doc/gpu/USAGE.md#deployment-validation, under details)
    # because it has a decent, realistic number of attributes.
    # driverVersion was added to enable testing of version support.
    attributes:
      driver:
        string: xe
      driverVersion:
        version: "1.2.3"
      resource.k8s.io/pciRoot:
        string: "{{Mod . $numPCIRoots}}" # The PCI root cycles though all available root numbers.
      family:
        string: Arc Pro B-Series
      health:
        string: Healthy
      model:
        string: B60
      pciAddress:
        string: "0000:0{{.}}:00.0"
      pciId:
        string: "0xe211"
      pciRoot:
         # The PCI root cycles though all available root numbers.
        string: "0{{Mod . $numPCIRoots}}"
      resource.kubernetes.io/pciBusID:
        string: "0000:0{{.}}:00.0"
      resource.kubernetes.io/pciRoot:
        string: pci0000:0{{Mod . $numPCIRoots}}
      sriov:
        bool: true
      type:
        string: gpu
    capacity:
      memory:
        value: 24480Mi
      millicores:
        value: 1k{{end}}
""",
    'dra/templates/resourceslice-compatibilitygroups-devices.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-devices-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 2
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  devices:
  - name: device-1
    consumesCounters:
    - counterSet: counter-set
      counters:
        counter1:
          value: "1"
        counter2:
          value: "1"
      compatibilityGroups:
      - mig
  - name: device-2
    consumesCounters:
    - counterSet: counter-set
      counters:
        counter3:
          value: "1"
        counter4:
          value: "1"
      compatibilityGroups:
      - mig
""",
    'dra/templates/resourceslice-consumablecapacity.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 1
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  devices:
  - name: shareable-device-0
    allowMultipleAllocations: true
    attributes:
      dra.example.com/index:
        int: 0
    capacity:
      bandwidth:
        requestPolicy:
          default: 1M
          validRange:
            min: 1M
            step: 8
        value: 10G
  - name: shareable-device-1
    allowMultipleAllocations: true
    attributes:
      dra.example.com/index:
        int: 1
    capacity:
      bandwidth:
        requestPolicy:
          default: 1M
          validRange:
            min: 1M
            step: 8
        value: 10G
  - name: shareable-device-2
    allowMultipleAllocations: true
    attributes:
      dra.example.com/index:
        int: 2
    capacity:
      bandwidth:
        requestPolicy:
          default: 1M
          validRange:
            min: 1M
            step: 8
        value: 10Gi
  - name: shareable-device-3
    allowMultipleAllocations: true
    attributes:
      dra.example.com/index:
        int: 3
    capacity:
      bandwidth:
        requestPolicy:
          default: 1M
          validRange:
            min: 1M
            step: 8
        value: 10G
""",
    'dra/templates/resourceslice-list-attributes-devices.yaml': r"""{{$numDevices := or .numDevices 64}}
{{$numListValues := or .numListValues 32}}
{{$sharedValue := or .sharedValue "shared-value"}}
{{$numNonMatchingDevices := or .numNonMatchingDevices 32}}

kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 1
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  devices:{{range $deviceIndex := ($numDevices | Int)}}
  - name: device-{{$deviceIndex}}
    attributes:
      dra.example.com/match:
        strings:
        # Keep a contiguous block of non-matching devices before the matching
        # suffix so claim requests must work through that block before they
        # reach enough compatible devices. This is meant to stress the
        # MatchAttribute search path with repeated incompatible checks before
        # the allocator reaches the exact-fit matching suffix.
        {{if ge $deviceIndex ($numNonMatchingDevices | Int)}}
        - {{$sharedValue}}
        {{end}}
        {{range $valueIndex := ($numListValues | Int)}}
        - device-{{$deviceIndex}}-value-{{$valueIndex}}
        {{end}}
{{end}}
""",
    'dra/templates/resourceslice-partitionable-backtracking-countersets.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-countersets-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 2
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  sharedCounters:
  - name: counter-set-for-cpu
    counters:
      cpu1:
        value: "1"
      cpu2:
        value: "1"
      cpu3:
        value: "1"
      cpu4:
        value: "1"
      cpu5:
        value: "1"
      cpu6:
        value: "1"
      cpu7:
        value: "1"
      cpu8:
        value: "1"
  - name: counter-set-for-mem
    counters:
      mem:
        value: "70Gi"
""",
    'dra/templates/resourceslice-partitionable-backtracking-devices.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-devices-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 2
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  devices:
  - name: device-1
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu1:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "20Gi"
  - name: device-2
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu2:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
  - name: device-3
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu3:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
  - name: device-4
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu4:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
  - name: device-5
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu5:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
  - name: device-6
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu6:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
  - name: device-7
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu7:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
  - name: device-8
    consumesCounters:
    - counterSet: counter-set-for-cpu
      counters:
        cpu8:
          value: "1"
    - counterSet: counter-set-for-mem
      counters:
        mem:
          value: "10Gi"
""",
    'dra/templates/resourceslice-partitionable-countersets.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-countersets-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 2
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  sharedCounters:
  - name: counter-set
    counters:
      counter1:
        value: "1"
      counter2:
        value: "1"
      counter3:
        value: "1"
      counter4:
        value: "1"
""",
    'dra/templates/resourceslice-partitionable-devices.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-devices-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 2
  driver: test-driver.cdi.k8s.io
  nodeName: scheduler-perf-dra-{{.Index}}
  devices:
  - name: device-1
    consumesCounters:
    - counterSet: counter-set
      counters:
        counter1:
          value: "1"
        counter2:
          value: "1"
  - name: device-2
    consumesCounters:
    - counterSet: counter-set
      counters:
        counter3:
          value: "1"
        counter4:
          value: "1"
""",
    'dra/templates/resourceslice-podgroup.yaml': r"""kind: ResourceSlice
apiVersion: resource.k8s.io/v1
metadata:
  name: resourceslice-podgroup-{{.Index}}
spec:
  pool:
    name: resourceslice-{{.Index}}
    generation: 1
    resourceSliceCount: 1
  driver: test-driver.cdi.k8s.io
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions:
      - key: node-with-dra
        operator: In
        values:
        - "true"
  devices:
  - name: device
""",
    'dra/extendedresource/scoring/scheduler-config.yaml': r"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: LeastAllocated
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
        - name: example.com/gpu
          weight: 1
""",
}
