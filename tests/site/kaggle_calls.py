"""Calls of Kaggle's competition API as ``kagglesdk`` makes them (POST, JSON, HTTP basic auth with a username and
an API token), through Django's test client; and every answer a viewer can get from it, for the leak crawls."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from typing import Any

from django.test import Client

SERVICE = "/api/v1/competitions.CompetitionApiService/"


def basic(username: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{token}".encode()).decode()


def kaggle_post(client: Client, method: str, body: Any = None, auth: tuple[str, str] | None = None,
                follow: bool = False) -> Any:
    headers = {"Authorization": basic(*auth)} if auth else {}
    return client.post(f"{SERVICE}{method}", data=json.dumps({} if body is None else body),
                       content_type="application/json", follow=follow, headers=headers)


def kaggle_get(client: Client, path: str, auth: tuple[str, str] | None = None) -> Any:
    headers = {"Authorization": basic(*auth)} if auth else {}
    return client.get(path, headers=headers)


def content(response: Any) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else bytes(response.content)


def readable(response: Any) -> str:
    """The answer as text; a zip's members unpacked (a leak inside an archive is a leak)."""
    raw = content(response)
    if raw[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            return "\n".join(archive.read(name).decode("utf-8", "replace") for name in archive.namelist())
    return raw.decode("utf-8", "replace")


def kaggle_answers(client: Client, slugs: list[str], auth: tuple[str, str] | None,
                   refs: list[int], *, files: bool = True) -> dict[str, tuple[int, str]]:
    """Every read of the Kaggle API a viewer can make about ``slugs`` (downloads followed to their bytes; with
    ``files=False`` the data files are listed, not downloaded) and the submissions ``refs`` (every submission there
    is: someone else's must answer 404), as (status, text)."""
    answers: dict[str, tuple[int, str]] = {}

    def call(label: str, method: str, body: dict[str, Any]) -> Any:
        response = kaggle_post(client, method, body, auth)
        answers[label] = (response.status_code, readable(response))
        return response

    call("ListCompetitions", "ListCompetitions", {"pageSize": 100})
    for slug in slugs:
        named = {"competitionName": slug}
        for method in ("GetCompetition", "ListDataFiles", "ListSubmissions", "GetSubmissionLimits",
                       "GetLeaderboard", "DownloadLeaderboard"):
            call(f"{method} {slug}", method, named)
        call(f"GetLeaderboard public {slug}", "GetLeaderboard", {**named, "overridePublic": True})
        call(f"DownloadLeaderboard public {slug}", "DownloadLeaderboard", {**named, "overridePublic": True})
        listed = answers[f"ListDataFiles {slug}"]
        names = [row["name"] for row in json.loads(listed[1]).get("files", [])] if listed[0] == 200 else []
        for name in [*names, "sample_submission.csv"] if files else []:
            response = call(f"DownloadDataFile {slug} {name}", "DownloadDataFile", {**named, "fileName": name})
            if response.status_code == 302:
                followed = kaggle_get(client, response["Location"], auth)
                answers[f"file {slug} {name}"] = (followed.status_code, readable(followed))
        response = call(f"DownloadDataFiles {slug}", "DownloadDataFiles", named)
        if files and response.status_code == 302:
            followed = kaggle_get(client, response["Location"], auth)
            answers[f"bundle {slug}"] = (followed.status_code, readable(followed))
    for ref in refs:
        call(f"GetSubmission {ref}", "GetSubmission", {"ref": ref})
    return answers


def kaggle_refs(body: str) -> set[int]:
    """Submission numbers in a Kaggle answer: its integer ``ref`` fields (a competition's or a file's is text)."""

    def walk(value: Any) -> set[int]:
        if isinstance(value, dict):
            found = {item for key, item in value.items() if key == "ref" and isinstance(item, int)}
            return found.union(*(walk(item) for item in value.values()))
        if isinstance(value, list):
            return set().union(*(walk(item) for item in value))
        return set()

    try:
        return walk(json.loads(body))
    except ValueError:
        return set()
