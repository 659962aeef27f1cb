"""Store the upload and the validated array uncompressed out of line on PostgreSQL.

PostgreSQL's default (EXTENDED) storage runs pglz over every large bytea before writing it; for a 25,000-row
upload that made the INSERT ~5x slower (29 ms against 6 ms, measured with benchmarks/e2e_throughput.py's
data), and CSV of random probabilities and float64 arrays barely compress anyway. Other databases need nothing.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

COLUMNS = ("upload", "predictions_npy")


def set_storage(apps: Any, schema_editor: Any, storage: str = "EXTERNAL") -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    table = apps.get_model("submissions", "Submission")._meta.db_table
    for column in COLUMNS:
        schema_editor.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET STORAGE {storage}')


def reset_storage(apps: Any, schema_editor: Any) -> None:
    set_storage(apps, schema_editor, "EXTENDED")


class Migration(migrations.Migration):
    dependencies = [("submissions", "0002_public_message")]
    operations = [migrations.RunPython(set_storage, reset_storage)]
