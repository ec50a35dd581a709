"""Authorization of the box: the authorizer chain (AlwaysAllow, or ``system:masters`` then RBAC
over the stored RBAC objects), impersonation and anonymous requests, and the access reviews.

Follows ``staging/src/k8s.io/apiserver/pkg/endpoints/filters/authorization.go`` and
``impersonation.go``, ``pkg/registry/authorization`` (SubjectAccessReview, SelfSubjectAccessReview,
LocalSubjectAccessReview, SelfSubjectRulesReview).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aiohttp import web

from kubesched.apiserver import impersonation, rbac
from kubesched.apiserver import resources as res
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.handlers import Handlers

__all__ = ["AUTHORIZATION_MODES", "USER", "Authorization"]

#: kube-apiserver ``--authorization-mode`` values the box knows
AUTHORIZATION_MODES = ("RBAC", "AlwaysAllow")

#: the user a request acts as when it impersonates one (else the token's admin)
USER = web.RequestKey("user", rbac.UserInfo)


class Authorization(Handlers):
    """The authorizer chain (``--authorization-mode``: RBAC — ``system:masters`` always allowed,
    the stored RBAC objects for everyone else — or AlwaysAllow), the impersonation and anonymous
    request filters, and the answers of the access reviews."""

    def _init_authz(self, authorization_mode: str) -> None:
        """Raises ValueError for a mode the box does not know."""
        if authorization_mode not in AUTHORIZATION_MODES:
            raise ValueError(f'authorization mode "{authorization_mode}" is not supported (RBAC, AlwaysAllow)')
        #: kube-apiserver ``--authorization-mode``: RBAC (``system:masters`` always allowed, the stored
        #: RBAC objects for everyone else) or AlwaysAllow
        self.authorization_mode = authorization_mode

    def _rbac_objects(self, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        ri = res.find("rbac.authorization.k8s.io", "v1", kind.lower() + "s")
        assert ri is not None
        return [e.obj() for e in self.store.list(ri.key, namespace if ri.namespaced else None)]

    def _authorize(self, attrs: rbac.Attributes) -> tuple[bool, str]:
        """The authorizer chain: AlwaysAllow, or ``system:masters`` then RBAC (``rbac.authorize``)."""
        if self.authorization_mode == "AlwaysAllow":
            return True, ""
        allowed, reason = rbac.authorize(attrs, self._rbac_objects)
        # the authorizer chain names the authorizer in a no-opinion reason (an allow's is kept as is)
        return allowed, reason if allowed or not reason else f"rbac: {reason}"

    def _impersonate(self, request: web.Request, requestor: rbac.UserInfo, wanted: impersonation.Wanted) -> None:
        """``WithImpersonation`` then ``WithAuthorization``: the request continues as the impersonated
        user (``request["user"]``), which RBAC must allow it (403 otherwise)."""
        attrs = rbac.request_attributes(requestor, request.method, request.path, request.query)
        user = impersonation.impersonate(requestor, wanted, attrs, self._authorize)
        request[USER] = user
        attrs = dataclasses.replace(attrs, user=user)
        allowed, reason = self._authorize(attrs)
        if not allowed:
            raise APIError.forbidden_attributes(attrs, rbac.forbidden_message(attrs, reason))

    def _authorize_anonymous(self, request: web.Request) -> None:
        """A request without credentials, anonymous authentication on: ``system:anonymous`` must be
        allowed by RBAC (the bootstrap policy lets it read /healthz, /livez, /readyz, /version only),
        else 403 with upstream's message (``WithAuthorization``)."""
        request[USER] = rbac.ANONYMOUS
        attrs = rbac.request_attributes(rbac.ANONYMOUS, request.method, request.path, request.query)
        allowed, reason = self._authorize(attrs)
        if not allowed:
            raise APIError.forbidden_attributes(attrs, rbac.forbidden_message(attrs, reason))

    def _rules_review_status(self, spec: dict[str, Any], user: rbac.UserInfo) -> dict[str, Any]:
        """``status`` of a SelfSubjectRulesReview of ``user`` in ``spec.namespace``
        (``pkg/registry/authorization/selfsubjectrulesreview/rest.go``): the rule resolvers' rules —
        AlwaysAllow's ``*`` on everything, or RBAC's (:func:`~kubesched.apiserver.rbac.rules_for`).
        Raises :class:`APIError` 400 "no namespace on request" without a namespace."""
        namespace = spec.get("namespace")
        if not isinstance(namespace, str) or not namespace:
            raise APIError.bad_request("no namespace on request")
        if self.authorization_mode == "AlwaysAllow":  # alwaysAllowAuthorizer.RulesFor
            return {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
        return rbac.rules_for(user, namespace, self._rbac_objects)

    def _access_review_status(self, kind: str, spec: dict[str, Any], ns: str | None,
                              requestor: rbac.UserInfo) -> dict[str, Any]:
        """``status`` of a (Self|Local)SubjectAccessReview: the request's subject (the box token's
        admin for SelfSubjectAccessReview) through the authorizer chain (``pkg/registry/authorization``:
        ``allowed``, ``reason`` when there is one; ``denied`` is never set — RBAC has no opinion)."""
        if kind == "SelfSubjectAccessReview":
            user = requestor
        else:
            groups = spec.get("groups")
            user = rbac.UserInfo(str(spec.get("user") or ""),
                                 tuple(g for g in groups if isinstance(g, str)) if isinstance(groups, list) else ())
        ra, nra = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
        if isinstance(ra, dict):
            attrs = rbac.Attributes(user, str(ra.get("verb") or ""), True, api_group=str(ra.get("group") or ""),
                                    resource=str(ra.get("resource") or ""),
                                    subresource=str(ra.get("subresource") or ""), name=str(ra.get("name") or ""),
                                    namespace=str(ra.get("namespace") or (ns or "")))
        else:
            nra = nra if isinstance(nra, dict) else {}
            attrs = rbac.Attributes(user, str(nra.get("verb") or ""), False, path=str(nra.get("path") or ""))
        allowed, reason = self._authorize(attrs)
        return {"allowed": allowed, **({"reason": reason} if reason else {})}
