"""The `forensics` command: a thin click shell over the library.

Each command parses its arguments, calls one library function and renders the result as
text, JSON or HTML (how it writes them: `cli_output`). Library errors (ForensicsError) become one line on stderr
and exit 2.
Each command imports what it needs inside its function, so `forensics --help` and a command
that reads no weights start without pandas, numpy or matplotlib (bench/startup.py measures it).

    forensics analyze ./output/ [--json] [--html [report.html]] [--fail-on warning]
    forensics timeline ./output/ --csv timeline.csv
    forensics scan ./output/checkpoint-3600 [--csv stats.csv] [--json]
    forensics diff ckpt-3000 ckpt-3600
    forensics bisect ckpt-3000 ckpt-3600 [--json] [--html bisect.html]
    forensics compare ./run-good/ ./run-bad/ [--json] [--html compare.html]
    forensics watch ./output/ [--json-lines] [--fail-on error]
    forensics replay ./output/checkpoint-3600 [--dtype fp16] [--text probe.txt] [--json]
"""
from __future__ import annotations

import sys
import warnings
from functools import wraps
from pathlib import Path

import click

from ._version import __version__
from .checkpoints.fanout import dask_scheduler  # (no pandas: `forensics --help` starts fast)
from .cli_output import dump_json, emit, end_progress, progress_line, say, writable, writing
from .errors import BadOption, ForensicsError

EXIT_OK, EXIT_BROKEN, EXIT_USAGE = 0, 1, 2


def _fail_cleanly(command):
    """Turn our own errors into one line on stderr and exit code 2, never a traceback."""

    @wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except ForensicsError as err:
            say(f"forensics: {err}", err=True)
            sys.exit(EXIT_USAGE)

    return wrapper


_dask_option = click.option(
    "--dask", "dask", default=None, metavar="SCHEDULER",
    help="Run the checkpoint reading as Dask tasks: tcp://host:port of a scheduler whose workers see the "
         "same files, or 'local' for a cluster on this machine (needs forensics[dask]).")


_run_option = click.option(
    "--run", "run", default=None, metavar="ID_OR_NAME",
    help="The W&B or MLflow run to read where the folder holds several: its id (or its first 4+ characters) "
         "or its name.")


EXIT_CODES = ("Exit codes (every command): 0 clean (healthy, or nothing wrong found), 1 findings (a broken run, "
              "NaN/Inf weights, a bad checkpoint), 2 usage error or nothing readable.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="forensics")
def cli():
    """Explain why an LLM training or fine-tuning run broke, from what it left on disk.

    \b
    forensics analyze ./output/              verdict, first incident, chain, checkpoints, cause
    forensics bisect ckpt-3000 ckpt-3600     last good and first bad checkpoint
    """


@cli.command(epilog=EXIT_CODES + " --fail-on warning makes a warning exit 1 too.")
# Input paths: readable=False leaves permission checks to the readers, which name the file in one line.
@click.argument("path", required=False, type=click.Path(path_type=Path, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the stable contract) on stdout.")
@click.option("--html", "html_path", is_flag=False, flag_value="report.html", default=None,
              type=click.Path(path_type=Path), help="Write a self-contained HTML report (default name: report.html).")
@click.option("--fail-on", type=click.Choice(["broken", "warning"]), default="broken", show_default=True,
              help="Exit 1 on this status or worse.")
@click.option("--no-checkpoints", is_flag=True, help="Read the logs only; do not open checkpoints.")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes for checkpoint scans (default: all cores).")
@click.option("-v", "--verbose", is_flag=True, help="After the one-screen summary, the four answers in full.")
@_run_option
@_dask_option
@_fail_cleanly
def analyze(path, as_json, html_path, fail_on, no_checkpoints, workers, verbose, run, dask):
    """Analyze a run folder (HF Trainer output, LLaMA-Factory, ms-swift, W&B, MLflow, logs) or one log file.

    A W&B folder or MLflow store holding several runs gets one verdict line per run (--json: see
    forensics/store.py); --run names the one to analyze in full.
    Example: forensics analyze ./output/ --html report.html
    """
    from .analysis import analyze as run_analysis
    from .analyzers import status_at_least
    from .errors import SeveralRuns

    _html_not_the_run(path, html_path)
    writable(html_path, "--html")
    progress = progress_line()
    try:
        with dask_scheduler(dask, workers):
            result = run_analysis(path, check_checkpoints=not no_checkpoints, workers=workers, progress=progress,
                                  run=run)
    except SeveralRuns:
        if html_path is not None:
            raise
        end_progress(progress)
        _analyze_each(path, as_json, fail_on)
    end_progress(progress)
    if html_path is not None:
        from .report import write_html

        with writing(html_path, "--html"):
            write_html(result, html_path)
    from .report.text import analysis_text

    emit(result.to_dict() if as_json else None, lambda: analysis_text(result, verbose=verbose), html_path)
    sys.exit(EXIT_BROKEN if status_at_least(result.status, fail_on) else EXIT_OK)


def _analyze_each(path: Path, as_json: bool, fail_on: str) -> None:
    """One verdict line per run of a tracker store (see forensics/store.py), and the exit code of the worst."""
    from .analyzers import status_at_least
    from .report.store_text import store_text
    from .store import analyze_each

    store = analyze_each(path)
    emit(store.to_dict() if as_json else None, lambda: store_text(store), None)
    sys.exit(EXIT_BROKEN if status_at_least(store.status, fail_on) else EXIT_OK)


def _html_not_the_run(path: Path | None, html_path: Path | None) -> None:
    """`analyze --html ./output/`: the folder was taken as the report's name; say what was meant."""
    if path is None and html_path is not None and html_path.is_dir():
        raise BadOption(f"--html takes the report's file name, and {html_path} is a folder; to analyze it and "
                        f"write report.html, put the folder first: forensics analyze {html_path} --html")
    if path is None:
        raise BadOption("which run? Name its folder: forensics analyze ./output/")


@cli.command(epilog=EXIT_CODES)
@click.argument("path", type=click.Path(path_type=Path, readable=False))
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write the timeline as CSV.")
@click.option("--parquet", "parquet_path", type=click.Path(path_type=Path),
              help="Write the timeline as Parquet (needs pyarrow: the `export` extra).")
@click.option("--wide", is_flag=True, help="Write/print the step x metric view instead of the long one.")
@_run_option
@_fail_cleanly
def timeline(path, csv_path, parquet_path, wide, run):
    """Read every log of a run into one timeline (step, metric, value, source, segment, abandoned).

    In the files, a logged NaN reads `nan` and a value never logged is empty; sources are relative
    to the run folder. Example: forensics timeline ./output/ --csv timeline.csv
    """
    from .analysis import load_timeline
    from .export import sources_root, timeline_table, write_table
    from .report.text import timeline_text

    writable(csv_path, "--csv")
    writable(parquet_path, "--parquet")
    if parquet_path is not None:
        from .export import require_pyarrow

        require_pyarrow("--parquet")
    progress = progress_line()
    tl = load_timeline(path, progress=progress, run=run)
    end_progress(progress)
    for skipped in tl.skipped:
        say(f"skipped {skipped}", err=True)
    for out, fmt in ((csv_path, "csv"), (parquet_path, "parquet")):
        if out is not None:
            table = timeline_table(tl, root=sources_root(path), wide=wide)
            with writing(out, f"--{fmt}"):
                write_table(table, out, fmt)
            say(f"wrote {len(table)} rows to {out}")
    if csv_path is None and parquet_path is None:
        say(timeline_text(tl, wide=wide))


@cli.command(epilog=EXIT_CODES)
@click.argument("checkpoint", type=click.Path(path_type=Path, readable=False))
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write one row per tensor as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-tensor stats as JSON.")
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Processes (default: all cores).")
@_dask_option
@_fail_cleanly
def scan(checkpoint, csv_path, as_json, workers, dask):
    """Per-tensor stats of one checkpoint: NaN/Inf counts, absmax, L2, mean, std, zeros, FP16 headroom.

    Exit 1 when a tensor holds NaN/Inf. Example: forensics scan ./output/checkpoint-3600 --csv stats.csv
    """
    from .checkpoints import scan_table
    from .export import write_stats_csv
    from .report.text import scan_text

    writable(csv_path, "--csv")
    progress = progress_line()
    with dask_scheduler(dask, workers):
        table = scan_table(checkpoint, workers=workers, progress=progress)
    stats = table.frame
    end_progress(progress)
    for skipped in table.skipped:  # a shard missing or damaged: the stats are partial
        say(f"skipped {skipped}", err=True)
    if csv_path is not None:
        with writing(csv_path, "--csv"):
            write_stats_csv(stats, csv_path)
    if as_json:
        from .findings import json_records

        dump_json(json_records(stats))
    else:
        say(scan_text(stats, checkpoint))
        if csv_path is not None:
            say(f"wrote {len(stats)} rows to {csv_path}")
    sys.exit(EXIT_BROKEN if table.nonfinite_values else EXIT_OK)


@cli.command(epilog=EXIT_CODES)
@click.argument("a", type=click.Path(path_type=Path, readable=False))
@click.argument("b", type=click.Path(path_type=Path, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
@click.option("--top", type=int, default=20, show_default=True, help="Tensors to show in the text output.")
@_dask_option
@_fail_cleanly
def diff(a, b, as_json, top, dask):
    """Which tensors moved between two checkpoints, by how much, and which went non-finite.

    Exit 1 when B holds NaN/Inf. Example: forensics diff ./output/checkpoint-3000 ./output/checkpoint-3600
    """
    from .checkpoints import diff_checkpoints
    from .checkpoints.diff import nonfinite_in_b, require_one_model
    from .report.text import diff_text

    with dask_scheduler(dask):
        changes = diff_checkpoints(a, b)
    require_one_model(changes, a, b)
    if as_json:
        from .checkpoints.diff import change_records

        dump_json(change_records(changes))
    else:
        say(diff_text(changes, a, b, top))
    sys.exit(EXIT_BROKEN if nonfinite_in_b(changes) else EXIT_OK)


@cli.command(epilog=EXIT_CODES)
@click.argument("a", type=click.Path(path_type=Path, readable=False))
@click.argument("b", type=click.Path(path_type=Path, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the stable contract) on stdout.")
@click.option("--html", "html_path", is_flag=False, flag_value="bisect.html", default=None,
              type=click.Path(path_type=Path), help="Write a self-contained HTML page (default name: bisect.html).")
@click.option("--criterion", default=None, metavar="EXPR",
              help="What else counts as bad beyond NaN/Inf, e.g. 'absmax>1e4'.")
@_dask_option
@_fail_cleanly
def bisect(a, b, as_json, html_path, criterion, dask):
    """Find the last good and first bad checkpoint between A and B, and what broke.

    Exit 1 when a bad checkpoint is found. Example: forensics bisect ./output/checkpoint-3000 ./output/checkpoint-3600
    """
    from .bisection import bisect as run_bisect
    from .checkpoints.criterion import parse_criterion
    from .report.text import bisect_text

    parse_criterion(criterion)  # a criterion it cannot read fails here, before any checkpoint is opened
    writable(html_path, "--html")
    progress = progress_line()
    with dask_scheduler(dask):
        result = run_bisect(a, b, criterion=criterion, progress=progress)
    data = result.to_dict()
    end_progress(progress)
    if html_path is not None:
        from .report import write_bisect_html

        with writing(html_path, "--html"):
            write_bisect_html(result, html_path)
    emit(data if as_json else None, lambda: bisect_text(data), html_path)
    sys.exit(EXIT_BROKEN if data.get("first_bad") else EXIT_OK)


@cli.command(epilog=EXIT_CODES)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the stable contract) on stdout.")
@click.option("--html", "html_path", is_flag=False, flag_value="compare.html", default=None,
              type=click.Path(path_type=Path), help="Write a self-contained HTML page (default name: compare.html).")
@click.option("--no-checkpoints", is_flag=True, help="Read the logs and configuration only; do not open checkpoints.")
@_fail_cleanly
def compare(paths, as_json, html_path, no_checkpoints):
    """Compare runs: configuration differences ranked by risk, where the runs part, verdicts side by side.

    Example: forensics compare ./run-bf16/ ./run-fp16/ --html compare.html
    """
    from .compare import compare as run_compare
    from .report.compare_text import comparison_text

    if len(paths) < 2:
        raise click.UsageError("compare needs at least two run folders")
    writable(html_path, "--html")
    progress = progress_line()
    result = run_compare(list(paths), check_checkpoints=not no_checkpoints, progress=progress)
    end_progress(progress)
    if html_path is not None:
        from .report.compare_html import write_compare_html

        with writing(html_path, "--html"):
            write_compare_html(result, html_path)
    emit(result.to_dict() if as_json else None, lambda: comparison_text(result), html_path)
    sys.exit(EXIT_BROKEN if any(r.status == "broken" for r in result.runs) else EXIT_OK)


@cli.command(epilog=EXIT_CODES)
@click.argument("path", type=click.Path(path_type=Path, readable=False))
@click.option("--interval", type=click.FloatRange(min=0), default=5.0, show_default=True, help="Seconds between polls.")
@click.option("--json-lines", "json_lines", is_flag=True, help="One JSON object per finding or checkpoint, per line.")
@click.option("--fail-on", type=click.Choice(["warning", "error"]), default=None,
              help="Stop with exit 1 at the first finding of this severity or worse.")
@click.option("--max-polls", type=click.IntRange(min=1), default=None, help="Stop after this many polls.")
@click.option("--no-checkpoints", is_flag=True, help="Follow the logs only; do not check new checkpoints.")
@_fail_cleanly
def watch(path, interval, json_lines, fail_on, max_polls, no_checkpoints):
    """Follow a running job's folder and print each new finding once, as `analyze` words it.

    Exit 1 when an error-level finding was reported (or one at --fail-on), 0 otherwise; Ctrl-C stops.
    Example: forensics watch ./output/ --fail-on error --interval 30
    """
    from .report.text import watch_checkpoint_line, watch_finding_line
    from .watch import at_least, watch as follow

    worst_seen = False
    try:
        for result in follow(path, interval=interval, max_polls=max_polls, check_checkpoints=not no_checkpoints):
            for event in result.checkpoints:
                say(watch_checkpoint_line(event, as_json=json_lines))
            for f in result.findings:
                say(watch_finding_line(f, as_json=json_lines))
                worst_seen |= f.severity == "error"
                if fail_on and at_least(f, fail_on):
                    sys.exit(EXIT_BROKEN)
            for s in result.skipped:
                say(f"forensics: skipped {s}", err=True)
    except KeyboardInterrupt:
        pass
    sys.exit(EXIT_BROKEN if worst_seen else EXIT_OK)


@cli.command(epilog=EXIT_CODES)
@click.argument("checkpoint", type=click.Path(path_type=Path))
@click.option("--text", "text", type=click.Path(path_type=Path), default=None,
              help="A text file to probe with (needs the tokenizer in the folder); default: random token ids.")
@click.option("--dtype", default="auto", show_default=True,
              help="fp16, bf16 or fp32; auto: the run's (training_args.bin's fp16/bf16, else config.json's).")
@click.option("--tokens", default=32, show_default=True, type=click.IntRange(1, 1 << 20), help="Probe length.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the random probe.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@_fail_cleanly
def replay(checkpoint, text, dtype, tokens, seed, as_json):
    """Run one probe batch through a checkpoint and name the first module whose output overflows.

    What DebugUnderflowOverflow does in a live run, after the fact: forward hooks record each
    module's output abs-max and NaN/Inf count in the run's dtype (or --dtype); the first module
    past the dtype's limit (fp16: 65504) or NaN/Inf is named, with the modules that ran before it.
    A PEFT adapter is replayed on its base model when that is on this machine. Needs torch and
    transformers (forensics[replay]); CUDA when there, else the CPU; nothing is downloaded.
    Exit 1 when a module's output is past the limit or NaN/Inf, 0 otherwise.
    Example: forensics replay ./output/checkpoint-3600 --dtype fp16
    """
    from .replay.probe import replay as run_replay
    from .report.text import replay_text

    result = run_replay(checkpoint, text=text, dtype=dtype, tokens=tokens, seed=seed)
    if as_json:
        dump_json(result.to_dict())
    else:
        say(replay_text(result))
    sys.exit(EXIT_BROKEN if result.first_bad else EXIT_OK)


def main():
    """The console entry point: click's usage errors as one line (exit 2), like our own errors."""
    # numpy's arithmetic warnings (a median of an empty slice) are a developer's to see, through the library and its
    # tests; on a user's terminal they are noise between the verdict's lines
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"numpy(\.|$)")
    try:
        code = cli.main(prog_name="forensics", standalone_mode=False)
    except click.UsageError as err:
        hint = f" (see: forensics {err.ctx.info_name} --help)" if err.ctx is not None and err.ctx.parent else ""
        say(f"forensics: {err.format_message()}{hint}", err=True)
        sys.exit(EXIT_USAGE)
    except click.Abort:
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    sys.exit(code if isinstance(code, int) else EXIT_OK)
