"""Sentences of the report read as the run's owner would, a second sample (session 32, fx-readout32: the first 45
corpus cases whose name's sha1 starts with 0 or 1, and the 5 newest, read against their own files).

* Abdelmanemm_Fine_Tunning_GPT2: "stays flat inside the later passes (each pass's start -> end: 3.452 -> 3.192,
  2.536 -> 2.535, 2.048 -> 2.07)" listed the first pass too, with a start (3.452) that contradicts the 3.72 the same
  sentence gave it: only the later passes are listed.
* gouqi666_deep-speed-chat: "1 update skipped by the fp16 loss scaler from step 3 (isolated overflows ...): ... those
  batches taught the model nothing" and the cause's "optimizer steps skipped from step 3": one skip is said as one.
* GU-DY_chattest: "What is known of its configuration:" then "Some evidence was missing; ..." then the settings read:
  the settings read as the missing evidence. One lead-in now says what the list holds, in its order.
* GU-DY_chattest: "... (memorization ...). Check the eval loss and the dataset size." of a run that logs no eval
  loss: where none is logged, the advice is to log one.
* 2025DL-TEAM3_skeleton_hw: a healthy run whose report shows an Info row was told "No finding was raised".
* BuonHobo_fake-gpt: "it averaged 0.5231 over the first logged point and 0.07667 over the last one" of a
  3-point reward: one point at each end is said as one.
* FPT-VVU_ViVidBot_fp16: "the fp16 loss scale fell to its floor 1 at step 18 after 0 overflows" beside "every step
  overflowed": no overflow line read is no count of 0.
* AugustinCombes_icu_MLM, FluffyAIcode_AgentMemorySystem (loops of their own): "log more often, e.g.
  logging_steps=10", "Log the loss (logging_steps)": logging_steps is the HF Trainer's; said now for any loop.
* AliN75_Memorization, AbrahamKong_CMPE297: "Next: look at the steps around 0" of a doubt about the whole log;
  gouqi666_deep-speed-chat: "1 finding happened only in attempts ... and do not affect".
* AbrahamKong_CMPE297 (QLoRA of a chat model): "whether training started from an already trained model" - every
  fine-tune does; what flattens a loss is a model already trained on this data.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import forensics
from forensics.analysis import Analysis
from forensics.analyzers.collapse import detect_loss_collapse
from forensics.analyzers.learning_evidence import detect_no_learning_evidence
from forensics.analyzers.overflow import detect_loss_scale_overflow
from forensics.causes.evidence import Facts
from forensics.causes.precision import fp16_overflow
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.report.story import build_story
from forensics.report.text import analysis_text
from forensics.timeline import Timeline

TH = Thresholds()
CORPUS = Path(__file__).resolve().parent / "realworld"


# ---- the later passes of a staircase are the later passes -------------------------------------------------------------

def _staircase_log() -> dict:
    """Abdelmanemm's shape: a first pass that learns 4.2 -> 3.6, then 0.6 lower at each pass start, flat inside."""
    epoch_len, every = 1320, 50
    step = np.arange(3 * epoch_len)
    epoch, done = np.divmod(step, epoch_len)
    level = np.where(epoch == 0, 4.2 - 0.6 * done / epoch_len, 3.6 - 0.6 * epoch - 0.03 * done / epoch_len)
    per_step = level + np.random.default_rng(0).normal(0.0, 0.04, len(step))
    windows = per_step[: len(step) // every * every].reshape(-1, every)
    at = np.arange(1, len(windows) + 1) * every
    return {"loss": pd.Series(np.round(windows.mean(axis=1), 4), index=at),
            "epoch": pd.Series(np.round(at / epoch_len, 4), index=at)}


def test_the_passes_said_flat_are_only_the_later_ones():
    [found] = [f for f in detect_loss_collapse(_staircase_log(), TH) if f.kind == "memorization"]
    listed = found.message.split("each pass's start -> end: ")[1].split(")")[0]
    assert listed.count("->") == 2, found.message  # passes 2 and 3, not the first
    first_pass = found.message.split("whole first pass's fall (")[1].split(",")[0]
    assert first_pass.split(" -> ")[1] not in listed.split(",")[0].split(" -> ")[1:], found.message


# ---- one skipped update is one --------------------------------------------------------------------------------------

def _overflows(steps: list[int]) -> dict:
    at = np.asarray(steps, dtype="int64")
    return {"overflow": pd.Series(np.ones(len(at)), index=at),
            "loss_scale": pd.Series(65536.0 / 2.0 ** np.arange(1, len(at) + 1), index=at)}


def _fp16_evidence(found: Finding) -> list[str]:
    """The fp16-overflow cause's evidence lines for a run with fp16 on and `found` its only finding."""
    config = RunConfig()
    config.add("fp16", True, "training_args.bin")
    facts = Facts(config=config, timeline=Timeline.empty(), findings=[found], checkpoints=[], thresholds=TH)
    return list(fp16_overflow(facts).evidence)


def test_one_deepspeed_overflow_is_said_as_one_skipped_update():
    [found] = detect_loss_scale_overflow(_overflows([3]), TH)
    assert "1 update skipped by the fp16 loss scaler at step 3 (an isolated overflow" in found.message, found.message
    assert "that batch taught" in found.message and "those" not in found.message, found.message
    assert "an optimizer step skipped at step 3" in _fp16_evidence(found), _fp16_evidence(found)


def test_several_deepspeed_overflows_are_still_said_as_several():
    [found] = detect_loss_scale_overflow(_overflows([1, 2, 1000, 2000]), TH)
    assert "4 updates skipped by the fp16 loss scaler from step 1 (isolated overflows" in found.message
    assert "those batches taught" in found.message, found.message
    assert "optimizer steps skipped from step 1" in _fp16_evidence(found), _fp16_evidence(found)


# ---- the list under "no cause" is said as what it holds ---------------------------------------------------------------

def _no_cause(tmp_status: str = "warning", known: bool = True, missing: bool = True) -> list[str]:
    config = RunConfig()
    if known:
        config.add("learning_rate", 2e-4, "training_args.bin")
    if missing:
        config.missing.append("no readable config.json: model size unknown")
    first = Finding("memorization", "warning", 10, "the loss went to 0.", metric="loss")
    analysis = Analysis(path=".", status=tmp_status, findings=[first], first_incident=first,
                        timeline=Timeline.empty(), config=config)
    answer = build_story(analysis).answers[3]
    return list(answer.paragraphs)


def test_settings_read_and_evidence_missing_get_one_lead_in_in_the_list_s_order():
    paragraphs = _no_cause()
    assert paragraphs[1:] == ["What is known of its configuration, then the evidence that was missing (saving it "
                              "with the run would help next time):"], paragraphs


def test_settings_alone_and_missing_evidence_alone_keep_their_own_lead_in():
    assert _no_cause(missing=False)[1:] == ["What is known of its configuration:"]
    assert _no_cause(known=False)[1:] == ["Some evidence was missing; saving it with the run would help next time:"]
    assert _no_cause(known=False, missing=False)[1:] == []


# ---- no "check the eval loss" of a run that logged none --------------------------------------------------------------

def _gradual_to_zero(eval_loss: bool) -> dict:
    """A loss that descends gradually to ~0.0006 over 300 logged steps, grad_norm finite and non-zero."""
    at = np.arange(1, 301) * 10
    loss = np.round(2.0 * np.exp(-at / 300.0) + 0.0005, 4)
    metrics = {"loss": pd.Series(loss, index=at), "grad_norm": pd.Series(0.5 + 0.01 * (at % 7), index=at)}
    if eval_loss:
        metrics["eval_loss"] = pd.Series([2.6, 2.7, 2.9], index=[1000, 2000, 3000])
    return metrics


def test_memorization_without_an_eval_loss_advises_logging_one():
    found = [f for f in detect_loss_collapse(_gradual_to_zero(False), TH) if f.kind == "memorization"]
    assert found and all("Check the eval loss" not in f.message for f in found), [f.message for f in found]
    assert "No eval loss was logged: log one" in found[0].message, found[0].message


def test_memorization_beside_an_eval_loss_still_says_check_it():
    found = [f for f in detect_loss_collapse(_gradual_to_zero(True), TH) if f.kind == "memorization"]
    assert found and "Check the eval loss and the dataset size." in found[0].message, [f.message for f in found]


# ---- a healthy run's notes are not "no finding" ----------------------------------------------------------------------

def _healthy(findings: list[Finding]) -> str:
    analysis = Analysis(path=".", status="healthy", findings=findings, first_incident=None,
                        timeline=Timeline.empty())
    return build_story(analysis).answers[0].paragraphs[0]


def test_a_healthy_run_with_an_info_note_is_not_told_no_finding_was_raised():
    note = Finding("loss_spike", "info", 460, "141 single-batch loss spikes.", metric="loss")
    said = _healthy([note])
    assert "No finding was raised" not in said, said
    assert "No problem was found in the logs or checkpoints that were read (1 note for information only)." in said


def test_an_abandoned_attempts_warnings_are_not_counted_as_notes_for_information():
    """junkwhinger_babynames_generator (healthy): its 4 findings are warnings of attempts a later launch threw away,
    said in the next paragraph; they are no 'notes for information only'."""
    thrown = Finding("divergence", "warning", 5, "loss diverged.", metric="loss", abandoned=True)
    note = Finding("loss_spike", "info", 460, "141 single-batch loss spikes.", metric="loss")
    assert "note" not in _healthy([thrown]), _healthy([thrown])
    assert "No problem was found in the final history" in _healthy([thrown])
    assert "(1 note for information only)" in _healthy([thrown, note])


def test_a_healthy_run_without_findings_still_says_none_was_raised():
    assert "No finding was raised in the logs or checkpoints that were read." in _healthy([])


# ---- a flat loss: "already trained on this data", not "an already trained model" -------------------------------------

def test_the_flat_loss_advice_asks_about_this_data_not_a_trained_model():
    at = np.arange(1, 251)  # AbrahamKong's 250 per-step points of a batch of 4: noise about a level, no descent
    metrics = {"loss": pd.Series(1.4 + np.random.default_rng(0).normal(0.0, 0.2, len(at)), index=at)}
    [found] = detect_no_learning_evidence(metrics, TH)
    assert "started from a model already trained on this data (a resumed or re-used checkpoint)" in found.message
    assert "an already trained model" not in found.message, found.message


# ---- a reward's ends: a single point is not "averaged" -----------------------------------------------------------------

def _reward_log(reward: list[float]) -> dict:
    at = np.arange(len(reward))
    return {"reward": pd.Series(reward, index=at, dtype="float64"), "loss": pd.Series(0.01, index=at)}


def test_a_three_point_reward_s_ends_are_said_as_single_points():
    # BuonHobo_fake-gpt: "it averaged 0.5231 over the first logged point and 0.07667 over the last one"
    [found] = detect_no_learning_evidence(_reward_log([0.5231, 0.30, 0.07667]), TH)
    assert "it was 0.5231 at its first logged point and 0.07667 at its last (3 points" in found.message, found.message
    assert "averaged" not in found.message, found.message


def test_a_longer_reward_s_ends_are_still_averages_over_its_quarters():
    reward = list(0.5 + 0.2 * np.random.default_rng(1).normal(size=40))
    [found] = detect_no_learning_evidence(_reward_log(reward), TH)
    assert "averaged 0.545 over the first 10 logged points and 0.5419 over the last 10 (40 points" in found.message


# ---- a floor reached with no overflow line read is no "after 0 overflows" ---------------------------------------------

def test_a_scale_at_its_floor_with_no_overflow_line_read_does_not_say_after_0_overflows():
    # FPT-VVU_ViVidBot_fp16: "the fp16 loss scale fell to its floor 1 at step 18 after 0 overflows" of a run where
    # every step overflowed (DeepSpeed's minimum-scale line read, no OVERFLOW line)
    [found] = detect_loss_scale_overflow({"loss_scale_at_minimum": pd.Series([1.0], index=[18])}, TH)
    assert "fell to its floor 1 at step 18: every step overflows" in found.message, found.message
    assert "0 overflows" not in found.message, found.message


def test_a_scale_at_its_floor_after_overflows_read_still_counts_them():
    metrics = {"overflow": pd.Series(1.0, index=np.arange(100, 117)),
               "loss_scale": pd.Series(65536.0 / 2.0 ** np.arange(1, 18), index=np.arange(100, 117))}
    [found] = detect_loss_scale_overflow(metrics, TH)
    assert "at step 115 after 17 overflows: every step overflows" in found.message, found.message


# ---- "log more often" said for any loop, not as the HF Trainer's logging_steps alone --------------------------------

def test_too_few_points_is_told_to_log_more_often_in_any_loop_s_terms():
    # AugustinCombes_icu_MLM (a notebook's own loop, one loss line): "(log more often, e.g. logging_steps=10)"
    [found] = detect_no_learning_evidence({"loss": pd.Series([2.5], index=[100])}, TH)
    assert "log more often: every 10 steps or so; logging_steps in the Hugging Face Trainer, a print in a loop of " \
           "one's own" in found.message, found.message


def test_a_log_with_no_loss_is_told_to_log_one_in_any_loop_s_terms():
    # FluffyAIcode_AgentMemorySystem (train_v344.py's own jsonl): "Log the loss (logging_steps)"
    [found] = detect_no_learning_evidence({"dt": pd.Series([0.5, 0.6], index=[0, 1])}, TH)
    assert "Log the loss (every 10 steps or so; logging_steps in the Hugging Face Trainer, a print in a loop of " \
           "one's own)" in found.message, found.message


# ---- "Next" of a doubt about the whole log; one abandoned finding ----------------------------------------------------

def _story(first: Finding, findings: list[Finding] | None = None):
    return build_story(Analysis(path=".", status="warning", findings=findings or [first], first_incident=first,
                                timeline=Timeline.empty()))


def test_a_doubt_about_the_whole_log_is_not_sent_to_the_steps_around_its_first_point():
    # AliN75_Memorization ("look at the steps around 0" of a run with no loss line), AbrahamKong ("around 1")
    doubt = Finding("no_learning_evidence", "warning", 0, "no training loss was logged.", metric="loss")
    next_step = _story(doubt).next_step
    assert "steps around" not in next_step, next_step
    assert next_step == "Next: the finding above is about the whole log, not one step: act on the check it names."


def test_a_dated_incident_is_still_sent_to_the_steps_around_it():
    spike = Finding("loss_spike", "warning", 20, "loss spikes.", metric="loss")
    assert _story(spike).next_step == "Next: look at the steps around 20 (the report's zoomed plot shows them)."


def test_one_abandoned_finding_does_not_affect_the_history():
    # gouqi666_deep-speed-chat's HTML: "1 finding happened only in attempts ... and do not affect the final history"
    first = Finding("loss_spike", "warning", 20, "loss spikes.", metric="loss")
    gone = Finding("loss_spike", "warning", 5, "loss spikes.", metric="loss", abandoned=True)
    said = " ".join(_story(first, [first, gone]).answers[0].paragraphs)
    assert "1 finding happened only in attempts" in said and "and does not affect the final history." in said, said


# ---- the corpus cases read, as their owners see them --------------------------------------------------------------------

def test_the_corpus_deepspeed_console_s_skips_are_all_said():
    # it said "1 update skipped ... at step 3": its 13 OVERFLOW lines had all been dated by a loading bar's 2/2
    text = " ".join(analysis_text(forensics.analyze(CORPUS / "gouqi666_deep-speed-chat")).split())
    assert "13 updates skipped by the fp16 loss scaler from step 0" in text and "those batches" in text, text


def test_one_deepspeed_overflow_is_said_as_one():
    import pandas as pd
    from forensics.analyzers.overflow import detect_loss_scale_overflow
    from forensics.config import Thresholds
    metrics = {"overflow": pd.Series([1.0], index=[3]), "loss_scale": pd.Series([32768.0], index=[3]),
               "loss": pd.Series([2.0] * 50, index=range(50))}
    (found,) = detect_loss_scale_overflow(metrics, Thresholds())
    assert found.message.startswith("1 update skipped by the fp16 loss scaler at step 3 (an isolated overflow")
    assert "that batch taught" in found.message, found.message


def test_the_corpus_memorization_without_eval_is_told_to_log_one():
    first = forensics.analyze(CORPUS / "GU-DY_chattest").first_incident
    assert first.kind == "memorization" and "No eval loss was logged: log one" in first.message, first.message
