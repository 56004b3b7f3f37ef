"""How the `forensics` command writes: its results on stdout with the names in them made safe for a terminal, the
JSON contract or the text, output files checked before the work and their write failures as one line, and the
progress line on stderr. Part of the command-line shell (`cli`); the library never imports it.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import click

from .errors import BadOutputPath, os_reason


def say(text, err: bool = False, nl: bool = True) -> None:
    """Print `text` with the control characters of the names in it escaped (a file named with terminal escape
    codes must not drive the terminal); the line breaks stay."""
    from .report.notation import printable

    click.echo(printable(text, keep_lines=True), err=err, nl=nl)


def progress_line():
    """A progress callback writing one self-overwriting line to stderr, or None when stderr is no terminal.

    Messages that say "N of M" get an estimate of the time left, from the pace since that count began.
    """
    if not sys.stderr.isatty():
        return None
    from .report.notation import printable

    started: dict[int, tuple[float, int]] = {}

    def report(message: str) -> None:
        text = message if len(message) < 70 else "..." + message[-67:]
        click.echo(f"\r\x1b[2K  {printable(text)}{eta(message, started)}", err=True, nl=False)

    return report


_N_OF_M = re.compile(r"(\d+) of (\d+)")


def eta(message: str, started: dict[int, tuple[float, int]]) -> str:
    """ ", about 12 s left" for an "N of M" message once the count has moved, else ""."""
    m = _N_OF_M.search(message)
    if not m:
        return ""
    done, total = int(m.group(1)), int(m.group(2))
    now = time.monotonic()
    t0, first = started.setdefault(total, (now, done))
    if done <= first or done >= total:
        return ""
    left = (now - t0) / (done - first) * (total - done)
    return f", about {left:.0f} s left" if left < 120 else f", about {left / 60:.0f} min left"


def end_progress(progress) -> None:
    if progress is not None:
        click.echo("\r\x1b[2K", err=True, nl=False)


def writable(path: Path | None, option: str) -> None:
    """Check before any work that `path` can be written: its folder exists and it is not a folder itself."""
    if path is None:
        return
    if path.is_dir():
        raise BadOutputPath(path, f"{option} takes a file name, and this is a folder")
    parent = path.parent if str(path.parent) else Path(".")
    if parent.exists() and not parent.is_dir():
        raise BadOutputPath(path, f"{option}: {parent} is a file, not a folder")
    if not parent.is_dir():
        raise BadOutputPath(path, f"{option}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise BadOutputPath(path, f"{option}: the folder {parent} is not writable")


@contextmanager
def writing(path: Path, option: str):
    """Around the write of an output file: an OSError there (disk full, a device that refuses the bytes) becomes
    one line naming the file and the problem, exit 2, never a traceback. `writable` checked only what it could
    before the work; a full disk shows only when the bytes go out."""
    try:
        yield
    except OSError as err:
        raise BadOutputPath(path, f"{option}: cannot write the file ({os_reason(err)})") from err


def dump_json(data) -> None:
    echo_result(json.dumps(data, indent=2, allow_nan=False, default=str))


def echo_result(text: str) -> None:
    """Print a command's result on stdout; a stdout that refuses it (`> file` on a full disk) is one line, exit 2."""
    try:
        say(text)
    except OSError as err:
        _stdout_to_devnull()
        raise BadOutputPath("standard output", f"cannot write the result ({os_reason(err)})") from err


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that the bytes it still holds do not fail again (a second message, exit 120)
    when Python flushes it at exit."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout with no file behind it (a test runner's buffer)
        pass


def emit(data: dict | None, text, html_path) -> None:
    """Print the JSON contract (when `data` is given) or the text rendering, naming the HTML file written."""
    if data is not None:
        if html_path is not None:
            data["html"] = str(html_path)
        dump_json(data)
        return
    echo_result(text())
    if html_path is not None:
        say(f"HTML report: {html_path}")
