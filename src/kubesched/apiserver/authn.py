"""Authentication of the box: the bearer token (a ``system:masters`` admin), anonymous requests,
TokenReview and SelfSubjectReview.

Follows ``staging/src/k8s.io/apiserver/pkg/endpoints/filters/authentication.go``,
``pkg/authentication/request/bearertoken/bearertoken.go`` and ``pkg/registry/authentication``.
"""

from __future__ import annotations

import hmac
from typing import Any

from aiohttp import web

from kubesched.apiserver import impersonation, rbac
from kubesched.apiserver.authz import USER, Authorization
from kubesched.apiserver.errors import APIError
from kubesched.apiserver.handlers import Route, json_response

__all__ = ["PUBLIC_PATHS", "Authentication"]

#: paths served without credentials (health checks and the version)
PUBLIC_PATHS = frozenset(("/healthz", "/livez", "/readyz", "/version"))


class Authentication(Authorization):
    """The authentication filter: one identity, the box's bearer token (``token``; None = no
    authentication), a cluster admin in ``system:masters``; without credentials a request is
    ``system:anonymous`` when ``anonymous_auth`` is on (then authorized), else 401. Impersonation
    headers are honoured as upstream's ``WithImpersonation``."""

    def _init_authn(self, token: str | None, anonymous_auth: bool) -> None:
        self.token = token
        #: ``(token, "Bearer <token>")`` for the common case's one comparison (None: a token that is
        #: not ASCII, which only the general path compares)
        self._bearer = (token, f"Bearer {token}" if token is not None and token.isascii() else None)
        #: kube-apiserver ``--anonymous-auth``: a request without credentials is ``system:anonymous``
        #: (then authorized: 403 unless RBAC allows it) instead of 401; off with AlwaysAllow, as
        #: kube-apiserver resets it ("AnonymousAuth is not allowed with the AlwaysAllow authorizer")
        self.anonymous_auth = anonymous_auth and self.authorization_mode != "AlwaysAllow"

    def _authenticate(self, request: web.Request) -> None:
        """Authenticate (then impersonate / authorize an anonymous request) before the handler runs.
        Raises :class:`~kubesched.apiserver.errors.APIError` 401 or 403."""
        token = self.token
        if token is None or request.path in PUBLIC_PATHS:
            return
        headers = request.headers
        header = headers.get("Authorization")
        # the common case, ``Bearer <token>`` exactly as clients send it: one constant-time
        # comparison of the whole header (any other spelling takes the general path below)
        token_of, expected = self._bearer
        if (header is not None and expected is not None and token_of is token and header.isascii()
                and hmac.compare_digest(header, expected)):
            wanted = impersonation.wanted_user(headers)
            if wanted is not None:
                self._impersonate(request, self.ADMIN, wanted)
            return
        wanted = impersonation.wanted_user(headers)
        if header is None and self.anonymous_auth:
            if wanted is None:
                self._authorize_anonymous(request)
            else:
                self._impersonate(request, rbac.ANONYMOUS, wanted)
            return
        scheme, _, presented = (header or "").strip().partition(" ")
        # the scheme is case-insensitive (bearertoken.go), the token compared in constant time
        if scheme.lower() != "bearer" or not hmac.compare_digest(presented.strip().encode(), token.encode()):
            raise APIError.unauthorized()
        if wanted is not None:
            self._impersonate(request, self.ADMIN, wanted)

    #: who the box's bearer token is: a cluster admin (as a static token in group system:masters)
    ADMIN_USER: dict[str, Any] = {"username": "kubesched-admin", "uid": "kubesched-admin",
                                  "groups": ["system:masters", "system:authenticated"]}

    ADMIN = rbac.UserInfo("kubesched-admin", ("system:masters", "system:authenticated"), "kubesched-admin")

    @staticmethod
    def _user_info(user: rbac.UserInfo) -> dict[str, Any]:
        """``status.userInfo`` of a SelfSubjectReview."""
        return {"username": user.name, **({"uid": user.uid} if user.uid else {}), "groups": list(user.groups)}

    async def _review(self, request: web.Request, r: Route) -> web.Response:
        """TokenReview, SelfSubjectReview, (Self|Local)SubjectAccessReview: the answer in ``status``,
        nothing stored (``pkg/registry/authentication|authorization``). Authentication knows one
        identity, the box's token (a ``system:masters`` admin); access reviews go through the
        authorizer chain (:meth:`_authorize`: RBAC over the stored RBAC objects by default)."""
        info = r.info
        obj = await self._read_body(request)
        self._check_type(info, obj)
        raw_spec = obj.get("spec")
        spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
        out: dict[str, Any] = {"kind": info.kind, "apiVersion": info.api_version,
                               "metadata": {"creationTimestamp": None}}
        if info.kind == "TokenReview":
            token = spec.get("token")
            if not isinstance(token, str) or not token:
                raise APIError.invalid(info.kind, info.group, "", [("FieldValueRequired", "spec.token",
                                                                    "spec.token: Required value")])
            # without a token (authentication off) there is no token authenticator: nothing authenticates
            ok = self.token is not None and hmac.compare_digest(token.encode(), self.token.encode())
            out["spec"] = spec
            out["status"] = ({"authenticated": True, "user": dict(self.ADMIN_USER)} if ok
                             else {"user": {}, "error": "invalid bearer token"})
        elif info.kind == "SelfSubjectReview":
            out["status"] = {"userInfo": self._user_info(request.get(USER, self.ADMIN))}
        elif info.kind == "SelfSubjectRulesReview":
            out["spec"] = {}  # the answer carries the status only (selfsubjectrulesreview/rest.go)
            out["status"] = self._rules_review_status(spec, request.get(USER, self.ADMIN))
        else:
            if info.kind == "LocalSubjectAccessReview":
                attrs = spec.get("resourceAttributes") or {}
                if r.ns is None or (isinstance(attrs, dict) and attrs.get("namespace", r.ns) != r.ns):
                    raise APIError.bad_request(f"spec.resourceAttributes.namespace must match namespace: {r.ns}")
            if not spec.get("resourceAttributes") and not spec.get("nonResourceAttributes"):
                raise APIError.invalid(info.kind, info.group, "", [(
                    "FieldValueRequired", "spec.resourceAttributes",
                    "spec.resourceAttributes: Required value: exactly one of nonResourceAttributes or "
                    "resourceAttributes must be specified")])
            out["spec"] = spec
            out["status"] = self._access_review_status(info.kind, spec, r.ns, request.get(USER, self.ADMIN))
        return json_response(out, 201)
