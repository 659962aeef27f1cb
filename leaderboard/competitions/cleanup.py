"""Remove what live games left on a site: their cells (unlisted competitions whose slug is ``game-`` and 20 hex
digits, :mod:`games.live`), each with its submissions, and the attacker accounts the game made for them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet

from leaderboard.competitions.models import Competition


@dataclass
class GameCleanup:
    """What :func:`game_cells_remove` removed (or, on a dry run, would remove)."""

    competitions: list[str] = field(default_factory=list)
    submissions: int = 0
    accounts: list[str] = field(default_factory=list)

    def summary(self, *, dry_run: bool = False) -> str:
        verb = "would remove" if dry_run else "removed"
        return (f"{verb} {len(self.competitions)} game competition{'s' * (len(self.competitions) != 1)}, "
                f"{self.submissions} submission{'s' * (self.submissions != 1)} and {len(self.accounts)} game "
                f"account{'s' * (len(self.accounts) != 1)}")


def game_cells(*, host: Any = None) -> QuerySet[Competition]:
    """The cells live games made (of ``host`` only, when given): unlisted, slug ``game-`` + 20 hex digits."""
    from games.live import CELL_SLUG  # here: games.live loads the bot and the attacks (~2 s a process start)

    cells = Competition.objects.filter(listed=False, slug__regex=CELL_SLUG.pattern)
    return cells if host is None else cells.filter(host=host)


def game_cells_remove(*, host: Any = None, slugs: list[str] | None = None, dry_run: bool = False) -> GameCleanup:
    """Delete the game cells (those of ``host`` when given; only ``slugs`` among them when given), their
    submissions (with every row that hangs on a competition) and the attacker accounts made for them: accounts
    made through the host API (``<slug>-attacker-<run>``) that are not staff and submitted nowhere else."""
    from games.live import ATTACKER_INFIX

    cells = game_cells(host=host)
    if slugs is not None:
        cells = cells.filter(slug__in=slugs)
    done = GameCleanup()
    with transaction.atomic():
        chosen = list(cells.select_for_update().values_list("pk", "slug"))
        ids = [pk for pk, _slug in chosen]
        done.competitions = sorted(slug for _pk, slug in chosen)
        from leaderboard.submissions.models import Submission

        done.submissions = Submission.objects.filter(competition_id__in=ids).count()
        user_model = get_user_model()
        accounts = user_model.objects.none()
        for slug in done.competitions:
            accounts = accounts | user_model.objects.filter(username__startswith=f"{slug}{ATTACKER_INFIX}")
        accounts = (accounts.filter(is_staff=False, is_superuser=False, provisioned_account__isnull=False)
                    .exclude(submissions__in=Submission.objects.exclude(competition_id__in=ids)).distinct())
        done.accounts = sorted(accounts.values_list("username", flat=True))
        if not dry_run:
            user_model.objects.filter(username__in=done.accounts).delete()
            Competition.objects.filter(pk__in=ids).delete()
    return done

