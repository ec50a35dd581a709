"""Strict decoding: unknown fields, type errors, apiVersion/kind, syntax errors — always ConfigError."""

from __future__ import annotations

import json

import pytest

from kubesched.config import decode_config, load_config
from kubesched.config.args import DefaultPreemptionArgs, NodeResourcesFitArgs
from kubesched.errors import ConfigError, InputError

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def err_of(text, **kw) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        decode_config(text, **kw)
    return info.value


@pytest.mark.parametrize("body, path, message", [
    ("profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Foo\n        wieght: 3\n",
     "profiles[0].plugins.score.enabled[0]", 'unknown field "wieght"'),
    ("paralelism: 3\n", None, 'unknown field "paralelism"'),
    ("profiles:\n- schedulerName: a\n  plugin: {}\n", "profiles[0]", 'unknown field "plugin"'),
    ("profiles:\n- plugins:\n    filters: {}\n", "profiles[0].plugins", 'unknown field "filters"'),
    ("leaderElection:\n  leaderElection: true\n", "leaderElection", 'unknown field "leaderElection"'),
    ("clientConnection:\n  QPS: 5\n", "clientConnection", 'unknown field "QPS"'),
    ("extenders:\n- urlPrefix: http://x\n  enableHttps: true\n", "extenders[0]", 'unknown field "enableHttps"'),
    ("healthzBindAddress: 0.0.0.0:10251\n", None, 'unknown field "healthzBindAddress"'),
])
def test_unknown_fields_are_errors_with_paths(body, path, message):
    err = err_of(HEADER + body)
    assert err.path == path
    assert err.message == message
    assert str(err) == (f"{path}: {message}" if path else message)


def test_unknown_field_inside_known_plugin_args():
    err = err_of(HEADER + """
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          wieght: 2
""")
    assert str(err) == ('profiles[0].pluginConfig[0].args.scoringStrategy.resources[0]: '
                        'unknown field "wieght"')


def test_unknown_plugin_args_are_kept_raw():
    cfg = decode_config(HEADER + "profiles:\n- pluginConfig:\n  - name: Mine\n    args: {anything: [1]}\n")
    assert cfg.profiles[0].plugin_config[0].args == {"anything": [1]}


def test_missing_required_name():
    err = err_of(HEADER + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - weight: 1\n")
    assert str(err) == 'profiles[0].plugins.filter.enabled[0]: missing required field "name"'


@pytest.mark.parametrize("body, text", [
    ("parallelism: lots\n", "parallelism: expected int | null, got str"),
    ("profiles: {}\n", "profiles: expected array, got object"),
    ("leaderElection:\n  leaseDuration: 15\n", "leaderElection.leaseDuration: expected str | null, got int"),
    ("profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {minCandidateNodesAbsolute: x}\n",
     "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: expected int | null, got str"),
])
def test_type_errors_have_paths(body, text):
    assert str(err_of(HEADER + body)) == text


def test_args_may_carry_their_apiversion_and_kind():
    cfg = decode_config(HEADER + """
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: DefaultPreemptionArgs
      minCandidateNodesPercentage: 50
""")
    assert cfg.profiles[0].plugin_config[0].args == DefaultPreemptionArgs(
        min_candidate_nodes_percentage=50, min_candidate_nodes_absolute=100)


def test_args_of_wrong_kind():
    err = err_of(HEADER + """
profiles:
- pluginConfig:
  - name: DefaultPreemption
    args: {kind: InterPodAffinityArgs}
""")
    assert err.path == "profiles[0].pluginConfig[0].args"
    assert err.message == ("args for plugin DefaultPreemption were not of type DefaultPreemptionArgs, "
                           "got InterPodAffinityArgs")


def test_args_not_a_mapping():
    err = err_of(HEADER + "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args: [1]\n")
    assert err.path == "profiles[0].pluginConfig[0].args"
    assert "must be an object" in err.message


@pytest.mark.parametrize("text, path, fragment", [
    ("kind: KubeSchedulerConfiguration\n", "apiVersion", "Required value"),
    ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", "apiVersion",
     'Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: "kubescheduler.config.k8s.io/v1"'),
    ("apiVersion: kubescheduler.config.k8s.io/v1\n", "kind", "Required value"),
    ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n", "kind",
     'Unsupported value: "Policy": supported values: "KubeSchedulerConfiguration"'),
])
def test_api_version_and_kind(text, path, fragment):
    err = err_of(text)
    assert err.path == path
    assert fragment in err.message


def test_yaml_syntax_error_has_line_number():
    err = err_of(HEADER + "profiles:\n- schedulerName: a\n  plugins: [\n", source="sched.yaml")
    assert err.path.startswith("sched.yaml:")
    assert err.message.startswith("invalid YAML")
    line = int(err.path.split(":")[1])
    assert 4 <= line <= 6


def test_yaml_bad_indentation_reports_line():
    err = err_of(HEADER + "parallelism: 4\n  percentageOfNodesToScore: 3\n", source="c.yaml")
    assert err.path.split(":")[:2] == ["c.yaml", "4"]


def test_duplicate_keys_are_rejected():
    err = err_of(HEADER + "parallelism: 4\nparallelism: 5\n", source="c.yaml")
    assert err.path.startswith("c.yaml:4:")
    assert 'key "parallelism" already set in map' in err.message


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a\n- b\n", "just a string"])
def test_non_mapping_documents(text):
    err = err_of(text)
    assert "expected a KubeSchedulerConfiguration object" in err.message


def test_json_input_and_bytes_and_dict():
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "parallelism": 4, "profiles": [{"schedulerName": "x"}]}
    text = json.dumps(doc, indent="\t")  # tabs: valid JSON, invalid YAML
    for data in (text, text.encode(), doc):
        cfg = decode_config(data)
        assert cfg.parallelism == 4
        assert cfg.profiles[0].scheduler_name == "x"


def test_bad_json_reports_position():
    err = err_of('{"apiVersion": }', source="c.json")
    assert err.path == "c.json:1:16"
    assert err.message.startswith("invalid JSON")


def test_non_utf8_bytes():
    assert "UTF-8" in err_of(b"\xff\xfe\x00").message


def test_decode_dict_does_not_mutate_input():
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "DefaultPreemption",
                                           "args": {"kind": "DefaultPreemptionArgs"}}]}]}
    before = json.dumps(doc)
    decode_config(doc)
    assert json.dumps(doc) == before


def test_load_config_file(tmp_path):
    f = tmp_path / "sched.yaml"
    f.write_text(HEADER + "parallelism: 3\n")
    assert load_config(str(f)).parallelism == 3


def test_load_config_missing_file(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path / "nope.yaml"))
    assert info.value.path == str(tmp_path / "nope.yaml")
    assert "cannot read configuration file" in info.value.message


def test_config_errors_are_input_errors():
    assert isinstance(err_of("kind: x\n"), InputError)


def test_typed_struct_fields_round_trip_camel_case():
    cfg = decode_config(HEADER + """
extenders:
- urlPrefix: http://127.0.0.1:8888/
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  bindVerb: bind
  enableHTTPS: true
  tlsConfig: {insecure: true, caFile: /ca.pem, certData: Zm9v}
  httpTimeout: 30s
  nodeCacheCapable: true
  managedResources:
  - name: example.com/foo
    ignoredByScheduler: true
  ignorable: true
clientConnection:
  acceptContentTypes: application/json
""")
    ext = cfg.extenders[0]
    assert ext.enable_https and ext.tls_config.insecure and ext.tls_config.ca_file == "/ca.pem"
    assert ext.tls_config.cert_data == "Zm9v"
    assert ext.http_timeout == "30s" and ext.node_cache_capable and ext.ignorable
    assert ext.managed_resources[0].name == "example.com/foo" and ext.managed_resources[0].ignored_by_scheduler
    assert cfg.client_connection.accept_content_types == "application/json"
    fit = next(pc.args for pc in cfg.profiles[0].plugin_config if pc.name == "NodeResourcesFit")
    assert isinstance(fit, NodeResourcesFitArgs)


def test_encode_config_round_trips():
    from kubesched.config import default_config, encode_config
    cfg = decode_config(HEADER + """
profiles:
- schedulerName: a
  plugins:
    score:
      enabled: [{name: MyScore, weight: 3}]
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]
  - name: Mine
    args: {x: 1}
- schedulerName: b
""")
    for c in (cfg, default_config()):
        doc = encode_config(c)
        assert list(doc)[:2] == ["apiVersion", "kind"]
        assert decode_config(json.loads(json.dumps(doc))) == c
