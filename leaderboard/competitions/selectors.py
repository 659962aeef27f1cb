"""Reads on competitions: lists, lookups, the sample submission, data files, host rights and the worker's
ScoringSpec."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from typing import Any, BinaryIO

from django.db.models import QuerySet

from defenses import DefenseChain
from leaderboard.blobs import blob_read
from leaderboard.competitions.models import Competition, DataFile, HiddenTestData, npy_array
from scoring import Arithmetic, HiddenTestSet, ScoringSpec, sample_submission_csv
from scoring.ids import ids_from_json

_SPEC_CACHE: OrderedDict[tuple[int, str], ScoringSpec] = OrderedDict()
_SPEC_CACHE_SIZE = 16
_SPEC_LOCK = threading.Lock()
#: The hidden set's arrays, read as raw bytes (leaderboard.blobs) rather than through the ORM's hex text.
NPY_COLUMNS = ("labels_npy", "public_mask_npy")
#: Deferred on the ORM read: the ids come as raw bytes too (10M ids are 119 MB of JSON; one copy, no str). The
#: ignored rows' mask comes with the row (null unless a solution file had Ignored rows; a byte a row otherwise).
BLOB_COLUMNS = ("ids_json", *NPY_COLUMNS)


def competition_list() -> QuerySet[Competition]:
    """The listed competitions, newest opening first (the slug breaks ties, so pages of it are stable). Unlisted
    ones (a game's cells) are reached only by their URL."""
    return Competition.objects.filter(listed=True).order_by("-opens_at", "slug")


def competition_get(*, slug: str) -> Competition:
    """Raises ``Competition.DoesNotExist`` (the API maps it to 404). A model-inversion challenge (the reverse
    one-to-one ``inversion``) comes in the same query: the upload path asks for it."""
    return Competition.objects.select_related("inversion").get(slug=slug)


def competition_is_host(*, user: Any, competition: Competition) -> bool:
    """Staff and the competition's own host may see its raw scores and change its defenses."""
    if not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff or (competition.host_id is not None and competition.host_id == user.pk))


def competition_can_create(*, user: Any) -> bool:
    if not getattr(user, "is_authenticated", False):
        return False
    return bool(user.is_staff or user.has_perm("competitions.add_competition"))


def competition_sample_submission(*, competition: Competition) -> str:
    """The CSV template: exact header and every hidden id (ids are public; labels are not)."""
    return sample_submission_csv(competition_scoring_spec(competition=competition).submission_format)


def competition_extra_specs(*, competition: Competition) -> dict[str, ScoringSpec]:
    """One scoring spec per metric in ``also_report``: the primary spec with another metric (same hidden set,
    split, secret, chain and precision), as the core's release model builds them (``ScoringSpec.metric_specs``)."""
    specs = competition_scoring_spec(competition=competition).metric_specs
    return {name: spec for name, spec in specs.items() if name != competition.metric}


def competition_scoring_spec(*, competition: Competition) -> ScoringSpec:
    """The scoring core's view of a competition, cached per process.

    The key includes ``updated_at``, so a changed chain or setting is picked up at once; the hidden set is
    loaded once per process per version instead of once per 25k-row submission.
    """
    key = (competition.pk, competition.updated_at.isoformat())
    with _SPEC_LOCK:
        spec = _SPEC_CACHE.get(key)
        if spec is not None:
            _SPEC_CACHE.move_to_end(key)
            return spec
    hidden = HiddenTestData.objects.defer(*BLOB_COLUMNS).get(competition_id=competition.pk)
    labels, mask = (npy_array(blob_read(HiddenTestData, competition.pk, name) or b"") for name in NPY_COLUMNS)
    ids = ids_from_json(blob_read(HiddenTestData, competition.pk, "ids_json") or b"[]")
    spec = ScoringSpec(
        hidden=HiddenTestSet(ids, labels, competition.n_classes, mask, ignored_mask=hidden.ignored_mask),
        metric_name=competition.metric,
        eps=competition.eps,
        decimals=competition.score_decimals,
        arithmetic=Arithmetic.parse(competition.arithmetic),
        chain=DefenseChain.from_json(competition.defenses),
        secret=hidden.secret_int,
        same_file_same_score=competition.same_file_same_score,
        max_bytes=_max_upload_bytes(),
        also_report=tuple(competition.also_report) if isinstance(competition.also_report, list) else (),
    )
    with _SPEC_LOCK:
        _SPEC_CACHE[key] = spec
        while len(_SPEC_CACHE) > _SPEC_CACHE_SIZE:
            _SPEC_CACHE.popitem(last=False)
    return spec


def _max_upload_bytes() -> int:
    from django.conf import settings

    return int(settings.LEADERBOARD_MAX_UPLOAD_BYTES)


def list_data_files(competition: Competition) -> list[DataFile]:
    """The competition's data files by name (name, size, sha256, description, created_at; never the bytes)."""
    return list(DataFile.objects.filter(competition=competition).order_by("name"))


def data_file_get(*, competition: Competition, name: str) -> DataFile:
    """One data file by its exact name; raises ``DataFile.DoesNotExist`` (the API and pages answer 404)."""
    return DataFile.objects.get(competition=competition, name=name)


def open_data_file(data_file: DataFile) -> BinaryIO:
    """The file's bytes as a binary stream (read raw from the database: :mod:`leaderboard.blobs`)."""
    return io.BytesIO(blob_read(DataFile, data_file.pk, "content") or b"")
