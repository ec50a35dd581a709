"""``kubesched simulate`` reads its inputs as the API server would (issue 10 §1).

Each case is an object any API server rejects; the simulator must reject it with the API
server's own message (``pkg/apis/core/validation``, ``pkg/apis/scheduling/validation``,
``pkg/apis/policy/validation`` v1.34 wording, as ``kubectl apply`` prints it after
``The Pod "x" is invalid:``) located at the file and line of the offending field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.errors import ManifestError
from kubesched.sim.manifests import load_manifests
from kubesched.sim.validate import validate_inputs

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
  labels:
    app: web
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests:
        cpu: 100m
{spec}"""

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
    kubernetes.io/hostname: n1
spec:
{spec}status:
  allocatable:
    cpu: "4"
    memory: 8Gi
{status}"""

_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
              "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
          "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_QNAME = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
          "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
          "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_NA = ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
       ".matchExpressions[0]")


def pod(spec: str = "", *, name: str = "p", namespace: str = "default") -> str:
    return POD.format(name=name, namespace=namespace, spec=spec)


def node(spec: str = "  {}\n", status: str = "") -> str:
    return NODE.format(spec=spec, status=status)


def node_affinity(expr: str) -> str:
    return ("  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        nodeSelectorTerms:\n        - matchExpressions:\n" + expr)


# (id, manifest, line of the offending field, the API server's message)
CASES = [
    ("negative-cpu-request", pod().replace("cpu: 100m", 'cpu: "-1"'), 14,
     'Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
     "must be greater than or equal to 0"),
    ("negative-memory-limit", pod("    limits: {}\n").replace("    resources:\n", "    resources:\n      limits:\n"
                                                              "        memory: -1Gi\n").replace("    limits: {}\n", ""),
     14, 'Pod "p" is invalid: [spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": '
     "must be greater than or equal to 0, spec.containers[0].resources.requests[memory]: Invalid value: "
     '"-1Gi": must be greater than or equal to 0]'),  # the request defaulted from the limit fails too
    ("request-above-limit", pod().replace("    resources:\n", "    resources:\n      limits:\n        cpu: 50m\n"),
     15, 'Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "100m": '
     "must be less than or equal to cpu limit of 50m"),
    ("negative-node-allocatable", node(status="").replace('cpu: "4"', 'cpu: "-4"'), 11,
     'Node "n1" is invalid: status.allocatable.cpu: Invalid value: "-4": must be greater than or equal to 0'),
    ("fractional-pods-allocatable", node(status="    pods: 1500m\n"), 13,
     'Node "n1" is invalid: status.allocatable.pods: Invalid value: "1500m": must be an integer'),
    ("name-not-dns-subdomain", pod(name="My_Pod"), 4,
     f'Pod "My_Pod" is invalid: metadata.name: Invalid value: "My_Pod": {_SUBDOMAIN}'),
    ("namespace-not-dns-label", pod(namespace="Team_A"), 5,
     f'Pod "p" is invalid: metadata.namespace: Invalid value: "Team_A": {_LABEL}'),
    ("invalid-label-value", pod().replace("app: web", "app: bad value"), 6,
     f'Pod "p" is invalid: metadata.labels: Invalid value: "bad value": {_LABEL_VALUE}'),
    ("invalid-label-key", pod().replace("app: web", "bad key!: web"), 6,
     f'Pod "p" is invalid: metadata.labels: Invalid value: "bad key!": {_QNAME}'),
    ("no-containers", pod().split("  containers:")[0] + "  containers: []\n", 9,
     'Pod "p" is invalid: spec.containers: Required value'),
    ("container-without-name", pod().replace("  - name: c\n    image: nginx\n", "  - image: nginx\n"), 10,
     'Pod "p" is invalid: spec.containers[0].name: Required value'),
    ("duplicate-container-names", pod("  - name: c\n    image: nginx\n").replace("spec:\n  containers:\n",
                                                                                "spec:\n  containers:\n", 1),
     15, 'Pod "p" is invalid: spec.containers[1].name: Duplicate value: "c"'),
    ("host-port-out-of-range", pod().replace("    image: nginx\n", "    image: nginx\n    ports:\n"
                                             "    - containerPort: 80\n      hostPort: 70000\n"), 14,
     'Pod "p" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: 70000: '
     "must be between 1 and 65535, inclusive"),
    ("container-port-missing", pod().replace("    image: nginx\n", "    image: nginx\n    ports:\n"
                                             "    - hostPort: 8080\n"), 13,
     'Pod "p" is invalid: spec.containers[0].ports[0].containerPort: Required value'),
    ("in-without-values", pod(node_affinity("          - key: zone\n            operator: In\n")), 20,
     f'Pod "p" is invalid: {_NA}.values: Required value: '
     "must be specified when `operator` is 'In' or 'NotIn'"),
    ("exists-with-values", pod(node_affinity("          - key: zone\n            operator: Exists\n"
                                             "            values: [a]\n")), 22,
     f'Pod "p" is invalid: {_NA}.values: Forbidden: '
     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    ("gt-two-values", pod(node_affinity("          - key: cores\n            operator: Gt\n"
                                        "            values: ['1', '2']\n")), 22,
     f'Pod "p" is invalid: {_NA}.values: Required value: '
     "must be specified single value when `operator` is 'Lt' or 'Gt'"),
    ("unknown-selector-operator", pod(node_affinity("          - key: zone\n            operator: Within\n"
                                                    "            values: [a]\n")), 21,
     f'Pod "p" is invalid: {_NA}.operator: Invalid value: "Within": not a valid selector operator'),
    ("preferred-weight-zero", pod("  affinity:\n    nodeAffinity:\n"
                                  "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                                  "      - weight: 0\n        preference:\n          matchExpressions:\n"
                                  "          - {key: zone, operator: In, values: [a]}\n"), 18,
     'Pod "p" is invalid: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: '
     "Invalid value: 0: must be in the range 1-100"),
    ("pod-affinity-weight-101", pod("  affinity:\n    podAffinity:\n"
                                    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                                    "      - weight: 101\n        podAffinityTerm:\n          topologyKey: zone\n"
                                    "          labelSelector: {matchLabels: {app: web}}\n"), 18,
     'Pod "p" is invalid: spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: '
     "Invalid value: 101: must be in the range 1-100"),
    ("affinity-empty-topology-key", pod("  affinity:\n    podAntiAffinity:\n"
                                        "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                                        "      - labelSelector: {matchLabels: {app: web}}\n        topologyKey: ''\n"),
     19, 'Pod "p" is invalid: [spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]'
     '.topologyKey: Required value: can not be empty, spec.affinity.podAntiAffinity.'
     'requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": name part must be non-empty, '
     'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: '
     f'"": {_QNAME}]'),
    ("toleration-unknown-effect", pod("  tolerations:\n  - key: a\n    operator: Exists\n    effect: NoSchedul\n"), 18,
     'Pod "p" is invalid: spec.tolerations[0].effect: Unsupported value: "NoSchedul": '
     'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'),
    ("toleration-unknown-operator", pod("  tolerations:\n  - key: a\n    operator: Equals\n    value: b\n"), 17,
     'Pod "p" is invalid: spec.tolerations[0].operator: Unsupported value: "Equals": '
     'supported values: "Equal", "Exists"'),
    ("toleration-exists-with-value", pod("  tolerations:\n  - key: a\n    operator: Exists\n    value: b\n"), 17,
     'Pod "p" is invalid: spec.tolerations[0].operator: Invalid value: "b": '
     "value must be empty when `operator` is 'Exists'"),
    ("toleration-seconds-without-noexecute", pod("  tolerations:\n  - key: a\n    operator: Exists\n"
                                                 "    effect: NoSchedule\n    tolerationSeconds: 5\n"), 18,
     'Pod "p" is invalid: spec.tolerations[0].effect: Invalid value: "NoSchedule": '
     "effect must be 'NoExecute' when `tolerationSeconds` is set"),
    ("max-skew-zero", pod("  topologySpreadConstraints:\n  - maxSkew: 0\n    topologyKey: zone\n"
                          "    whenUnsatisfiable: DoNotSchedule\n    labelSelector: {matchLabels: {app: web}}\n"), 16,
     'Pod "p" is invalid: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: '
     "must be greater than zero"),
    ("when-unsatisfiable-unknown", pod("  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
                                       "    whenUnsatisfiable: Never\n"), 18,
     'Pod "p" is invalid: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": '
     'supported values: "DoNotSchedule", "ScheduleAnyway"'),
    ("min-domains-with-schedule-anyway", pod("  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
                                             "    whenUnsatisfiable: ScheduleAnyway\n    minDomains: 2\n"), 19,
     'Pod "p" is invalid: spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: '
     "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
    ("min-domains-zero", pod("  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
                             "    whenUnsatisfiable: DoNotSchedule\n    minDomains: 0\n"), 19,
     'Pod "p" is invalid: spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: '
     "must be greater than zero"),
    ("spread-empty-topology-key", pod("  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: ''\n"
                                      "    whenUnsatisfiable: DoNotSchedule\n"), 17,
     'Pod "p" is invalid: spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty'),
    ("node-selector-bad-value", pod("  nodeSelector:\n    zone: a b\n"), 15,
     f'Pod "p" is invalid: spec.nodeSelector: Invalid value: "a b": {_LABEL_VALUE}'),
    ("preemption-policy-unknown", pod("  preemptionPolicy: Sometimes\n"), 15,
     'Pod "p" is invalid: spec.preemptionPolicy: Unsupported value: "Sometimes": '
     'supported values: "PreemptLowerPriority", "Never"'),
    ("restart-policy-unknown", pod("  restartPolicy: Sometimes\n"), 15,
     'Pod "p" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": '
     'supported values: "Always", "OnFailure", "Never"'),
    ("node-taint-unknown-effect", node("  taints:\n  - key: a\n    effect: NoSchedul\n"), 10,
     'Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "NoSchedul": '
     'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'),
    ("node-taint-without-effect", node("  taints:\n  - key: a\n    value: b\n"), 9,
     'Node "n1" is invalid: metadata.taints[0].effect: Required value'),
    ("priority-class-too-high", "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: huge\n"
     "value: 2000000000\n", 5,
     'PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: '
     "maximum allowed value of a user defined priority is 1000000000"),
    ("pvc-without-access-modes", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\nspec:\n"
     "  resources:\n    requests:\n      storage: 1Gi\n", 5,
     'PersistentVolumeClaim "c" is invalid: spec.accessModes: Required value: at least 1 access mode is required'),
    ("pvc-zero-storage", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\nspec:\n"
     "  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: '0'\n", 7,
     'PersistentVolumeClaim "c" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero'),
    ("pv-unknown-access-mode", "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: v\nspec:\n"
     "  accessModes: [ReadWriteSometimes]\n  capacity: {storage: 1Gi}\n  hostPath: {path: /data}\n", 6,
     'PersistentVolume "v" is invalid: spec.accessModes: Unsupported value: "ReadWriteSometimes": '
     'supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
    ("pv-local-without-node-affinity", "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: v\nspec:\n"
     "  accessModes: [ReadWriteOnce]\n  capacity: {storage: 1Gi}\n  local: {path: /data}\n", 5,
     'PersistentVolume "v" is invalid: spec.nodeAffinity: Required value: Local volume requires node affinity'),
    ("storage-class-binding-mode", "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: s\n"
     "provisioner: ebs.csi.aws.com\nvolumeBindingMode: Later\n", 6,
     'StorageClass.storage.k8s.io "s" is invalid: volumeBindingMode: Unsupported value: "Later": '
     'supported values: "Immediate", "WaitForFirstConsumer"'),
    ("csinode-negative-count", "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata:\n  name: n1\nspec:\n"
     "  drivers:\n  - name: ebs.csi.aws.com\n    nodeID: i-1\n    allocatable:\n      count: -1\n", 10,
     'CSINode.storage.k8s.io "n1" is invalid: spec.drivers[0].allocatable.count: Invalid value: -1: '
     "must be greater than or equal to 0"),
    ("pdb-negative-min-available", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: b\n"
     "spec:\n  minAvailable: -1\n  selector: {matchLabels: {app: web}}\n", 6,
     'PodDisruptionBudget.policy "b" is invalid: spec.minAvailable: Invalid value: -1: '
     "must be greater than or equal to 0"),
]


@pytest.mark.parametrize(("text", "line", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_invalid_input_is_rejected_with_the_api_servers_message(tmp_path: Path, text: str, line: int | None,
                                                                 message: str) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    raws = load_manifests([f])
    with pytest.raises(ManifestError) as exc:
        validate_inputs(raws)
    assert exc.value.message == message
    if line is not None:
        assert exc.value.path == f"{f}:{line}", text.splitlines()[line - 1: line]


def test_the_table_has_at_least_28_cases() -> None:
    assert len(CASES) >= 28 and len({c[0] for c in CASES}) == len(CASES)


def check(tmp_path: Path, text: str, name: str = "in.yaml", **kw: object) -> ManifestError | None:
    f = tmp_path / name
    f.write_text(text)
    try:
        validate_inputs(load_manifests([f]), **kw)  # type: ignore[arg-type]
    except ManifestError as e:
        return e
    return None


def test_unknown_kind_is_kubectls_no_matches(tmp_path: Path) -> None:
    e = check(tmp_path, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
              "apiVersion: v1\nkind: Pood\nmetadata: {name: p}\n")
    assert e is not None and e.message == 'no matches for kind "Pood" in version "v1"'
    assert e.path is not None and e.path.endswith("in.yaml:5")
    e = check(tmp_path, "apiVersion: apps/v2\nkind: Deployment\nmetadata: {name: d}\n")
    assert e is not None and e.message == 'no matches for kind "Deployment" in version "apps/v2"'


def test_kinds_the_scheduler_never_reads_pass_through(tmp_path: Path) -> None:
    assert check(tmp_path, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {anything: 1}\n"
                 "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n") is None


def test_unknown_field_strict_warn_ignore(tmp_path: Path) -> None:
    text = pod().replace("    image: nginx\n", "    image: nginx\n    imagee: nginx\n")
    e = check(tmp_path, text)
    assert e is not None and e.message == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                           'unknown field "spec.containers[0].imagee"')
    assert e.path is not None and e.path.endswith("in.yaml:12")
    warnings: list[str] = []
    assert check(tmp_path, text + "---\n" + text.replace("name: p", "name: q"), field_validation="Warn",
                 warn=warnings.append) is None
    assert len(warnings) == 2 and all('Warning: unknown field "spec.containers[0].imagee"' in w for w in warnings)
    assert "in.yaml:12" in warnings[0] and "in.yaml:28" in warnings[1]
    assert check(tmp_path, text, field_validation="Ignore") is None


def test_wrong_type_is_the_decoders_message(tmp_path: Path) -> None:
    e = check(tmp_path, pod("  nodeSelector: [a]\n"))
    assert e is not None and e.message == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go struct field '
        "PodSpec.spec.nodeSelector of type map[string]string")
    assert e.path is not None and e.path.endswith("in.yaml:15")


def test_json_input_points_at_the_field_line(tmp_path: Path) -> None:
    import json

    doc = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "-1"}}}]}}]}
    text = json.dumps(doc, indent=2)
    e = check(tmp_path, text, name="in.json")
    assert e is not None
    assert e.message.endswith('requests[cpu]: Invalid value: "-1": must be greater than or equal to 0')
    line = next(i for i, s in enumerate(text.splitlines(), 1) if '"cpu": "-1"' in s)
    assert e.path is not None and e.path.endswith(f"in.json:{line}")


def test_same_shape_fast_path_still_checks_every_name(tmp_path: Path) -> None:
    docs = [pod(name=f"p{i}") for i in range(50)]
    assert check(tmp_path, "---\n".join(docs)) is None
    bad = docs + [pod(name="Bad_Name")]
    e = check(tmp_path, "---\n".join(bad))
    assert e is not None and e.message.startswith('Pod "Bad_Name" is invalid: metadata.name: Invalid value')
    bound = [pod(f"  nodeName: n{i}\n", name=f"p{i}") for i in range(20)] + [pod("  nodeName: N_1\n", name="q")]
    e = check(tmp_path, "---\n".join(bound))
    assert e is not None and e.message.startswith('Pod "q" is invalid: spec.nodeName: Invalid value: "N_1"')


def test_limits_default_the_requests(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(pod().replace("      requests:\n        cpu: 100m\n", "      limits:\n        cpu: 200m\n"))
    raws = load_manifests([f])
    validate_inputs(raws)
    assert raws[0].data["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "200m"}


def _dicts_and_lists(v: object, out: list) -> list:
    if isinstance(v, (dict, list)):
        out.append(v)
        for sub in (v.values() if isinstance(v, dict) else v):
            _dicts_and_lists(sub, out)
    return out


@pytest.mark.parametrize("api", [(1, 34), (1, 37)])
@pytest.mark.parametrize("kind", ["Pod", "Node", "PersistentVolume", "PodDisruptionBudget", "StorageClass"])
def test_the_c_speed_decode_precheck_never_accepts_what_the_decoder_rejects(kind: str, api: tuple[int, int]) -> None:
    """``_decodes_cleanly`` (msgspec types built from the schemas) is only a shortcut: whenever
    it says clean, the Python walks that word the API server's errors must find nothing —
    checked on every container of a dumped object, mutated with an unknown key, a value of
    the wrong type and a bad quantity."""
    import copy

    from kubesched.api import schemas
    from kubesched.sim import validate as v
    from kubesched.testing.dump import cluster_dump

    base = next(o for o in cluster_dump(2, 30)["items"] if o["kind"] == kind)
    group, _, version = base["apiVersion"].rpartition("/")
    gvk = (group, version, kind)
    assert v._decodes_cleanly(gvk, base, api)
    n = len(_dicts_and_lists(base, []))
    checked = 0
    for i in range(n):
        for mutation in ("unknown", "wrong-type", "quantity", "out-of-range"):
            obj = copy.deepcopy(base)
            target = _dicts_and_lists(obj, [])[i]
            if mutation == "out-of-range":  # every integer of this object past int64 (strconv ErrRange)
                ints = [k for k, x in (target.items() if isinstance(target, dict) else enumerate(target))
                        if isinstance(x, int) and not isinstance(x, bool)]
                if not ints:
                    continue
                for k in ints:
                    target[k] = 1 << 63
            elif isinstance(target, dict):
                if mutation == "unknown":
                    target["zzUnknown"] = 1
                elif target:
                    key = next(iter(target))
                    target[key] = [] if mutation == "wrong-type" else "12x"
            elif target:
                target[0] = {"zz": 1} if mutation != "quantity" else "1.2.3"
            if v._decodes_cleanly(gvk, obj, api):
                assert schemas.unknown_field_paths(gvk, obj, api) == [] and \
                    schemas.decode_error(gvk, obj, api) is None, (mutation, i)
                checked += 1
    assert checked > 0  # maps (labels, annotations, free-form fields) do take any key


def test_same_spec_fast_path_still_checks_node_names_and_metadata(tmp_path: Path) -> None:
    # distinct labels: each pod is its own shape, but they share one spec (as a ReplicaSet's pods)
    docs = [pod(f"  nodeName: n{i}\n", name=f"p{i}").replace("app: web", f"app: web-{i}") for i in range(10)]
    assert check(tmp_path, "---\n".join(docs)) is None
    e = check(tmp_path, "---\n".join([*docs, pod("  nodeName: N_1\n", name="q").replace("app: web", "app: x")]))
    assert e is not None and e.message.startswith('Pod "q" is invalid: spec.nodeName: Invalid value: "N_1"')
    e = check(tmp_path, "---\n".join([*docs, pod("  nodeName: n1\n", name="q").replace("app: web", "app: -x")]))
    assert e is not None and e.message.startswith('Pod "q" is invalid: metadata.labels: Invalid value: "-x"')


def test_pod_on_an_unknown_node_points_at_node_name(tmp_path: Path) -> None:
    from kubesched.sim.simulate import simulate

    f = tmp_path / "in.yaml"
    f.write_text(pod("  nodeName: ghost\n"))
    raws = load_manifests([f])
    validate_inputs(raws)
    with pytest.raises(ManifestError) as exc:
        simulate(raws)
    assert exc.value.path == f"{f}:15" and 'bound to node "ghost"' in exc.value.message


def test_node_pool_fast_path_still_decodes_and_names_every_node(tmp_path: Path) -> None:
    """Nodes of one pool differ in their addresses, images and nodeInfo: the Python checks run
    once per pool (``_node_key``), but every node is still decoded strictly and its name and
    hostname label checked (upstream: each object is decoded and validated on its own)."""
    import json

    def node(i: int, **status: object) -> dict:
        name = f"n{i}.eu-west-1.compute.internal"
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "pool": "a"}},
                "spec": {"providerID": f"aws:///eu-west-1a/i-{i:08x}"},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi"},
                           "addresses": [{"type": "InternalIP", "address": f"10.0.0.{i}"}],
                           "images": [{"names": [f"img{i}:1"], "sizeBytes": 100 + i}], **status}}

    def run(extra: list[dict]) -> ManifestError | None:
        doc = {"apiVersion": "v1", "kind": "List", "items": [node(i) for i in range(20)] + extra}
        return check(tmp_path, json.dumps(doc, indent=2), name="in.json")

    assert run([]) is None
    e = run([node(30, addresses=[{"type": "InternalIP", "address": 7}])])
    assert e is not None and "cannot unmarshal number into Go struct field NodeAddress" in e.message
    e = run([node(31, images=[{"names": ["x"], "sizeBytes": 1, "zz": 1}])])
    assert e is not None and 'strict decoding error: unknown field "status.images[0].zz"' in e.message
    bad = node(32)
    bad["metadata"]["name"] = bad["metadata"]["labels"]["kubernetes.io/hostname"] = "N_32"
    e = run([bad])
    assert e is not None and e.message.startswith('Node "N_32" is invalid: metadata.name: Invalid value')
    e = run([node(33, allocatable={"cpu": "-4", "memory": "8Gi"})])
    assert e is not None and "status.allocatable.cpu: Invalid value" in e.message


def test_bound_pods_fast_path_still_decodes_every_status_and_name(tmp_path: Path) -> None:
    """Bound pods of one ReplicaSet differ in their status (podIP, startTime): the Python checks
    run once per shape, but each pod's status, name and other per-pod metadata are still
    decoded strictly."""
    docs = [pod(f"  nodeName: n{i}\nstatus:\n  phase: Running\n  podIP: 10.0.0.{i}\n", name=f"p{i}")
            for i in range(20)]
    assert check(tmp_path, "---\n".join(docs)) is None
    e = check(tmp_path, "---\n".join([*docs, pod("  nodeName: n1\nstatus:\n  podIP: 7\n", name="q")]))
    assert e is not None and "cannot unmarshal number into Go struct field PodStatus.status.podIP" in e.message
    e = check(tmp_path, "---\n".join([*docs, pod("  nodeName: n1\nstatus:\n  podIPx: a\n", name="q")]))
    assert e is not None and 'unknown field "status.podIPx"' in e.message
    e = check(tmp_path, "---\n".join([*docs, pod("  nodeName: n1\n", name="q").replace(
        "  name: q\n", "  name: q\n  resourceVersion: 5\n")]))
    assert e is not None and "cannot unmarshal number into Go struct field ObjectMeta.metadata.resourceVersion" \
        in e.message


def test_pods_of_one_spec_share_it_and_keep_their_own_node_and_errors(tmp_path: Path) -> None:
    """The typed spec is decoded once per distinct spec (``nodeName`` aside): each pod still has
    its own node, and a later pod's own metadata is still decoded strictly."""
    from kubesched.sim.simulate import build_store

    node = NODE.format(spec="  unschedulable: false\n", status="").replace("n1", "{n}")
    docs = [node.format(n="n0"), node.format(n="n1"), pod("  nodeName: n0\n", name="a"),
            pod("  nodeName: n1\n", name="b"), pod(name="c"), pod(name="d")]
    f = tmp_path / "in.yaml"
    f.write_text("---\n".join(docs))
    raws = load_manifests([f])
    validate_inputs(raws)
    _, bound, pending, _ = build_store(raws)
    assert [(p.metadata.name, p.spec.node_name) for p, _ in bound] == [("a", "n0"), ("b", "n1")]
    assert [(p.metadata.name, p.spec.node_name) for p, _ in pending] == [("c", ""), ("d", "")]
    assert pending[0][0].spec.containers is pending[1][0].spec.containers  # decoded once
    assert bound[0][0].spec.containers == pending[0][0].spec.containers
    raws[-1].data["metadata"]["labels"] = {"app": 7}  # past the API server's checks: the decoder's own
    with pytest.raises(ManifestError) as exc:
        build_store(raws)
    assert exc.value.message == "Pod default/d: metadata.labels[...]: Expected `str`, got `int`"
