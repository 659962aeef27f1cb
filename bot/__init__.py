"""The bundled attacker bot (``leaderboard-bot``): fingerprint a live board, attack it, checkpoint, resume.

The project's one HTTP client of the REST API (:class:`bot.client.LeaderboardClient`, participant and host
sides) lives here too; the bot talks to a site only through it (:class:`bot.http_oracle.HttpOracle`) and
registers no attack of its own.
"""

from __future__ import annotations
