"""The text report: plain-text renderings for the terminal, short, readable, one screen.

The CLI prints these; the HTML report beside it (`html.py`) tells the same story as a page.
"""
from __future__ import annotations

import json
import math
import textwrap
from typing import Iterable

import pandas as pd

from ..checkpoints.scan import NOT_FULLY_READ
from ..checkpoints.torch_file import TORCH_HINT, unread_without_torch
from ..analyzers import SUMMARY_KINDS
from ..causes.logged_loss import LOGGING_CAUSES
from ..analyzers.metrics import format_number, params_in_words
from ..timeline import Timeline
from .notation import block_ranges, clause_end, plural, printable, shown_path, without_hanging_words
from ..causes.roles import about_the_log, cause_role, leading_cause
from .story import Story, build_story, incident_chain

WIDTH = 100     # columns of the text report
LABEL = 16      # width of the label column
MAX_THEN = 4    # chain links shown before "... N more"
MAX_INFO = 5    # info findings shown, one line each
MAX_NAMED_UNREAD = 3  # files that could not be read, named on the one screen


def analysis_text(analysis, verbose: bool = False) -> str:
    """The text report: one screen for a clear case; `verbose` adds where each run profile field was read and the
    four answers in full.

    One screen: the verdict and run profile, the first incident, what followed, the damaged
    blocks, the last good checkpoint, the likely cause with its evidence and what to do, one line
    per info finding, and a count of the skipped files.
    """
    brief = brief_text(analysis)
    if not verbose:
        return brief
    skipped = [f"{'note on' if s.note else 'skipped'} {s.path}: {s.reason}" for s in analysis.skipped]
    text = brief + "\n" + profile_evidence_text(analysis.run_profile) + story_text(build_story(analysis), notes=skipped)
    return printable(text, keep_lines=True)


def profile_evidence_text(profile) -> str:
    """Where each field of the run profile was read (the HTML page shows the same list), or "" when nothing was."""
    if not profile.evidence:
        return ""
    lines = ["Run profile, from the run's own files:"]
    lines += [f"  {field}: {why}" for field, why in sorted(profile.evidence.items())]
    return "\n".join(lines) + "\n\n"


def brief_text(analysis) -> str:
    """The one-screen text report (about 25 lines of at most WIDTH columns for a single incident)."""
    first = analysis.first_incident
    summary = first is not None and first.kind in SUMMARY_KINDS  # a judgement of the log, not an event
    head = f"{analysis.status.upper()}: " + ("the log does not show that the run learned" if summary else
                                               f"first sign of trouble at step {first.step}" if first
                                               else build_story(analysis).headline)
    lines = _wrap("", head, indent=0)
    lines += _row("Run", profile_line(analysis.run_profile))
    learned = analysis.learning
    if analysis.status == "healthy" and learned is not None:  # a healthy verdict names its evidence
        lines += _row("Learned", learned.said or f"{learned.metric} {format_number(learned.start)} -> "
                                 f"{format_number(learned.end)} ({learned.n_points} points, steps {learned.first_step} "
                                 f"to {learned.last_step})")
    lines.append("")
    if first is not None:
        # A judgement of the whole log has no step of its own to name.
        lines += _row("What is unknown", first.message) if summary else \
            _row("First incident", f"step {first.step}: {first.message}")
        chain = incident_chain(analysis.findings, first)
        if analysis.first_bad_checkpoint is not None:  # the Damaged blocks and Last good rows below say it
            chain = [f for f in chain if f.kind != "nonfinite_weights"]
        for i, f in enumerate(chain[:MAX_THEN]):
            lines += _row("Then" if i == 0 else "", f"step {f.step}: {f.message}", max_lines=2)
        if len(chain) > MAX_THEN:
            lines += _row("", f"... and {len(chain) - MAX_THEN} more (--verbose)")
    disagreeing = [f for f in analysis.findings if f.kind == "source_disagreement" and f is not first]
    for i, f in enumerate(disagreeing[:2]):  # the verdict stands on one file's values: say which, and who disagrees
        lines += _row("Files disagree" if i == 0 else "", f"step {f.step}: {f.message}", max_lines=3)
    lines += _checkpoint_rows(analysis)
    lines += _cause_rows(analysis)
    info = [f for f in analysis.findings if f.severity == "info"]
    for i, f in enumerate(info[:MAX_INFO]):
        lines += _row("Info" if i == 0 else "", f"step {f.step}: {f.message}", clip=True)
    if len(info) > MAX_INFO:
        lines += _row("", f"... and {len(info) - MAX_INFO} more info findings (--verbose)")
    unread = [s for s in analysis.skipped if not s.note]
    if unread:
        lines += _unread_row(analysis, unread)
    if len(unread) < len(analysis.skipped):
        notes = len(analysis.skipped) - len(unread)
        lines += _row("Read with", f"{plural(notes, 'note')} on how the records were taken (--verbose says them)")
    # file and checkpoint names, and messages quoting them, reach the terminal: none may drive it
    return printable("\n".join(lines) + "\n", keep_lines=True)


def _unread_row(analysis, unread) -> list[str]:
    """The files that could not be read in full, named (the first MAX_NAMED_UNREAD; --verbose lists all, with why)."""
    root = analysis.layout.root if analysis.layout is not None else None
    names = ", ".join(shown_path(s.path, root) for s in unread[:MAX_NAMED_UNREAD])
    more = len(unread) - MAX_NAMED_UNREAD
    tail = f" and {more} more (--verbose lists all)" if more > 0 else " (--verbose says why)"
    return _row("Skipped", f"{plural(len(unread), 'file')} could not be read in full: {names}{tail}",
                max_lines=2 * MAX_NAMED_UNREAD)


def profile_line(profile) -> str:
    """The run profile in one line: what is known, then what is unknown."""
    d = profile.to_dict()
    parts = [f"{k} {d[k]}" for k in ("method", "objective", "precision", "framework")
             if d.get(k) not in (None, "unknown")]
    if d.get("model_params"):
        parts.append(f"~{params_in_words(d['model_params'])} parameters")
    unknown = [k for k in ("method", "objective", "precision", "framework") if d.get(k) in (None, "unknown")]
    if unknown:
        parts.append("unknown: " + ", ".join(unknown))
    return "; ".join(parts)


def _checkpoint_rows(analysis) -> list[str]:
    if not analysis.checkpoints:
        return []
    good, bad = analysis.last_good_checkpoint, analysis.first_bad_checkpoint
    rows = []
    if bad is not None and bad.nonfinite_blocks:
        rows += _row("Damaged blocks", f"{block_ranges(bad.nonfinite_blocks)} in {bad.name} "
                                       f"({plural(len(bad.nonfinite_tensors), 'tensor')} with NaN/Inf)")
    precursor = next((f for f in analysis.findings if f.kind == "update_precursor"), None)
    if precursor is not None:
        rows += _row("Heading there", precursor.message, max_lines=2)
    later = [c.name for c in analysis.checkpoints if c.is_nonfinite and c is not bad]
    incident = analysis.incident_step
    unsafe = [c.name for c in analysis.checkpoints if c.status == "ok" and incident is not None
              and (c.step is None or c.step >= incident)]
    no_torch = unread_without_torch(analysis.checkpoints)
    unread = [c.name for c in analysis.checkpoints if c.status == "unreadable" and all(c is not n for n in no_torch)]
    not_read = f"; not readable: {', '.join(unread)} (--verbose says why)" if unread else ""
    if no_torch:
        not_read += f"; {plural(len(no_torch), 'checkpoint')} not read: {TORCH_HINT}"
    if bad is None and incident is None:
        read = len(analysis.checkpoints) - len(unread) - sum(c.status == "unreadable" for c in no_torch)
        said = f"{plural(read, 'checkpoint')} checked, all finite" if read else "none could be read"
        unchecked = [c.name for c in analysis.checkpoints if c.optimizer is not None and c.optimizer_finite is None]
        if unchecked:
            said += f"; the optimizer state of {', '.join(unchecked)} holds no moments that could be read (not checked)"
        rows += _row("Checkpoints", said + not_read)
        return rows
    safe = f"{good.name} (step {good.step})" if good else f"none saved before step {incident}"
    if bad is not None:
        safe += f"; damaged from {bad.name}" + (f" on ({len(later)} more)" if later else "")
    if unsafe:
        safe += f"; finite, but after the incident at step {incident}: {', '.join(unsafe)}"
    poisoned = [c.name for c in analysis.checkpoints if c.optimizer_finite is False and not c.is_nonfinite]
    if poisoned:
        safe += f"; finite weights but NaN/Inf optimizer state: {', '.join(poisoned)}"
    elif good is not None and good.optimizer_finite:
        safe += "; its optimizer state is finite too"
    elif good is not None and good.optimizer is not None and good.optimizer_finite is None:
        safe += "; its optimizer state holds no moments that could be read, so it is not checked"
    rows += _row("Last good", safe + not_read)
    return rows


def _cause_rows(analysis) -> list[str]:
    causes = analysis.causes
    if not causes:
        return [] if analysis.status == "healthy" else _row("Cause", "not pinned down from the run's own files "
                                                                      "(--verbose lists what is known)")
    top = leading_cause(analysis.causes, analysis.first_incident) or causes[0]
    # a cause about the log beside a first incident of another kind is no cause of it: a note on the log
    note = about_the_log(analysis.first_incident, top)
    label = ("About the log" if top.cause in LOGGING_CAUSES else "Note") if note else "Cause"
    rows = _row(label, f"{top.title or top.cause} ({top.confidence})")
    for e in top.evidence[:2]:
        rows += _row("", f"- {e}", clip=True)
    rows += _row("Reading it" if note else "What to do", _next(analysis, top))
    hider = next((c for c in causes if cause_role(analysis.first_incident, c, top) == "hid_the_cause"), None)
    if hider is not None:  # what hid the trouble: how to read the log, after what to fix
        rows += _row("Hidden by", f"{hider.title or hider.cause} ({hider.confidence}): {hider.suggestion}",
                     max_lines=2)
    rest = [c for c in causes if c is not top and c is not hider]
    if rest:
        rows += _row("Also", "; ".join(f"{c.title or c.cause} ({c.confidence})" for c in rest), clip=True)
    return rows


def _next(analysis, top) -> str:
    text = top.suggestion.rstrip(".")
    good = analysis.last_good_checkpoint
    if analysis.first_bad_checkpoint is not None and good is not None and "resume" not in text.lower():
        text += f"; resume from {good.name} (step {good.step})"
    return text + "."


def _row(label: str, text: str, clip: bool = False, max_lines: int | None = None) -> list[str]:
    lines = _wrap(label.ljust(LABEL), text, indent=LABEL)
    limit = 1 if clip else max_lines
    if limit is None or len(lines) <= limit:
        return lines
    # a row cut short ends where a clause does: "at step…" or "(only fp1…" is no sentence an owner can read; where
    # that keeps under half the row (a long path, a CJK excerpt), on its last whole word, else cut where it ends
    prefix = label.ljust(LABEL)
    kept = " ".join(line[LABEL:] for line in lines[:limit])
    while " " in kept and len(_wrap(prefix, kept + "…", indent=LABEL)) > limit:
        kept = kept.rsplit(" ", 1)[0]
    for said in (clause_end(kept), without_hanging_words(kept)):
        short = _wrap(prefix, said + "…", indent=LABEL)
        if len(said) >= (WIDTH - LABEL) * limit // 2 and len(short) <= limit and short[-1].strip() != "…":
            return short
    return lines[:limit - 1] + [lines[limit - 1][:WIDTH - 1] + "…"]


def _wrap(prefix: str, text: str, indent: int) -> list[str]:
    # escaped before wrapping: textwrap would turn a newline or tab inside a name into a space, hiding it
    return textwrap.wrap(printable(text), width=WIDTH, initial_indent=prefix, subsequent_indent=" " * indent,
                         break_on_hyphens=False) or [prefix.rstrip()]


def story_text(story: Story, notes: Iterable[str] = ()) -> str:
    """The story as plain text lines (what a terminal shows); `notes` go just before the next step."""
    lines = [f"{story.verdict.upper()}: {story.headline}"]
    for title, body in story.sections():
        if body:
            lines += ["", title] + [f"  {line}" for line in body]
    notes = list(notes)
    if notes:
        lines += [""] + notes
    if story.next_step:
        lines += ["", story.next_step]
    return printable("\n".join(lines) + "\n", keep_lines=True)


def timeline_text(timeline: Timeline, wide: bool = False, rows: int = 20) -> str:
    """A summary of the timeline: its segments and the first and last rows."""
    lines = [f"{len(timeline.frame)} points, {len(timeline.metrics)} metrics: {', '.join(timeline.metrics[:12])}"
             + (" ..." if len(timeline.metrics) > 12 else "")]
    for seg in timeline.segments:
        tail = f" (abandoned from step {seg.abandoned_from_step})" if seg.abandoned else ""
        lines.append(f"  segment {seg.id}: {seg.source} [{seg.format}] steps {seg.first_step}-{seg.last_step}{tail}")
    table = timeline.wide() if wide else timeline.frame
    if len(table):
        with pd.option_context("display.width", 160, "display.max_columns", 12):
            lines.append(table.head(rows // 2).to_string())
            if len(table) > rows // 2:
                lines.append("...")
                lines.append(table.tail(rows // 2).to_string(header=False))
    return printable("\n".join(lines), keep_lines=True)


def scan_text(stats: pd.DataFrame, checkpoint, rows: int = 15) -> str:
    """Totals, the non-finite tensors and blocks, and the tensors with the least FP16 headroom."""
    if stats.empty:
        return printable(f"{checkpoint}: no tensors")
    n_bad = stats[(stats["n_nan"] > 0) | (stats["n_inf"] > 0)]
    lines = [f"{checkpoint}: {plural(len(stats), 'tensor')}, {int(stats['numel'].sum()):,} values"]
    if len(n_bad):
        blocks = {b for b in n_bad["block"] if isinstance(b, str)}
        lines.append(f"NON-FINITE: {plural(len(n_bad), 'tensor')} {'holds' if len(n_bad) == 1 else 'hold'} NaN/Inf"
                     + (f" in {'block' if len(blocks) == 1 else 'blocks'} {block_ranges(blocks)}" if blocks else ""))
        cols = _with_state(stats, ["name", "dtype", "n_nan", "n_inf", "absmax"])
        lines.append(n_bad[cols].head(rows).to_string(index=False))
    unread = int((stats["note"] == NOT_FULLY_READ).sum()) if "note" in stats else 0
    if unread:  # a shard or data file missing: finite-looking rows may not have been read at all
        lines.append(f"{plural(unread, 'tensor')} not fully read (see the skipped lines): no verdict on them")
    if not len(n_bad):
        lines.append("all values read are finite" if unread else "all values finite")
    lines.append("largest magnitudes:")
    top = stats.sort_values("absmax", ascending=False).head(min(rows, 5))
    lines.append(top[_with_state(stats, ["name", "dtype", "absmax", "l2", "std", "fp16_headroom"])]
                 .to_string(index=False))
    return printable("\n".join(lines), keep_lines=True)


def _with_state(stats: pd.DataFrame, cols: list[str]) -> list[str]:
    """An optimizer state's rows also say which moment they are (exp_avg / exp_avg_sq)."""
    return cols[:1] + ["state"] + cols[1:] if "state" in stats else cols


def diff_text(changes: pd.DataFrame, a, b, top: int = 20) -> str:
    """The tensors that moved most between two checkpoints and those that became non-finite."""
    if changes.empty:
        return printable(f"{a} -> {b}: no tensor in common")
    lines = [f"{a} -> {b}: {plural(len(changes), 'tensor')} compared"]
    if "became_nonfinite" in changes:
        went_bad = changes[changes["became_nonfinite"]]
        if len(went_bad):
            lines.append(f"{plural(len(went_bad), 'tensor')} became non-finite")
    shown = changes.head(top)
    # A tensor that went NaN/Inf has no finite relative change: say what happened instead of "inf".
    change = [("NaN/Inf" if bad else f"{rel:.3g}") for rel, bad in zip(shown["rel_change"], shown["became_nonfinite"])]
    table = pd.DataFrame({"tensor": shown["tensor"], "block": shown["block"].fillna("-"), "change": change})
    lines.append(table.to_string(index=False))
    return printable("\n".join(lines), keep_lines=True)


def replay_text(result) -> str:
    """The replay's verdict, the weights missing from the checkpoint, then the modules that ran up to the first one past
    its dtype's limit (or, where none was, the largest outputs), one a line."""
    lines = [str(result)]
    if result.missing_weights:
        lines.append(f"  warning: {len(result.missing_weights)} weights missing from the checkpoint (random "
                     f"init): {', '.join(result.missing_weights[:3])}")
    shown = result.frames or result.largest
    lines.append(f"  {'dtype ' + result.dtype + ' (' + result.dtype_source + '), ' + result.device}; "
                 + ("the modules that ran up to it:" if result.frames else "the largest outputs:"))
    for f in shown:
        flag = "  <- first" if f is shown[-1] and result.frames else ""
        out = "-" if f.absmax is None else f"{f.absmax:.4g}"
        seen = "-" if f.input_absmax is None else f"{f.input_absmax:.4g}"
        lines.append(f"  {f.module:48} {f.type:22} in {seen:>10}{'!' if f.input_nonfinite else ' '} "
                     f"out {out:>10}  nan {f.nan:<6} inf {f.inf:<6}{flag}".rstrip())
    return "\n".join(lines)


def watch_checkpoint_line(event, as_json: bool = False) -> str:
    """A checkpoint `watch` saw settle, in one line (`as_json`: one JSON object, `watch --json-lines`)."""
    return json.dumps(event.to_dict()) if as_json else f"checkpoint {event.name}: {event.status}"


def watch_finding_line(f, as_json: bool = False) -> str:
    """A finding `watch` reports, in one line: its step, severity, kind and message (`as_json`: one JSON object,
    `watch --json-lines`, NaN never written as a bare token)."""
    if as_json:
        return json.dumps({"event": "finding", **f.to_dict()}, allow_nan=False)
    return f"step {f.step}  {f.severity:<7}  {f.kind}: {f.message}"


def bisect_text(data: dict) -> str:
    """The bisect verdict from its JSON form: last good, first bad, what broke, what the logs say."""
    lines = []
    good, bad = data.get("last_good"), data.get("first_bad")
    lines.append(f"last good: {_ckpt(good)}")
    lines.append(f"first bad: {_ckpt(bad)}")
    if bad:
        blocks = bad.get("nonfinite_blocks") or []
        tensors = bad.get("nonfinite_tensors") or []
        if tensors or not bad.get("reason"):
            lines.append(f"  {len(tensors)} non-finite tensors" + (f" in {', '.join(blocks)}" if blocks else ""))
        else:  # finite weights judged bad: say by what
            lines.append(f"  {bad['reason']}")
    probed = data.get("probed") or []
    lines.append("probed: " + ", ".join(f"{p['name']}={p['verdict']}" for p in probed))
    lines.extend(_unread_lines(data))
    lines.extend(f"  {p['name']}: finite weights; {p['reason']}" for p in probed
                 if p["verdict"] == "ok" and p.get("reason"))
    window = data.get("window") or {}
    findings = data.get("findings") or []
    if findings:
        lines.append(f"in steps {window.get('from_step')}..{window.get('to_step')} the logs show:")
        lines.extend(f"  step {f['step']}: {f['message']}" for f in findings)
    changes = data.get("changes") or []
    if changes:
        lines.append("largest changes:")
        lines.extend(f"  {c.get('tensor')}  rel_change={_rel_change_text(c)}" for c in changes[:10])
    return printable("\n".join(lines), keep_lines=True)


def _unread_lines(data: dict) -> list[str]:
    """The checkpoints the search could not read, probed or stepped over, each with why, never quietly; and where one
    lies between the last good and the first bad, that the damage may have begun there."""
    unread = data.get("unread")
    if unread is None:  # a result saved before the list was kept: the probed ones it did not read
        unread = [p for p in data.get("probed") or [] if p["verdict"] == "unreadable"]
    lines = [f"  not read {u['name']}: {u.get('reason') or 'unreadable'}" for u in unread]
    inside = data.get("unread_in_window") or []
    if inside:
        good, bad = data.get("last_good"), data.get("first_bad")
        lines.append(f"  between {good['name'] if good else 'the start'} and {bad['name']} lie {', '.join(inside)}, "
                     f"not read: the damage may have begun there")
    return lines


def _rel_change_text(change: dict) -> str:
    """A changes row's relative change; where none is finite (null in the JSON), why: NaN/Inf, or moved from zeros."""
    rel = change.get("rel_change")
    if isinstance(rel, (int, float)) and math.isfinite(rel):
        return f"{rel:.3g}"
    if change.get("n_new_nonfinite") or change.get("became_nonfinite"):
        return "NaN/Inf"
    return "grew from zero" if change.get("grew_from_zero") else "n/a"


def _ckpt(c) -> str:
    if not c:
        return "none"
    return f"{c['name']} (step {c['step']})"
