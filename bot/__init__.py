"""The bundled attacker bot (``leaderboard-bot``): fingerprint a live board, attack it, checkpoint, resume.

A client of the site's public REST API only (:class:`bot.http_oracle.HttpOracle`); it registers no
attack of its own.
"""

from __future__ import annotations
