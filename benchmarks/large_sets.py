"""Large test sets: a competition of N rows created, then one submission uploaded, validated, stored and scored,
against the floor — pyarrow reading the same CSVs plus numpy scoring — in the same run.

    .venv/bin/python -m benchmarks.large_sets [--rows 1000000 10000000] [--no-site] [--repeats 3] [--before TREE]

``--before TREE`` also runs the core and the site from another checkout on the same files (a before/after in one
run; e.g. ``git archive main | tar -x -C /tmp/before``).

For each N, a labels CSV (``id,label``, ids ``r0``..) and a submission CSV (``id,target``, full-precision
values, in the sample submission's order; and shuffled, for the core) are written into a temporary directory
by Arrow. Each measurement runs in a fresh process, so its memory is its own:

* **floor**: ``pyarrow.csv.read_csv`` of the labels (ids as strings, labels as int64), the public/private mask
  drawn as the site draws it; then ``read_csv`` of the submission and the clipped log loss of each split in
  numpy. It validates nothing: no id check, no range check, no alignment.
* **core**: the scoring core as the site's worker runs it: ``parse_labels_csv`` + the ``ScoringSpec`` (hidden
  ids prepared for the fast path) per competition; per submission ``scoring.parse`` (every rule of the
  format, rows aligned to the hidden ids) and ``release_submission`` (both splits through the chain, 5
  decimals).
* **site** (PostgreSQL, a fresh database dropped afterwards): ``competition_create`` (labels parsed and
  stored), the worker's load of the competition (``competition_scoring_spec``), ``submission_create`` (the web
  worker's part: validate, store the upload and its array) and ``submission_score`` (the Celery worker's
  part: load the array, score, store). The upload limit is raised to fit the 10M-row file.

Time is the median of ``--repeats`` runs of the per-submission phase (one run of the per-competition phase);
memory is the peak resident set (``VmHWM``, reset through ``/proc/self/clear_refs`` before each phase) above
the resident set at the phase's start, so a phase's figure is what it adds to a process already holding the
competition. "x file" divides it by the submission file's size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

PUBLIC_FRACTION = 0.3
SECRET = 12345


# --- Measuring ------------------------------------------------------------------------------------------


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def phase(fn: Callable[[], Any], repeats: int = 1) -> tuple[Any, float, float]:
    """``fn()``'s result, its median time over ``repeats`` runs and the peak RSS its first run added (MB)."""
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    start = _status("VmRSS")
    times = []
    result = None
    peak = 0.0
    for k in range(repeats):
        result = None  # the previous run's result is garbage before the next starts
        begun = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - begun)
        if k == 0:
            peak = (_status("VmHWM") - start) / 1e6
    return result, statistics.median(times), peak


# --- Data -----------------------------------------------------------------------------------------------


def write_files(directory: Path, n_rows: int, seed: int = 0) -> dict[str, Path]:
    """``labels.csv``, ``submission.csv`` (hidden order) and ``shuffled.csv``, written by Arrow in C."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    rng = np.random.default_rng(seed)
    ids = pc.binary_join_element_wise("r", pc.cast(pa.array(np.arange(n_rows)), pa.string()), "")
    labels = pa.array(rng.integers(0, 2, n_rows))
    values = pa.array(rng.random(n_rows))
    options = pa_csv.WriteOptions(include_header=False, quoting_style="none")
    paths = {name: directory / f"{name}.csv" for name in ("labels", "submission", "shuffled")}
    order = pa.array(rng.permutation(n_rows))
    tables = {
        "labels": (b"id,label\n", pa.table({"id": ids, "label": labels})),
        "submission": (b"id,target\n", pa.table({"id": ids, "target": values})),
        "shuffled": (b"id,target\n", pa.table({"id": ids, "target": values}).take(order)),
    }
    for name, (header, table) in tables.items():
        with paths[name].open("wb") as out:
            out.write(header)
            pa_csv.write_csv(table, out, options)
    return paths


# --- The three contestants (each in its own process) ----------------------------------------------------


def run_floor(paths: dict[str, str], n_rows: int, repeats: int) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    from scoring import public_split_mask

    def competition() -> tuple[np.ndarray, np.ndarray]:
        types = {"id": pa.string(), "label": pa.int64()}
        table = pa_csv.read_csv(paths["labels"], convert_options=pa_csv.ConvertOptions(column_types=types))
        return table.column("label").to_numpy(), public_split_mask(table.num_rows, PUBLIC_FRACTION, SECRET)

    (labels, mask), hidden_s, hidden_mb = phase(competition)

    def submission() -> tuple[float, float]:
        table = pa_csv.read_csv(
            paths["submission"],
            convert_options=pa_csv.ConvertOptions(column_types={"id": pa.string(), "target": pa.float64()}),
        )
        p = np.clip(table.column("target").to_numpy(), 1e-15, 1 - 1e-15)
        losses = -np.where(labels == 1, np.log(p), np.log1p(-p))
        return float(losses[mask].mean()), float(losses[~mask].mean())

    scores, submit_s, submit_mb = phase(submission, repeats)
    return {"hidden": [hidden_s, hidden_mb], "submission": [submit_s, submit_mb], "scores": scores}


def run_core(paths: dict[str, str], n_rows: int, repeats: int) -> dict[str, Any]:
    from scoring import HiddenTestSet, ScoringSpec, parse, parse_labels_csv, public_split_mask
    from scoring.release import release_submission

    def competition() -> ScoringSpec:
        ids, labels, k = parse_labels_csv(Path(paths["labels"]).read_bytes())
        hidden = HiddenTestSet(ids, labels, k, public_split_mask(len(ids), PUBLIC_FRACTION, SECRET))
        spec = ScoringSpec(hidden, max_bytes=1 << 40)
        assert spec.submission_format.fast_ids is not None
        spec.split_rows  # noqa: B018 - built once per competition, as in a warm worker
        return spec

    spec, hidden_s, hidden_mb = phase(competition)
    out: dict[str, Any] = {"hidden": [hidden_s, hidden_mb]}
    for name in ("submission", "shuffled"):

        def submission(name: str = name) -> tuple[float, float]:
            parsed = parse(spec, Path(paths[name]).read_bytes())
            release = release_submission(spec, parsed, submission_id=1)
            return float(release.primary["public"].raw), float(release.primary["private"].raw)

        if name == "shuffled":  # the hidden ids' hash table is built on the first such upload, once
            spec.submission_format.fast_ids.table  # type: ignore[union-attr]  # noqa: B018
        out["scores" if name == "submission" else "scores_shuffled"], seconds, peak = phase(submission, repeats)
        out[name] = [seconds, peak]
    return out


def run_site(paths: dict[str, str], n_rows: int, repeats: int) -> dict[str, Any]:
    from stack.processes import fresh_postgres

    with fresh_postgres("lbl_bigsets") as url:
        os.environ.update(
            DATABASE_URL=url,
            DJANGO_SETTINGS_MODULE="leaderboard.settings",
            DJANGO_DEBUG="0",
            LEADERBOARD_MAX_UPLOAD_BYTES=str(2 * Path(paths["submission"]).stat().st_size),
            LEADERBOARD_PUBLISH_RETRY_FOR="0",
        )
        os.environ.setdefault("DJANGO_SECRET_KEY", uuid.uuid4().hex * 2)
        os.environ.setdefault("LEADERBOARD_VAR_DIR", str(Path(paths["labels"]).parent))
        import django

        django.setup()
        from unittest import mock

        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        from leaderboard.competitions import selectors
        from leaderboard.competitions.services import competition_create
        from leaderboard.submissions import services

        call_command("migrate", verbosity=0)
        user = get_user_model().objects.create(username="bench")
        competition, create_s, create_mb = phase(
            lambda: competition_create(
                slug="big", labels_csv=Path(paths["labels"]).read_bytes(), daily_limit=None, secret=SECRET
            )
        )
        selectors._SPEC_CACHE.clear()
        _, load_s, load_mb = phase(
            lambda: selectors.competition_scoring_spec(competition=competition).submission_format.fast_ids
        )
        submitted: list[int] = []

        def submit() -> None:
            with mock.patch.object(services, "submission_enqueue"):  # scored below, in this process
                data = Path(paths["submission"]).read_bytes()
                submitted.append(services.submission_create(competition=competition, participant=user, data=data).pk)

        _, submit_s, submit_mb = phase(submit, repeats)
        scored = iter(list(submitted))

        def score() -> str:
            return services.submission_score(submission_id=next(scored)).action

        action, score_s, score_mb = phase(score, repeats)
        from leaderboard.submissions.models import Submission

        row = Submission.objects.get(pk=submitted[0])
        return {
            "create": [create_s, create_mb], "load": [load_s, load_mb], "submit": [submit_s, submit_mb],
            "score": [score_s, score_mb], "action": action, "scores": [row.raw_public, row.raw_private],
        }


RUNNERS = {"floor": run_floor, "core": run_core, "site": run_site}


def measure(which: str, paths: dict[str, Path], n_rows: int, repeats: int, tree: Path | None = None) -> dict[str, Any]:
    """Run one contestant in a fresh process; with ``tree``, that checkout's code (its own copy of this script)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.large_sets", "--child", which,
         json.dumps({k: str(v) for k, v in paths.items()}), str(n_rows), str(repeats)],
        capture_output=True, text=True, cwd=tree, env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{which} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-site", action="store_true", help="skip the site path (no PostgreSQL needed)")
    parser.add_argument("--before", help="also run the core and the site from this checkout (e.g. main before a "
                        "change, exported with git archive), beside this one, on the same files")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        which, paths, n_rows, repeats = args.child
        result = RUNNERS[which](json.loads(paths), int(n_rows), int(repeats))
        print(json.dumps(result), flush=True)
        os._exit(0)  # Arrow's thread pool may abort the interpreter's exit (apache/arrow#34314)
    print("Large test sets: ours against the floor (pyarrow.csv.read_csv + numpy log loss) on the same files; "
          f"time = median of {args.repeats} (per competition: one run); memory = peak RSS added, fresh process each")
    header = (f"  {'N':>10} {'step':<53} {'ours s':>7} {'floor s':>7} {'ratio':>6} {'ours MB':>8} {'floor MB':>8}"
              f" {'x file':>6}")
    for n_rows in args.rows:
        with tempfile.TemporaryDirectory(prefix="lbl-bigsets-") as tmp:
            started = time.perf_counter()
            paths = write_files(Path(tmp), n_rows)
            size = paths["submission"].stat().st_size / 1e6
            print(f"\nN = {n_rows:,}: labels {paths['labels'].stat().st_size / 1e6:.0f} MB, submission {size:.0f} MB "
                  f"(written in {time.perf_counter() - started:.1f} s)")
            print(header)
            floor = measure("floor", paths, n_rows, args.repeats)
            core = measure("core", paths, n_rows, args.repeats)
            assert np.allclose(core["scores"], floor["scores"], rtol=1e-12), (core["scores"], floor["scores"])
            before = Path(args.before).resolve() if args.before else None
            core_before = measure("core", paths, n_rows, args.repeats, before) if before else None

            def line(
                step: str, ours: list[float], base: list[float], file_mb: float = size, n_rows: int = n_rows
            ) -> None:
                print(f"  {n_rows:>10,} {step:<53} {ours[0]:>7.2f} {base[0]:>7.2f} {ours[0] / base[0]:>5.2f}x"
                      f" {ours[1]:>8.0f} {base[1]:>8.0f} {ours[1] / file_mb:>5.2f}x")

            labels_mb = paths["labels"].stat().st_size / 1e6
            cores: list[tuple[str, dict[str, Any] | None]] = [("", core), (" [before]", core_before)]
            for tag, measured in cores:
                if measured is None:
                    continue
                line(f"core{tag}: labels CSV -> hidden set + spec", measured["hidden"], floor["hidden"], labels_mb)
                line(f"core{tag}: parse + validate + score, sample order", measured["submission"], floor["submission"])
                line(f"core{tag}: parse + validate + score, shuffled", measured["shuffled"], floor["submission"])
            if not args.no_site:
                sites = [("", measure("site", paths, n_rows, args.repeats))]
                if before is not None:
                    sites.append((" [before]", measure("site", paths, n_rows, args.repeats, before)))
                for tag, site in sites:
                    assert np.allclose(site["scores"], floor["scores"], rtol=1e-12), (site["scores"], floor["scores"])
                    line(f"site{tag}: competition_create (parse + store)", site["create"], floor["hidden"], labels_mb)
                    line(f"site{tag}: worker loads the competition", site["load"], floor["hidden"], labels_mb)
                    line(f"site{tag}: submission_create (validate + store)", site["submit"], floor["submission"])
                    line(f"site{tag}: submission_score (load + score + store)", site["score"], floor["submission"])
                    both = [site["submit"][0] + site["score"][0], max(site["submit"][1], site["score"][1])]
                    line(f"site{tag}: upload -> scored (create + score)", both, floor["submission"])
            sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
