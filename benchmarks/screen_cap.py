"""What the site's cap on the sybil screen's work lets a many-account attacker do: the worker screens the latest
uploads of at most ``MAX_ACCOUNTS`` (200) accounts, the most recently active first, so two probes more than 199 other
active accounts apart are never in one screen and never make a cluster.

Run through the site's own services on a fresh PostgreSQL database (``submission_create``, then the worker's
``submission_score`` with its screen hook, hold mode, a 200-row binary board, no defense). The attacker's probe
accounts each upload one probe (½ on every row but three, at binary-spaced logits; each account its own rows: the
complementary pattern the screen is built to catch). Between two probes, ``fillers`` other accounts upload a file:
the attacker's own spare accounts uploading the sample submission (constant ½), or an honest crowd's model outputs
(seeded random probabilities) on a busy board. Filler uploads are stored but not scored: a filler's own screen sees at
most one probe account, so it can flag no probe cluster (only the probes are probe-like), and the probes' screens
are what decide their holds. Beside each run: the library's screen (``defenses.sybil_screen.screen``) over every
upload at the end, uncapped — what lifting the cap would flag.

    .venv/bin/python -m benchmarks.screen_cap [--probes 8] [--fillers 0,150,199]
"""

from __future__ import annotations

import argparse
import io
import os
import time
import uuid
from typing import Any
from unittest import mock

import numpy as np

N_ROWS = 200
LABEL_SEED = 20261128
CROWD_SEED = 7


def _csv(ids: list[str], values: np.ndarray) -> bytes:
    return ("id,target\n" + "".join(f"{i},{float(v)!r}\n" for i, v in zip(ids, values, strict=True))).encode()


def _probe(index: int) -> np.ndarray:
    values = np.full(N_ROWS, 0.5)
    for j, row in enumerate(range(3 * index, 3 * index + 3)):
        values[row % N_ROWS] = 1.0 / (1.0 + np.exp(-(2.0**j)))
    return values


def run_case(probes: int, fillers: int, filler_kind: str, case: str) -> dict[str, Any]:
    """One competition: ``probes`` probe accounts, ``fillers`` filler uploads (from as many accounts) between two
    probes. Returns the probes held, the cap's screens' clusters and the uncapped screen's verdict."""
    from django.contrib.auth.models import User

    from defenses.sybil_screen import ScreenConfig, SubmissionTrace, screen
    from leaderboard.competitions.selectors import competition_scoring_spec
    from leaderboard.competitions.services import competition_create
    from leaderboard.screening.models import HeldSubmission, SuspectCluster
    from leaderboard.screening.services import MAX_ACCOUNTS, screen_settings_update
    from leaderboard.submissions.models import Submission
    from leaderboard.submissions.services import submission_create, submission_score

    users = User.objects
    host = users.create_user(f"{case}-host")
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    labels_csv = ("id,label\n" + "".join(f"r{i:03d},{int(y)}\n" for i, y in enumerate(labels))).encode()
    competition = competition_create(slug=case, labels_csv=labels_csv, host=host, daily_limit=None)
    screen_settings_update(competition=competition, mode="hold")
    ids = list(competition_scoring_spec(competition=competition).hidden.ids)
    attackers = [users.create_user(f"{case}-probe-{n}") for n in range(probes)]
    crowd = [users.create_user(f"{case}-filler-{n}") for n in range(fillers)]
    rng = np.random.default_rng(CROWD_SEED)
    probe_ids: list[int] = []
    filler_uploads = 0
    started = time.perf_counter()
    for n, attacker in enumerate(attackers):
        if n:
            for account in crowd:
                values = np.full(N_ROWS, 0.5) if filler_kind == "constant" else rng.uniform(0.05, 0.95, N_ROWS)
                submission_create(competition=competition, participant=account, data=_csv(ids, values))
                filler_uploads += 1
        submission = submission_create(competition=competition, participant=attacker, data=_csv(ids, _probe(n)))
        submission_score(submission_id=submission.pk)
        probe_ids.append(submission.pk)
    seconds = time.perf_counter() - started
    held = HeldSubmission.objects.filter(submission_id__in=probe_ids).count()
    clusters = SuspectCluster.objects.filter(competition=competition).count()
    # The library's screen over every upload, uncapped.
    traces = []
    for user_id, created_at, blob in Submission.objects.filter(competition=competition).values_list(
            "participant_id", "created_at", "predictions_npy"):
        traces.append(SubmissionTrace(account=f"user:{user_id}", at=created_at.timestamp(),
                                      vector=np.load(io.BytesIO(bytes(blob)), allow_pickle=False)))
    probe_keys = {f"user:{a.pk}" for a in attackers}
    flagged = {key for cluster in screen([], traces, ScreenConfig(mode="hold")) for key in cluster.accounts}
    return {"cap": MAX_ACCOUNTS, "held": held, "clusters": clusters, "filler_uploads": filler_uploads,
            "uncapped_flagged": len(flagged & probe_keys), "uncapped_honest_flagged": len(flagged - probe_keys),
            "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=8)
    parser.add_argument("--fillers", default="0,150,199")
    args = parser.parse_args()
    from stack.processes import fresh_postgres

    with fresh_postgres("lbl_screen_cap") as url:
        os.environ.update(DATABASE_URL=url, DJANGO_SETTINGS_MODULE="leaderboard.settings", DJANGO_DEBUG="0",
                          LEADERBOARD_PUBLISH_RETRY_FOR="0")
        os.environ.setdefault("DJANGO_SECRET_KEY", uuid.uuid4().hex * 2)
        import django

        django.setup()
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        print("| fillers between probes | filler files | probe accounts | probes held (site, cap 200 accounts) | "
              "clusters stored | filler uploads spent | uncapped screen: probe accounts flagged | honest flagged | "
              "seconds |")
        print("|---|---|---|---|---|---|---|---|---|")
        # Scoring is run here, inline; nothing is published to a broker.
        with mock.patch("leaderboard.submissions.services.submission_enqueue", lambda *, submission_id: None):
            for fillers in (int(f) for f in args.fillers.split(",")):
                kinds = ["constant"] if fillers == 0 else ["constant", "crowd"]
                for kind in kinds:
                    result = run_case(args.probes, fillers, kind, f"cap-{fillers}-{kind}")
                    what = "–" if fillers == 0 else ("sample (½)" if kind == "constant" else "honest crowd")
                    print(f"| {fillers} | {what} | {args.probes} | {result['held']}/{args.probes} | "
                          f"{result['clusters']} | {result['filler_uploads']} | "
                          f"{result['uncapped_flagged']}/{args.probes} | {result['uncapped_honest_flagged']} | "
                          f"{result['seconds']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
