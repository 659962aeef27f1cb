"""Writes on competitions: create one from a labelled CSV, set its defense chain, attach data files.

Every function here validates with the pure scoring core and the defense registry, so the admin, the
``create_competition`` command and the host API accept and reject exactly the same settings.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Any, BinaryIO

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from defenses import DefenseChain, DefenseConfigError
from leaderboard.blobs import blob_write
from leaderboard.competitions.data_files import (
    MAX_DATA_FILES,
    check_data_file_content,
    data_file_description,
    data_file_name,
)
from leaderboard.competitions.models import Competition, DataFile, HiddenTestData
from leaderboard.errors import CompetitionConfigError, DataFileError, DataFileTooLarge
from scoring import ConfigurationError, parse_features_csv, parse_labels_csv, public_split_mask
from scoring.pipeline import metric_view
from scoring.solution import Solution, parse_solution_csv


def _validation_message(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{field}: {' '.join(str(m) for m in msgs)}" for field, msgs in exc.message_dict.items())
    return " ".join(str(m) for m in exc.messages)


def competition_validate_defenses(
    *, defenses: Any, metric: str | None = None, eps: float = 1e-15
) -> list[dict[str, Any]]:
    """The canonical JSON of a defense chain (defaults filled in); raises :class:`CompetitionConfigError`.

    With ``metric`` (and ``eps``), also checks that every defense can work with that metric (e.g. the
    parameter-free Ladder needs per-row values, which AUC has not).
    """
    try:
        chain = DefenseChain.from_json(defenses)
        if metric is not None:
            chain.check_metric(metric_view(metric, eps))
        return chain.to_json()
    except ConfigurationError as exc:
        raise CompetitionConfigError(str(exc)) from None
    except DefenseConfigError as exc:
        raise CompetitionConfigError(f"invalid defense chain: {exc}") from None


def competition_parse_labels(*, labels_csv: bytes | str) -> tuple[Sequence[str], np.ndarray, int]:
    """Ids, labels and the number of classes of a host's ``id,label`` CSV; errors name the line."""
    try:
        return parse_labels_csv(labels_csv)
    except ConfigurationError as exc:
        raise CompetitionConfigError(f"invalid labels file: {exc}") from None
    except UnicodeDecodeError:
        raise CompetitionConfigError("invalid labels file: it is not valid UTF-8") from None


def competition_parse_features(*, features_csv: bytes | str, ids: Sequence[str]) -> np.ndarray:
    """The hidden test features of a host's ``id,f1,...,fd`` CSV, in the order of the labels' ``ids``."""
    try:
        return parse_features_csv(features_csv, ids)
    except ConfigurationError as exc:
        raise CompetitionConfigError(f"invalid features file: {exc}") from None
    except UnicodeDecodeError:
        raise CompetitionConfigError("invalid features file: it is not valid UTF-8") from None


def competition_parse_solution(*, solution_csv: bytes | str) -> Solution:
    """A host's Kaggle solution file (``id``, the target column(s), ``Usage``); errors name the line."""
    try:
        return parse_solution_csv(solution_csv)
    except ConfigurationError as exc:
        raise CompetitionConfigError(f"invalid solution file: {exc}") from None


def competition_create(
    *,
    slug: str,
    labels_csv: bytes | str | None = None,
    solution_csv: bytes | str | None = None,
    features_csv: bytes | str | None = None,
    host: Any = None,
    title: str = "",
    description: str = "",
    metric: str = "binary_logloss",
    eps: float = 1e-15,
    score_decimals: int | None = 5,
    public_fraction: float | None = None,
    daily_limit: int | None = 5,
    total_limit: int | None = None,
    opens_at: datetime | None = None,
    closes_at: datetime | None = None,
    arithmetic: str = "float64",
    defenses: Any = None,
    disclosed_defenses: str = "",
    same_file_same_score: bool = False,
    also_report: list[str] | tuple[str, ...] = (),
    secret: int | None = None,
    listed: bool = True,
) -> Competition:
    """Create a competition with its hidden test set; the public/private split comes from a fresh secret.

    ``listed=False`` leaves it out of the competition lists (the home page, the API's list): it is reached only
    by its URL, as a game's cells are.

    With ``features_csv`` (``id,f1,...,fd``, the same ids as the labels) it is a model competition: participants
    upload ONNX models, which the worker runs on these features.

    The hidden set comes from ``labels_csv`` (``id,label``; the split drawn at random, ``public_fraction`` of the
    rows, 0.3 by default) or from ``solution_csv``, Kaggle's solution file, whose ``Usage`` column is the split
    (so no ``public_fraction`` then: the competition states the file's share of public rows).
    """
    if (labels_csv is None) == (solution_csv is None):
        raise CompetitionConfigError("give the hidden labels as a labels file or as a solution file (one of them)")
    split: tuple[np.ndarray, np.ndarray] | None = None
    if solution_csv is not None:
        if public_fraction is not None:
            raise CompetitionConfigError(
                "the solution file's Usage column sets the public/private split; give no public fraction with it"
            )
        solution = competition_parse_solution(solution_csv=solution_csv)
        ids, labels, n_classes = solution.ids, solution.labels, solution.n_classes
        public_fraction, split = solution.public_fraction, (solution.public_mask, solution.ignored_mask)
    else:
        assert labels_csv is not None
        ids, labels, n_classes = competition_parse_labels(labels_csv=labels_csv)
        public_fraction = 0.3 if public_fraction is None else public_fraction
    features = None if features_csv is None else competition_parse_features(features_csv=features_csv, ids=ids)
    chain = competition_validate_defenses(defenses=defenses if defenses is not None else [], metric=metric, eps=eps)
    competition = Competition(
        slug=slug,
        title=title or slug,
        description=description,
        host=host,
        metric=metric,
        eps=eps,
        score_decimals=score_decimals,
        public_fraction=public_fraction,
        daily_limit=daily_limit,
        total_limit=total_limit,
        closes_at=closes_at,
        arithmetic=arithmetic,
        defenses=chain,
        disclosed_defenses=disclosed_defenses,
        same_file_same_score=same_file_same_score,
        # A bare string is a mistake (not a list of names); let model validation say so rather than split it.
        also_report=also_report if isinstance(also_report, str) else list(also_report),
        n_rows=len(ids),
        n_classes=n_classes,
        n_features=0 if features is None else features.shape[1],
        listed=listed,
    )
    if opens_at is not None:
        competition.opens_at = opens_at
    try:
        competition.full_clean()
    except ValidationError as exc:
        raise CompetitionConfigError(_validation_message(exc)) from None
    with transaction.atomic():
        competition.save()
        hidden_test_data_create(competition=competition, ids=ids, labels=labels, secret=secret, features=features,
                                split=split)
    return competition


def hidden_test_data_create(
    *, competition: Competition, ids: Sequence[str], labels: np.ndarray, secret: int | None = None,
    features: np.ndarray | None = None, split: tuple[np.ndarray, np.ndarray] | None = None,
) -> HiddenTestData:
    """Store the hidden set with its fixed public/private split: the host's (``split``: the public and the ignored
    rows' masks, from a solution file), else drawn from the 128-bit secret (fresh unless given)."""
    # A host may fix the secret to replay an offline game cell on the site (same split, same defense
    # randomness as ``LocalOracle(seed=secret)``); otherwise it is fresh and never leaves the server.
    if secret is None:
        secret = secrets.randbits(128)
    elif not 0 <= secret < 2**128:
        raise CompetitionConfigError("the secret must be an integer in [0, 2^128)")
    ignored = None
    if split is not None:
        mask, ignored = split
    else:
        try:
            mask = public_split_mask(len(ids), competition.public_fraction, secret)
        except ConfigurationError as exc:
            raise CompetitionConfigError(str(exc)) from None
    encoded = HiddenTestData.encode(ids=ids, labels=labels, public_mask=mask, features=features,
                                    ignored_mask=ignored)
    hidden = HiddenTestData.objects.create(
        competition=competition, secret=format(secret, "x"), ids_json="", labels_npy=b"", public_mask_npy=b""
    )
    blob_write(HiddenTestData, hidden.pk, **encoded)  # a million ids: raw bytes, not an SQL literal in hex
    for name, value in encoded.items():
        setattr(hidden, name, value)
    return hidden


def competition_set_defenses(
    *, competition: Competition, defenses: Any, disclosed_defenses: str | None = None
) -> Competition:
    """Replace the defense chain (validated, stored in canonical form) and optionally what is disclosed."""
    if disclosed_defenses is None:
        return competition_update(competition=competition, defenses=defenses)
    return competition_update(competition=competition, defenses=defenses, disclosed_defenses=disclosed_defenses)


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED: Any = _Unchanged()
"""The default of every :func:`competition_update` setting: leave it as it is (``None`` means "no limit")."""

UPDATABLE_FIELDS = (
    "title", "description", "score_decimals", "daily_limit", "total_limit", "opens_at", "closes_at", "defenses",
    "disclosed_defenses", "also_report", "same_file_same_score", "team_merger_deadline", "max_team_size", "listed",
)


def competition_update(
    *,
    competition: Competition,
    title: str = UNCHANGED,
    description: str = UNCHANGED,
    score_decimals: int | None = UNCHANGED,
    daily_limit: int | None = UNCHANGED,
    total_limit: int | None = UNCHANGED,
    opens_at: datetime = UNCHANGED,
    closes_at: datetime | None = UNCHANGED,
    defenses: Any = UNCHANGED,
    disclosed_defenses: str = UNCHANGED,
    also_report: list[str] | tuple[str, ...] = UNCHANGED,
    same_file_same_score: bool = UNCHANGED,
    team_merger_deadline: datetime | None = UNCHANGED,
    max_team_size: int | None = UNCHANGED,
    listed: bool = UNCHANGED,
) -> Competition:
    """Change a competition's settings after creation, validated exactly as :func:`competition_create` validates
    them; the settings not given stay as they are. Returns ``competition``, updated to what was saved.

    What is fixed at creation stays fixed: the hidden set and its public/private split, the metric, eps and the
    arithmetic (scores already released were computed with them). Scores already released keep their text; a new
    chain or precision applies from the next scoring on: saving bumps ``updated_at``, which is part of the
    worker's cache key. Nothing is saved when any setting is refused (:class:`CompetitionConfigError`).
    """
    given = {
        "title": title, "description": description, "score_decimals": score_decimals, "daily_limit": daily_limit,
        "total_limit": total_limit, "opens_at": opens_at, "closes_at": closes_at, "defenses": defenses,
        "disclosed_defenses": disclosed_defenses, "also_report": also_report,
        "same_file_same_score": same_file_same_score, "team_merger_deadline": team_merger_deadline,
        "max_team_size": max_team_size, "listed": listed,
    }
    changes = {name: value for name, value in given.items() if value is not UNCHANGED}
    if "defenses" in changes:
        changes["defenses"] = competition_validate_defenses(
            defenses=changes["defenses"], metric=competition.metric, eps=competition.eps
        )
    if "title" in changes:
        changes["title"] = changes["title"] or competition.slug
    if "also_report" in changes and not isinstance(changes["also_report"], str):
        changes["also_report"] = list(changes["also_report"])
    if "opens_at" in changes and changes["opens_at"] is None:
        raise CompetitionConfigError("opens_at: a competition needs an opening time")
    with transaction.atomic():
        updated = Competition.objects.select_for_update().get(pk=competition.pk)
        for name, value in changes.items():
            setattr(updated, name, value)
        try:
            updated.full_clean()
        except ValidationError as exc:
            raise CompetitionConfigError(_validation_message(exc)) from None
        updated.save(update_fields=[*changes, "updated_at"])
    for name in [*changes, "updated_at"]:  # the caller's instance reads as saved
        setattr(competition, name, getattr(updated, name))
    return competition


_READ_CHUNK = 1024 * 1024


def _read_limited(stream: BinaryIO | bytes, limit: int, name: str) -> bytes:
    """Every byte of ``stream``, refused as soon as it passes ``limit`` (never read further than that)."""
    if isinstance(stream, (bytes, bytearray, memoryview)):
        content = bytes(stream)
        if len(content) > limit:
            raise DataFileTooLarge(f"{name}: the file is {len(content):,} bytes, larger than {limit:,} bytes, the most "
                                   "a data file may be")
        return content
    buffer = bytearray()
    while chunk := stream.read(_READ_CHUNK):
        buffer += chunk
        if len(buffer) > limit:
            raise DataFileTooLarge(f"{name}: the file is larger than {limit:,} bytes, the most a data file may be")
    return bytes(buffer)


def add_data_file(
    competition: Competition, name: str, stream: BinaryIO | bytes, description: str = "", *, replace: bool = False
) -> DataFile:
    """Attach a file participants may download; its size and SHA-256 are computed here.

    Raises :class:`DataFileError` for a bad name or description, a name the competition already has (unless
    ``replace``: the old file goes), an empty file, a zip or Parquet file that is not one, or one file too many;
    :class:`DataFileTooLarge` past ``LEADERBOARD_MAX_DATA_FILE_BYTES``. Whatever the host attaches is public to
    every participant: the hidden test set is never a data file unless a host uploads it as one.
    """
    name = data_file_name(name)
    description = data_file_description(description)
    content = _read_limited(stream, int(settings.LEADERBOARD_MAX_DATA_FILE_BYTES), name)
    check_data_file_content(name, content)
    digest = hashlib.sha256(content).hexdigest()
    with transaction.atomic():
        # The competition's row lock serialises two hosts attaching files at once (the count and the name).
        Competition.objects.select_for_update().filter(pk=competition.pk).exists()
        existing = DataFile.objects.filter(competition=competition, name=name)
        if existing.exists():
            if not replace:
                raise DataFileError(f"the competition already has a data file named {name!r}")
            existing.delete()
        elif DataFile.objects.filter(competition=competition).count() >= MAX_DATA_FILES:
            raise DataFileError(f"a competition has at most {MAX_DATA_FILES} data files")
        data_file = DataFile.objects.create(
            competition=competition, name=name, description=description, size=len(content), sha256=digest
        )
        blob_write(DataFile, data_file.pk, content=content)  # raw bytes, not an SQL literal in hex
    return DataFile.objects.get(pk=data_file.pk)  # as every read sees it: the bytes left in the database


def remove_data_file(data_file: DataFile) -> None:
    """Delete a data file (participants who downloaded it keep their copy)."""
    DataFile.objects.filter(pk=data_file.pk).delete()
