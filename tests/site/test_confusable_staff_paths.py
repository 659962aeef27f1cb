"""The confusable-username check of sign-up on the staff paths too: the admin (add and rename), ``createsuperuser``
(with and without ``--noinput``) and ``create_participant``; each refusal names the taken look-alike."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client


@pytest.fixture
def bob(db: object) -> User:
    return User.objects.create_user("bob")


def test_create_participant_refuses_a_look_alike(bob: User) -> None:
    with pytest.raises(CommandError, match="the username 'b0b' looks too much like the existing 'bob'"):
        call_command("create_participant", "b0b", stdout=io.StringIO(), stderr=io.StringIO())
    assert not User.objects.filter(username="b0b").exists()
    out = io.StringIO()
    call_command("create_participant", "bob", stdout=out, stderr=io.StringIO())  # the same name: reused
    call_command("create_participant", "carol", stdout=out, stderr=io.StringIO())
    assert User.objects.filter(username="carol").exists()


def test_createsuperuser_refuses_a_look_alike(bob: User, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-password-1")
    with pytest.raises(CommandError, match="looks too much like the existing 'bob'"):
        call_command("createsuperuser", "--noinput", "--username", "ВОВ".lower(), "--email", "x@example.org",
                     stdout=io.StringIO(), stderr=io.StringIO())
    call_command("createsuperuser", "--noinput", "--username", "root", "--email", "r@example.org",
                 stdout=io.StringIO(), stderr=io.StringIO())
    assert User.objects.filter(username="root", is_superuser=True).exists()


def test_the_admin_refuses_a_look_alike_on_add_and_on_rename(bob: User) -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="x"))
    User.objects.create_user("mary")
    added = client.post("/admin/auth/user/add/", {
        "username": "rnary", "password1": "", "password2": "", "usable_password": "false",
    })
    assert added.status_code == 200  # the form again, with the error on the username
    assert "looks too much like the existing &#x27;mary&#x27;" in added.content.decode()
    assert not User.objects.filter(username="rnary").exists()
    carol = User.objects.create_user("carol")
    page = client.get(f"/admin/auth/user/{carol.pk}/change/")
    assert page.status_code == 200
    form = {"username": "b0b", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "is_active": "on", "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "00:00:00"}
    renamed = client.post(f"/admin/auth/user/{carol.pk}/change/", form)
    assert "looks too much like the existing &#x27;bob&#x27;" in renamed.content.decode()
    # Keeping one's own name (even a look-alike made before the check) is allowed.
    kept = client.post(f"/admin/auth/user/{carol.pk}/change/", {**form, "username": "carol"})
    assert kept.status_code == 302
