"""API tokens kept as digests: the database (every table, read raw) holds nothing that opens the API; a token works
from its creation; tokens kept in clear before are hashed by the migration and keep working; digests are compared in
constant time after an indexed lookup by prefix; a new token retires the old one."""

from __future__ import annotations

import hashlib
import re
from io import StringIO
from typing import Any

import pytest
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.utils import timezone

from leaderboard.accounts.authentication import api_token_find
from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.services import api_token_issue, participant_provision
from leaderboard.accounts.tokens import PREFIX_LENGTH, token_digest

LEGACY_KEY = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # a DRF token as DRF made them: 40 hex digits


def status_with(token: str, competition: Any) -> int:
    """The status of an authenticated API read made with ``token``."""
    url = f"/api/v1/competitions/{competition.slug}/quota/"
    return Client().get(url, HTTP_AUTHORIZATION=f"Token {token}").status_code


def every_cell_of_every_table() -> str:
    """What a dump of the database shows: every cell of every table, read with raw SQL (not through models)."""
    cells: list[str] = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            for row in cursor.fetchall():
                cells += [bytes(c).decode("latin-1") if isinstance(c, bytes | memoryview) else str(c) for c in row]
    return "\n".join(cells)


def test_a_database_dump_holds_no_usable_token(host: Any, participant: Any, competition: Any) -> None:
    out = StringIO()
    call_command("create_participant", "operator-made", stdout=out, stderr=StringIO())
    browser = Client()
    browser.force_login(participant)
    page = browser.post("/accounts/profile/token/").content.decode()
    made_on_page = re.search(r'<code id="api-token">([^<]+)</code>', page)
    assert made_on_page is not None
    tokens = [
        out.getvalue().strip().splitlines()[-1],
        made_on_page.group(1),
        participant_provision(username="bot-1", host=host)[1],
        api_token_issue(user=host),
    ]
    assert all(status_with(token, competition) == 200 for token in tokens)
    dump = every_cell_of_every_table()
    for token in tokens:
        assert token not in dump and token[PREFIX_LENGTH:] not in dump and token_digest(token) in dump
    # Nothing the dump holds of a token opens the API: neither a prefix nor a digest.
    stored = ApiToken.objects.values_list("prefix", "digest")
    assert len(stored) == 4
    for prefix, digest in stored:
        assert status_with(prefix, competition) == 401 and status_with(digest, competition) == 401


def test_a_new_token_retires_the_old_one(participant: Any, competition: Any) -> None:
    old = api_token_issue(user=participant)
    new = api_token_issue(user=participant)
    assert new != old and new.startswith("lbl_") and len(new) == 47
    assert status_with(old, competition) == 401 and status_with(new, competition) == 200
    assert ApiToken.objects.filter(user=participant).count() == 1


def test_digests_are_compared_in_constant_time_never_the_token(
    participant: Any, competition: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hmac

    token = api_token_issue(user=participant)
    compared: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert status_with(token, competition) == 200
    digest = token_digest(token).encode("ascii")
    assert compared == [(digest, digest)]  # the stored digest against the presented token's, with hmac's compare
    compared.clear()
    assert status_with(token[:-1] + ("A" if token[-1] != "A" else "B"), competition) == 401
    assert len(compared) == 1 and compared[0][0] == digest and compared[0][1] != digest


def test_tokens_sharing_a_prefix_each_open_their_own_account(
    participant: Any, other_participant: Any, competition: Any
) -> None:
    mine = api_token_issue(user=participant)
    theirs = mine[:PREFIX_LENGTH] + "x" * (len(mine) - PREFIX_LENGTH)  # same prefix, different secret
    ApiToken.objects.filter(user=other_participant).delete()
    ApiToken.objects.create(user=other_participant, prefix=theirs[:PREFIX_LENGTH], digest=token_digest(theirs))
    found_mine, found_theirs = api_token_find(mine), api_token_find(theirs)
    assert found_mine is not None and found_mine.user == participant
    assert found_theirs is not None and found_theirs.user == other_participant
    assert api_token_find(mine[:PREFIX_LENGTH]) is None
    with connection.cursor() as cursor:  # the lookup goes through an index; a digest is stored once
        constraints = connection.introspection.get_constraints(cursor, ApiToken._meta.db_table).values()
    assert any(c["columns"] == ["prefix"] and c["index"] for c in constraints)
    assert any(c["columns"] == ["digest"] and c["unique"] for c in constraints)


def test_odd_tokens_answer_401_never_500(participant: Any, competition: Any) -> None:
    token = api_token_issue(user=participant)
    for odd in ("", "x" * 10_000, token + "é", "\xff\xfe" + token, token.upper(), f"{token} {token}"):
        assert status_with(odd, competition) == 401, odd[:20]
    User.objects.filter(pk=participant.pk).update(is_active=False)  # deactivated (sybil screen, administrator)
    assert status_with(token, competition) == 401


def _legacy_table_sql() -> str:
    created = "timestamp with time zone" if connection.vendor == "postgresql" else "datetime"
    return (f'CREATE TABLE "authtoken_token" ("key" varchar(40) NOT NULL PRIMARY KEY, "created" {created} NOT NULL, '
            '"user_id" integer NOT NULL UNIQUE)')


@pytest.mark.django_db(transaction=True)
def test_the_migration_hashes_clear_tokens_which_keep_working(host: Any, competition: Any) -> None:
    legacy = User.objects.create_user("legacy")
    admin = User.objects.create_superuser("root", "root@example.org", "pw")
    executor = MigrationExecutor(connection)
    executor.migrate([("accounts", "0002_apitoken")])  # the database as it was before the conversion
    try:
        with connection.cursor() as cursor:  # DRF's table, as DRF's tokens left it
            cursor.execute(_legacy_table_sql())
            cursor.execute('INSERT INTO "authtoken_token" ("key", "created", "user_id") VALUES (%s, %s, %s)',
                           [LEGACY_KEY, timezone.now(), legacy.pk])
        drf_token = ContentType.objects.create(app_label="authtoken", model="token")
        LogEntry.objects.create(user=admin, content_type=drf_token, object_id=LEGACY_KEY, object_repr=LEGACY_KEY,
                                action_flag=ADDITION)  # the admin's log named a token by its key
        LogEntry.objects.create(user=admin, content_type=ContentType.objects.get_for_model(User),
                                object_id=str(legacy.pk), object_repr="legacy", action_flag=ADDITION)

        executor = MigrationExecutor(connection)
        executor.migrate([("accounts", "0003_hash_clear_tokens")])

        assert "authtoken_token" not in connection.introspection.table_names()
        stored = ApiToken.objects.get(user=legacy)
        assert stored.digest == hashlib.sha256(LEGACY_KEY.encode()).hexdigest() and stored.prefix == LEGACY_KEY[:12]
        assert LEGACY_KEY not in every_cell_of_every_table()
        assert list(LogEntry.objects.values_list("object_repr", flat=True)) == ["legacy"]  # only the token's went
        assert status_with(LEGACY_KEY, competition) == 200  # the old token keeps working
        assert status_with(api_token_issue(user=legacy), competition) == 200 and status_with(
            LEGACY_KEY, competition) == 401  # until its owner makes a new one
    finally:
        with connection.cursor() as cursor:
            cursor.execute('DROP TABLE IF EXISTS "authtoken_token"')


def test_the_admin_lists_tokens_by_prefix_only_and_cannot_make_one(participant: Any) -> None:
    token = api_token_issue(user=participant)
    stored = ApiToken.objects.get(user=participant)
    admin = Client()
    admin.force_login(User.objects.create_superuser("root", "root@example.org", "pw"))
    listing = admin.get("/admin/accounts/apitoken/")
    detail = admin.get(f"/admin/accounts/apitoken/{stored.pk}/change/")
    assert listing.status_code == 200 and detail.status_code == 200
    for page in (listing.content.decode(), detail.content.decode()):
        assert stored.prefix in page and stored.digest not in page and token not in page
    assert admin.get("/admin/accounts/apitoken/add/").status_code == 403
    assert admin.post(f"/admin/accounts/apitoken/{stored.pk}/delete/", {"post": "yes"}).status_code == 302
    assert api_token_find(token) is None  # deleting it in the admin revokes it
