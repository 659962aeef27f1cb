"""Site-wide safety nets that no view has to remember.

- :class:`NoLocalsReporterFilter`: error pages (with ``DJANGO_DEBUG=1``) and error reports show no local
  variables, because a scoring frame's locals hold the hidden labels and the competition secret that seeds the
  split and every noise draw.
- :class:`ContentSecurityPolicyMiddleware`: every page answers with ``settings.CONTENT_SECURITY_POLICY``
  (scripts, styles and images from the site only, no inline ones), unless a view set a policy of its own.
- :class:`ThrottledModelBackend`: failed logins are counted per (username, client address) and per client
  address across usernames. ``LEADERBOARD_LOGIN_ATTEMPTS`` failures of one username from one address lock that
  pair, ``LEADERBOARD_LOGIN_ADDRESS_ATTEMPTS`` failures from one address (any usernames: a spray) lock the
  address; a lock lasts ``LEADERBOARD_LOGIN_LOCKOUT`` seconds and doubles with every failure after it (up to
  ``LEADERBOARD_LOGIN_LOCKOUT_MAX``). While locked, even the right password is refused, so guessing gains
  nothing — but only there: the owner logging in from another address is not affected. Both the site's login
  page, the API's token login and the admin's authenticate through it; :func:`login_locked_until` says until
  when, for the "try again after HH:MM UTC" message.
- :func:`attempt_allowed`: counts requests per client address in a scope (sign-up, password reset) and refuses
  them past ``LEADERBOARD_SIGNUP_ATTEMPTS`` within ``LEADERBOARD_SIGNUP_WINDOW`` seconds: every account has its
  own quota, so farming accounts must be slow, and so must guessing an invite code.
- :func:`client_address`: ``REMOTE_ADDR``, or — only when that peer is a trusted proxy (``TRUSTED_PROXIES``,
  plus loopback with ``BEHIND_PROXY``) — the right-most ``X-Forwarded-For`` entry that is not a trusted proxy.

The counters live in the cache (Redis, shared by every web process). When it cannot be reached, login falls back
to a per-process in-memory limiter (each web process counts on its own, so the limits are per process until
Redis is back) and sign-up fails closed (:class:`LimiterUnavailable`, a 503 page): an account farm must not
get in while nobody counts. Password-reset requests fall back to memory as login does.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import re
import threading
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.http import HttpRequest
from django.views.debug import SafeExceptionReporterFilter

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
LOCKED_ATTRIBUTE = "leaderboard_login_locked_until"  # set on the request by the backend, read by the forms


# Settings and request.META keys whose values are secrets or lead to one: Django's own list (API, AUTH, TOKEN, KEY,
# SECRET, PASS, SIGNATURE, cookies) plus the invite code, the broker, cache and database (their URLs carry
# passwords and addresses) and every *_URL/*_DSN, because an environment variable such as REDIS_URL reaches the
# debug page through request.META under runserver.
_HIDDEN_NAMES = (
    r"API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|CREDENTIAL|PRIVATE|INVITE|BROKER|CACHE|REDIS|DATABASE"
    r"|RESULT_BACKEND|URL|DSN"
)
# A URL with a password in it (``redis://:pw@host``, ``postgres://user:pw@host/db``), under whatever name it hides.
_URL_WITH_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^\s/@:]*:[^\s/@]*@", re.IGNORECASE)


class NoLocalsReporterFilter(SafeExceptionReporterFilter):
    """What an error page or report may show: no local variable of any traceback frame, and no setting or META entry
    that is a secret (``_HIDDEN_NAMES``, or any string holding a URL with a password).

    Applies to ``DJANGO_DEBUG=1``'s technical 500 and 400 pages (a bad ``Host`` header renders one) and to the
    error mails. Names such as ``LOGIN_URL`` are hidden too: over-hiding costs a debugging hint, under-hiding
    hands a participant the invite code or the broker's password.
    """

    hidden_settings = re.compile(_HIDDEN_NAMES, flags=re.IGNORECASE)

    def get_traceback_frame_variables(self, request: HttpRequest | None, tb_frame: Any) -> Any:
        return {name: self.cleansed_substitute for name in tb_frame.f_locals}.items()

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        if isinstance(value, str) and _URL_WITH_PASSWORD.search(value):
            return self.cleansed_substitute
        return super().cleanse_setting(key, value)


class ContentSecurityPolicyMiddleware:
    """Adds ``settings.CONTENT_SECURITY_POLICY`` to every answer that has no policy of its own.

    Not to the error pages of ``DJANGO_DEBUG=1``: Django's technical pages are built on inline script and style.
    """

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response and not (settings.DEBUG and response.status_code >= 400):
            response["Content-Security-Policy"] = settings.CONTENT_SECURITY_POLICY
        return response


class LimiterUnavailable(Exception):
    """The shared counters (Redis) cannot be reached and the caller asked to fail closed."""


# --- Counters: the cache, or this process's memory while the cache is down ---------------------------------


class _MemoryCounters:
    """A per-process stand-in for the cache's counters: values with an expiry time, under one lock."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[float, Any]] = {}
        self._lock = threading.Lock()

    def _live(self, key: str, now: float) -> Any:
        entry = self._values.get(key)
        if entry is None or entry[0] <= now:
            self._values.pop(key, None)
            return None
        return entry[1]

    def get(self, key: str) -> Any:
        with self._lock:
            return self._live(key, time.monotonic())

    def set(self, key: str, value: Any, timeout: float) -> None:
        with self._lock:
            if len(self._values) > 100_000:  # a flood of distinct keys: drop what has expired
                now = time.monotonic()
                self._values = {k: v for k, v in self._values.items() if v[0] > now}
            self._values[key] = (time.monotonic() + timeout, value)

    def incr(self, key: str, timeout: float, *, sliding: bool) -> int:
        with self._lock:
            now = time.monotonic()
            count = int(self._live(key, now) or 0) + 1
            expires = now + timeout if sliding or count == 1 else self._values[key][0]
            self._values[key] = (expires, count)
            return count

    def delete(self, key: str) -> None:
        with self._lock:
            self._values.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


memory_counters = _MemoryCounters()


# After a failed cache call the cache is left alone for this long (per cache location): an unreachable Redis
# costs one socket timeout every few seconds, not one per counter per request.
CACHE_RETRY_AFTER = 5.0
_cache_down_until: dict[str, float] = {}


class _CacheDown(Exception):
    """The cache failed moments ago; not asked again yet."""


def _cache_location() -> str:
    config = settings.CACHES.get("default", {})
    return f"{config.get('BACKEND', '')}|{config.get('LOCATION', '')}"


def _shared() -> Any:
    """The cache, unless it failed less than ``CACHE_RETRY_AFTER`` seconds ago."""
    if _cache_down_until.get(_cache_location(), 0.0) > time.monotonic():
        raise _CacheDown
    return cache


def _failed(exc: Exception) -> None:
    if not isinstance(exc, _CacheDown):
        _cache_down_until[_cache_location()] = time.monotonic() + CACHE_RETRY_AFTER


def _cache_incr(key: str, timeout: int, *, sliding: bool) -> int:
    shared = _shared()
    if shared.add(key, 1, timeout=timeout):
        return 1
    try:
        count = int(shared.incr(key))
    except ValueError:  # expired between add and incr
        shared.set(key, 1, timeout=timeout)
        return 1
    if sliding:
        shared.touch(key, timeout)
    return count


def _incr(key: str, timeout: int, *, sliding: bool = False, fail_closed: bool = False) -> int:
    """Add one to the counter ``key`` (a ``timeout``-second lifetime from its first count, or from its latest
    with ``sliding``) and return its new value."""
    try:
        return _cache_incr(key, timeout, sliding=sliding)
    except Exception as exc:  # the cache is down (connection refused, timeout)
        _failed(exc)
        if fail_closed:
            raise LimiterUnavailable(str(exc)) from exc
        return memory_counters.incr(key, timeout, sliding=sliding)


def _get(key: str) -> Any:
    try:
        return _shared().get(key)
    except Exception as exc:
        _failed(exc)
        return memory_counters.get(key)


def _set(key: str, value: Any, timeout: int) -> None:
    try:
        _shared().set(key, value, timeout=timeout)
    except Exception as exc:
        _failed(exc)
        memory_counters.set(key, value, timeout)


def _touch(key: str, value: int, timeout: int) -> None:
    try:
        shared = _shared()
        if not shared.touch(key, timeout):
            shared.set(key, value, timeout=timeout)
    except Exception as exc:
        _failed(exc)
        memory_counters.set(key, value, timeout)


def _delete(key: str) -> None:
    try:
        _shared().delete(key)
    except Exception as exc:
        _failed(exc)
    memory_counters.delete(key)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# --- Client address -----------------------------------------------------------------------------------------


@lru_cache(maxsize=16)
def parse_networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    """Addresses and CIDR blocks (``10.0.0.0/8``, ``::1``) as networks; :class:`ValueError` names a bad one."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{entry.strip()!r} is not an IP address or a CIDR block") from None
    return tuple(networks)


LOOPBACK = ("127.0.0.1/32", "::1/128")


def trusted_proxies() -> tuple[Network, ...]:
    """The peers whose ``X-Forwarded-For`` is believed: ``TRUSTED_PROXIES`` (``DJANGO_TRUSTED_PROXIES``), plus
    loopback when ``BEHIND_PROXY`` (``DJANGO_BEHIND_PROXY``: a proxy on this machine)."""
    entries = tuple(getattr(settings, "TRUSTED_PROXIES", ()))
    if getattr(settings, "BEHIND_PROXY", False):
        entries += LOOPBACK
    return parse_networks(entries)


def _parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.7:51234"
        text = text.split(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _is_trusted(text: str, networks: tuple[Network, ...]) -> bool:
    address = _parse_address(text)
    return address is not None and any(address in network for network in networks)


def client_address(request: HttpRequest | None) -> str:
    """The address the request came from. ``X-Forwarded-For`` counts only when the direct peer
    (``REMOTE_ADDR``) is a trusted proxy; then the answer is its right-most entry that is not itself a trusted
    proxy (entries to its left are whatever the client wrote). Otherwise ``REMOTE_ADDR``."""
    if request is None:
        return ""
    peer = str(request.META.get("REMOTE_ADDR", ""))
    networks = trusted_proxies()
    if not networks or not _is_trusted(peer, networks):
        return peer
    hops = [hop.strip() for hop in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _is_trusted(hop, networks):
            address = _parse_address(hop)
            return str(address) if address is not None else hop[:100]
    return peer if not hops else str(_parse_address(hops[0]) or peer)


# --- Per-address limits (sign-up, password reset) -----------------------------------------------------------


def attempt_allowed(request: HttpRequest, *, scope: str, fail_closed: bool = False) -> bool:
    """Count one attempt in ``scope`` from the request's address; ``False`` once the address has made more than
    ``LEADERBOARD_SIGNUP_ATTEMPTS`` in the current ``LEADERBOARD_SIGNUP_WINDOW``. With ``fail_closed``, a cache
    outage raises :class:`LimiterUnavailable` instead of counting in this process's memory."""
    address = _digest(client_address(request))
    count = _incr(f"{scope}-attempts:{address}", settings.LEADERBOARD_SIGNUP_WINDOW, fail_closed=fail_closed)
    return count <= settings.LEADERBOARD_SIGNUP_ATTEMPTS


# --- Login lockout --------------------------------------------------------------------------------------------


def _username_key(username: str) -> str:
    return _digest(username.strip().casefold())


def _keys(username: str, address: str) -> list[tuple[str, str, int]]:
    """(failure counter, lock, threshold) of the (username, address) pair, then of the address alone — unless
    there is no address (``authenticate`` called without a request, in this process: nobody to count)."""
    alone = _digest(address)
    pair = f"{_username_key(username)}:{alone}"
    keys = [(f"login-failures:{pair}", f"login-lock:{pair}", settings.LEADERBOARD_LOGIN_ATTEMPTS)]
    if address:
        threshold = settings.LEADERBOARD_LOGIN_ADDRESS_ATTEMPTS
        keys.append((f"login-address-failures:{alone}", f"login-address-lock:{alone}", threshold))
    return keys


def _until(value: Any) -> float | None:
    try:
        until = float(value)
    except (TypeError, ValueError):
        return None
    return until if until > time.time() else None


def login_locked_until(username: str, address: str) -> datetime | None:
    """When the lock on ``username`` from ``address`` (or on the address itself) ends, ``None`` if not locked."""
    ends = [until for _, lock, _ in _keys(username, address) if (until := _until(_get(lock))) is not None]
    return datetime.fromtimestamp(max(ends), UTC) if ends else None


def _lock_seconds(failures: int, threshold: int) -> int:
    base = settings.LEADERBOARD_LOGIN_LOCKOUT
    cap = settings.LEADERBOARD_LOGIN_LOCKOUT_MAX
    doublings = min(failures - threshold, 32)
    return int(min(base * 2**doublings, cap))


def record_login_failure(username: str, address: str) -> datetime | None:
    """Count a failed login; the end of the lock it starts (or ``None`` if it starts none)."""
    window = settings.LEADERBOARD_LOGIN_WINDOW
    ends: list[float] = []
    for counter, lock, threshold in _keys(username, address):
        # The counter lives for the window from its latest failure, and past the lock that failure starts:
        # failures keep compounding (the lock doubling) while they keep coming; a quiet window wipes the slate.
        failures = _incr(counter, window, sliding=True)
        if failures >= threshold:
            seconds = _lock_seconds(failures, threshold)
            until = time.time() + seconds
            _set(lock, until, seconds)
            _touch(counter, failures, window + seconds)
            ends.append(until)
    return datetime.fromtimestamp(max(ends), UTC) if ends else None


def clear_login_failures(username: str, address: str) -> None:
    """A successful login forgets the pair's failures (not the address's: an attacker's own account must not
    reset a spray's count)."""
    counter, lock, _ = _keys(username, address)[0]
    _delete(counter)
    _delete(lock)


def reset_all_counters() -> None:
    """Forget every in-memory count and every cache failure (tests; the cache is cleared with ``cache.clear()``)."""
    memory_counters.clear()
    _cache_down_until.clear()


def retry_after_seconds(until: datetime) -> int:
    return max(math.ceil(until.timestamp() - time.time()), 1)


def format_until(until: datetime) -> str:
    """``HH:MM UTC`` (rounded up to the minute, so that trying at that time works); with the date in front when
    it is 12 hours away or more (a lock past midnight but within hours still reads as a time)."""
    moment = datetime.fromtimestamp(math.ceil(until.timestamp() / 60) * 60, UTC)
    near = moment.timestamp() - time.time() < 12 * 3600
    return moment.strftime("%H:%M UTC" if near else "%Y-%m-%d %H:%M UTC")


def locked_message(until: datetime) -> str:
    return f"Too many failed attempts; try again after {format_until(until)}."


class ThrottledModelBackend(ModelBackend):
    """Django's username/password backend behind the (username, address) and address lockout."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        name = str(username if username is not None else kwargs.get("username") or "")
        address = client_address(request)
        until = login_locked_until(name, address)
        if until is not None:
            _mark_locked(request, until)
            return None  # locked: the right password fails too, so guessing gains nothing
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            until = record_login_failure(name, address)
            if until is not None:
                _mark_locked(request, until)
        else:
            clear_login_failures(name, address)
        return user


def _mark_locked(request: HttpRequest | None, until: datetime) -> None:
    if request is not None:
        setattr(request, LOCKED_ATTRIBUTE, until)


def request_locked_until(request: HttpRequest | None) -> datetime | None:
    """The lock the backend met while authenticating ``request`` (``None`` if it met none)."""
    until = getattr(request, LOCKED_ATTRIBUTE, None)
    return until if isinstance(until, datetime) else None
