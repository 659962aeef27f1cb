"""Existing API tokens, kept in clear by DRF's ``rest_framework.authtoken`` (no longer installed), become
digests: each keeps working, and the clear table is dropped. Admin log rows about those tokens go too (a
token was its own primary key, so the log held it in clear). Irreversible: the tokens cannot be recovered."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import migrations

CLEAR_TABLE = "authtoken_token"
PREFIX_LENGTH = 12  # as leaderboard.accounts.tokens at the time of writing; the rule must not drift


def hash_clear_tokens(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    tables = set(connection.introspection.table_names())
    if CLEAR_TABLE not in tables:  # a database made after DRF's tokens left: nothing to convert
        return
    quote = schema_editor.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote('key')}, {quote('user_id')}, {quote('created')} FROM {quote(CLEAR_TABLE)}")
        rows = cursor.fetchall()
    api_token = apps.get_model("accounts", "ApiToken")
    api_token.objects.bulk_create(
        api_token(
            user_id=user_id,
            prefix=str(key)[:PREFIX_LENGTH],
            digest=hashlib.sha256(str(key).encode("utf-8")).hexdigest(),
            created_at=created,
        )
        for key, user_id, created in rows
    )
    if {"django_admin_log", "django_content_type"} <= tables:
        schema_editor.execute(
            f"DELETE FROM {quote('django_admin_log')} WHERE {quote('content_type_id')} IN "
            f"(SELECT {quote('id')} FROM {quote('django_content_type')} WHERE {quote('app_label')} = %s)",
            ["authtoken"],
        )
    schema_editor.execute(f"DROP TABLE {quote(CLEAR_TABLE)}")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_apitoken")]

    operations = [migrations.RunPython(hash_clear_tokens, migrations.RunPython.noop, elidable=False)]
