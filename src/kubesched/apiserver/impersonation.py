"""User impersonation (``Impersonate-User``, ``Impersonate-Group``, ``Impersonate-Uid``,
``Impersonate-Extra-<key>`` headers), as kube-apiserver v1.37.2's filter with its default
``ConstrainedImpersonation`` (beta, on): ``staging/src/k8s.io/apiserver/pkg/endpoints/filters/
impersonation/constrained_impersonation.go`` and ``mode.go``.

The modes are tried in upstream's order; the first that applies and is allowed wins, else the
first mode's error is the answer (403, ``ForbiddenStatusError``):

- ``associated-node``: a service account impersonating the node it runs on (``system:node:<n>``,
  its ``authentication.kubernetes.io/node-name`` extra) — verb ``impersonate:associated-node`` on
  ``nodes``;
- ``arbitrary-node`` (``system:node:<n>``), ``serviceaccount``
  (``system:serviceaccount:<ns>:<n>``): only the user name may be given; verbs
  ``impersonate:arbitrary-node`` / ``impersonate:serviceaccount``;
- ``user-info``: any other user, with groups, uid and extras (``system:masters`` and the empty
  group refused); verb ``impersonate:user-info``;
- ``legacy``: verb ``impersonate`` on ``users``/``groups``/``serviceaccounts``/``uids``/
  ``userextras`` in the core group (the filter before v1.35).

Each constrained mode first needs ``impersonate-on:<mode>:<verb>`` on the request itself. The
impersonated user gets ``system:authenticated`` (``system:unauthenticated`` for
``system:anonymous``); a service account without groups gets ``system:serviceaccounts`` and
``system:serviceaccounts:<ns>``, a node ``system:nodes``. Groups without a user name → 400.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.apiserver import rbac
from kubesched.apiserver.errors import APIError

__all__ = ["impersonate", "wanted_user"]

_EXTRA_PREFIX = "impersonate-extra-"
_NODE_PREFIX = "system:node:"
_SA_PREFIX = "system:serviceaccount:"
_AUTHN_GROUP = "authentication.k8s.io"
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

Authorizer = Callable[[rbac.Attributes], tuple[bool, str]]


@dataclasses.dataclass
class Wanted:
    """The user the headers ask for (``processImpersonationHeaders``)."""

    name: str
    uid: str = ""
    groups: list[str] = dataclasses.field(default_factory=list)
    extra: dict[str, list[str]] = dataclasses.field(default_factory=dict)


def _go_strings(values: list[str]) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}" if values else "[]string(nil)"


def _go_quoted(values: list[str]) -> str:
    """Go's ``%q`` of a ``[]string``."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def wanted_user(headers: Mapping[str, str] | Any) -> Wanted | None:
    """The impersonation the request's headers ask for, or None. Raises :class:`APIError` 400 when
    groups, a uid or extras are given without a user name (upstream's message)."""
    if "impersonate-" not in "\n".join(headers.keys()).lower():  # most requests: one scan in C
        return None
    name = headers.get("Impersonate-User", "")
    uid = headers.get("Impersonate-Uid", "")
    groups = list(headers.getall("Impersonate-Group", [])) if hasattr(headers, "getall") else \
        [v for k, v in headers.items() if k.lower() == "impersonate-group"]
    extra: dict[str, list[str]] = {}
    for k, v in headers.items():
        if k.lower().startswith(_EXTRA_PREFIX):
            from urllib.parse import unquote

            extra.setdefault(unquote(k.lower()[len(_EXTRA_PREFIX):]), []).append(v)
    if not name and (uid or groups or extra):
        extras = "map[string][]string(nil)" if not extra else "map[string][]string{" + ", ".join(
            f'"{k}":{_go_strings(v)}' for k, v in sorted(extra.items())) + "}"
        raise APIError.bad_request(f'requested &user.DefaultInfo{{Name:"", UID:"{uid}", Groups:'
                                   f"{_go_strings(groups)}, Extra:{extras}}} without impersonating a user name")
    if not name:
        return None
    return Wanted(name, uid, groups, extra)


def _node_name(username: str) -> str | None:
    if not username.startswith(_NODE_PREFIX):
        return None
    name = username[len(_NODE_PREFIX):]
    return name if len(name) <= 253 and _SUBDOMAIN.match(name) else None


def _service_account(username: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: (namespace, name)."""
    if not username.startswith(_SA_PREFIX):
        return None
    ns, sep, name = username[len(_SA_PREFIX):].partition(":")
    return (ns, name) if sep and ns and name and ":" not in name else None


class _Denied(Exception):
    def __init__(self, err: APIError) -> None:
        self.err = err


def _check(authorize: Authorizer, attrs: rbac.Attributes, reason: str | None = None) -> None:
    """``checkAuthorization``: allowed, or the Forbidden error for ``attrs``."""
    if reason is None:
        allowed, why = authorize(attrs)
        if allowed:
            return
        reason = why
    raise _Denied(APIError.forbidden_attributes(attrs, rbac.forbidden_message(attrs, reason)))


def _mode_check(requestor: rbac.UserInfo, wanted: Wanted, verb: str, constrained: bool,
                authorize: Authorizer) -> rbac.UserInfo:
    """``impersonationModeState.check``: the user name, uid, groups and extras each authorized."""
    group = _AUTHN_GROUP if constrained else ""

    def attrs(resource: str, name: str = "", namespace: str = "", sub: str = "") -> rbac.Attributes:
        return rbac.Attributes(requestor, verb, True, api_group=group, resource=resource, name=name,
                               namespace=namespace, subresource=sub)

    groups = list(wanted.groups)
    user_attrs = attrs("users", wanted.name)
    node = _node_name(wanted.name) if constrained else None
    if node is not None:
        user_attrs = attrs("nodes", node)
        if wanted.groups:
            _check(authorize, user_attrs, "when impersonating a node, cannot impersonate groups "
                                          + _go_quoted(wanted.groups))
        groups = ["system:nodes"]
    sa = _service_account(wanted.name)
    if sa is not None:
        user_attrs = attrs("serviceaccounts", sa[1], sa[0])
        if constrained and wanted.groups:
            _check(authorize, user_attrs, "when impersonating a service account, cannot impersonate groups "
                                          + _go_quoted(wanted.groups))
        if not wanted.groups:
            groups = ["system:serviceaccounts", f"system:serviceaccounts:{sa[0]}"]
    _check(authorize, user_attrs)
    if wanted.uid:
        _check(authorize, attrs("uids", wanted.uid))
    if wanted.groups and constrained:
        if "" in wanted.groups:
            _check(authorize, attrs("groups"), "impersonating the empty string group is not allowed")
        if rbac.PRIVILEGED_GROUP in wanted.groups:
            _check(authorize, attrs("groups", rbac.PRIVILEGED_GROUP),
                   "impersonating the system:masters group is not allowed")
    for g in wanted.groups:
        _check(authorize, attrs("groups", g))
    for key, values in wanted.extra.items():
        for v in values:
            _check(authorize, attrs("userextras", v, sub=key))
    if wanted.name == rbac.ANONYMOUS.name:
        if "system:unauthenticated" not in groups:
            groups.append("system:unauthenticated")
    elif "system:unauthenticated" not in groups and "system:authenticated" not in groups:
        groups.append("system:authenticated")
    return rbac.UserInfo(wanted.name, tuple(groups), wanted.uid)


def impersonate(requestor: rbac.UserInfo, wanted: Wanted, request: rbac.Attributes,
                authorize: Authorizer, node_name_extra: str = "") -> rbac.UserInfo:
    """The impersonated user, or raises :class:`APIError` 403 (the first applicable mode's error).

    ``request``: the attributes of the request being made (by ``requestor``), for the constrained
    modes' ``impersonate-on:<mode>:<verb>`` check; ``node_name_extra``: the requestor's
    ``authentication.kubernetes.io/node-name`` (a service account's node)."""
    only_name = not (wanted.uid or wanted.groups or wanted.extra)
    node, sa = _node_name(wanted.name), _service_account(wanted.name)
    modes: list[tuple[str, bool]] = [
        ("associated-node", only_name and node is not None and _service_account(requestor.name) is not None
         and node_name_extra == node),
        ("arbitrary-node", only_name and node is not None),
        ("serviceaccount", only_name and sa is not None),
        ("user-info", node is None and sa is None),
    ]
    first: APIError | None = None
    for mode, applies in modes:
        if not applies:
            continue
        try:
            on = dataclasses.replace(request, user=requestor, verb=f"impersonate-on:{mode}:{request.verb}")
            _check(authorize, on)
            return _mode_check(requestor, wanted, f"impersonate:{mode}", True, authorize)
        except _Denied as d:
            first = first or d.err
    try:
        return _mode_check(requestor, wanted, "impersonate", False, authorize)
    except _Denied as d:
        raise (first or d.err) from None
