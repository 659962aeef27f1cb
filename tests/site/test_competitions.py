"""Competitions: creation and validation through the service, the management commands and the admin."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from leaderboard.competitions.models import Competition, HiddenTestData
from leaderboard.competitions.selectors import competition_sample_submission, competition_scoring_spec
from leaderboard.competitions.services import competition_create, competition_set_defenses
from leaderboard.errors import CompetitionConfigError
from tests.site.factories import N_ROWS, labels_csv

pytestmark = pytest.mark.django_db


def test_it_stores_the_hidden_set_and_a_fixed_split_from_a_secret(competition, hidden_labels) -> None:
    hidden = HiddenTestData.objects.get(competition=competition)
    assert hidden.ids == [f"r{i:03d}" for i in range(N_ROWS)]
    assert np.array_equal(hidden.labels, hidden_labels)
    assert hidden.public_mask.sum() == round(0.3 * N_ROWS)
    assert len(hidden.secret) >= 20
    spec = competition_scoring_spec(competition=competition)
    assert spec.secret == hidden.secret_int and spec.decimals == 5 and spec.eps == 1e-15
    assert (competition.n_rows, competition.n_classes, competition.task) == (N_ROWS, 2, "binary")


def test_two_competitions_from_the_same_labels_get_different_splits(make_competition) -> None:
    a, b = make_competition(), make_competition()
    mask_a = HiddenTestData.objects.get(competition=a).public_mask
    mask_b = HiddenTestData.objects.get(competition=b).public_mask
    assert not np.array_equal(mask_a, mask_b)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"labels_csv": b"id,label\na,0\na,1\n"}, "line 3: duplicate id"),
        ({"labels_csv": b"ident,label\na,0\n"}, "line 1"),
        ({"labels_csv": b""}, "empty"),
        ({"metric": "auc", "labels_csv": b"id,label\na,0\nb,1\nc,2\n"}, "does not support multiclass"),
        ({"defenses": [{"name": "rounding", "decimals": 99}]}, "decimals"),
        ({"defenses": [{"name": "nonexistent"}]}, "unknown defense 'nonexistent'"),
        ({"arithmetic": "float32"}, "unknown arithmetic"),
        ({"arithmetic": "mpfr:100", "metric": "accuracy"}, "only available in float64"),
        ({"public_fraction": 1.5}, "public_fraction"),
        ({"slug": "has spaces"}, "slug"),
    ],
)
def test_invalid_settings_are_refused_with_a_clear_message(hidden_labels, options, fragment) -> None:
    kwargs = {"slug": "bad", "labels_csv": labels_csv(hidden_labels), **options}
    with pytest.raises(CompetitionConfigError) as info:
        competition_create(**kwargs)
    assert fragment in info.value.message
    assert Competition.objects.count() == 0


def test_slugs_are_unique(make_competition) -> None:
    make_competition(slug="same")
    with pytest.raises(CompetitionConfigError, match="already exists"):
        make_competition(slug="same")


def test_set_defenses_stores_the_canonical_chain_and_refreshes_the_spec(competition) -> None:
    before = competition_scoring_spec(competition=competition)
    competition_set_defenses(competition=competition, defenses=[{"name": "rounding"}], disclosed_defenses="5 dp")
    competition.refresh_from_db()
    assert competition.defenses == [{"name": "rounding", "decimals": 5}]
    after = competition_scoring_spec(competition=competition)
    assert after is not before and len(after.chain) == 1
    with pytest.raises(CompetitionConfigError, match="invalid defense chain"):
        competition_set_defenses(competition=competition, defenses="[not json")


def test_sample_submission_never_contains_labels(competition) -> None:
    text = competition_sample_submission(competition=competition)
    assert text.splitlines()[0] == "id,target"
    assert {line.split(",")[1] for line in text.splitlines()[1:]} == {"0.5"}


def test_create_competition_command_follows_the_documented_cli(tmp_path: Path, hidden_labels) -> None:
    path = tmp_path / "labels.csv"
    path.write_bytes(labels_csv(hidden_labels))
    out = StringIO()
    call_command(
        "create_competition", "cli-comp", "--labels", str(path), "--metric", "brier", "--decimals", "4",
        "--public-fraction", "0.25", "--daily-limit", "3", "--total-limit", "9",
        "--closes-at", "2030-01-01T00:00:00Z", "--defenses", '[{"name": "rounding", "decimals": 4}]',
        "--eps", "1e-12", "--arithmetic", "float64", "--title", "CLI", "--opens-at", "2026-01-01T00:00:00Z",
        stdout=out,
    )
    competition = Competition.objects.get(slug="cli-comp")
    assert (competition.metric, competition.score_decimals, competition.public_fraction) == ("brier", 4, 0.25)
    assert (competition.daily_limit, competition.total_limit, competition.eps) == (3, 9, 1e-12)
    assert competition.closes_at is not None and competition.closes_at.year == 2030
    assert competition.defenses == [{"name": "rounding", "decimals": 4}]
    assert "40 rows" in out.getvalue()
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("create_competition", "cli-2", "--labels", str(path), "--defenses", "[", stdout=out)
    with pytest.raises(CommandError, match="unknown defense"):
        call_command("create_competition", "cli-2", "--labels", str(path), "--defenses", '[{"name":"x"}]')
    with pytest.raises(CommandError, match="no such file"):
        call_command("create_competition", "cli-2", "--labels", str(tmp_path / "missing.csv"))


def test_create_participant_prints_a_working_token_last_and_a_new_one_when_asked_again(db) -> None:
    from leaderboard.accounts.authentication import api_token_find

    out, err = StringIO(), StringIO()
    call_command("create_participant", "carol", stdout=out, stderr=err)
    token = out.getvalue().strip().splitlines()[-1]
    found = api_token_find(token)
    assert found is not None and found.user.get_username() == "carol"
    call_command("create_participant", "carol", stdout=out, stderr=err)  # the site cannot print the old one again
    again = out.getvalue().strip().splitlines()[-1]
    assert again != token and api_token_find(token) is None and api_token_find(again) is not None
    assert "a new API token replaces its old one" in err.getvalue()


def test_hosts_create_a_competition_in_the_admin_by_uploading_labels(client, hidden_labels) -> None:
    admin_user = User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(admin_user)
    form = {
        "slug": "admin-made", "title": "Admin", "description": "", "metric": "binary_logloss", "eps": "1e-15",
        "score_decimals": "5", "public_fraction": "0.3", "daily_limit": "5", "total_limit": "",
        "opens_at_0": "2026-01-01", "opens_at_1": "00:00:00", "closes_at_0": "", "closes_at_1": "",
        "arithmetic": "float64", "defenses": "[]", "disclosed_defenses": "", "host": "",
        "labels_file": SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv"),
    }
    response = client.post("/admin/competitions/competition/add/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    competition = Competition.objects.get(slug="admin-made")
    assert competition.n_rows == N_ROWS and competition.host == admin_user
    assert HiddenTestData.objects.filter(competition=competition).exists()
    form.update(slug="admin-bad", defenses='[{"name": "nope"}]')
    form["labels_file"] = SimpleUploadedFile("labels.csv", labels_csv(hidden_labels), content_type="text/csv")
    response = client.post("/admin/competitions/competition/add/", form)
    assert response.status_code == 200 and "unknown defense" in response.content.decode()
    assert client.get(f"/admin/competitions/competition/{competition.pk}/change/").status_code == 200
    assert client.get("/admin/submissions/submission/").status_code == 200


@pytest.mark.parametrize(("eps", "arithmetic"), [(1e-300, "float64"), (1e-17, "float64"), (1e-15, "mpfr:30")])
def test_a_clipping_the_arithmetic_cannot_honour_is_refused_at_creation(make_competition, eps, arithmetic) -> None:
    # Otherwise a confident wrong prediction scores an infinite loss and fails: a free label oracle.
    from leaderboard.errors import CompetitionConfigError

    with pytest.raises(CompetitionConfigError, match="1 - eps rounds to 1"):
        make_competition(slug="tiny-eps", eps=eps, arithmetic=arithmetic)
