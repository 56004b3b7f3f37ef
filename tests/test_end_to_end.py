"""`forensics.analyze` on runs made by the real Trainer that the tool has never seen.

Every expected value comes from the run's facts (how it was made), not from the tool's output.
"""
import pytest

import forensics


def errors(analysis):
    return [f for f in analysis.findings if f.severity == "error" and not f.abandoned]


def test_healthy_run_is_healthy_with_every_checkpoint_ok(healthy_run):
    path, facts = healthy_run
    a = forensics.analyze(path, workers=1)
    assert a.status == "healthy"
    assert a.first_incident is None
    assert [f for f in a.findings if f.severity != "info"] == []
    assert {c.name for c in a.checkpoints} == set(facts.checkpoints)
    assert {c.status for c in a.checkpoints} == {"ok"}
    assert all(c.confidence == "possible" for c in a.causes)


def test_nan_run_first_incident_step_and_checkpoints(nan_run):
    path, facts = nan_run
    a = forensics.analyze(path, workers=1)
    assert a.status == facts.expected_status == "broken"
    assert a.first_incident.step == facts.first_nonfinite_step
    masked = [f for f in a.findings if f.kind == "masked_nan_loss"]
    assert masked and masked[0].step == facts.first_masked_loss_step
    assert a.last_good_checkpoint.name == facts.last_good_checkpoint
    assert a.first_bad_checkpoint.name == facts.first_bad_checkpoint
    assert a.first_bad_checkpoint.nonfinite_blocks == list(facts.poisoned_blocks)
    weights = [f for f in a.findings if f.kind == "nonfinite_weights"]
    assert weights and weights[0].step == facts.checkpoints[facts.first_bad_checkpoint]["step"]
    assert root_of(weights[0], a.findings) == a.first_incident  # the damage joins the incident chain


def root_of(finding, findings):
    by_key = {f.key: f for f in findings}
    while finding.caused_by in by_key:
        finding = by_key[finding.caused_by]
    return finding


def test_spike_run_is_a_warning_with_a_recovered_spike_at_the_injected_step(spike_run):
    path, facts = spike_run
    a = forensics.analyze(path, workers=1)
    assert a.status == facts.expected_status == "warning"
    assert a.first_incident.kind == "grad_norm_spike"
    assert a.first_incident.step == facts.spike_steps[0]
    assert a.first_incident.evidence["recovered"] is True
    assert errors(a) == []


def test_lr_blowup_is_broken_and_starts_where_the_lr_changed(lr_blowup_run):
    path, facts = lr_blowup_run
    a = forensics.analyze(path, workers=1)
    assert not facts.has_root_trainer_state  # the crashed-run layout: only checkpoint copies and TB
    assert a.status == "broken"
    # The root is the logged jump of the learning rate itself, at or before the first loss it spoiled.
    assert a.first_incident.kind == "lr_anomaly"
    assert facts.lr_change_step <= a.first_incident.step <= facts.injected[0]["log_step"]
    causes = [c.cause for c in a.causes if c.confidence == "likely"]
    assert "lr_too_high" in causes


def test_early_collapse_run_links_the_early_spike_to_the_collapse(collapse_run):
    path, facts = collapse_run
    a = forensics.analyze(path, workers=1)
    assert a.status == "broken"
    collapse = [f for f in a.findings if f.kind == "loss_collapse"]
    assert collapse, [f.kind for f in a.findings]
    assert a.first_incident.kind == "grad_norm_spike"
    assert a.first_incident.step == facts.injected[0]["log_step"]


def test_resumed_run_reports_the_nan_as_in_an_abandoned_attempt(resumed_run):
    path, facts = resumed_run
    a = forensics.analyze(path, workers=1)
    assert a.status == facts.expected_status == "warning"
    assert a.first_incident.abandoned
    assert a.first_incident.step == facts.first_nonfinite_step
    assert errors(a) == []
    assert any(s["abandoned"] for s in a.to_dict()["segments"])
    final_steps = set(a.timeline.series("loss").index)
    assert set(facts.logged_steps) <= final_steps


@pytest.mark.parametrize("fixture", ["bf16_run", "gpt2_run", "lora_run"])
def test_checkpoint_variants_name_last_good_first_bad_and_blocks(fixture, request):
    path, facts = request.getfixturevalue(fixture)
    a = forensics.analyze(path, workers=1)
    assert a.status == "broken"
    assert a.last_good_checkpoint.name == facts.last_good_checkpoint
    assert a.first_bad_checkpoint.name == facts.first_bad_checkpoint
    assert a.first_bad_checkpoint.nonfinite_blocks == list(facts.checkpoints[facts.first_bad_checkpoint]["nonfinite_blocks"])


def test_gpt2_run_reports_exactly_blocks_21_to_23(gpt2_run):
    path, facts = gpt2_run
    a = forensics.analyze(path, workers=1)
    assert a.first_bad_checkpoint.nonfinite_blocks == ["transformer.h.21", "transformer.h.22", "transformer.h.23"]
    assert list(facts.poisoned_blocks) == ["transformer.h.21", "transformer.h.22", "transformer.h.23"]


def test_bisect_between_first_and_last_checkpoint_of_the_nan_run(nan_run):
    path, facts = nan_run
    names = sorted(facts.checkpoints, key=lambda n: facts.checkpoints[n]["step"])
    result = forensics.bisect(path / names[0], path / names[-1])
    assert result.last_good.name == facts.last_good_checkpoint
    assert result.first_bad.ref.name == facts.first_bad_checkpoint
    assert result.first_bad.nonfinite_blocks == list(facts.poisoned_blocks)
    lo, hi = facts.checkpoints[facts.last_good_checkpoint]["step"], facts.checkpoints[facts.first_bad_checkpoint]["step"]
    assert result.findings and all(lo < f.step <= hi for f in result.findings)
