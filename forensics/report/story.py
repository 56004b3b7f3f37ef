"""The story of a run: the four answers of INCIDENTS.md as plain data, for any renderer.

`build_story(analysis)` turns an `Analysis` into a `Story` (verdict, headline and four
`Answer`s of plain sentences and bullets). The HTML report, the CLI's terminal output and
the notebook all render the same Story, so it holds strings only, no markup.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from ..analyzers import SUMMARY_KINDS
from ..analyzers.metrics import format_number
from ..causes.logged_loss import LOGGING_CAUSES
from ..causes.roles import cause_role, leading_cause
from ..checkpoints.torch_file import unread_without_torch
from ..checkpoints.types import CheckpointInfo
from ..findings import Finding, plural
from .notation import block_ranges

VERDICTS = {"healthy": "Healthy", "warning": "Warning", "broken": "Broken"}

QUESTIONS = (
    "Is the run healthy? What went wrong first, and at which step?",
    "What followed from it?",
    "Which checkpoints are safe?",
    "What most likely caused it, and what to change?",
)

# Config keys worth quoting when no cause could be pinned down (INCIDENTS.md's usual suspects).
KNOWN_KEYS = ("learning_rate", "warmup_steps", "warmup_ratio", "lr_scheduler_type", "max_grad_norm",
              "fp16", "bf16", "quant.bnb_4bit_use_double_quant", "ds.communication_data_type")

MAX_CHAIN = 8


@dataclass(frozen=True)
class Answer:
    """One of the four answers: the question, a few plain sentences and optional bullets."""

    question: str
    paragraphs: tuple[str, ...]
    bullets: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"question": self.question, "paragraphs": list(self.paragraphs), "bullets": list(self.bullets)}


@dataclass(frozen=True)
class Story:
    """What a report says, renderer-neutral.

    Fields:
        status: "healthy", "warning" or "broken" (as Analysis.status).
        verdict: the status as a word for people ("Broken").
        headline: one sentence: the verdict and the first thing that went wrong.
        answers: the four answers, in INCIDENTS.md order.
        next_step: one sentence: where to look next or what to do.
    """

    status: str
    verdict: str
    headline: str
    answers: tuple[Answer, ...] = field(default_factory=tuple)
    next_step: str = ""

    def to_dict(self) -> dict:
        return {"status": self.status, "verdict": self.verdict, "headline": self.headline,
                "answers": [a.to_dict() for a in self.answers], "next_step": self.next_step}

    def sections(self) -> list[tuple[str, list[str]]]:
        """(numbered question, lines) per answer: paragraphs, then bullets prefixed with "- "."""
        return [(f"{i}. {a.question}", list(a.paragraphs) + [f"- {b}" for b in a.bullets])
                for i, a in enumerate(self.answers, 1)]


def build_story(analysis) -> Story:
    """The verdict, a headline and the four answers for `analysis`.

    >>> from forensics.analysis import Analysis
    >>> from forensics.timeline import Timeline
    >>> build_story(Analysis(path=".", status="healthy", findings=[], first_incident=None,
    ...                      timeline=Timeline.empty())).verdict
    'Healthy'
    """
    answers = (
        _answer_health(analysis),
        _answer_chain(analysis),
        answer_checkpoints(analysis),
        _answer_cause(analysis),
    )
    verdict = VERDICTS.get(analysis.status, analysis.status.capitalize())
    return Story(status=analysis.status, verdict=verdict, headline=_headline(analysis), answers=answers,
                 next_step=_next_step(analysis))


def _headline(analysis) -> str:
    first = analysis.first_incident
    if first is None:
        if analysis.status == "healthy":
            return ("Nothing went wrong in the logs or checkpoints that were read" + _torch_note(analysis)
                    + (f", and the {analysis.learning.metric} shows it learned." if analysis.learning else "."))
        return "Something looks off, but no single first incident was found."
    if first.kind in SUMMARY_KINDS:  # a judgement of the whole log (or of what its loss counts), not a step
        return f"The log does not show that the run learned: {first.message}"
    return f"First sign of trouble at step {first.step}: {first.message}"


def _torch_note(analysis) -> str:
    """Checkpoints left unread for want of torch: a healthy verdict must not pass for one that checked them."""
    unread = unread_without_torch(analysis.checkpoints)
    return f" ({plural(len(unread), 'checkpoint')} not read: install torch)" if unread else ""


def _learned(learning) -> str:
    """The evidence the run learned, as a sentence (with its trailing space), or "" where there is none."""
    if learning is None:
        return ""
    if learning.said:
        return f"{learning.said[0].upper()}{learning.said[1:]}: it learned. "
    how = "rose" if learning.end > learning.start else "fell"
    return (f"Its {learning.metric} {how} from about {format_number(learning.start)} over the first logged steps to "
            f"about {format_number(learning.end)} over the last ({learning.n_points} points, steps "
            f"{learning.first_step} to {learning.last_step}): it learned. ")


def _next_step(analysis) -> str:
    """What to do now: the leading cause's change, where to resume from (once: the cause may name it), or which steps
    to look at."""
    first, last_good = analysis.first_incident, analysis.last_good_checkpoint
    if analysis.status == "healthy" and first is None:
        return "Nothing to do."
    parts, lead = [], leading_cause(analysis.causes, analysis.first_incident)
    if lead is not None:
        parts.append(lead.suggestion.rstrip("."))
    said = lead is not None and last_good is not None and f"resume from {last_good.name}" in lead.suggestion
    if analysis.first_bad_checkpoint is not None and last_good is not None and not said:
        parts.append(f"resume from {last_good.name} (step {last_good.step}), not from a later checkpoint")
    if not parts and first is not None and first.kind in SUMMARY_KINDS:
        # a doubt about the whole log has no step to zoom on ("look at the steps around 0" of a run with no loss line)
        parts.append("the finding above is about the whole log, not one step: act on the check it names")
    elif not parts and first is not None:
        parts.append(f"look at the steps around {first.step} (the report's zoomed plot shows them)")
    if not parts:
        parts.append("read the findings one by one")
    return "Next: " + "; ".join(parts) + "."


def _nothing_wrong(findings) -> str:
    """A healthy run's "nothing found", true beside the Info rows the report shows above it: those are notes, not
    "no finding was raised"."""
    if not findings:
        return "No finding was raised in the logs or checkpoints that were read."
    # an abandoned attempt's warnings are no notes: the paragraph after this one says them (junkwhinger's 4)
    notes = [f for f in findings if not f.abandoned]
    if not notes:
        return "No problem was found in the final history of the logs and checkpoints that were read."
    return (f"No problem was found in the logs or checkpoints that were read "
            f"({plural(len(notes), 'note')} for information only).")


def _answer_health(analysis) -> Answer:
    first = analysis.first_incident
    abandoned = [f for f in analysis.findings if f.abandoned]
    if first is None and analysis.status == "healthy":
        paragraphs = [f"Yes. {_learned(analysis.learning)}{_nothing_wrong(analysis.findings)}"]
    elif first is None:
        paragraphs = [f"Not quite: the run is marked {analysis.status}, "
                      f"with {plural(len(analysis.findings), 'finding')} but no single first incident."]
    else:
        state = "is broken" if analysis.status == "broken" else "needs a look"
        paragraphs = [f"No, the run {state}. " + (f"The log does not show that it learned: {first.message}"
                      if first.kind in SUMMARY_KINDS else
                      f"The first thing that went wrong was at step {first.step}: {first.message}")]
    if abandoned:
        paragraphs.append(f"{plural(len(abandoned), 'finding')} happened only in attempts that a later one "
                          "threw away (a resume, or a new launch logged over the same steps) and "
                          f"{'does' if len(abandoned) == 1 else 'do'} not affect the final history.")
    return Answer(QUESTIONS[0], tuple(paragraphs))


def incident_chain(findings: list[Finding], first: Finding | None) -> list[Finding]:
    """The findings that followed `first`: those linked to it through `caused_by`, in step order.

    Without any `caused_by` link, the later standing (not abandoned) warnings and errors stand in.
    """
    if first is None:
        return []
    # Follow links until nothing new joins: at one step an effect may sort before its cause.
    linked_keys, grew = {first.key}, True
    while grew:
        new = {f.key for f in findings if f.caused_by in linked_keys} - linked_keys
        linked_keys |= new
        grew = bool(new)
    chain = [f for f in findings if f is not first and f.key in linked_keys and f.key != first.key]
    if chain:
        return chain
    return [f for f in findings if f is not first and not f.abandoned and f.severity != "info"
            and f.step >= first.step]


def _answer_chain(analysis) -> Answer:
    chain = incident_chain(analysis.findings, analysis.first_incident)
    if analysis.first_incident is None:
        return Answer(QUESTIONS[1], ("Nothing: there was no incident to follow.",))
    if not chain:
        return Answer(QUESTIONS[1], ("Nothing else was found after it.",))
    bullets = tuple(f"step {f.step}: {f.message}" for f in chain[:MAX_CHAIN])
    paragraphs = [f"{plural(len(chain), 'later finding')} followed from it:"]
    if len(chain) > MAX_CHAIN:
        paragraphs.append(f"(the first {MAX_CHAIN} are listed; the findings table has them all)")
    return Answer(QUESTIONS[1], tuple(paragraphs), bullets)


def answer_checkpoints(analysis) -> Answer:
    checkpoints: list[CheckpointInfo] = analysis.checkpoints
    if not checkpoints:
        return Answer(QUESTIONS[2], ("No checkpoint was checked (none was found, or the check was turned off).",))
    last_good, first_bad = analysis.last_good_checkpoint, analysis.first_bad_checkpoint
    paragraphs = []
    if first_bad is None:
        paragraphs.append(("The one readable checkpoint holds finite weights." if len(checkpoints) == 1 else
                           f"All {len(checkpoints)} readable checkpoints hold finite weights.")
                          if last_good else "No checkpoint could be confirmed good.")
    else:
        safe = f"{last_good.name} (step {last_good.step}) is the last good one" if last_good \
            else "no checkpoint before it is good"
        paragraphs.append(f"{first_bad.name} (step {first_bad.step}) is the first with non-finite weights; {safe}.")
        if first_bad.nonfinite_blocks:
            paragraphs.append(f"Damaged in {first_bad.name}: {block_ranges(first_bad.nonfinite_blocks)} "
                              f"({plural(len(first_bad.nonfinite_tensors), 'tensor')} with NaN or Inf).")
        later_bad = [c for c in checkpoints if c.is_nonfinite and c is not first_bad]
        if later_bad:
            one = len(later_bad) == 1
            paragraphs.append(f"{plural(len(later_bad), 'later checkpoint')} {'is' if one else 'are'} damaged too; "
                              f"do not resume from {'it' if one else 'them'}.")
    incident = analysis.incident_step
    unsafe = [c.name for c in checkpoints if c.status == "ok" and incident is not None
              and (c.step is None or c.step >= incident)]
    if unsafe:
        safe = f"{last_good.name} (step {last_good.step})" if last_good else "none"
        paragraphs.append(f"Last safe to resume from: {safe}. Finite, but saved after the incident at step "
                          f"{incident} (resuming from {'it' if len(unsafe) == 1 else 'them'} resumes the incident): "
                          f"{', '.join(unsafe)}.")
    bullets = tuple(f"{c.name}: {c.status}" + (f" ({c.reason})" if c.reason else "")
                    for c in checkpoints if c.status in ("unreadable", "empty"))
    return Answer(QUESTIONS[2], tuple(paragraphs), bullets)


MAX_EVIDENCE = 3


def _cause_paragraph(analysis, cause, lead) -> str:
    """A cause shown with its change: what hid the trouble and notes on the log say which they are."""
    role = cause_role(analysis.first_incident, cause, lead)
    if role == "about_the_log":
        prefix = ("About the log, not the first incident: " if cause.cause in LOGGING_CAUSES
                  else "A note, not a cause of the first incident: ")
    else:
        prefix = "What hid it: " if role == "hid_the_cause" else ""
    return f"{prefix}{cause.title or cause.cause} ({cause.confidence}). What to change: {cause.suggestion}"


def _answer_cause(analysis) -> Answer:
    if analysis.causes:
        lead = leading_cause(analysis.causes, analysis.first_incident)
        shown = ([lead] if lead is not None else []) + [c for c in analysis.causes
                                                         if c is not lead and c.confidence == "likely"]
        possible = [c for c in analysis.causes if c not in shown]
        paragraphs = [_cause_paragraph(analysis, c, lead) for c in shown]
        if possible:
            paragraphs.append(f"{'Also possible' if shown else 'Possible'}: "
                              + "; ".join(c.title or c.cause for c in possible) + ".")
        # The evidence of the causes shown only, a few lines each: the report's causes table has it all.
        bullets = [f"{c.title or c.cause}: {e}" for c in shown for e in c.evidence[:MAX_EVIDENCE]]
        bullets += list(_conflicts(analysis.config))
        return Answer(QUESTIONS[3], tuple(paragraphs), tuple(bullets))
    if analysis.status == "healthy":
        return Answer(QUESTIONS[3], ("Nothing to explain.",))
    paragraphs = ["No cause could be pinned down from the run's own files."]
    known = list(_known_config(analysis.config))
    missing = list(analysis.config.missing)
    bullets = known + list(_conflicts(analysis.config)) + ([f"not found: {', '.join(missing)}"] if missing else [])
    lead = _what_the_list_holds(bool(known), bool(missing))
    return Answer(QUESTIONS[3], tuple(paragraphs + [lead] * bool(lead)), tuple(bullets))


def _what_the_list_holds(known: bool, missing: bool) -> str:
    """One lead-in for the list below it, in the list's order (settings read, then what was not found): two
    sentences in a row over one list read as if the settings were the missing evidence."""
    if known and missing:
        return ("What is known of its configuration, then the evidence that was missing (saving it with the run "
                "would help next time):")
    if known:
        return "What is known of its configuration:"
    return "Some evidence was missing; saving it with the run would help next time:" if missing else ""


def _conflicts(config) -> Iterable[str]:
    for key, seen in config.conflicts().items():
        said = "; ".join(f"{v.value!r} in {v.source}" for v in seen)
        yield f"the run's files disagree on {key}: {said}"


def _known_config(config) -> Iterable[str]:
    for key in KNOWN_KEYS:
        if key in config.values:
            yield f"{key} = {config.get(key)!r} (from {config.source_of(key)})"
