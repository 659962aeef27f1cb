"""Store the hidden set's columns uncompressed out of line on PostgreSQL (as submissions' 0003 does).

PostgreSQL's default (EXTENDED) storage runs pglz over every large value before writing it: for a
1,000,000-row hidden set (10 MB of ids as JSON, 8 MB of labels) that is seconds of the competition's creation,
and the worker's load pays the decompression. The table holds one row per competition, so space is no concern.
Other databases need nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

COLUMNS = ("ids_json", "labels_npy", "public_mask_npy")


def set_storage(apps: Any, schema_editor: Any, storage: str = "EXTERNAL") -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    table = apps.get_model("competitions", "HiddenTestData")._meta.db_table
    for column in COLUMNS:
        schema_editor.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET STORAGE {storage}')


def reset_storage(apps: Any, schema_editor: Any) -> None:
    set_storage(apps, schema_editor, "EXTENDED")


class Migration(migrations.Migration):
    dependencies = [("competitions", "0004_model_competitions_features")]
    operations = [migrations.RunPython(set_storage, reset_storage)]
