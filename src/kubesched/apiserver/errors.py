"""Upstream ``Status`` error bodies (``k8s.io/apimachinery/pkg/api/errors/errors.go``).

:class:`APIError` carries a ready ``Status`` dict; the server answers it with ``status["code"]``.
Constructors mirror upstream's ``NewNotFound``, ``NewAlreadyExists``, ``NewConflict``,
``NewInvalid``, ``NewBadRequest``, ``NewForbidden``, ``NewResourceExpired`` …, with the same
messages, reasons and ``details``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["APIError", "status_success"]


def _status(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    st: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                          "message": message, "reason": reason}
    if details is not None:
        st["details"] = details
    st["code"] = code
    return st


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    if kind:
        d["kind"] = kind
    d.update(extra)
    return d


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def status_success(code: int = 200) -> dict[str, Any]:
    """``Status{status: Success}`` as returned by e.g. ``pods/binding`` (201) and evictions."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


class APIError(Exception):
    """An error answered as an upstream ``Status`` body with HTTP ``code``.

    The server side of upstream's ``StatusError``: raised inside the box to answer a request.
    Not :class:`kubesched.kube.client.APIError`, the client side (what the live scheduler's REST
    client raises when a server, this one or kube-apiserver, answers non-2xx).
    """

    def __init__(self, status: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.headers = headers or {}

    @property
    def code(self) -> int:
        return int(self.status["code"])

    @classmethod
    def not_found(cls, resource: str, group: str, name: str) -> APIError:
        return cls(_status(404, "NotFound", f'{_qualified(resource, group)} "{name}" not found',
                           _details(name, group, resource)))

    @classmethod
    def no_route(cls) -> APIError:
        return cls(_status(404, "NotFound", "the server could not find the requested resource", {}))

    @classmethod
    def already_exists(cls, resource: str, group: str, name: str) -> APIError:
        return cls(_status(409, "AlreadyExists", f'{_qualified(resource, group)} "{name}" already exists',
                           _details(name, group, resource)))

    @classmethod
    def conflict(cls, resource: str, group: str, name: str, why: str) -> APIError:
        return cls(_status(409, "Conflict",
                           f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
                           _details(name, group, resource)))

    @classmethod
    def modified(cls, resource: str, group: str, name: str) -> APIError:
        return cls.conflict(resource, group, name,
                            "the object has been modified; please apply your changes to the latest version "
                            "and try again")

    @classmethod
    def invalid(cls, kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> APIError:
        """``causes``: (reason e.g. FieldValueRequired, field path, full field error message)."""
        msgs = [c[2] for c in causes]
        text = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
        qual = f"{kind}.{group}" if group else kind
        return cls(_status(422, "Invalid", f'{qual} "{name}" is invalid: {text}',
                           _details(name, group, kind,
                                    causes=[{"reason": r, "message": m, "field": f} for r, f, m in causes])))

    @classmethod
    def bad_request(cls, message: str) -> APIError:
        return cls(_status(400, "BadRequest", message))

    @classmethod
    def forbidden(cls, resource: str, group: str, name: str, why: str,
                  causes: list[dict[str, str]] | None = None) -> APIError:
        q = _qualified(resource, group)
        msg = f'{q} "{name}" is forbidden: {why}' if name else f"{q} is forbidden: {why}"
        extra: dict[str, Any] = {"causes": causes} if causes else {}
        return cls(_status(403, "Forbidden", msg, _details(name, group, resource, **extra)))

    @classmethod
    def forbidden_attributes(cls, attrs: Any, message: str) -> APIError:
        """403 from the authorizer (``ForbiddenStatusError``): ``message`` from
        :func:`kubesched.apiserver.rbac.forbidden_message`, details naming the group/resource/name."""
        details: dict[str, Any] = {}
        if attrs.resource_request and attrs.resource:
            details = _details(attrs.name, attrs.api_group, attrs.resource)
        return cls(_status(403, "Forbidden", message, details))

    @classmethod
    def expired(cls, message: str) -> APIError:
        return cls(_status(410, "Expired", message))

    @classmethod
    def too_large_rv(cls, requested: int, current: int) -> APIError:
        """``storage.NewTooLargeResourceVersionError`` (staging/src/k8s.io/apiserver/pkg/storage/
        errors.go): a Timeout whose message carries both versions, and a cause of type
        ``ResourceVersionTooLarge``."""
        return cls(_status(504, "Timeout", f"Timeout: Too large resource version: {requested}, current: {current}",
                           {"causes": [{"reason": "ResourceVersionTooLarge",
                                        "message": "Too large resource version"}],
                            "retryAfterSeconds": 1}))

    @classmethod
    def internal(cls, message: str) -> APIError:
        return cls(_status(500, "InternalError", f"Internal error occurred: {message}",
                           {"causes": [{"message": message}]}))

    @classmethod
    def entity_too_large(cls, message: str) -> APIError:
        """``errors.NewRequestEntityTooLargeError``: 413, reason RequestEntityTooLarge."""
        return cls(_status(413, "RequestEntityTooLarge", f"Request entity too large: {message}"))

    @classmethod
    def unknown(cls, code: int, message: str) -> APIError:
        """``ErrorToAPIStatus`` of a plain error (no reason), e.g. etcd's ``request is too large``."""
        return cls({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": message, "code": code})

    @classmethod
    def unauthorized(cls) -> APIError:
        return cls(_status(401, "Unauthorized", "Unauthorized"))

    @classmethod
    def method_not_allowed(cls) -> APIError:
        return cls(_status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                           {}))

    @classmethod
    def unsupported_media(cls, content_type: str) -> APIError:
        return cls(_status(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                                                        f"accepted media types include: application/json-patch+json, "
                                                        f"application/merge-patch+json, "
                                                        f"application/strategic-merge-patch+json ({content_type})",
                           {}))

    @classmethod
    def too_many_requests(cls, message: str, causes: list[dict[str, str]] | None = None,
                          retry_after: int | None = None) -> APIError:
        details: dict[str, Any] = {}
        if causes:
            details["causes"] = causes
        if retry_after is not None:
            details["retryAfterSeconds"] = retry_after
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        return cls(_status(429, "TooManyRequests", message, details), headers)

    @classmethod
    def method_status(cls, code: int, reason: str, message: str) -> APIError:
        return cls(_status(code, reason, message, {}))
