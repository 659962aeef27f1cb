"""The host's create and edit pages and their validation endpoint: staff only, every refused setting named, the
labels file kept server-side after an error, the participants' disclosure previewed, settings fixed at creation
left alone, and the admin saying what the page says."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from leaderboard.competitions.models import Competition, HiddenTestData
from tests.site.factories import N_ROWS, labels_csv

pytestmark = pytest.mark.django_db

CREATE = "/host/competitions/new/"
VALIDATE = "/host/competitions/validate/"


@pytest.fixture
def staff(db: Any) -> User:
    return User.objects.create_user("sam_staff", password="pw", is_staff=True)


@pytest.fixture
def staff_client(staff: User) -> Client:
    client = Client()
    client.force_login(staff)
    return client


def settings_form(**changes: Any) -> dict[str, Any]:
    form = {
        "slug": "page-made", "title": "Page made", "description": "", "metric": "binary_logloss", "eps": "1e-15",
        "arithmetic": "float64", "public_fraction": "0.3", "score_decimals": "5", "daily_limit": "5",
        "total_limit": "", "opens_at": "2026-01-01T00:00", "closes_at": "", "defenses": "[]",
        "disclosed_defenses": "",
    }
    form.update(changes)
    return form


def labels_upload(labels: np.ndarray, name: str = "labels.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, labels_csv(labels), content_type="text/csv")


def validate(client: Client, **changes: Any) -> dict[str, Any]:
    answer = client.post(VALIDATE, settings_form(**changes))
    assert answer.status_code == 200, answer.content[:500]
    body: dict[str, Any] = answer.json()
    return body


def test_staff_create_a_competition_on_the_page(staff_client: Client, staff: User, hidden_labels: np.ndarray) -> None:
    page = staff_client.get(CREATE).content.decode()
    assert 'id="competition-form"' in page and 'id="defense-catalogue"' in page and "csrfmiddlewaretoken" in page
    chain = '[{"name": "noise", "kind": "laplace", "scale": 0.001}, {"name": "rounding", "decimals": 4}]'
    answer = staff_client.post(CREATE, {**settings_form(defenses=chain), "labels_file": labels_upload(hidden_labels)})
    assert answer.status_code == 302 and answer["Location"] == "/c/page-made/"
    made = Competition.objects.get(slug="page-made")
    assert made.host == staff and made.n_rows == N_ROWS and made.n_classes == 2
    assert made.defenses == [{"name": "noise", "kind": "laplace", "scale": 0.001, "sampler": "exact"},
                             {"name": "rounding", "decimals": 4}]
    assert list(HiddenTestData.objects.get(competition=made).labels) == list(hidden_labels)


def test_the_page_lists_the_registry_s_defenses_and_parameters(staff_client: Client) -> None:
    from defenses import REGISTRY

    page = staff_client.get(CREATE).content.decode()
    for name, cls in REGISTRY.items():
        assert f'id="defense-{name}"' in page
        for param in cls.parameters:
            assert f"<code>{param.name}</code>" in page
    assert "(0, 1e+09]" in page  # the noise scale's range, from its listing
    catalogue = json.loads(page.split('id="defense-catalogue" type="application/json">')[1].split("</script>")[0])
    assert sorted(entry["name"] for entry in catalogue) == sorted(REGISTRY)


def test_a_refused_setting_keeps_the_labels_file_and_names_the_problem(
    staff_client: Client, hidden_labels: np.ndarray
) -> None:
    bad_chain = '[{"name": "rounding"}, {"name": "noise", "kind": "laplace", "scale": -1}]'
    answer = staff_client.post(
        CREATE, {**settings_form(defenses=bad_chain), "labels_file": labels_upload(hidden_labels, "class.csv")}
    )
    page = answer.content.decode()
    assert answer.status_code == 400 and not Competition.objects.exists()
    assert "defense #2: defense &#x27;noise&#x27;: &#x27;scale&#x27; must be a positive number, got -1" in page
    assert f"Kept on the server: <strong>class.csv</strong> ({N_ROWS} rows, 2 classes)" in page
    token = page.split('name="labels_token" value="')[1].split('"')[0]
    assert len(token) >= 20
    # The host fixes the chain and sends the form again, without the file.
    fixed = '[{"name": "noise", "kind": "laplace", "scale": 0.01}, {"name": "rounding"}]'
    answer = staff_client.post(CREATE, {**settings_form(defenses=fixed), "labels_token": token})
    assert answer.status_code == 302
    made = Competition.objects.get(slug="page-made")
    assert list(HiddenTestData.objects.get(competition=made).labels) == list(hidden_labels)


def test_a_kept_labels_file_is_its_host_s_only(staff_client: Client, hidden_labels: np.ndarray) -> None:
    answer = staff_client.post(CREATE, {**settings_form(slug="BAD SLUG"), "labels_file": labels_upload(hidden_labels)})
    token = answer.content.decode().split('name="labels_token" value="')[1].split('"')[0]
    other = Client()
    other.force_login(User.objects.create_user("other_staff", is_staff=True))
    answer = other.post(CREATE, {**settings_form(), "labels_token": token})
    assert answer.status_code == 400 and not Competition.objects.exists()
    assert "the labels file kept from your last attempt has expired; upload it again" in answer.content.decode()


def test_a_malformed_labels_file_is_refused_with_its_line_and_not_kept(staff_client: Client) -> None:
    upload = SimpleUploadedFile("labels.csv", b"id,label\na,0\nb,seven\n", content_type="text/csv")
    page = staff_client.post(CREATE, {**settings_form(), "labels_file": upload}).content.decode()
    assert "invalid labels file" in page and "line 3" in page
    assert 'name="labels_token" value=' not in page and not Competition.objects.exists()


def test_creating_without_a_labels_file_says_so(staff_client: Client) -> None:
    page = staff_client.post(CREATE, settings_form()).content.decode()
    assert "a new competition needs its labels file (CSV with the header id,label)" in page


@pytest.mark.parametrize(("changes", "field", "message", "position"), [
    ({"defenses": '[{"name": "nois"}]'}, "defenses", "defense #1: unknown defense 'nois'; available: ", 1),
    ({"defenses": '[{"name": "rounding"}, {"name": "noise", "scale": 0}]'}, "defenses",
     "defense #2: defense 'noise': 'scale' must be a positive number, got 0", 2),
    ({"defenses": '[{"name": "rounding", "decimals": 16}]'}, "defenses",
     "'decimals' must be an integer from 0 to 15, got 16", 1),
    ({"defenses": '[{"name": "rounding", "digits": 3}]'}, "defenses",
     "unknown parameter(s) digits; allowed: decimals, significant", 1),
    ({"defenses": '[{"name": "noise",}]'}, "defenses",
     "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 19", None),
    ({"defenses": '[{"name": "ladder", "mode": "parameter_free"}]', "metric": "auc"}, "defenses",
     "the parameter-free mode needs per-row values, which metric 'auc' does not have", 1),
    ({"public_fraction": "1.5"}, "public_fraction", "must lie between 0 and 1", None),
    ({"closes_at": "2025-01-01T00:00"}, "closes_at", "must be after the opening time", None),
    ({"slug": "has spaces"}, "slug", "Enter a valid “slug”", None),
])
def test_the_validation_endpoint_names_the_problem(
    staff_client: Client, changes: dict[str, str], field: str, message: str, position: int | None
) -> None:
    body = validate(staff_client, **changes)
    assert body["valid"] is False and list(body["errors"]) == [field]
    assert len(body["errors"][field]) == 1 and message in body["errors"][field][0]
    assert body["chain_position"] == position


def test_a_bad_metric_is_reported_once_and_not_under_the_chain(staff_client: Client) -> None:
    body = validate(staff_client, metric="nope", defenses='[{"name": "rounding"}]')
    assert list(body["errors"]) == ["metric"] and len(body["errors"]["metric"]) == 1


def test_a_valid_form_answers_the_canonical_chain_and_the_participants_preview(staff_client: Client) -> None:
    body = validate(
        staff_client, defenses='[{"name": "noise", "scale": 0.001}, {"name": "rounding", "decimals": 3}]',
        disclosed_defenses="Scores carry <b>noise</b>.",
    )
    assert body["valid"] is True and body["errors"] == {}
    assert body["chain"] == [{"name": "noise", "kind": "laplace", "scale": 0.001, "sampler": "exact"},
                             {"name": "rounding", "decimals": 3}]
    preview = body["preview"]
    assert "<dt>Scores shown</dt><dd>3 decimals</dd>" in preview  # the chain rounds coarser than the 5 shown
    assert "Scores carry &lt;b&gt;noise&lt;/b&gt;." in preview and "<b>" not in preview
    hard = validate(staff_client, defenses='[{"name": "threshold", "t": 0.5}]')["preview"]
    assert "hard label only: 1 if the score beats 0.5, else 0" in hard and "none: only the label above" in hard
    unknown = validate(staff_client, defenses='[{"name": "nois"}]')["preview"]
    assert "The defense chain is not valid yet" in unknown


def test_the_validation_endpoint_checks_the_task_against_kept_labels(staff_client: Client) -> None:
    three = np.random.default_rng(5).integers(0, 3, 30)
    answer = staff_client.post(
        CREATE, {**settings_form(metric="auc"), "labels_file": labels_upload(three)}
    )
    token = answer.content.decode().split('name="labels_token" value="')[1].split('"')[0]
    body = validate(staff_client, metric="binary_logloss", labels_token=token)
    assert list(body["errors"]) == ["metric"] and "3" in body["errors"]["metric"][0]
    assert validate(staff_client, metric="multiclass_logloss", labels_token=token)["valid"] is True


def test_a_participant_gets_403_never_a_form(
    client: Client, participant: User, competition: Any, hidden_labels: np.ndarray
) -> None:
    client.force_login(participant)
    for url in (CREATE, f"/c/{competition.slug}/host/edit/"):
        answer = client.get(url)
        assert answer.status_code == 403 and b"competition-form" not in answer.content
    answer = client.post(CREATE, {**settings_form(), "labels_file": labels_upload(hidden_labels)})
    assert answer.status_code == 403 and not Competition.objects.filter(slug="page-made").exists()
    answer = client.post(f"/c/{competition.slug}/host/edit/", settings_form(title="Taken over"))
    assert answer.status_code == 403
    assert Competition.objects.get(pk=competition.pk).title == competition.title
    answer = client.post(VALIDATE, settings_form())
    assert answer.status_code == 403 and "preview" not in answer.json()


def test_an_anonymous_visitor_is_sent_to_log_in(client: Client, competition: Any) -> None:
    for url in (CREATE, f"/c/{competition.slug}/host/edit/"):
        answer = client.get(url)
        assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    assert client.post(VALIDATE, settings_form()).status_code == 403


def test_the_competition_s_own_non_staff_host_may_not_use_the_pages(
    client: Client, host: User, competition: Any
) -> None:
    client.force_login(host)
    assert client.get(f"/c/{competition.slug}/host/edit/").status_code == 403


def test_editing_changes_the_chain_and_leaves_what_is_fixed_at_creation(
    staff_client: Client, make_competition: Callable[..., Any], participant: User, submit: Any
) -> None:
    competition = make_competition(public_fraction=0.3, defenses=[{"name": "rounding", "decimals": 4}])
    submit(competition, participant, np.full(N_ROWS, 0.5))
    url = f"/c/{competition.slug}/host/edit/"
    page = staff_client.get(url).content.decode()
    assert "1 submission so far" in page
    for fixed in ("public_fraction", "metric", "eps", "arithmetic", "slug"):
        assert f'name="{fixed}"' not in page
    assert "<dt>Public fraction</dt><dd>0.3</dd>" in page
    chain = '[{"name": "noise", "kind": "laplace", "scale": 0.01}, {"name": "rounding", "decimals": 3}]'
    answer = staff_client.post(url, settings_form(
        title="Renamed", defenses=chain, public_fraction="0.9", metric="auc", eps="0.1", disclosed_defenses="Noisy.",
    ))
    assert answer.status_code == 302
    saved = Competition.objects.get(pk=competition.pk)
    assert saved.title == "Renamed" and saved.disclosed_defenses == "Noisy."
    assert saved.defenses[0]["scale"] == 0.01 and saved.defenses[1] == {"name": "rounding", "decimals": 3}
    assert (saved.public_fraction, saved.metric, saved.eps) == (0.3, "binary_logloss", 1e-15)


def test_an_edit_with_a_bad_chain_is_refused_and_saves_nothing(staff_client: Client, competition: Any) -> None:
    url = f"/c/{competition.slug}/host/edit/"
    answer = staff_client.post(url, settings_form(title="Renamed", defenses='[{"name": "ladder", "eta": -1}]'))
    assert answer.status_code == 400
    assert "defense &#x27;ladder&#x27;: &#x27;eta&#x27; must be a positive number, got -1" in answer.content.decode()
    saved = Competition.objects.get(pk=competition.pk)
    assert saved.title == competition.title and saved.defenses == competition.defenses
    body = staff_client.post(VALIDATE, {**settings_form(defenses='[{"name": "ladder", "eta": -1}]'),
                                        "competition": competition.slug}).json()
    assert list(body["errors"]) == ["defenses"] and body["chain_position"] == 1


def test_the_admin_says_what_the_page_says(staff_client: Client, hidden_labels: np.ndarray) -> None:
    root = User.objects.create_superuser("root", "root@example.com", "pw")
    admin = Client()
    admin.force_login(root)
    form = {
        **settings_form(slug="admin-made", metric="nope", defenses='[{"name": "noise", "kind": "laplace"}]'),
        "opens_at_0": "2026-01-01", "opens_at_1": "00:00:00", "closes_at_0": "", "closes_at_1": "",
        "also_report": "[]", "listed": "on", "labels_file": labels_upload(hidden_labels),
    }
    page = admin.post("/admin/competitions/competition/add/", form).content.decode()
    metric_message = "unknown metric &#x27;nope&#x27;"
    assert page.count(metric_message) == 1  # once, under the metric; the chain's own error beside it
    chain_message = validate(staff_client, defenses='[{"name": "noise", "kind": "laplace"}]')["errors"]["defenses"][0]
    assert "give exactly one of &#x27;scale&#x27;" in page and "give exactly one of 'scale'" in chain_message
    form.update(metric="binary_logloss", defenses="[{nope", labels_file=labels_upload(hidden_labels))
    page = admin.post("/admin/competitions/competition/add/", form).content.decode()
    assert "Enter a valid JSON." not in page
    assert "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 3" in page


def test_the_admin_shows_settings_fixed_at_creation_read_only(competition: Any) -> None:
    root = User.objects.create_superuser("root", "root@example.com", "pw")
    admin = Client()
    admin.force_login(root)
    page = admin.get(f"/admin/competitions/competition/{competition.pk}/change/").content.decode()
    for fixed in ("public_fraction", "metric", "eps", "arithmetic"):
        assert f'name="{fixed}"' not in page
    assert 'name="defenses"' in page
