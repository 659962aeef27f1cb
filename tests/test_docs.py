"""The README is the front door and the documentation site holds the rest (mkdocs.yml; ``scripts/test`` builds it
with ``mkdocs build --strict``, which fails on a broken link or anchor). These checks are the cheap, static half:
the README's first screen, the commands CI runs, the words user-facing text may not use, and the paths the
pages name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DEMO, TEST = "./scripts/demo", "./scripts/test"


def pages() -> list[Path]:
    """The README and every Markdown page of the documentation."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def test_the_readme_is_a_front_door_with_both_commands_on_its_first_screen() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the detail into docs/"
    first_screen = "\n".join(lines[:40])
    assert DEMO in first_screen and TEST in first_screen
    assert "leaks" in first_screen  # the main job: how much a leaderboard leaks


def test_ci_runs_the_readmes_test_command_and_the_test_command_builds_the_docs_strictly() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(rf"^exec {re.escape(TEST)}$", ci, re.MULTILINE)
    test = (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    build = re.findall(r"^[^#\n]*mkdocs build --strict.*$", test, re.MULTILINE)
    assert build and all("--quiet" not in line and " -q" not in line for line in build)  # -q hides what strict counts


def test_the_site_builds_offline_with_the_material_theme_and_no_web_fonts() -> None:
    # mkdocs.yml uses !!python tags nowhere, so the safe loader reads it.
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["theme"]["name"] == "material" and config["theme"]["font"] is False
    assert config.get("plugins") == ["search"]  # the built-in search indexes locally; nothing else is loaded


def nav_files(nav: list) -> set[str]:
    found: set[str] = set()
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            found |= nav_files(value) if isinstance(value, list) else {value}
    return found


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_files(config["nav"])
    excluded = {line.strip().lstrip("/") for line in config.get("exclude_docs", "").splitlines() if line.strip()}
    present = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert listed <= present, f"in the nav but missing: {sorted(listed - present)}"
    assert present - excluded <= listed, f"pages left out of the nav: {sorted(present - excluded - listed)}"


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"papers/", "a paper is named by its title and a link (docs/papers.md), never by a repository path"),
        (r"\b[Pp]apers? 00\d", "a paper is named by its title, not by its number in the repository"),
        (r"\b[Ii]ssues? #?\d|(?<![\w/.&-])#\d+\b", "user-facing text never names an issue number"),
        (r"FIELD_NOTES", "the field notes are not shipped: say what they say"),
        (r"games/quick\.toml", "the shipped games live in games/files/"),
    ],
)
def test_user_facing_text_has_no_internal_references(pattern: str, why: str) -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
        for path in pages()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(pattern, re.sub(r"`[^`]*`", "`…`", line))  # code spans quote messages and names as they are
    ]
    assert not hits, why + "\n" + "\n".join(hits)


#: A file path in backticks: a folder of the repository, then a file with an extension.
PATH = re.compile(r"`((?:attacks|benchmarks|bot|defenses|docker|docs|games|launcher|leaderboard|sandbox|scoring|"
                  r"scripts|stack|tests)/[\w./-]*\.(?:py|toml|md|yaml|html|json|svg|png))`")


def test_the_file_paths_the_pages_name_exist() -> None:
    missing = sorted({
        f"{path.relative_to(ROOT)}: {name}"
        for path in pages()
        for name in PATH.findall(path.read_text(encoding="utf-8"))
        if "*" not in name and not (ROOT / name).exists()
    })
    assert not missing, "stale paths:\n" + "\n".join(missing)


def test_the_readmes_links_reach_files_of_the_repository() -> None:
    # mkdocs checks the links between pages; the README is outside docs/, so its links are checked here.
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local and not [link for link in local if not (ROOT / link).exists()]


def test_the_standard_game_benchmark_finds_its_markers_on_the_results_page(tmp_path: Path) -> None:
    from benchmarks.standard_game import MARK_END, MARK_START, RESULTS_PAGE, splice_page

    text = RESULTS_PAGE.read_text(encoding="utf-8")
    assert text.count(MARK_START) == 1 and text.count(MARK_END) == 1
    page = tmp_path / "page.md"
    page.write_text(f"# Results\n\n{MARK_START}\nold\n{MARK_END}\n\nafter\n", encoding="utf-8")
    splice_page(page, "new table\n")
    assert page.read_text(encoding="utf-8") == f"# Results\n\n{MARK_START}\nnew table\n{MARK_END}\n\nafter\n"
