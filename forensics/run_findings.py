"""The findings of one run: every detector over its history and checkpoints, then the rules that need the kind of
run (its profile and configuration: an RL policy loss, a reward model's score, a pairwise loss, a classifier, fp16's
loss scaler, a loss logged summed over accumulation steps, the vocabulary's uniform guess).

`judge_run` is the judging step of `analysis.analyze_records`; `dated_by_optimizer_step` its last step, after the
causes are inferred.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .analyzers import metrics_from_rows, run_all
from .analyzers.chain import link_skipped_batches, link_weight_damage
from .analyzers.char_floor import CharCorpus, memorized_per_character
from .analyzers.classifier_at_chance import detect_classifier_at_chance
from .analyzers.cut_short import console_plan, detect_cut_short, end_accounted_for, exit_recorded
from .analyzers.early_overshoot import detect_early_overshoot
from .analyzers.early_stop_in_warmup import detect_early_stop_in_warmup, early_stop_said
from .analyzers.epoch_staircase import dated_at_the_pairs_return
from .analyzers.fine_tune_level import detect_fine_tune_far_above_text
from .analyzers.fine_tune_start import ADAPTER_METHODS, detect_start_above_uniform_guess, detect_start_near_the_guess
from .analyzers.fresh_cross_attention import detect_start_under_a_fresh_decoder
from .analyzers.impossible_loss import detect_loss_beyond_cross_entropy, link_impossible_start
from .analyzers.learning_evidence import detect_ended_near_the_guess, for_a_reward_model, without_the_score
from .analyzers.lr_lag import detect_skips_from_lr_lag, linear_fp16_schedule
from .analyzers.loaded_at_chance import detect_loaded_weights_at_chance
from .analyzers.megatron_cut import detect_megatron_cut
from .analyzers.memorization import dated_under_pretraining_floor, memorized_from_scratch
from .analyzers.metrics import LOSS, RLMetrics, finite, is_preference_log, real_loss
from .analyzers.never_learned import detect_dpo_loss_never_under_chance, detect_reward_model_at_chance
from .analyzers.tracker_exit import detect_unfinished_tracker_run
from .analyzers.optimizer_state import optimizer_findings, update_precursor
from .analyzers.padded_labels import detect_labels_include_padding, with_padding_caveat
from .analyzers.pairwise_loss import PAIRWISE_ALGORITHMS, for_a_pairwise_loss, pair_term_memorized
from .analyzers.pairwise_start import detect_pairwise_start_above_chance
from .analyzers.planned_restarts import without_planned_restarts
from .analyzers.redundant_doubts import without_doubt_after_never_learned, without_doubt_beside_a_zero_loss
from .analyzers.skipped_steps import as_scaler_skips
from .analyzers.stuck_at_guess import (detect_eval_at_the_guess, detect_no_update_at_the_guess,
                                      detect_stuck_at_vocabulary_guess, detect_stuck_from_scratch)
from .analyzers.subword_floor import SubwordCorpus, memorized_per_subword
from .analyzers.train_eval_gap import detect_train_eval_mismatch, summed_over_accumulation
from .analyzers.warmup_past_the_end import detect_warmup_past_the_end
from .analyzers.weights import last_step, weight_findings
from .analyzers.zero_in_first_epoch import for_a_classifier, for_a_language_model, for_epochs_over_a_sized_dataset
from .causes.logged_loss import stated_accumulation, summed_loss_factor, summed_over_unknown_accumulation
from .checkpoints.types import CheckpointInfo
from .checkpoints.updates import UpdateStep
from .config import RunConfig, Thresholds
from .findings import Finding, sort_findings
from .metric_names import OPTIMIZER_STEP
from .profile import RunProfile, run_profile
from .profile.model_start import encoder_decoder_model, megatron_trained_start, pretrained_base, warm_started_composite
from .profile.objective import classification_head
from .profile.objective_names import ROUGE_EVIDENCE
from .discover.run_layout import RunLayout
from .timeline import Timeline


def judge_run(layout: RunLayout, timeline: Timeline, config: RunConfig, checkpoints: list[CheckpointInfo],
              updates: list[UpdateStep], thresholds: Thresholds) -> tuple[list[Finding], dict, RunProfile]:
    """(findings, the metrics they were judged on, the run profile): the detectors, the profile from what they found,
    the same history judged again as an RL log where the profile says RL and the log names no RL metric, then the
    rules for the kind of run."""
    findings, metrics = _detected(timeline, config, checkpoints, updates, thresholds, rl=False)
    profile = run_profile(layout, config, timeline, findings)
    if profile.objective == "rl" and not is_preference_log(metrics):
        # an RL run (its configuration says so) whose log names no reward, KL or policy metric: its loss is the
        # policy-gradient objective, near 0 or under it by construction, not a cross-entropy to judge as one
        findings, metrics = _detected(timeline, config, checkpoints, updates, thresholds, rl=True)
    findings, metrics = _for_the_kind_of_run(findings, metrics, profile, config, thresholds)
    planned = _planned_length(config, timeline)
    findings = sort_findings(findings + _run_aware_findings(metrics, thresholds, profile, config, findings, planned,
                                                            not _loss_steps_inferred(timeline))
                             + (detect_cut_short(metrics, console_plan(timeline, metrics, planned[1]),
                                                 end_accounted_for(timeline, metrics), exit_recorded(timeline, metrics))
                                or _megatron_cut_unexplained(timeline, findings)
                                or detect_early_stop_in_warmup(metrics, early_stop_said(timeline)))
                             + detect_labels_include_padding(metrics, config.get("data.labels_include_padding"),
                                                             encoder_decoder_model(config))
                             + _loaded_at_chance(metrics, timeline, profile, config, findings))
    findings = sort_findings(findings + detect_unfinished_tracker_run(timeline, metrics, planned[1], findings))
    findings = without_planned_restarts(findings, (config.get("lr_scheduler_type"), config.get("ds.scheduler.type")),
                                        config.get("lr_scheduler_kwargs"))
    if config.get("loss.epoch_sum_unscaled"):
        findings = [f for f in findings if f.kind not in _LEVEL_KINDS]
    findings = with_padding_caveat(without_doubt_beside_a_zero_loss(without_doubt_after_never_learned(findings)))
    return link_impossible_start(findings, metrics), metrics, profile


def _loaded_at_chance(metrics, timeline: Timeline, profile: RunProfile, config: RunConfig,
                      findings: list[Finding]) -> list[Finding]:
    """`detect_loaded_weights_at_chance`, where no other finding already reads the run's start."""
    if any(f.kind in ("start_above_uniform_guess", "impossible_loss") for f in findings):
        return []
    return detect_loaded_weights_at_chance(metrics, megatron_trained_start(timeline), profile.method,
                                           config.get("model.vocab_size"))


def _loss_steps_inferred(timeline: Timeline) -> bool:
    """Whether a log the standing loss comes from had its steps numbered by the reader (meta `step_inferred`: dicts
    by their place or epoch, step-less lines in file order), not by the run's own update count."""
    final = timeline.final()
    sources = final.loc[final["metric"] == "loss", "source"].unique()
    return any(timeline.meta.get(source, {}).get("step_inferred") for source in sources)


# the findings judged on the loss's level (against ln V, under a memorization level), which a loss printed as an
# epoch's sum over a batch count the notebook does not tell cannot show (ingest/notebook_code/summed_loss.py): its
# shape is judged, not its level
_LEVEL_KINDS = ("start_above_uniform_guess", "impossible_loss", "memorization")


def _detected(timeline: Timeline, config: RunConfig, checkpoints: list[CheckpointInfo], updates: list[UpdateStep],
              thresholds: Thresholds, rl: bool) -> tuple[list[Finding], dict]:
    """Every detector over the final history (read as an RL log where `rl`), the checkpoints and the optimizer states,
    linked and sorted; and the metrics they read."""
    metrics = RLMetrics(metrics_from_rows(timeline.final())) if rl else metrics_from_rows(timeline.final())
    findings = run_all(timeline, thresholds, rl=rl) + weight_findings(checkpoints, timeline, thresholds)
    findings += optimizer_findings(checkpoints, last_step(timeline))
    findings += update_precursor(updates, checkpoints, findings)
    if _length_set_in_epochs(config):  # its epoch counter counts passes, though it ends inside the first
        findings = for_epochs_over_a_sized_dataset(findings, metrics, thresholds)
    if classification_head(config):
        findings = for_a_classifier(findings, metrics, thresholds)
    return sort_findings(link_weight_damage(findings)), metrics


def _for_the_kind_of_run(findings: list[Finding], metrics, profile: RunProfile, config: RunConfig,
                         thresholds: Thresholds) -> tuple[list[Finding], dict]:
    """The findings read again for what the run is: a reward model's score and its memorization's date, a pairwise
    loss's exact zeros, a language model's loss under 1 nat, a memorization from random weights dated by the
    pre-training floor (`_from_random_weights`; by the held-out level where the code builds its model), an fp16 run's
    zeros as the loss scaler's skipped steps."""
    if profile.objective == "reward":  # a printed `reward` is its score, not a return to rise
        findings, metrics = for_a_reward_model(findings, metrics, thresholds), without_the_score(metrics)
        findings = [dated_at_the_pairs_return(f, metrics) for f in findings]
    if profile.objective == "preference" and profile.algorithm in PAIRWISE_ALGORITHMS:
        findings = for_a_pairwise_loss(findings, metrics)  # its exact zeros cannot be masked labels
    if profile.objective in ("sft", "pretrain"):  # a loss under 1 nat is a language model's too
        findings = for_a_language_model(findings, metrics, thresholds)
    if _from_random_weights(profile, config, metrics):  # no fine-tune's levels
        loss, built_here = real_loss(metrics), bool(config.get("model.built_here"))
        findings = [dated_under_pretraining_floor(f, loss, built_here) for f in findings]
    if profile.precision == "fp16":  # a loss scaler ran, though the log does not show it: its zeros are skipped steps
        findings = link_skipped_batches(as_scaler_skips(findings, metrics, thresholds))
    return findings, metrics


def _from_random_weights(profile: RunProfile, config: RunConfig, metrics) -> bool:
    """A full pre-training run that names no trained model it starts from (`pretrained_base`, told by the first
    loss): the pre-training floor dates a memorization only where the model began knowing no text. Continued
    pre-training of a trained base (Miki-Palmisano_BLOOMZ-Solidity_Train, bigscience/bloomz-560m on Solidity code)
    starts below any from-scratch level, and its memorization keeps the date its own rule gave."""
    if profile.objective != "pretrain" or profile.method != "full":
        return False
    first = real_loss(metrics)
    return pretrained_base(config, float(first.iloc[0]) if len(first) else None) is None


def _megatron_cut_unexplained(timeline, findings: list[Finding]) -> list[Finding]:
    """A Megatron log that ends short of its plan - unless a crash already says why (its "no line saying why: no ...
    error" would deny the error the crash finding names; review 32c)."""
    return [] if any(f.kind == "run_crashed" for f in findings) else detect_megatron_cut(timeline)


def _fine_tune_of_a_trained_model(profile: RunProfile, config: RunConfig, base) -> bool:
    """An SFT stage or a named trained base, where the logged loss is a per-token mean (not a 4.46-4.47 Trainer's
    sum over accumulation steps no source records): a start above every vocabulary's guess is then the model's."""
    # A ROUGE score says the task, not the start: a seq2seq scored by it may be an mT5, whose span-corruption
    # pre-training makes its first fine-tuning losses run far above ln V (NijatZeynalov's 25.5, judged healthy)
    sft = profile.objective == "sft" and not profile.evidence.get("objective", "").startswith(ROUGE_EVIDENCE)
    return (sft or base is not None) and not summed_over_unknown_accumulation(config)


def _beyond_cross_entropy(metrics, vocab, framework: str | None, thresholds: Thresholds) -> list[Finding]:
    """`detect_loss_beyond_cross_entropy`, less where the training loss is another quantity than the eval loss at every
    evaluation (`train_eval_mismatch`, a note that says so and tells to judge by the eval loss): a first training loss
    beyond ln(vocabulary) then says that again, not that the run went wrong (gbyuvd_ChemMiniQ3-HoriFIE: a multi-token
    loss summed over three heads, 20.4 at the start = 3 x ln 782, against a per-token eval loss falling 2.69 ->
    1.73)."""
    found = detect_loss_beyond_cross_entropy(metrics, vocab, framework)
    return [] if found and detect_train_eval_mismatch(metrics, thresholds) else found


def _run_aware_findings(metrics, thresholds: Thresholds, profile: RunProfile, config: RunConfig,
                        findings: list[Finding], planned: tuple = (None, None),
                        steps_counted: bool = True) -> list[Finding]:
    """The detectors that need the kind of run or its config (an adapter starts as the identity; the
    vocabulary size sets the uniform guess), over the final history. A loss the run's transformers release
    logged summed over the accumulation steps is judged per step (divided by them); for the warnings about a
    loss too high, a run whose release is not known is given that benefit of the doubt too, but a run stuck
    at ln(vocabulary) is judged on what was logged unless the release is known to sum."""
    vocab = config.get("model.vocab_size")
    found = _start_findings(metrics, thresholds, profile, config, findings)
    if not any(f.kind == "skipped_steps" for f in findings):  # the skips told by grad_norm or a count stand
        found += detect_skips_from_lr_lag(metrics, linear_fp16_schedule(config))
    found += detect_warmup_past_the_end(metrics, config.get("warmup_steps"), config.get("max_steps"),
                                        config.get("num_train_epochs"))
    found += detect_start_under_a_fresh_decoder(metrics, warm_started_composite(config), steps_counted)
    never = any(f.kind == "never_learned" for f in findings)  # one never-learned finding is enough
    per_step = _per_step_loss(metrics, summed_loss_factor(config))
    found += [f for f in detect_early_overshoot(per_step, vocab, thresholds)  # unless the spike rules saw it first
              if not any(g.kind == "loss_spike" and g.step <= f.evidence["peak_step"] for g in findings)]
    if not never:
        found += (detect_stuck_at_vocabulary_guess(per_step, vocab) or detect_no_update_at_the_guess(metrics, vocab)
                  or detect_eval_at_the_guess(metrics, vocab))
    if not never and not any(f.kind == "no_learning_evidence" for f in findings + found):
        found += detect_ended_near_the_guess(per_step, thresholds, vocab, *planned)
    if not never:
        found += _at_chance_findings(metrics, thresholds, profile, config)
    rpo_alpha = config.get("rpo_alpha")
    if isinstance(rpo_alpha, (int, float)) and not any(f.kind in ("memorization", "loss_collapse") for f in findings):
        found += pair_term_memorized(metrics, thresholds, float(rpo_alpha))
    return found + _from_scratch_findings(metrics, thresholds, profile, config, (findings, found))


def _start_findings(metrics, thresholds: Thresholds, profile: RunProfile, config: RunConfig,
                    findings: list[Finding]) -> list[Finding]:
    """Where the run's loss started: beyond any cross-entropy, above the vocabulary's uniform guess, or at it (a
    pairwise preference loss: above ln 2), or an SFT of a trained model whose loss stays far above any trained model's
    level on text (`detect_fine_tune_far_above_text`). A loss summed over accumulation steps by a release not known is
    given the benefit of the doubt (its start is moot)."""
    if profile.objective == "preference" and profile.algorithm in PAIRWISE_ALGORITHMS:
        return detect_pairwise_start_above_chance(metrics)  # its guess is ln 2, not the vocabulary's
    vocab = config.get("model.vocab_size")
    doubtful = _per_step_loss(metrics, _start_summed_factor(metrics, config))
    found = _beyond_cross_entropy(doubtful, vocab, profile.framework, thresholds)  # a summed loss: its start is moot
    if found:
        return found
    first = finite(doubtful["loss"]) if "loss" in doubtful else None
    base = pretrained_base(config, float(first.iloc[0]) if first is not None and len(first) else None)
    found = detect_start_above_uniform_guess(doubtful, thresholds, profile.method, vocab,
                                             config.get("adapter.task_type"), profile.objective == "pretrain",
                                             base[0] if base else None, _fine_tune_of_a_trained_model(
                                                 profile, config, base))
    if not found and not any(f.kind in ("no_learning_evidence", "never_learned") for f in findings):
        certain = pretrained_base(config)  # (not a configuration's name: a model built from it starts here too)
        found = detect_start_near_the_guess(doubtful, profile.method, vocab, config.get("adapter.task_type"),
                                            certain[0] if certain else None)
        if not found and profile.objective == "sft":  # (a preference, RL or reward loss is no per-token LM loss)
            trained = profile.method in ADAPTER_METHODS or certain is not None
            found = detect_fine_tune_far_above_text(doubtful, thresholds, trained, config.get("adapter.task_type"))
    return found


def _start_summed_factor(metrics, config: RunConfig) -> int:
    """What the logged loss is divided by to judge its start: the accumulation steps where the run's transformers
    release may have summed over them (`summed_loss_factor`, the benefit of the doubt), or where the training loss
    sits at that many times the eval loss at every evaluation (`summed_over_accumulation`: a sum, whatever the
    release); else 1."""
    factor = summed_loss_factor(config, release_unknown_counts=True)
    accumulation = stated_accumulation(config)
    return int(accumulation) if factor == 1 and summed_over_accumulation(metrics, accumulation) else factor


def _at_chance_findings(metrics, thresholds: Thresholds, profile: RunProfile, config: RunConfig) -> list[Finding]:
    """A classifier, a reward model or a DPO loss that never got past chance (the run has no never-learned finding)."""
    found = []
    if classification_head(config):
        found += detect_classifier_at_chance(metrics, thresholds, config.get("model.num_labels"))
    if profile.objective == "reward":
        found += detect_reward_model_at_chance(metrics, thresholds)
    if profile.algorithm == "dpo":
        found += detect_dpo_loss_never_under_chance(metrics, thresholds)
    return found


def _from_scratch_findings(metrics, thresholds: Thresholds, profile: RunProfile, config: RunConfig,
                           findings_and_run_aware: tuple[list[Finding], list[Finding]]) -> list[Finding]:
    """A full pre-training run that memorized its data (unless the detectors' `findings` already say so: under the
    pre-training floor a token, or under a character's where a token is one or where the run counts a token's
    characters), or that is stuck from scratch (unless
    any finding, the run-aware ones so far included, is an error)."""
    findings, run_aware = findings_and_run_aware
    if profile.objective != "pretrain" or profile.method != "full":
        return []
    found = []
    if not any(f.kind in ("memorization", "overfitting", "loss_collapse", "zero_loss_unexplained") for f in findings):
        keras_epochs = _keras_epoch_lines(metrics, profile)
        found += memorized_from_scratch(_with_keras_epochs(metrics, profile), thresholds) or memorized_per_character(
            metrics, _char_corpus(config), keras_epochs) or memorized_per_subword(
            metrics, _subword_corpus(config), keras_epochs)
    if not any(f.severity == "error" for f in findings + run_aware + found):
        found += detect_stuck_from_scratch(metrics, thresholds, _keras_epoch_lines(metrics, profile))
    return found


def _char_corpus(config: RunConfig) -> CharCorpus | None:
    """What the run's code and outputs say of a character-level text (ingest.notebook_code.char_corpus), where they
    say all that `char_floor` needs, and the text is no simplified one (TinyStories: the floor is ordinary text's)."""
    said = [config.get(f"data.{key}") for key in ("char_vocabulary", "text_chars", "text_chars_line", "chars_a_batch")]
    if any(value is None for value in said) or config.get("data.simplified_text"):
        return None
    return CharCorpus(*said, batches_an_epoch=config.get("data.batches_an_epoch"))


def _subword_corpus(config: RunConfig) -> SubwordCorpus | None:
    """What the run's code and outputs say of a text cut into subword pieces (ingest.notebook_code.subword_corpus),
    where they say all that `subword_floor` needs and the code builds its model from random weights (a pretrained
    model's loss on a text it was tuned to is no fresh model's), and the text is no simplified one (TinyStories)."""
    if not config.get("model.built_here"):
        return None
    said = [config.get(f"data.{key}") for key in ("subword_tokenizer", "text_chars", "text_chars_line", "text_tokens",
                                                  "text_tokens_line", "tokens_a_batch")]
    if any(value is None for value in said) or config.get("data.simplified_text"):
        return None
    return SubwordCorpus(*said, batches_an_epoch=config.get("data.batches_an_epoch"))


def _keras_epoch_lines(metrics, profile: RunProfile) -> bool:
    """A Keras `model.fit` log whose loss is one point an epoch at steps 1, 2, ... (console_lines.blocks.KerasEpochs
    places epoch E's line at step E; a last line cut mid-epoch sits at the next step): each point the mean over a whole
    epoch, the first from the run's start."""
    loss = metrics.get(LOSS)
    return profile.framework == "keras" and loss is not None and len(loss) > 0 \
        and np.array_equal(loss.index.to_numpy(), np.arange(1, len(loss) + 1))


def _with_keras_epochs(metrics, profile: RunProfile):
    """A Keras `model.fit` log's loss one point an epoch at steps 1, 2, ... (console_lines.blocks.KerasEpochs places
    epoch E's line at step E) given those steps as its epochs: the passes over the data it was trained with. Only for
    the from-scratch rule: read for every Keras log, the epochs would put a fine-tune's under the rules calibrated on
    other logs' epochs (Bureaux-Tao_unilm-translate-ancient_chinese, a bert4keras fine-tune whose validation BLEU, which
    is not read, still rose at epoch 19 of 29, would be memorized by `late_passes`)."""
    if "epoch" in metrics or not _keras_epoch_lines(metrics, profile):
        return metrics
    loss = metrics[LOSS]
    return {**metrics, "epoch": pd.Series(loss.index.to_numpy(dtype="float64"), index=loss.index)}


def _length_set_in_epochs(config: RunConfig) -> bool:
    """The configuration leaves max_steps unset (the HF Trainer's -1): the run's length is its epochs over a dataset
    with a length (the Trainer refuses a stream without max_steps), so its logged epoch counts passes over the data."""
    max_steps = config.get("max_steps")
    return isinstance(max_steps, (int, float)) and not isinstance(max_steps, bool) and max_steps <= 0


def _planned_length(config: RunConfig, timeline: Timeline) -> tuple:
    """(num_train_epochs, max_steps) the run was set up for: the configuration's, else what a log records (a
    trainer_state.json keeps both); None for either that nothing states (a max_steps of -1 states nothing)."""
    recorded = list(timeline.meta.values())
    epochs = [config.get("num_train_epochs")] + [m.get("num_train_epochs") for m in recorded]
    steps = [config.get("max_steps")] + [m.get("max_steps") for m in recorded]

    def stated(values):
        return next((v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0), None)
    return stated(epochs), stated(steps)


def _per_step_loss(metrics, factor: int):
    return {**metrics, "loss": metrics["loss"] / factor} if factor > 1 and "loss" in metrics else metrics


def dated_by_optimizer_step(findings: list[Finding], metrics) -> list[Finding]:
    """Findings dated by the optimizer step where the log counts its lines by iteration (micro-batch) and prints the
    optimizer's step beside each (lit-gpt's `iter 1152 step 144: loss X`, the metric OPTIMIZER_STEP): the detectors
    read one point per line, at its iteration, and a finding's step (and end step, and the step in a `caused_by`) is
    then the optimizer step printed at that iteration, the message saying which iteration it is. A log whose
    optimizer step never advances keeps its iterations (no update happened between the lines: that is the finding)."""
    printed = metrics[OPTIMIZER_STEP].dropna() if OPTIMIZER_STEP in metrics else None
    if printed is None or printed.nunique() < 2 or not findings:
        return findings
    iterations, steps = printed.index.to_numpy(), printed.to_numpy()

    def at(iteration: int | None) -> int | None:
        if iteration is None:
            return None
        pos = int(np.searchsorted(iterations, iteration, side="right")) - 1
        return int(steps[max(pos, 0)])

    def caused(key: str | None) -> str | None:
        kind, _, step = (key or "").rpartition("@")
        return f"{kind}@{at(int(step))}" if kind and step.isdigit() else key

    return [replace(f, step=at(f.step), end_step=at(f.end_step), caused_by=caused(f.caused_by),
                    message=f"{f.message} (Steps above count iterations, micro-batches: iteration {f.step} is "
                            f"optimizer step {at(f.step)}.)") for f in findings]
