"""People's accounts on the web pages: sign-up (open, by invite code, closed; throttled per address; passwords
validated; no more said about taken usernames than Django's own form says), the profile with the API token's prefix
and a new token shown once on the answer that makes it, password change and reset (mail through the configured
backend)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.cache import cache
from django.test import Client

from leaderboard.accounts.models import ApiToken
from leaderboard.accounts.services import api_token_issue, participant_provision
from leaderboard.errors import UsernameTaken
from stack.processes import REPO

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-and-uncommon-passphrase-7"


@pytest.fixture(autouse=True)
def _fresh_counters() -> None:
    cache.clear()  # sign-up and reset attempts are counted per address in the cache


def sign_up(client: Client, username: str = "carol", **fields: str) -> Any:
    address = fields.pop("address", "127.0.0.1")
    data = {"username": username, "email": f"{username}@example.org", "password1": PASSWORD, "password2": PASSWORD}
    data.update(fields)
    return client.post("/accounts/signup/", data, REMOTE_ADDR=address)


def body(response: Any) -> str:
    return response.content.decode()


# --- Sign-up ----------------------------------------------------------------------------------------------


def test_signing_up_makes_an_account_and_logs_in(client: Client) -> None:
    page = client.get("/accounts/signup/")
    assert page.status_code == 200 and 'name="password1"' in body(page) and "invite_code" not in body(page)
    answer = sign_up(client)
    assert answer.status_code == 302 and answer["Location"] == "/accounts/profile/"
    carol = User.objects.get(username="carol")
    assert carol.check_password(PASSWORD) and carol.email == "carol@example.org"
    assert not carol.is_staff and not carol.is_superuser
    profile = client.get("/accounts/profile/")
    assert profile.status_code == 200 and "Welcome, carol" in body(profile)
    # No token yet (one made now could never be shown): the profile offers to make one.
    assert not ApiToken.objects.filter(user=carol).exists()
    assert 'id="no-api-token"' in body(profile) and "Make an API token" in body(profile)


def test_sign_up_goes_back_to_a_page_of_this_site_only(client: Client) -> None:
    assert sign_up(client, next="/c/some-competition/")["Location"] == "/c/some-competition/"
    client.logout()
    assert sign_up(Client(), "dave", next="https://elsewhere.example/")["Location"] == "/accounts/profile/"


@pytest.mark.parametrize(
    ("password", "fragment"),
    [
        ("short1", "too short"),
        ("password123", "too common"),
        ("83920571946", "entirely numeric"),
        ("carol1234", "too similar"),
    ],
)
def test_weak_passwords_are_refused(client: Client, password: str, fragment: str) -> None:
    answer = sign_up(client, password1=password, password2=password)
    assert answer.status_code == 400 and fragment in body(answer)
    assert not User.objects.filter(username="carol").exists()


def test_mismatched_passwords_and_a_missing_email_are_refused(client: Client) -> None:
    assert sign_up(client, password2=PASSWORD + "x").status_code == 400
    assert sign_up(client, email="").status_code == 400
    assert not User.objects.filter(username="carol").exists()


def test_a_taken_username_is_said_as_djangos_form_says_it(client: Client, participant: Any) -> None:
    for name in ("alice", "ALICE"):
        answer = sign_up(client, name)
        assert answer.status_code == 400 and "A user with that username already exists." in body(answer)
    assert User.objects.filter(username__iexact="alice").count() == 1
    assert "_auth_user_id" not in client.session


def test_a_logged_in_person_is_sent_to_the_profile(client: Client, participant: Any) -> None:
    client.force_login(participant)
    assert client.get("/accounts/signup/")["Location"] == "/accounts/profile/"


def test_invite_mode_needs_the_code_and_a_wrong_code_says_nothing_else(
    client: Client, settings: Any, participant: Any
) -> None:
    settings.LEADERBOARD_SIGNUP, settings.LEADERBOARD_INVITE_CODE = "invite", "class-of-2027"
    assert 'name="invite_code"' in body(client.get("/accounts/signup/"))
    for code in ("", "class-of-2026", "CLASS-OF-2027"):
        answer = sign_up(client, "alice", invite_code=code)  # a taken name, a bad code: only the code is named
        assert answer.status_code == 400, code
        assert "already exists" not in body(answer)
        assert "invite code is not right" in body(answer) or "This field is required" in body(answer)
    answer = sign_up(client, "alice", invite_code="class-of-2027")
    assert answer.status_code == 400 and "already exists" in body(answer)  # with the code, Django's form speaks
    assert sign_up(client, "erin", invite_code=" class-of-2027 ").status_code == 302
    assert User.objects.filter(username="erin").exists()


def test_closed_mode_shows_no_form_and_makes_no_account(client: Client, settings: Any) -> None:
    settings.LEADERBOARD_SIGNUP = "closed"
    page = client.get("/accounts/signup/")
    assert page.status_code == 403 and "Sign-up is closed" in body(page)
    assert 'action="/accounts/signup/"' not in body(page)
    assert sign_up(client).status_code == 403
    assert not User.objects.filter(username="carol").exists()
    assert 'href="/accounts/signup/"' not in body(client.get("/"))
    assert 'href="/accounts/signup/"' not in body(client.get("/accounts/login/"))


def test_open_mode_links_sign_up_from_every_page_and_the_login(client: Client) -> None:
    assert 'href="/accounts/signup/"' in body(client.get("/"))
    login = body(client.get("/accounts/login/?next=/games/"))
    assert 'href="/accounts/signup/?next=/games/"' in login and 'href="/accounts/password/reset/"' in login


def test_sign_up_is_throttled_per_address(client: Client, settings: Any) -> None:
    settings.LEADERBOARD_SIGNUP_ATTEMPTS = 3
    for n in range(3):
        assert sign_up(client, f"user{n}", password2="mismatch-" + PASSWORD).status_code == 400
    refused = sign_up(client, "valid-after-three")
    assert refused.status_code == 429 and "Too many requests" in body(refused)
    assert not User.objects.filter(username="valid-after-three").exists()
    # Another address is counted apart; a forged X-Forwarded-For is not believed without a proxy in front.
    assert sign_up(Client(), "from-elsewhere", address="10.1.2.3").status_code == 302
    forged = Client().post(
        "/accounts/signup/",
        {"username": "forger", "email": "f@example.org", "password1": PASSWORD, "password2": PASSWORD},
        HTTP_X_FORWARDED_FOR="10.9.9.9",
    )
    assert forged.status_code == 429


def test_behind_a_proxy_the_address_is_the_proxys_last_hop(client: Client, settings: Any) -> None:
    settings.LEADERBOARD_SIGNUP_ATTEMPTS, settings.BEHIND_PROXY = 1, True
    data = {"email": "p@example.org", "password1": PASSWORD, "password2": PASSWORD}
    first = Client().post("/accounts/signup/", {"username": "p1", **data}, HTTP_X_FORWARDED_FOR="1.1.1.1, 10.0.0.7")
    again = Client().post("/accounts/signup/", {"username": "p2", **data}, HTTP_X_FORWARDED_FOR="2.2.2.2, 10.0.0.7")
    other = Client().post("/accounts/signup/", {"username": "p3", **data}, HTTP_X_FORWARDED_FOR="10.0.0.8")
    assert (first.status_code, again.status_code, other.status_code) == (302, 429, 302)


def test_a_host_cannot_take_over_a_signed_up_account(client: Client, host: Any) -> None:
    sign_up(client)
    with pytest.raises(UsernameTaken):
        participant_provision(username="carol", host=host)


# --- Profile and token --------------------------------------------------------------------------------------


def test_the_profile_needs_a_login(client: Client) -> None:
    answer = client.get("/accounts/profile/")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/?next=/accounts/profile/"


def csrf_of(page: Any) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body(page))
    assert found is not None
    return found.group(1)


def shown_token(answer: Any) -> str:
    found = re.search(r'<code id="api-token">([^<]+)</code>', body(answer))
    assert found is not None, body(answer)
    return found.group(1)


def test_the_profile_shows_my_tokens_prefix_only_and_is_never_cached(
    participant: Any, other_participant: Any
) -> None:
    mine = api_token_issue(user=participant)
    theirs = api_token_issue(user=other_participant)
    client = Client()
    client.force_login(participant)
    page = client.get("/accounts/profile/")
    prefix = ApiToken.objects.get(user=participant).prefix
    assert f'<code id="api-token-prefix">{prefix}</code>' in body(page) and mine.startswith(prefix)
    assert mine not in body(page) and theirs not in body(page) and theirs[:12] not in body(page)
    assert 'id="api-token"' not in body(page)
    assert "no-store" in page["Cache-Control"]


def test_a_token_made_on_the_profile_is_shown_once_and_works(participant: Any, competition: Any) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(participant)
    page = client.get("/accounts/profile/")
    assert 'id="no-api-token"' in body(page) and not ApiToken.objects.filter(user=participant).exists()
    made = client.post("/accounts/profile/token/", {"csrfmiddlewaretoken": csrf_of(page)})
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    token = shown_token(made)
    assert "shown this once" in body(made) and "You have an API token." in body(made)
    quota = f"/api/v1/competitions/{competition.slug}/quota/"
    assert Client().get(quota, HTTP_AUTHORIZATION=f"Token {token}").status_code == 200
    for later in (client.get("/accounts/profile/"), client.get("/accounts/profile/")):  # never again in full
        assert token not in body(later) and token[:12] in body(later) and "Regenerate the token" in body(later)


def test_regenerating_the_token_retires_the_old_one(participant: Any, competition: Any) -> None:
    old = api_token_issue(user=participant)
    client = Client(enforce_csrf_checks=True)
    client.force_login(participant)
    page = client.get("/accounts/profile/")
    assert client.post("/accounts/profile/token/").status_code == 403  # no CSRF token: refused
    answer = client.post("/accounts/profile/token/", {"csrfmiddlewaretoken": csrf_of(page)})
    assert answer.status_code == 200 and "old one no longer works" in body(answer)
    new = shown_token(answer)
    assert new != old and old not in body(answer)
    after = client.get("/accounts/profile/")
    assert new not in body(after) and old not in body(after) and new[:12] in body(after)
    quota = f"/api/v1/competitions/{competition.slug}/quota/"
    assert Client().get(quota, HTTP_AUTHORIZATION=f"Token {old}").status_code == 401
    assert Client().get(quota, HTTP_AUTHORIZATION=f"Token {new}").status_code == 200


def test_the_token_cannot_be_regenerated_by_a_get_or_anonymously(client: Client, participant: Any) -> None:
    assert client.post("/accounts/profile/token/").status_code == 302
    client.force_login(participant)
    assert client.get("/accounts/profile/token/").status_code == 405


# --- Passwords ----------------------------------------------------------------------------------------------


def test_changing_the_password(client: Client) -> None:
    sign_up(client)
    new = "another-long-passphrase-8"
    refused = client.post(
        "/accounts/password/change/", {"old_password": "wrong", "new_password1": new, "new_password2": new}
    )
    assert refused.status_code == 200 and "incorrectly" in body(refused)
    answer = client.post(
        "/accounts/password/change/", {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    )
    assert answer.status_code == 302 and answer["Location"] == "/accounts/password/change/done/"
    assert "Password changed" in body(client.get(answer["Location"]))
    assert User.objects.get(username="carol").check_password(new)


def test_the_password_pages_need_a_login(client: Client) -> None:
    answer = client.get("/accounts/password/change/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")


def test_resetting_a_forgotten_password_by_mail(client: Client) -> None:
    sign_up(client)
    client.logout()
    sent = client.post("/accounts/password/reset/", {"email": "carol@example.org"})
    assert sent.status_code == 302 and sent["Location"] == "/accounts/password/reset/sent/"
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["carol@example.org"]
    link = re.search(r"http://testserver(/accounts/password/reset/\S+/)", str(mail.outbox[0].body))
    assert link is not None and "carol" in mail.outbox[0].body
    form = client.get(link.group(1), follow=True)
    assert "Choose a new password" in body(form)
    new = "a-brand-new-passphrase-9"
    done = client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done.status_code == 302 and done["Location"] == "/accounts/password/reset/done/"
    assert Client().login(username="carol", password=new)
    assert "not valid" in body(client.get(link.group(1), follow=True))  # the link works once


def test_a_reset_for_an_unknown_or_token_only_address_looks_the_same_and_sends_nothing(
    client: Client, host: Any
) -> None:
    participant_provision(username="bot-1", host=host, email="bot@example.org")  # no usable password
    for address in ("nobody@example.org", "bot@example.org"):
        answer = client.post("/accounts/password/reset/", {"email": address})
        assert answer.status_code == 302 and answer["Location"] == "/accounts/password/reset/sent/"
    assert mail.outbox == []


def test_reset_requests_are_throttled_per_address(client: Client, settings: Any) -> None:
    settings.LEADERBOARD_SIGNUP_ATTEMPTS = 2
    for _ in range(2):
        assert client.post("/accounts/password/reset/", {"email": "x@example.org"}).status_code == 302
    refused = client.post("/accounts/password/reset/", {"email": "x@example.org"})
    assert refused.status_code == 429 and "Too many requests" in body(refused)


# --- Settings -------------------------------------------------------------------------------------------------


def _settings(env: dict[str, str], expression: str) -> subprocess.CompletedProcess[str]:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LEADERBOARD_"))}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**base, "DJANGO_SETTINGS_MODULE": "leaderboard.settings", "DJANGO_SECRET_KEY": "x" * 50, **env},
    )


def test_mail_goes_to_files_under_var_by_default(tmp_path: Path) -> None:
    done = _settings(
        {"LEADERBOARD_VAR_DIR": str(tmp_path)},
        "settings.EMAIL_BACKEND, settings.EMAIL_FILE_PATH, settings.LEADERBOARD_SIGNUP",
    )
    assert done.stdout.split() == [
        "leaderboard.mail.PrivateFileEmailBackend",
        str(tmp_path / "mail"),
        "open",
    ], done.stderr


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"LEADERBOARD_SIGNUP": "sometimes"}, "use one of open, invite, closed"),
        ({"LEADERBOARD_SIGNUP": "invite"}, "needs LEADERBOARD_INVITE_CODE"),
    ],
)
def test_a_wrong_sign_up_setting_stops_the_site(tmp_path: Path, env: dict[str, str], fragment: str) -> None:
    done = _settings({"LEADERBOARD_VAR_DIR": str(tmp_path), **env}, "1")
    assert done.returncode != 0 and fragment in done.stderr
