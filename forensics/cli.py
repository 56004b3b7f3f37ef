"""The `forensics` command: a thin click shell over the library.

Each command parses its arguments, calls one library function and renders the result as
text, JSON or HTML. Library errors (ForensicsError) become one line on stderr and exit 2.

    forensics analyze ./output/ [--json] [--html [report.html]] [--fail-on warning]
    forensics timeline ./output/ --csv timeline.csv
    forensics scan ./output/checkpoint-3600 [--csv stats.csv] [--json]
    forensics diff ckpt-3000 ckpt-3600
    forensics bisect ckpt-3000 ckpt-3600 [--json] [--html bisect.html]
"""
from __future__ import annotations

import json
import sys
from functools import wraps
from pathlib import Path

import click

from . import __version__
from .errors import ForensicsError

EXIT_OK, EXIT_BROKEN, EXIT_USAGE = 0, 1, 2


def _fail_cleanly(command):
    """Turn our own errors into one line on stderr and exit code 2, never a traceback."""

    @wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except ForensicsError as err:
            click.echo(f"forensics: {err}", err=True)
            sys.exit(EXIT_USAGE)

    return wrapper


_dask_option = click.option(
    "--dask", "dask", default=None, metavar="SCHEDULER",
    help="Run the checkpoint reading as Dask tasks: tcp://host:port of a scheduler whose workers see the "
         "same files, or 'local' for a cluster on this machine (needs forensics[dask]).")


def _fanned_out(dask: str | None, workers: int | None = None):
    from .checkpoints.fanout import dask_scheduler

    return dask_scheduler(dask, workers)


def _progress():
    """A progress callback writing one self-overwriting line to stderr, or None when stderr is no terminal."""
    if not sys.stderr.isatty():
        return None

    def report(message: str) -> None:
        text = message if len(message) < 70 else "..." + message[-67:]
        click.echo(f"\r\x1b[2K  reading {text}", err=True, nl=False)

    return report


def _end_progress(progress) -> None:
    if progress is not None:
        click.echo("\r\x1b[2K", err=True, nl=False)


def _dump_json(data) -> None:
    click.echo(json.dumps(data, indent=2, allow_nan=False, default=str))


def _emit(data: dict | None, text, html_path) -> None:
    """Print the JSON contract (when `data` is given) or the text rendering, naming the HTML file written."""
    if data is not None:
        if html_path is not None:
            data["html"] = str(html_path)
        _dump_json(data)
        return
    click.echo(text())
    if html_path is not None:
        click.echo(f"HTML report: {html_path}")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="forensics")
def cli():
    """Explain why an LLM training or fine-tuning run broke, from what it left on disk."""


@cli.command()
# Input paths: readable=False leaves permission checks to the readers, which name the file in one line.
@click.argument("path", type=click.Path(path_type=Path, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the stable contract) on stdout.")
@click.option("--html", "html_path", is_flag=False, flag_value="report.html", default=None,
              type=click.Path(path_type=Path), help="Write a self-contained HTML report (default name: report.html).")
@click.option("--fail-on", type=click.Choice(["broken", "warning"]), default="broken", show_default=True,
              help="Exit 1 on this status or worse.")
@click.option("--no-checkpoints", is_flag=True, help="Read the logs only; do not open checkpoints.")
@click.option("--workers", type=int, default=None, help="Processes for checkpoint scans (default: all cores).")
@_dask_option
@_fail_cleanly
def analyze(path, as_json, html_path, fail_on, no_checkpoints, workers, dask):
    """Analyze a run folder (HF Trainer output, LLaMA-Factory, ms-swift, logs) or one log file."""
    from .analysis import analyze as run_analysis

    progress = _progress()
    with _fanned_out(dask, workers):
        result = run_analysis(path, check_checkpoints=not no_checkpoints, workers=workers, progress=progress)
    _end_progress(progress)
    if html_path is not None:
        from .report import write_html

        write_html(result, html_path)
    from .render import analysis_text

    _emit(result.to_dict() if as_json else None, lambda: analysis_text(result), html_path)
    failing = {"broken": {"broken"}, "warning": {"broken", "warning"}}[fail_on]
    sys.exit(EXIT_BROKEN if result.status in failing else EXIT_OK)


@cli.command()
@click.argument("path", type=click.Path(path_type=Path, readable=False))
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write the long timeline as CSV.")
@click.option("--wide", is_flag=True, help="Write/print the step x metric view instead of the long one.")
@_fail_cleanly
def timeline(path, csv_path, wide):
    """Read every log of a run into one timeline (step, metric, value, source, segment, abandoned)."""
    from .analysis import load_timeline
    from .render import timeline_text

    progress = _progress()
    tl = load_timeline(path, progress=progress)
    _end_progress(progress)
    for skipped in tl.skipped:
        click.echo(f"skipped {skipped}", err=True)
    if csv_path is not None:
        table = tl.wide() if wide else tl.frame
        table.to_csv(csv_path, na_rep="nan", index=wide)
        click.echo(f"wrote {len(table)} rows to {csv_path}")
    else:
        click.echo(timeline_text(tl, wide=wide))


@cli.command()
@click.argument("checkpoint", type=click.Path(path_type=Path, readable=False))
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="Write one row per tensor as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-tensor stats as JSON.")
@click.option("--workers", type=int, default=None, help="Processes (default: all cores).")
@_dask_option
@_fail_cleanly
def scan(checkpoint, csv_path, as_json, workers, dask):
    """Per-tensor stats of one checkpoint: NaN/Inf counts, absmax, L2, mean, std, zeros, FP16 headroom."""
    from .checkpoints import scan_checkpoint
    from .render import scan_text

    progress = _progress()
    with _fanned_out(dask, workers):
        stats = scan_checkpoint(checkpoint, workers=workers, progress=progress)
    _end_progress(progress)
    for skipped in stats.attrs.get("skipped", []):  # a shard missing or damaged: the stats are partial
        click.echo(f"skipped {skipped}", err=True)
    if csv_path is not None:
        stats.to_csv(csv_path, index=False, na_rep="nan")
    if as_json:
        from .findings import json_safe

        _dump_json(json_safe(stats.to_dict(orient="records")))
    else:
        click.echo(scan_text(stats, checkpoint))
        if csv_path is not None:
            click.echo(f"wrote {len(stats)} rows to {csv_path}")
    bad = int((stats["n_nan"] + stats["n_inf"]).sum()) if len(stats) else 0
    sys.exit(EXIT_BROKEN if bad else EXIT_OK)


@cli.command()
@click.argument("a", type=click.Path(path_type=Path, readable=False))
@click.argument("b", type=click.Path(path_type=Path, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
@click.option("--top", type=int, default=20, show_default=True, help="Tensors to show in the text output.")
@_dask_option
@_fail_cleanly
def diff(a, b, as_json, top, dask):
    """Which tensors moved between two checkpoints, by how much, and which went non-finite."""
    from .checkpoints import diff_checkpoints
    from .render import diff_text

    with _fanned_out(dask):
        changes = diff_checkpoints(a, b)
    if as_json:
        from .findings import json_safe

        _dump_json(json_safe(changes.to_dict(orient="records")))
    else:
        click.echo(diff_text(changes, a, b, top))


@cli.command()
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
    """Find the last good and first bad checkpoint between A and B, and what broke."""
    from .analysis import bisect as run_bisect
    from .checkpoints import bisect_to_dict
    from .render import bisect_text

    progress = _progress()
    with _fanned_out(dask):
        result = run_bisect(a, b, criterion=criterion, progress=progress)
    data = bisect_to_dict(result)
    _end_progress(progress)
    if html_path is not None:
        from .report import write_bisect_html

        write_bisect_html(result, html_path)
    _emit(data if as_json else None, lambda: bisect_text(data), html_path)
    sys.exit(EXIT_BROKEN if data.get("first_bad") else EXIT_OK)


def main():
    cli(prog_name="forensics")
