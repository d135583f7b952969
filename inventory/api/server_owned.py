"""Server-owned fields: the server derives them; no API write may set them.

Status derived by the gate, due dates, counters, verdicts, retirement, timestamps. The API's
base viewset marks these read-only on every serializer it builds (``ServerOwnedFieldsMixin``),
which also removes them from the request bodies in the OpenAPI schema; a test walks the whole
schema so a serializer built any other way cannot let one through either.
"""

from __future__ import annotations

# Field names that are server-owned on every model.
SERVER_OWNED_NAMES = frozenset(
    {
        "verdict",
        "retest_due",
        "next_retest_due",
        "retired_at",
        "margin_db",
        "budget_db",
        "path_ok",
        "path_problems",
        "created_at",
        "updated_at",
        "last_used_at",
        "last_seen_at",
        "revoked_at",
        "key_hash",
        "replaced_by",
        "opened_at",
        "resolved_at",
        "sent_at",
        "attempts",
    }
)

# Per model (``model_name``): fields server-owned on that model only.
SERVER_OWNED_BY_MODEL = {
    "cable": {"status"},  # moves through install / the test gate / fault / retire
    "transceiver": {"status", "cage"},  # moves through install / remove / swap
    "link": {"active", "fec", "pmd", "speed_gbps", "lanes", "lane_rate_gbaud"},
    "alert": {"state", "severity"},
    "cabletest": {"loss_db", "warnings"},
    "apitoken": {"prefix", "user"},
}


def server_owned(model) -> set[str]:
    if model is None:
        return set(SERVER_OWNED_NAMES)
    return set(SERVER_OWNED_NAMES) | SERVER_OWNED_BY_MODEL.get(model._meta.model_name, set())


def enforce_read_only(serializer) -> None:
    """Mark the server-owned fields of a (model) serializer read-only, in place."""
    target = getattr(serializer, "child", serializer)  # many=True
    meta = getattr(target, "Meta", None)
    model = getattr(meta, "model", None)
    if model is None:
        return
    owned = server_owned(model)
    for name, field in target.fields.items():
        if (name in owned or getattr(field, "source", name) in owned) and not field.read_only:
            field.read_only = True
            field.required = False


class ServerOwnedFieldsMixin:
    """For ``GenericAPIView`` subclasses: every serializer they build respects the rule above."""

    def get_serializer(self, *args, **kwargs):
        serializer = super().get_serializer(*args, **kwargs)
        enforce_read_only(serializer)
        return serializer
