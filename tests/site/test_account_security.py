"""Account security through the real test client: a login lockout per (username, address) and per address that
never locks the owner out from elsewhere, with a doubling lock and a "try again after HH:MM UTC" message said
once (pages, the admin, the API); X-Forwarded-For believed only from trusted proxies; sign-up failing closed and
login degrading when Redis is down; NFKC usernames and confusable look-alikes refused."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, RequestFactory

from leaderboard.accounts.authentication import api_token_find
from leaderboard.accounts.services import participant_provision, participant_sign_up
from leaderboard.accounts.usernames import confusable_with, normalize_username, skeleton
from leaderboard.errors import UsernameTaken
from leaderboard.security import client_address, format_until, reset_all_counters
from stack.processes import REPO

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-and-uncommon-passphrase-7"
ATTACKER = "203.0.113.66"
OWNER_ELSEWHERE = "198.51.100.7"
LOCKED = re.compile(r"Too many failed attempts; try again after (\d\d:\d\d) UTC\.")
REDIS_DOWN = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
}


@pytest.fixture(autouse=True)
def _fresh_counters(settings: Any) -> Iterator[None]:
    settings.LEADERBOARD_LOGIN_ATTEMPTS = 3
    settings.LEADERBOARD_LOGIN_ADDRESS_ATTEMPTS = 10
    settings.LEADERBOARD_LOGIN_LOCKOUT = 60
    settings.TRUSTED_PROXIES, settings.BEHIND_PROXY = [], False
    cache.clear()
    reset_all_counters()
    yield
    reset_all_counters()


@pytest.fixture(params=["locmem", "redis"])
def shared_cache(request: pytest.FixtureRequest, settings: Any) -> str:
    """The counters in this process's cache or in the real Redis (a fresh key prefix: nothing to clear)."""
    if request.param == "redis":
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": "redis://127.0.0.1:6379/0",
                "KEY_PREFIX": f"test-lockout-{uuid.uuid4().hex}",
                "TIMEOUT": 120,
            }
        }
    return str(request.param)


def owner(username: str = "alice", **fields: Any) -> User:
    return User.objects.create_user(username, password=PASSWORD, **fields)


def log_in(username: str, password: str, address: str, url: str = "/accounts/login/") -> Any:
    return Client().post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


def text(response: Any) -> str:
    return response.content.decode()


def locked_until_shown(response: Any) -> str:
    """The HH:MM the page says, checking that it says it exactly once and never "did not match"."""
    page = text(response)
    found = LOCKED.findall(page)
    assert len(found) == 1, page
    assert "did not match" not in page and "correct username" not in page
    return str(found[0])


# --- The lockout ------------------------------------------------------------------------------------------------


def test_the_owner_logs_in_from_another_address_while_the_attackers_is_locked(shared_cache: str) -> None:
    owner()
    answers = [log_in("alice", f"guess-{n}", ATTACKER).status_code for n in range(3)]
    assert answers == [200, 200, 429]  # the third failure starts the lock and says so
    right_password_from_attacker = log_in("alice", PASSWORD, ATTACKER)
    assert right_password_from_attacker.status_code == 429 and int(right_password_from_attacker["Retry-After"]) > 0
    locked_until_shown(right_password_from_attacker)
    at_home = log_in("alice", PASSWORD, OWNER_ELSEWHERE)
    assert at_home.status_code == 302  # the owner is in


def test_the_locked_message_names_the_end_of_the_lock_once(settings: Any) -> None:
    owner()
    for n in range(2):
        assert "did not match" in text(log_in("alice", f"guess-{n}", ATTACKER))  # an ordinary failure says so
    before = time.time()
    third = log_in("alice", "guess-3", ATTACKER)
    shown = locked_until_shown(third)
    expected = {format_until(datetime.fromtimestamp(before + 60 + delta, UTC)) for delta in (0, 1, 2)}
    assert f"{shown} UTC" in expected


def test_the_reset_time_reads_as_hh_mm_and_gains_a_date_only_when_far(monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime(2026, 11, 28, 23, 58, 30, tzinfo=UTC).timestamp()
    monkeypatch.setattr(time, "time", lambda: now)
    assert format_until(datetime.fromtimestamp(now + 60, UTC)) == "00:00 UTC"  # rounded up, past midnight
    assert format_until(datetime.fromtimestamp(now + 300, UTC)) == "00:04 UTC"
    assert format_until(datetime.fromtimestamp(now + 86_400, UTC)) == "2026-11-29 23:59 UTC"


def test_the_lock_doubles_with_every_failure_after_it(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_900_000_000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])  # the cache's expiry reads the same clock
    owner()
    for n in range(3):
        log_in("alice", f"guess-{n}", ATTACKER)
    locks = []
    for _ in range(3):
        refused = log_in("alice", PASSWORD, ATTACKER)
        assert refused.status_code == 429
        locks.append(int(refused["Retry-After"]))
        clock[0] += locks[-1] + 1  # wait the lock out, then fail once more
        assert log_in("alice", "guess-again", ATTACKER).status_code == 429
    assert locks == [60, 120, 240]
    assert log_in("alice", PASSWORD, OWNER_ELSEWHERE).status_code == 302


def test_a_spray_of_40_usernames_from_one_address_is_slowed() -> None:
    victim = owner("victim-7")
    names = [f"sprayed-{n}" for n in range(39)] + [victim.username]
    answers = [log_in(name, "Summer2026!", ATTACKER).status_code for name in names]
    assert answers[:9] == [200] * 9 and answers[9:] == [429] * 31  # 10 tries, then the address is locked
    assert log_in(victim.username, PASSWORD, ATTACKER).status_code == 429  # even a right guess gains nothing
    assert log_in(victim.username, PASSWORD, OWNER_ELSEWHERE).status_code == 302


def test_a_successful_login_forgets_the_pairs_failures() -> None:
    owner()
    for n in range(2):
        log_in("alice", f"typo-{n}", OWNER_ELSEWHERE)
    assert log_in("alice", PASSWORD, OWNER_ELSEWHERE).status_code == 302
    for n in range(2):  # two more typos do not lock: the count started again
        assert log_in("alice", f"typo-again-{n}", OWNER_ELSEWHERE).status_code == 200


def test_authenticate_without_a_request_counts_per_username_only() -> None:
    from django.contrib.auth import authenticate

    owner()
    for n in range(40):  # in-process callers (a management command, the test client's login) have no address
        assert authenticate(username=f"nobody-{n}", password="wrong") is None
    assert authenticate(username="alice", password=PASSWORD) is not None
    for n in range(3):
        authenticate(username="alice", password=f"wrong-{n}")
    assert authenticate(username="alice", password=PASSWORD) is None


def test_the_admin_login_is_locked_per_address_and_says_until_when() -> None:
    owner("hana", is_staff=True, is_superuser=True)
    for n in range(3):
        last = log_in("hana", f"guess-{n}", ATTACKER, url="/admin/login/")
    locked_until_shown(last)
    assert log_in("hana", PASSWORD, ATTACKER, url="/admin/login/").status_code == 200  # the form again
    assert log_in("hana", PASSWORD, OWNER_ELSEWHERE, url="/admin/login/").status_code == 302


def test_the_api_token_login_answers_429_with_the_reset_time() -> None:
    user = owner()
    api = Client()
    url = "/api/v1/auth/token/"
    for n in range(2):
        wrong = api.post(url, {"username": "alice", "password": f"x{n}"}, "application/json", REMOTE_ADDR=ATTACKER)
        assert wrong.status_code == 400 and wrong.json()["detail"] == "username and password did not match"
    third = api.post(url, {"username": "alice", "password": "x3"}, "application/json", REMOTE_ADDR=ATTACKER)
    assert third.status_code == 429
    answer = api.post(url, {"username": "alice", "password": PASSWORD}, "application/json", REMOTE_ADDR=ATTACKER)
    assert answer.status_code == 429 and answer["Retry-After"]
    body = answer.json()
    assert LOCKED.fullmatch(body["detail"]) and body["resets_at"].endswith("Z")
    assert datetime.fromisoformat(body["resets_at"]) > datetime.now(UTC)
    token = api.post(url, {"username": "alice", "password": PASSWORD}, "application/json", REMOTE_ADDR=OWNER_ELSEWHERE)
    assert token.status_code == 200 and token.json()["token"].startswith("lbl_")
    found = api_token_find(token.json()["token"])  # a new token of the account, which it signs in with
    assert found is not None and found.user == user
    for junk in ([1, 2], "text", {"username": ["a"], "password": None}, {"username": "a\x00", "password": "b"}):
        assert api.post(url, junk, "application/json", REMOTE_ADDR=OWNER_ELSEWHERE).status_code == 400


# --- The client address -----------------------------------------------------------------------------------------


def request_from(peer: str, forwarded: str | None = None) -> Any:
    extra: dict[str, Any] = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return RequestFactory().get("/", REMOTE_ADDR=peer, **extra)


def test_x_forwarded_for_is_ignored_unless_the_peer_is_a_trusted_proxy(settings: Any) -> None:
    assert client_address(request_from("192.0.2.10", "6.6.6.6")) == "192.0.2.10"  # default: no proxy trusted
    settings.TRUSTED_PROXIES = ["10.0.0.0/8", "2001:db8::/32"]
    assert client_address(request_from("192.0.2.10", "6.6.6.6")) == "192.0.2.10"  # an untrusted peer
    # From a trusted proxy: the right-most entry that is not a trusted proxy; the client's own entries are ignored.
    assert client_address(request_from("10.0.0.5", "6.6.6.6, 203.0.113.5")) == "203.0.113.5"
    assert client_address(request_from("10.0.0.5", "6.6.6.6, 203.0.113.5, 10.1.2.3")) == "203.0.113.5"
    assert client_address(request_from("2001:db8::1", "[2001:db8:1::5]:443, 203.0.113.9:5555")) == "203.0.113.9"
    assert client_address(request_from("10.0.0.5")) == "10.0.0.5"  # no header: the proxy itself
    # DJANGO_BEHIND_PROXY trusts loopback (a proxy on this machine) only, never every peer.
    settings.TRUSTED_PROXIES, settings.BEHIND_PROXY = [], True
    assert client_address(request_from("127.0.0.1", "203.0.113.5")) == "203.0.113.5"
    assert client_address(request_from("192.0.2.10", "203.0.113.5")) == "192.0.2.10"


def sign_up(username: str, peer: str, forwarded: str | None = None) -> Any:
    data = {"username": username, "email": f"{username}@example.org", "password1": PASSWORD, "password2": PASSWORD}
    extra: dict[str, Any] = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return Client().post("/accounts/signup/", data, REMOTE_ADDR=peer, **extra)


def test_sign_up_limits_count_the_forwarded_client_only_from_a_trusted_proxy(settings: Any) -> None:
    settings.LEADERBOARD_SIGNUP_ATTEMPTS = 1
    # A client talking to the app directly cannot mint addresses by writing the header.
    assert sign_up("direct-1", "192.0.2.10", "1.1.1.1").status_code == 302
    assert sign_up("direct-2", "192.0.2.10", "2.2.2.2").status_code == 429
    # Through the trusted proxy, two clients are two addresses; a forged left-hand entry changes nothing.
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert sign_up("proxied-1", "10.0.0.5", "203.0.113.1").status_code == 302
    assert sign_up("proxied-2", "10.0.0.5", "203.0.113.2").status_code == 302
    assert sign_up("proxied-3", "10.0.0.5", "9.9.9.9, 203.0.113.2").status_code == 429


def test_login_lockout_follows_the_forwarded_client_from_a_trusted_proxy(settings: Any) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.5"]
    owner()
    proxy: dict[str, Any] = {"REMOTE_ADDR": "10.0.0.5"}
    for n in range(3):
        Client().post("/accounts/login/", {"username": "alice", "password": f"g{n}"},
                      HTTP_X_FORWARDED_FOR=ATTACKER, **proxy)
    home = Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD},
                         HTTP_X_FORWARDED_FOR=OWNER_ELSEWHERE, **proxy)
    assert home.status_code == 302  # behind the same proxy, the owner's own address is not locked
    spoofed = Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD},
                            HTTP_X_FORWARDED_FOR=f"{OWNER_ELSEWHERE}, {ATTACKER}", **proxy)
    assert spoofed.status_code == 429


def test_trusted_proxies_come_from_the_environment_and_a_bad_entry_stops_the_start() -> None:
    code = "import django; django.setup(); from django.conf import settings; print(settings.TRUSTED_PROXIES)"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LEADERBOARD_"))}
    env = {**base, "DJANGO_SETTINGS_MODULE": "leaderboard.settings", "DJANGO_SECRET_KEY": "x" * 50}
    good = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          env={**env, "DJANGO_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1"})
    assert good.stdout.strip() == "['10.0.0.0/8', '192.0.2.1']"
    bad = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                         env={**env, "DJANGO_TRUSTED_PROXIES": "10.0.0.0/8, proxy.local"})
    assert bad.returncode != 0 and "DJANGO_TRUSTED_PROXIES: 'proxy.local' is not an IP address" in bad.stderr


# --- Redis down ---------------------------------------------------------------------------------------------------


def test_with_redis_down_sign_up_fails_closed_and_login_degrades(settings: Any) -> None:
    owner()
    settings.CACHES = REDIS_DOWN
    refused = sign_up("while-down", "192.0.2.10")
    assert refused.status_code == 503 and "Sign-up is unavailable" in text(refused)
    assert not User.objects.filter(username="while-down").exists()
    # Login keeps working and keeps counting, in this process's memory.
    assert log_in("alice", PASSWORD, OWNER_ELSEWHERE).status_code == 302
    answers = [log_in("alice", f"g{n}", ATTACKER).status_code for n in range(4)]
    assert answers == [200, 200, 429, 429]
    assert log_in("alice", PASSWORD, OWNER_ELSEWHERE).status_code == 302
    token = Client().post("/api/v1/auth/token/", {"username": "alice", "password": PASSWORD}, "application/json",
                          REMOTE_ADDR=OWNER_ELSEWHERE)
    assert token.status_code == 200
    # Password reset degrades as login does: the same answer as ever, no 500.
    assert Client().post("/accounts/password/reset/", {"email": "x@example.org"}).status_code == 302


def test_an_unreachable_redis_is_asked_once_per_few_seconds_not_per_counter(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import leaderboard.security as security

    calls: list[str] = []

    class Unreachable:
        def __getattr__(self, name: str) -> Any:
            def fail(*args: Any, **kwargs: Any) -> Any:
                calls.append(name)
                raise ConnectionError("timed out")  # what an unreachable host gives after the socket timeout

            return fail

    owner()
    settings.CACHES = REDIS_DOWN
    monkeypatch.setattr(security, "cache", Unreachable())
    for n in range(3):
        log_in("alice", f"g{n}", ATTACKER)  # each login reads two locks and counts two failures
    assert len(calls) == 1
    assert log_in("alice", PASSWORD, ATTACKER).status_code == 429  # counted in memory meanwhile
    clock = time.monotonic() + security.CACHE_RETRY_AFTER + 1
    monkeypatch.setattr(time, "monotonic", lambda: clock)
    log_in("alice", PASSWORD, OWNER_ELSEWHERE)
    assert len(calls) == 2  # asked again once the pause is over


# --- Usernames -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("new", "taken"),
    [("аlice", "alice"), ("ALICE", "alice"), ("b0b", "bob"), ("rnary", "mary"), ("Ilya", "llya"),
     ("ρaul", "paul"), ("РАUL", "paul"), ("al\u200bice", "alice")],
)
def test_look_alikes_are_confusable(new: str, taken: str) -> None:
    assert confusable_with(new, ["zed", taken]) == taken


@pytest.mark.parametrize(("new", "taken"), [("alicia", "alice"), ("bob2", "bob"), ("mary", "marty"), ("ann", "anne")])
def test_different_names_are_not_confusable(new: str, taken: str) -> None:
    assert confusable_with(new, [taken]) is None


def test_a_cyrillic_look_alike_is_refused_at_sign_up_with_a_clear_message() -> None:
    owner()
    answer = sign_up("\u0430lice", "192.0.2.20")  # a Cyrillic "а"
    assert answer.status_code == 400
    assert "looks too much like one that is already taken" in text(answer)
    assert User.objects.count() == 1
    assert sign_up("alicia", "192.0.2.21").status_code == 302


def test_usernames_are_stored_nfkc_normalised() -> None:
    assert normalize_username("ｃａｒｏｌ") == "carol" and skeleton("ｃａｒｏｌ") == skeleton("carol")
    user = participant_sign_up(username="ｃａｒｏｌ", email="c@example.org", password=PASSWORD)
    assert user.username == "carol"
    with pytest.raises(UsernameTaken):
        participant_sign_up(username="cаrol", email="d@example.org", password=PASSWORD)  # Cyrillic "а"


def test_a_host_cannot_provision_a_look_alike(host: Any) -> None:
    owner()
    with pytest.raises(UsernameTaken):
        participant_provision(username="\u0430lice", host=host)
    made, _, created = participant_provision(username="ｄａｖｅ", host=host)
    assert created and made.username == "dave"
    again, _, created_again = participant_provision(username="dave", host=host)  # the host's own account again
    assert again.pk == made.pk and not created_again


# --- Host-made accounts -----------------------------------------------------------------------------------------


def test_a_host_makes_a_limited_number_of_accounts_a_day(settings: Any) -> None:
    from tests.site.conftest import api_client

    settings.LEADERBOARD_HOST_ACCOUNTS_PER_DAY = 2
    host = api_client(User.objects.create_user("hana", is_staff=True))
    made = [host.post("/api/v1/host/participants/", {"username": f"bot-{n}"}, format="json") for n in range(3)]
    assert [answer.status_code for answer in made] == [201, 201, 429]
    refused = made[2].json()
    assert "2 participant accounts in 24 hours" in refused["detail"] and refused["resets_at"].endswith("Z")
    assert int(made[2]["Retry-After"]) > 23 * 3600
    assert not User.objects.filter(username="bot-2").exists()
    # Asking again for an account it made is not a new account; a superuser has no limit.
    assert host.post("/api/v1/host/participants/", {"username": "bot-0"}, format="json").status_code == 200
    root = api_client(User.objects.create_superuser("root", "root@example.org", PASSWORD))
    assert root.post("/api/v1/host/participants/", {"username": "bot-9"}, format="json").status_code == 201
