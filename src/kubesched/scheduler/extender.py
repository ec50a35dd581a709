"""The HTTP scheduler extender (upstream ``pkg/scheduler/extender.go`` ``HTTPExtender``, the
wire types of ``staging/src/k8s.io/kube-scheduler/extender/v1/types.go``, and
``pkg/scheduler/scheduler.go`` ``buildExtenders``).

Protocol: ``POST <urlPrefix without trailing "/">/<verb>`` with ``Content-Type:
application/json``; the JSON keys are the Go field names (``Pod``, ``Nodes``, ``NodeNames``,
``FailedNodes``, …) — on decode they are matched case-insensitively, as Go's
``encoding/json`` does. A non-200 answer is ``failed <verb> with extender at URL <url>, code
<n>``; a transport failure ``Post "<url>": <cause>``; a timeout (``httpTimeout``, default 5 s)
``Post "<url>": context deadline exceeded (Client.Timeout exceeded while awaiting headers)``.

The client is synchronous (the scheduling cycle is) — one ``httpx.Client`` per extender, with
keep-alive — and thread-safe: the scheduler calls the prioritize verbs of several extenders
concurrently from a thread pool, as upstream does from goroutines.

Pods and nodes are sent as kubesched's slim typed views (``kubesched.api.objects``): fields the
scheduler does not model are absent from the JSON (upstream sends the whole object). With
``nodeCacheCapable: true`` only node names are sent, as upstream.

TLS (``enableHTTPS``, ``tlsConfig``) as upstream ``makeTransport``: the CA from ``caFile`` /
``caData``; with ``enableHTTPS`` and no CA the server certificate is not verified;
``insecure`` skips verification; ``serverName`` is the name checked and sent in SNI; a client
certificate from ``certFile``/``keyFile`` or ``certData``/``keyData`` (base64 PEM, as JSON
``[]byte``).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.config.types import Extender as ExtenderConfig
from kubesched.config.types import ExtenderTLSConfig, KubeSchedulerConfiguration, parse_duration
from kubesched.errors import ConfigError
from kubesched.framework.extender import (
    Extender,
    ExtenderError,
    FailedNodesMap,
    HostPriority,
    NodeInfoLookup,
    Victims,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod

__all__ = ["DEFAULT_EXTENDER_TIMEOUT_S", "HTTPExtender", "build_extenders"]

DEFAULT_EXTENDER_TIMEOUT_S = 5.0
"""Upstream ``DefaultExtenderTimeout``."""

_ENC = msgspec.json.Encoder()


def _b64(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"illegal base64 data: {e}", what) from None


def _ssl_context(tls: ExtenderTLSConfig | None, enable_https: bool, path: str) -> ssl.SSLContext | None:
    """Upstream ``makeTransport`` + client-go ``TLSConfigFor``; None = default verification."""
    tls = tls or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (enable_https and not has_ca)
    has_cert = bool(tls.cert_file or tls.cert_data)
    if not (insecure or has_ca or has_cert or tls.server_name):
        return None
    if insecure and has_ca:  # client-go: "specifying a root certificates file with the insecure flag is not allowed"
        raise ConfigError("specifying a root certificates file with the insecure flag is not allowed",
                          f"{path}.tlsConfig")
    ctx = ssl.create_default_context()
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    steps: list[tuple[str, Any]] = []
    if tls.ca_file:
        steps.append(("caFile", lambda: ctx.load_verify_locations(cafile=tls.ca_file)))
    if tls.ca_data:
        steps.append(("caData", lambda: ctx.load_verify_locations(
            cadata=_b64(tls.ca_data, f"{path}.tlsConfig.caData").decode())))
    if has_cert:
        steps.append(("certFile" if tls.cert_file and not tls.cert_data else "certData",
                      lambda: _load_client_cert(ctx, tls, path)))
    for field_name, load in steps:
        try:
            load()
        except ConfigError:
            raise
        except OSError as e:
            fname = e.filename or {"caFile": tls.ca_file, "certFile": tls.cert_file}.get(field_name)
            what = f"open {fname}: {(e.strerror or str(e)).lower()}" if fname else str(e.strerror or e)
            raise ConfigError(f"invalid TLS configuration: {what}", f"{path}.tlsConfig.{field_name}") from None
        except (ssl.SSLError, UnicodeDecodeError, ValueError) as e:
            raise ConfigError(f"invalid TLS configuration: {e}", f"{path}.tlsConfig.{field_name}") from None
    return ctx


def _load_client_cert(ctx: ssl.SSLContext, tls: ExtenderTLSConfig, path: str) -> None:
    cert = _b64(tls.cert_data, f"{path}.tlsConfig.certData") if tls.cert_data else None
    key = _b64(tls.key_data, f"{path}.tlsConfig.keyData") if tls.key_data else None
    if cert is None and key is None:
        ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
        return
    # ssl only loads client certificates from files: write the PEM data to private temp files
    with tempfile.TemporaryDirectory(prefix="kubesched-extender-") as d:
        cert_path = tls.cert_file
        key_path = tls.key_file
        if cert is not None:
            cert_path = os.path.join(d, "cert.pem")
            with open(cert_path, "wb") as f:
                f.write(cert)
        if key is not None:
            key_path = os.path.join(d, "key.pem")
            with open(key_path, "wb") as f:
                f.write(key)
        ctx.load_cert_chain(cert_path, key_path or None)


def _lower_keys(obj: Any) -> dict[str, Any]:
    """Go's encoding/json matches struct fields case-insensitively."""
    if not isinstance(obj, dict):
        raise ExtenderError(f"json: cannot unmarshal {type(obj).__name__} into Go value of type struct")
    return {str(k).lower(): v for k, v in obj.items()}


def _name_of(item: Any) -> str:
    if isinstance(item, dict):
        meta = item.get("metadata") or {}
        if isinstance(meta, dict):
            return str(meta.get("name", ""))
    return ""


class HTTPExtender:
    """An :class:`~kubesched.framework.extender.Extender` reached over HTTP(S).

    Args:
        config: one ``extenders[i]`` entry of the configuration.
        path: its field path, for configuration errors (``extenders[i]``).

    Raises:
        ConfigError: an invalid ``httpTimeout`` or TLS setting.
    """

    def __init__(self, config: ExtenderConfig, *, path: str = "extenders[0]") -> None:
        self.config = config
        self.url_prefix = config.url_prefix
        self.filter_verb = config.filter_verb
        self.prioritize_verb = config.prioritize_verb
        self.preempt_verb = config.preempt_verb
        self.bind_verb = config.bind_verb
        self.weight = config.weight
        self.node_cache_capable = config.node_cache_capable
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        self.ignorable = config.ignorable
        timeout = DEFAULT_EXTENDER_TIMEOUT_S
        if config.http_timeout:
            try:
                timeout = parse_duration(config.http_timeout)
            except ValueError as e:
                raise ConfigError(str(e), f"{path}.httpTimeout") from None
            if timeout == 0:
                timeout = DEFAULT_EXTENDER_TIMEOUT_S
        self.timeout_s = timeout
        ctx = _ssl_context(config.tls_config, config.enable_https, path)
        self._extensions: dict[str, Any] = {}
        if config.tls_config is not None and config.tls_config.server_name:
            self._extensions["sni_hostname"] = config.tls_config.server_name
        import httpx  # here, not at module level: its import (CLI extras) costs every start ~0.4 s CPU

        self._client = httpx.Client(timeout=httpx.Timeout(timeout), verify=ctx if ctx is not None else True,
                                    headers={"Content-Type": "application/json"}, trust_env=False)

    def __repr__(self) -> str:
        return f"HTTPExtender({self.url_prefix!r})"

    def close(self) -> None:
        """Close the kept-alive connections."""
        self._client.close()

    # ───────────────────────────── the Extender protocol ─────────────────────────────

    def name(self) -> str:
        return self.url_prefix

    def is_ignorable(self) -> bool:
        return self.ignorable

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        if not self.managed_resources:
            return True
        managed = self.managed_resources
        for containers in (pod.spec.containers, pod.spec.init_containers):
            for c in containers:
                res = c.resources
                if any(n in managed for n in res.requests) or any(n in managed for n in res.limits):
                    return True
        return False

    def filter(self, pod: Pod, nodes: list[Node]) -> tuple[list[Node], FailedNodesMap, FailedNodesMap]:
        if not self.filter_verb:
            return nodes, {}, {}
        by_name = {n.metadata.name: n for n in nodes}
        result = _lower_keys(self._send(self.filter_verb, self._extender_args(pod, nodes)))
        if result.get("error"):
            raise ExtenderError(str(result["error"]))
        names: list[str] | None = None
        if self.node_cache_capable and result.get("nodenames") is not None:
            names = [str(n) for n in result["nodenames"]]
        elif result.get("nodes") is not None:
            items = _lower_keys(result["nodes"]).get("items") or []
            names = [_name_of(item) for item in items]
        feasible: list[Node] = []
        for name in names or ():
            node = by_name.get(name)
            if node is None:
                raise ExtenderError(f"extender {self.url_prefix!r} claims a filtered node {name!r} "
                                    "which is not found in the input node list".replace("'", '"'))
            feasible.append(node)
        return feasible, _failed_map(result.get("failednodes")), _failed_map(result.get("failedandunresolvablenodes"))

    def prioritize(self, pod: Pod, nodes: list[Node]) -> tuple[list[HostPriority], int]:
        if not self.prioritize_verb:
            return [(n.metadata.name, 0) for n in nodes], 0
        result = self._send(self.prioritize_verb, self._extender_args(pod, nodes))
        if result is None:
            return [], self.weight
        if not isinstance(result, list):
            raise ExtenderError("json: cannot unmarshal object into Go value of type v1.HostPriorityList")
        out: list[HostPriority] = []
        for item in result:
            hp = _lower_keys(item)
            try:
                out.append((str(hp.get("host", "")), int(hp.get("score", 0))))
            except (TypeError, ValueError):
                raise ExtenderError(f"json: cannot unmarshal {hp.get('score')!r} into Go struct field "
                                    "HostPriority.Score of type int64") from None
        return out, self.weight

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        if not self.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        result = _lower_keys(self._send(self.bind_verb, {"PodName": name, "PodNamespace": namespace,
                                                          "PodUID": uid, "Node": node}))
        if result.get("error"):
            raise ExtenderError(str(result["error"]))

    def process_preemption(self, pod: Pod, node_to_victims: dict[str, Victims],
                           node_info: NodeInfoLookup) -> dict[str, Victims]:
        if not self.preempt_verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.url_prefix} but run into "
                                "ProcessPreemption")
        args: dict[str, Any] = {"Pod": pod}
        if self.node_cache_capable:
            args["NodeNameToVictims"] = None
            args["NodeNameToMetaVictims"] = {
                node: {"Pods": [{"UID": p.metadata.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in node_to_victims.items()}
        else:
            args["NodeNameToVictims"] = {node: {"Pods": v.pods, "NumPDBViolations": v.num_pdb_violations}
                                         for node, v in node_to_victims.items()}
            args["NodeNameToMetaVictims"] = None
        result = _lower_keys(self._send(self.preempt_verb, args))
        meta = result.get("nodenametometavictims") or {}
        if not isinstance(meta, dict):
            raise ExtenderError("json: cannot unmarshal NodeNameToMetaVictims into Go value of type map")
        out: dict[str, Victims] = {}
        for node, mv in meta.items():
            ni = node_info(node)
            if ni is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            if mv is None:
                out[node] = Victims([], 0)
                continue
            mvl = _lower_keys(mv)
            by_uid = {pi.pod.metadata.uid: pi.pod for pi in ni.pods}
            pods = []
            for mp in mvl.get("pods") or []:
                uid = str(_lower_keys(mp).get("uid", ""))
                victim = by_uid.get(uid)
                if victim is None:
                    raise ExtenderError(f"extender: {self.url_prefix} claims to preempt pod (UID: &{{{uid}}}) on "
                                        f"node: {node}, but the pod is not found on that node")
                pods.append(victim)
            out[node] = Victims(pods, int(mvl.get("numpdbviolations") or 0))
        return out

    # ───────────────────────────── transport ─────────────────────────────

    def _extender_args(self, pod: Pod, nodes: Sequence[Node]) -> dict[str, Any]:
        """Upstream ``ExtenderArgs``: names only when the extender caches nodes."""
        if self.node_cache_capable:
            return {"Pod": pod, "Nodes": None, "NodeNames": [n.metadata.name for n in nodes]}
        return {"Pod": pod, "Nodes": {"metadata": {}, "items": list(nodes)}, "NodeNames": None}

    def _send(self, verb: str, args: Any) -> Any:
        """Upstream ``send``: POST, 200 or an error, decode the JSON answer."""
        import httpx

        url = self.url_prefix.rstrip("/") + "/" + verb
        try:
            body = _ENC.encode(args)
            resp = self._client.post(url, content=body, extensions=self._extensions or None)
        except httpx.TimeoutException:
            raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                "(Client.Timeout exceeded while awaiting headers)") from None
        except httpx.HTTPError as e:
            raise ExtenderError(f'Post "{url}": {e or type(e).__name__}') from None
        if resp.status_code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status_code}")
        try:
            return msgspec.json.decode(resp.content)
        except msgspec.DecodeError as e:
            raise ExtenderError(f"invalid JSON from extender at URL {url}: {e}") from None


def _failed_map(value: Any) -> FailedNodesMap:
    if not value:
        return {}
    if not isinstance(value, dict):
        raise ExtenderError("json: cannot unmarshal into Go value of type v1.FailedNodesMap")
    return {str(k): str(v) for k, v in value.items()}


def build_extenders(config: KubeSchedulerConfiguration) -> tuple[list[Extender], KubeSchedulerConfiguration]:
    """Upstream ``buildExtenders``: one :class:`HTTPExtender` per ``extenders[i]``, the ignorable
    ones last; and the configuration with every profile's ``NodeResourcesFit`` args'
    ``ignoredResources`` replaced by the extenders' ``ignoredByScheduler`` managed resources
    (when there are any).

    Raises:
        ConfigError: an invalid extender setting, or a profile without NodeResourcesFit args
            while extenders ignore resources (upstream: "can't find NodeResourcesFitArgs in
            plugin config").
    """
    extenders: list[Extender] = []
    ignorable: list[Extender] = []
    ignored: list[str] = []
    for i, ext in enumerate(config.extenders):
        h = HTTPExtender(ext, path=f"extenders[{i}]")
        (ignorable if ext.ignorable else extenders).append(h)
        ignored.extend(r.name for r in ext.managed_resources if r.ignored_by_scheduler)
    extenders.extend(ignorable)
    if not ignored:
        return extenders, config
    profiles = []
    for i, prof in enumerate(config.profiles):
        pcs = list(prof.plugin_config)
        for k, pc in enumerate(pcs):
            if pc.name == "NodeResourcesFit":
                if pc.args is None or not hasattr(pc.args, "ignored_resources"):
                    raise ConfigError(f"want args to be of type NodeResourcesFitArgs, got {type(pc.args).__name__}",
                                      f"profiles[{i}].pluginConfig[{k}].args")
                pcs[k] = msgspec.structs.replace(pc, args=msgspec.structs.replace(pc.args,
                                                                                  ignored_resources=list(ignored)))
                break
        else:
            raise ConfigError("can't find NodeResourcesFitArgs in plugin config", f"profiles[{i}].pluginConfig")
        new_prof = msgspec.structs.replace(prof, plugin_config=pcs)
        new_prof.__dict__.update(prof.__dict__)  # plugin_paths (config.types.KubeSchedulerProfile)
        profiles.append(new_prof)
    return extenders, msgspec.structs.replace(config, profiles=profiles)
