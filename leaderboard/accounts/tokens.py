"""API tokens as the database keeps them: a SHA-256 digest and a short non-secret prefix, never the token.

A token is ``lbl_`` and 43 URL-safe characters (32 random bytes, 256 bits). Its digest is an unkeyed SHA-256: the
token is random, so there is nothing to guess from a digest and no need for a slow password hash; and no key to
lose or rotate (a key in the settings would make every token stop working with a changed ``SECRET_KEY``). The
prefix (the first :data:`PREFIX_LENGTH` characters: ``lbl_`` and 48 bits of the token) names a token on the
profile page and narrows the lookup; the 208 bits after it stay secret. Tokens made before hashing (DRF's
40 hex digits) are converted by migration ``accounts.0003`` and keep working under the same rule.

>>> token = "lbl_" + "A" * 43
>>> token_prefix(token)
'lbl_AAAAAAAA'
>>> len(token_digest(token)), token_digest(token) == token_digest(token), token_digest(token) == token_digest("x")
(64, True, False)
>>> digests_match(token_digest(token), token_digest(token)), digests_match(token_digest(token), token_digest("x"))
(True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: What every token this site makes starts with (a leaked one is recognisable, e.g. by a secret scanner).
TOKEN_MARK = "lbl_"
#: How many leading characters of a token are kept in clear, to show and to look the token up by.
PREFIX_LENGTH = 12
#: Longer "tokens" are refused before hashing (a made token has 47 characters, an old one 40).
MAX_TOKEN_LENGTH = 128


def token_new() -> str:
    """A fresh token: :data:`TOKEN_MARK` and 32 random bytes in URL-safe base64 (47 characters)."""
    return TOKEN_MARK + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """The SHA-256 of the token's UTF-8 bytes, 64 hex digits: all the database keeps of the secret."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_prefix(token: str) -> str:
    """The token's first :data:`PREFIX_LENGTH` characters (not secret: shown on the profile, used to look up)."""
    return token[:PREFIX_LENGTH]


def digests_match(stored: str, presented: str) -> bool:
    """Whether two digests are equal, compared in time independent of where they differ."""
    return hmac.compare_digest(stored.encode("ascii"), presented.encode("ascii"))
