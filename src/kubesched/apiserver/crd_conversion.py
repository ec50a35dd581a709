"""Custom resource version conversion with ``spec.conversion.strategy: Webhook``: the box calls no
webhooks, so a read or write that needs one fails as upstream's does when the webhook is
unreachable (a 500), instead of silently converting as the ``None`` strategy.

Follows k8s.io/apiextensions-apiserver@v0.37.2 ``pkg/apiserver/conversion/webhook_converter.go``
(``conversion webhook for <group>/<version>, Kind=<kind> failed: <error>``, the request
``Post "https://<service>.<namespace>.svc:<port><path>?timeout=30s"``); a read of a stored
object answers ``Internal error occurred: ...`` (the storage's decode error), a create at another
version the bare message. ``strategy: None`` versions convert by rewriting ``apiVersion``
(``nopConverter``), as the server already does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from kubesched.apiserver.errors import APIError

if TYPE_CHECKING:
    from kubesched.apiserver.crd import CustomResource
    from kubesched.apiserver.storage import Store

__all__ = ["check_conversion"]


class _Server(Protocol):
    """What the conversion check reads of the registry: its store."""

    store: Store


def _webhook_failure(server: _Server, cr: CustomResource, from_version: str) -> str | None:
    from kubesched.apiserver.crd import CRD_GROUP

    entry = server.store.get(f"{CRD_GROUP}/customresourcedefinitions", "", cr.crd_name)
    conv = ((entry.obj().get("spec") or {}).get("conversion") or {}) if entry is not None else {}
    if conv.get("strategy") != "Webhook":
        return None
    cfg = ((conv.get("webhook") or {}).get("clientConfig") or {})
    svc = cfg.get("service") or {}
    if svc:
        name, ns = svc.get("name", ""), svc.get("namespace", "")
        url = f"https://{name}.{ns}.svc:{svc.get('port') or 443}{svc.get('path') or ''}?timeout=30s"
        why = f'service "{name}" not found' if server.store.get("services", ns, name) is None \
            else "the box does not call conversion webhooks"
    else:
        url = f"{cfg.get('url') or ''}?timeout=30s"
        why = "the box does not call conversion webhooks"
    return (f"conversion webhook for {cr.info.group}/{from_version}, Kind={cr.info.kind} failed: "
            f'Post "{url}": {why}')


def check_conversion(server: _Server, cr: CustomResource, from_version: str, *, write: bool = False) -> None:
    """Raise the 500 upstream answers when ``cr``'s objects at ``from_version`` need its
    conversion webhook to be served at ``cr``'s version (``write``: a create/update sent at
    ``from_version``, stored at the storage version); nothing for ``strategy: None``."""
    if from_version == cr.info.version and not write:
        return
    msg = _webhook_failure(server, cr, from_version)
    if msg is None:
        return
    if write:
        raise APIError({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": msg,
                        "code": 500})
    raise APIError.internal(msg)

