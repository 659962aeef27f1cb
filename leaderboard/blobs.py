"""Large binary columns (an upload, its validated array) written and read as raw bytes on PostgreSQL.

Django's PostgreSQL backend binds parameters on the client: a ``bytes`` value becomes an SQL literal in hex,
twice its size, built in Python and parsed back by the server, and a read comes back as hex text too. For a
27 MB upload (1,000,000 rows) that was 3 s of a web worker's time and two extra copies in its memory. Here the
same statement goes through a psycopg cursor with server-side binding on the very connection (so inside the
caller's transaction) with the value sent, and read, in binary format: one copy, no encoding. Other databases
(SQLite binds blobs natively) use the ORM.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, models


def _raw_cursor(binary: bool = False) -> Any | None:
    """A psycopg (3) cursor with server-side binding on Django's current connection, or ``None``."""
    if connection.vendor != "postgresql":
        return None
    connection.ensure_connection()
    raw = connection.connection
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg2: the ORM's way
        return None
    if not isinstance(raw, psycopg.Connection):  # pragma: no cover
        return None
    cursor = psycopg.Cursor(raw)
    if binary:
        cursor.format = psycopg.pq.Format.BINARY
    return cursor


def _column(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field) and field.column
    return str(field.column)


def _pk_column(model: type[models.Model]) -> str:
    return _column(model, model._meta.pk.name)  # type: ignore[union-attr]


def blob_write(model: type[models.Model], pk: Any, **values: bytes | None) -> None:
    """``model.objects.filter(pk=pk).update(**values)`` with each value sent as raw bytes."""
    cursor = _raw_cursor()
    if cursor is None:
        model._default_manager.filter(pk=pk).update(**values)
        return
    from psycopg import sql

    assignments = sql.SQL(", ").join(
        [sql.SQL("{} = %b").format(sql.Identifier(_column(model, name))) for name in values]
    )
    statement = sql.SQL("UPDATE {} SET {} WHERE {} = %s").format(
        sql.Identifier(model._meta.db_table), assignments, sql.Identifier(_pk_column(model))
    )
    with cursor:
        cursor.execute(statement, [*values.values(), pk])


def _as_bytes(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)  # a text column: its UTF-8


def blob_read(model: type[models.Model], pk: Any, name: str) -> bytes | None:
    """The raw bytes of ``model``'s column ``name`` on row ``pk`` (``None`` for NULL; a text column's UTF-8);
    raises ``model.DoesNotExist`` when there is no such row."""
    cursor = _raw_cursor(binary=True)
    if cursor is None:
        value = model._default_manager.filter(pk=pk).values_list(name, flat=True).first()
        if value is None and not model._default_manager.filter(pk=pk).exists():
            raise model.DoesNotExist  # type: ignore[attr-defined]
        return None if value is None else _as_bytes(value)
    from psycopg import sql

    column: Any = sql.Identifier(_column(model, name))
    if isinstance(model._meta.get_field(name), models.TextField):
        column = sql.SQL("convert_to({}, 'UTF8')").format(column)  # a text column's bytes, with no str between
    statement = sql.SQL("SELECT {} FROM {} WHERE {} = %s").format(
        column, sql.Identifier(model._meta.db_table), sql.Identifier(_pk_column(model))
    )
    with cursor:
        row = cursor.execute(statement, [pk]).fetchone()
    if row is None:
        raise model.DoesNotExist  # type: ignore[attr-defined]
    return None if row[0] is None else _as_bytes(row[0])
