"""Usernames that cannot impersonate each other: NFKC-normalised, and refused when confusable with a taken one.

Usernames are public on every board, so a look-alike ("аlice" with a Cyrillic "а", "bob" against "b0b",
"rnary" against "mary") is an impersonation. :func:`skeleton` follows the skeleton of Unicode TS #39
(confusable detection): every character is replaced by its prototype and two strings are confusable when their
skeletons are equal. The mapping here is a small subset of the standard's ``confusables.txt`` — the Latin
look-alikes among Cyrillic, Greek and IPA letters, digits and a few letter pairs — chosen for the characters a
username may hold (Django's validator allows letters, digits and ``.@+-_``); case is folded too, since "Alice"
and "alice" are the same name on a board.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# One character -> its Latin prototype (applied after case folding).
_PROTOTYPES: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "ԁ": "d", "е": "e", "һ": "h", "н": "h", "і": "i", "ј": "j", "к": "k", "ӏ": "l",
    "м": "m", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "т": "t", "у": "y", "ү": "y", "ԝ": "w", "х": "x",
    "с": "c", "ɡ": "g",
    # Greek
    "α": "a", "β": "b", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ϳ": "j",
    # Latin and IPA look-alikes
    "ı": "i", "ɩ": "i", "ȷ": "j", "ɑ": "a", "ʟ": "l", "ɪ": "i", "ᴏ": "o", "ᴄ": "c", "ᴠ": "v", "ᴡ": "w", "ᴢ": "z",
    # Digits and marks that read as letters
    "0": "o", "1": "l", "|": "l",
}
# Letter pairs that read as one letter (TS #39: "rn" -> "m", "vv" -> "w", "cl" -> "d").
_PAIRS: tuple[tuple[str, str], ...] = (("rn", "m"), ("vv", "w"), ("cl", "d"))


def normalize_username(username: str) -> str:
    """The stored form of a username: NFKC (full-width letters, ligatures and the like become plain ones) and
    trimmed, as Django's own ``AbstractBaseUser.normalize_username`` does for ``create_user``."""
    return unicodedata.normalize("NFKC", username).strip()


def _format_free(username: str) -> str:
    text = unicodedata.normalize("NFKC", username)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")  # invisible format characters


def _pairs(text: str) -> str:
    previous = None
    while previous != text:  # "rrnn" -> "rmn" -> ... until nothing changes
        previous = text
        for pair, letter in _PAIRS:
            text = text.replace(pair, letter)
    return text


def skeleton(username: str) -> str:
    """The TS #39 skeleton of ``username`` after case folding: equal skeletons mean the names look alike.

    >>> skeleton("аlice") == skeleton("ALICE") == skeleton("alice")
    True
    >>> skeleton("b0b") == skeleton("bob"), skeleton("rnary") == skeleton("mary")
    (True, True)
    >>> skeleton("alice") == skeleton("alicia")
    False
    """
    text = unicodedata.normalize("NFD", _format_free(username).casefold())
    return unicodedata.normalize("NFD", _pairs("".join(_PROTOTYPES.get(ch, ch) for ch in text)))


def cased_skeleton(username: str) -> str:
    """The skeleton without case folding, where a capital I reads as a small L ("Ilya" and "llya")."""
    out = []
    for ch in unicodedata.normalize("NFD", _format_free(username)):
        if ch == "I":
            out.append("l")
        elif ch in _PROTOTYPES:
            out.append(_PROTOTYPES[ch])
        elif ch.lower() != ch and ch.lower() in _PROTOTYPES:  # a capital Cyrillic or Greek look-alike
            out.append(_PROTOTYPES[ch.lower()].upper())
        else:
            out.append(ch)
    return unicodedata.normalize("NFD", _pairs("".join(out)))


def confusable(first: str, second: str) -> bool:
    """Whether two usernames look alike, with or without case."""
    return skeleton(first) == skeleton(second) or cased_skeleton(first) == cased_skeleton(second)


def confusable_with(username: str, existing: Iterable[str]) -> str | None:
    """The first of ``existing`` that looks like ``username`` without being exactly it, else ``None``."""
    folded, cased = skeleton(username), cased_skeleton(username)
    normalized = normalize_username(username)
    for other in existing:
        if other != normalized and (skeleton(other) == folded or cased_skeleton(other) == cased):
            return other
    return None


def confusable_existing_username(username: str, *, exclude: str | None = None) -> str | None:
    """A taken username that ``username`` could be mistaken for (a different account), else ``None``; ``exclude``
    is the account's own current name when it is renamed (it may look like itself).

    Reads every username once (tens of milliseconds for ten thousand accounts, a class or a workshop's size)."""
    from django.contrib.auth import get_user_model

    names = get_user_model().objects.values_list("username", flat=True).iterator(chunk_size=2000)
    return confusable_with(username, (name for name in names if name != exclude))


def username_refusal(username: str, *, current: str | None = None) -> str | None:
    """Why ``username`` cannot be given to a new account (or to the account now named ``current``, renamed),
    naming the taken look-alike, for staff-facing paths (the admin, ``createsuperuser``, ``create_participant``);
    ``None`` when it may. Keeping the current name is always allowed (accounts made before this check exist).

    >>> username_refusal("")
    """
    if not username or (current is not None and normalize_username(username) == current):
        return None
    other = confusable_existing_username(username, exclude=current)
    if other is None:
        return None
    return f"the username {normalize_username(username)!r} looks too much like the existing {other!r}; choose another"


CONFUSABLE_MESSAGE = "That username looks too much like one that is already taken; choose another."
