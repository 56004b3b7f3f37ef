"""The metric analyzers: every detector over a run's timeline, the chain, the verdict.

    findings = run_all(timeline, Thresholds())
    status_of(findings)          # "healthy" | "warning" | "broken"
    first_incident_of(findings)  # the finding that explains the rest, or None

Each detector is a pure function `(metrics, thresholds) -> list[Finding]` in its own module,
reading `Metrics` (one Series per metric, only logged points, NaN kept; see `metrics`).
They run on the final history and again on each attempt a resume threw away; findings from
those attempts are marked `abandoned` and are never worse than a warning. Only an abandoned attempt's errors
count toward the status (`sets_the_status`); its warnings are the run's history, listed, not its state.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..config import Thresholds
from ..findings import THROWN_AWAY, Finding, sort_findings
from ..timeline import Timeline
from .accuracy_at_zero import detect_accuracy_at_zero
from .chain import link_chain
from .collapse import detect_loss_collapse
from .divergence import detect_divergence
from .grad_norm_level import detect_huge_grad_norm
from .grad_spike import detect_grad_norm_spikes
from .impossible_loss import detect_impossible_loss
from .learning_evidence import detect_no_learning_evidence
from .loss_accuracy import detect_loss_accuracy_mismatch
from .lr_anomaly import detect_lr_anomalies
from .loss_spike import detect_loss_spikes
from .masked_nan import detect_masked_nan_loss
from .metrics import Metrics, RLMetrics, metrics_from_rows
from .never_learned import detect_never_learned
from .nonfinite import detect_nonfinite_metrics, told_by_a_summary_alone
from .overfitting import detect_overfitting, fold_memorization
from .overflow import detect_loss_scale_overflow
from .padded_labels import KIND as LABELS_INCLUDE_PADDING
from .policy_collapse import detect_policy_collapse
from .dead_reward import detect_dead_reward_signal, detect_zero_loss_no_spread
from .first_pass_eval import detect_eval_above_first_pass
from .frozen import detect_no_gradient, detect_repeated_epoch_losses, detect_rl_gradient_gone
from .frozen_loss import detect_frozen_loss
from .generation_scores import detect_generation_score_collapse, never_learned_by_the_score
from .reward_decline import detect_reward_decline
from .skipped_steps import detect_skipped_steps, detect_zero_grad_steps, skipped_step_points
from .crash import detect_crash, detect_unlogged_nonfinite
from .sources import detect_source_disagreements
from .train_eval_gap import detect_eval_above_train, detect_train_eval_mismatch, fold_jump_into_mismatch
from .zero_held_out import detect_zero_held_out

__all__ = ["run_all", "analyze_metrics", "status_of", "first_incident_of", "metrics_from_rows"]

# Facts of the run's own code about what its loss measures (labels that count padding): no moment in the log, and
# what the log itself shows, an event or a judgement of the whole log, explains the run first.
CODE_FACTS = frozenset({LABELS_INCLUDE_PADDING})
# Judgements of the whole log, not events: what a report says as what is unknown, not as a step where it went wrong.
SUMMARY_KINDS = frozenset({"no_learning_evidence"}) | CODE_FACTS
# Findings about the log files rather than the training, or about the whole log rather than one moment in it:
# first only when no event is worse or as bad.
ABOUT_THE_LOGS = SUMMARY_KINDS | {"source_disagreement", "train_eval_mismatch", "accuracy_at_zero"}

DETECTORS = (
    detect_skipped_steps, detect_zero_grad_steps, detect_masked_nan_loss, detect_loss_collapse, detect_grad_norm_spikes,
    detect_loss_spikes, detect_divergence, detect_loss_scale_overflow, detect_impossible_loss, detect_lr_anomalies,
    detect_never_learned, detect_overfitting, detect_reward_decline, detect_dead_reward_signal,
    detect_train_eval_mismatch, detect_eval_above_train, detect_huge_grad_norm, detect_no_gradient,
    detect_loss_accuracy_mismatch, detect_repeated_epoch_losses, detect_rl_gradient_gone, detect_zero_loss_no_spread,
    detect_accuracy_at_zero, detect_eval_above_first_pass, detect_frozen_loss, detect_policy_collapse,
    detect_generation_score_collapse, detect_zero_held_out,
)


def analyze_metrics(metrics: Metrics, thresholds: Thresholds) -> list[Finding]:
    """Every detector over one history, chain linked; returns the findings sorted."""
    skipped = skipped_step_points(metrics, thresholds)
    findings = detect_nonfinite_metrics(metrics, thresholds, skipped)
    for detect in DETECTORS:
        findings += detect(metrics, thresholds)
    findings = fold_jump_into_mismatch(fold_memorization(findings), metrics)
    return sort_findings(link_chain(findings, metrics, thresholds))


def run_all(timeline: Timeline, thresholds: Thresholds, rl: bool = False) -> list[Finding]:
    """Findings of the final history plus those of every abandoned attempt, sorted by step. `rl`: the run is known
    (from its configuration) to be RL, whatever its metric names say (`RLMetrics`)."""
    final = _read_as(metrics_from_rows(timeline.final()), rl)
    findings = told_by_a_summary_alone(analyze_metrics(final, thresholds), timeline.final())
    findings += detect_source_disagreements(timeline) + detect_crash(timeline)
    findings += detect_unlogged_nonfinite(timeline)
    if not any(f.severity == "error" for f in findings):  # a broken run needs no proof it did not learn
        doubts = detect_no_learning_evidence(final, thresholds)
        findings += doubts + never_learned_by_the_score(final, doubts)  # the task's own score may settle the doubt
    seen: set[tuple] = set()
    for from_step, rows in _abandoned_histories(timeline):
        thrown = [f for f in analyze_metrics(_read_as(metrics_from_rows(rows), rl), thresholds) if f.step >= from_step]
        kept_keys = {f.key for f in thrown}
        for f in thrown:
            key = (f.kind, f.step, f.metric)
            if key not in seen:
                seen.add(key)
                findings.append(_as_abandoned(f, kept_keys))
    return sort_findings(findings)


def _read_as(metrics: dict, rl: bool) -> Metrics:
    return RLMetrics(metrics) if rl else metrics


def _abandoned_histories(timeline: Timeline) -> list[tuple[int, pd.DataFrame]]:
    """For each attempt a resume cut short: (first thrown-away step, the history as it saw it).

    The history is the final rows before the cut (what it stood on) plus its own thrown-away rows.
    """
    out = []
    abandoned = timeline.abandoned()
    if abandoned.empty:
        return out
    final = timeline.final()
    for _, rows in abandoned.groupby("segment", sort=True):
        cut = int(rows["step"].min())
        history = pd.concat([final[final["step"] < cut], rows], ignore_index=True)
        out.append((cut, history))
    return out


# Evidence key of an abandoned finding that was an error in its own attempt (`_as_abandoned` makes it a warning)
ERROR_IN_ITS_ATTEMPT = "error_in_its_attempt"


def _as_abandoned(f: Finding, kept_keys: set[str]) -> Finding:
    """The finding marked abandoned, at most a warning (an error says so in its evidence), its cause kept only if that
    was kept too."""
    message = f.message.rstrip(".") + THROWN_AWAY
    evidence = {**f.evidence, ERROR_IN_ITS_ATTEMPT: True} if f.severity == "error" else f.evidence
    return replace(f, abandoned=True, severity="warning" if f.severity == "error" else f.severity, evidence=evidence,
                   message=message, caused_by=f.caused_by if f.caused_by in kept_keys else None)


def sets_the_status(f: Finding) -> bool:
    """Whether a finding counts toward the run's status: every standing one, and of an abandoned attempt only what
    broke it. The run is judged as it ended: a later launch or resume that stands replaced the attempt, so the
    attempt's warnings are history (junkwhinger_babynames_generator: 165 launches appended to one log, three early
    ones logging negative losses, the last one learning cleanly: healthy), while a run that went through a NaN or a
    divergence before it was resumed is one to look at, since the same cause may come back (a warning)."""
    return not f.abandoned or bool(f.evidence.get(ERROR_IN_ITS_ATTEMPT))


def status_of(findings: list[Finding]) -> str:
    """"broken" if any standing error, "warning" if any other warning or error that sets the status (an abandoned
    attempt's only where it was an error there: `sets_the_status`), else "healthy" (info does not count)."""
    counted = [f for f in findings if sets_the_status(f)]
    if any(f.severity == "error" and not f.abandoned for f in counted):
        return "broken"
    if any(f.severity in ("warning", "error") for f in counted):
        return "warning"
    return "healthy"


_AT_LEAST = {"broken": ("broken",), "warning": ("broken", "warning")}


def status_at_least(status: str | None, threshold: str) -> bool:
    """Whether a status is `threshold` ("broken" or "warning") or worse: what `--fail-on` exits 1 on. None (a store
    where no run could be analyzed) is neither."""
    return status in _AT_LEAST[threshold]


def first_incident_of(findings: list[Finding]) -> Finding | None:
    """The finding that explains the rest, or None when nothing is worse than info.

    The first standing error walked back along `caused_by` to the root of its chain; else the
    first standing warning (walked back the same way); abandoned findings only when nothing else, and only those
    that set the status (`sets_the_status`). A grad_norm spike that only opened a loss spike (`precursor_of`, see
    `chain`) gives its place to that loss spike.
    """
    # A summary of the whole log ("no evidence it learned") or two files disagreeing is not an event:
    # it is first only when no event is as bad; a fact of the code (`CODE_FACTS`) only when nothing of the log is.
    ordered = [f for f in sort_findings(findings) if f.kind not in ABOUT_THE_LOGS]
    ordered += [f for f in sort_findings(findings) if f.kind in ABOUT_THE_LOGS - CODE_FACTS]
    ordered += [f for f in sort_findings(findings) if f.kind in CODE_FACTS]
    for abandoned in (False, True):
        for severity in ("error", "warning"):
            pick = next((f for f in ordered if f.severity == severity and f.abandoned == abandoned
                         and sets_the_status(f)), None)
            if pick is not None:
                return _root_of(_told_by_the_loss(pick, ordered), ordered)
    return None


def _told_by_the_loss(pick: Finding, findings: list[Finding]) -> Finding:
    """The loss spike `pick` was the precursor of (the same event, as the owner saw it), or `pick` itself."""
    spike = pick.evidence.get("precursor_of")
    return next((f for f in findings if f.key == spike and f.abandoned == pick.abandoned), pick)


def _root_of(finding: Finding, findings: list[Finding]) -> Finding:
    by_key = {(f.key, f.abandoned): f for f in findings}
    seen = {finding.key}
    while finding.caused_by is not None:
        cause = by_key.get((finding.caused_by, finding.abandoned))
        if cause is None or cause.key in seen:
            break
        seen.add(cause.key)
        finding = cause
    return finding
