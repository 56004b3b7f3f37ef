"""Tests of PEFT's epoch lines and eval bars (ingest.stdout, console_steps), a lone loss above the guess
(analyzers.fine_tune_start, impossible_loss), T5's vocabulary (ingest.vocabulary) and fell_clearly (fall_measure).

Corpus batches AS53 / AS51 / AS54 found wrong: PEFT's example `epoch=E: train_ppl=tensor(...) ...` lines
(Birkbeck_msc-projects-2023-4-Gabriele_Monti_PEFT), an ipywidgets eval bar frozen at `0/32` taken for the training
bar (Ka0Ri_RAG), a lone first loss far above any vocabulary's guess (MUmarAmanat_peft-example), T5's vocabulary
(phbst_T5-ft) and three single-batch points read as a clear fall (christianderrico_flex-care)."""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.analyzers.fall_measure import fell_clearly
from forensics.analyzers.fine_tune_start import detect_start_above_uniform_guess
from forensics.analyzers.impossible_loss import detect_loss_beyond_cross_entropy
from forensics.config import RunConfig, Thresholds
from forensics.ingest import stdout
from forensics.ingest.console_steps import training_bar_total
from forensics.ingest.pretrain_lines import parse_line
from forensics.ingest.vocabulary import derive_vocab_size
from forensics.discover.log_hints import log_hinted

CORPUS = Path(__file__).parent / "realworld"
_BAR = "100%|##########| 2010/2010 [11:35<00:00,  2.89it/s]"


def _peft_line(epoch: int, train: float, held_out: float, ppl_of_train: float | None = None) -> str:
    ppl = math.exp(train) if ppl_of_train is None else ppl_of_train
    return (f"epoch={epoch}: train_ppl=tensor({ppl:.4f}, device='cuda:0') train_epoch_loss=tensor({train:.4f}, "
            f"device='cuda:0') eval_ppl=tensor({math.exp(held_out):.4f}, device='cuda:0') "
            f"eval_epoch_loss=tensor({held_out:.4f}, device='cuda:0')")


_TRAIN = [1.3584, 1.0664, 1.0509, 1.0423, 1.0370]
_HELD_OUT = [0.9680, 0.9512, 0.9438, 0.9409, 0.9391]


def test_a_peft_example_epoch_line_gives_its_train_and_eval_loss_at_its_epoch():
    record = parse_line(_peft_line(2, 1.0509, 0.9438))
    assert record is not None and record.kind == "generic_epoch" and record.step == 2
    assert dict(record.metrics)["loss"] == 1.0509 and dict(record.metrics)["eval_loss"] == 0.9438


def test_the_line_with_item_ed_values_reads_the_same():
    record = parse_line("epoch=3: train_ppl=2.8358 train_epoch_loss=1.0423 eval_ppl=2.5623 eval_epoch_loss=0.9409")
    assert record is not None and dict(record.metrics)["eval_loss"] == 0.9409


def test_a_perplexity_that_is_no_exp_of_its_loss_says_these_are_no_losses():
    assert parse_line(_peft_line(0, 1.6026, 0.1215, ppl_of_train=9.0)) is None


def test_the_epoch_lines_between_tqdm_bars_are_all_read_also_one_glued_after_a_bar():
    lines = [_peft_line(e, t, h) for e, (t, h) in enumerate(zip(_TRAIN, _HELD_OUT))]
    text = "".join(f"{_BAR}\n{line}\n" for line in lines[:-1]) + _BAR + lines[-1] + "\n"
    frame = stdout.read_console(text, Path("x.log"), []).frame
    assert list(frame[frame.metric == "loss"].value) == _TRAIN
    assert list(frame[frame.metric == "eval_loss"].value) == _HELD_OUT


def test_the_run_finder_knows_two_such_lines_and_not_one():
    two = f"{_BAR}\n{_peft_line(0, 1.6026, 0.1215)}\n{_BAR}{_peft_line(1, 0.1232, 0.0528)}\n".encode()
    assert log_hinted(two)
    assert not log_hinted(_peft_line(0, 1.6026, 0.1215).encode())


def test_birkbeck_prefix_tuning_is_read_and_judged_healthy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = forensics.analyze(CORPUS / "Birkbeck_msc-projects-2023-4-Gabriele_Monti_PEFT")
    loss = a.timeline.frame.query("metric == 'loss'")
    assert list(loss.value) == _TRAIN and a.status == "healthy"


def _notebook_events(evaluations: int = 10) -> list[tuple]:
    """The events of a notebook whose widget bars kept only their first frame: the training bar's `0/100` once, each
    evaluation's `0/32` between a train dict and its eval dict (Ka0Ri_RAG)."""
    events: list[tuple] = [("bar", 0, 100)]
    for k in range(evaluations):
        events.append(("dict", None, {"loss": 0.9, "epoch": 0.05 * (k + 1)}))
        events.append(("bar", 0, 32))
        events.append(("dict", None, {"eval_loss": 0.81, "eval_accuracy": 0.53, "epoch": 0.05 * (k + 1)}))
    return events


def test_an_eval_bar_drawn_before_every_eval_dict_is_not_the_training_bar():
    assert training_bar_total(_notebook_events()) == 100


def test_a_training_bar_seen_before_its_dicts_is_still_the_training_bar():
    events = []
    for k in range(1, 6):
        events += [("bar", 10 * k, 50), ("dict", None, {"loss": 1.0 / k, "epoch": k / 5})]
        events += [("bar", 8, 8), ("dict", None, {"eval_loss": 1.0, "epoch": k / 5})]
    assert training_bar_total(events) == 50


def test_ka0ri_reward_model_is_dated_every_ten_steps_and_never_learned():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = forensics.analyze(CORPUS / "Ka0Ri_RAG")
    frame = a.timeline.frame
    assert list(frame[frame.metric == "eval_loss"].step) == list(range(10, 101, 10))
    assert (a.first_incident.kind, a.first_incident.step) == ("never_learned", 10)


def _one(value: float, step: int = 1) -> dict[str, pd.Series]:
    return {"loss": pd.Series([value], index=[step])}


def test_a_lone_adapter_loss_above_any_vocabularys_guess_is_a_start_above_it():
    found = detect_start_above_uniform_guess(_one(51.25), Thresholds(), "lora", None, "SEQ_2_SEQ_LM")
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 1)]


def test_a_lone_adapter_loss_a_fine_tune_has_is_left_alone():
    assert detect_start_above_uniform_guess(_one(2.3), Thresholds(), "lora", None, "CAUSAL_LM") == []


def test_a_lone_loss_of_another_run_is_held_to_three_times_its_known_guess():
    assert detect_start_above_uniform_guess(_one(20.0), Thresholds(), "full", 32000, None) == []
    found = detect_start_above_uniform_guess(_one(51.25), Thresholds(), "full", 32000, None)
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 1)]


def test_a_lone_loss_of_another_run_its_vocabulary_unknown_is_left_alone():
    assert detect_start_above_uniform_guess(_one(122.1, 10), Thresholds(), "unknown", None, None) == []


def test_a_lone_loss_beyond_ln_v_is_no_impossible_loss_but_a_held_one_still_is():
    assert detect_loss_beyond_cross_entropy(_one(51.25), 32128) == []
    held = {"loss": pd.Series([370.2, 468.1, 373.4, 300.0], index=[1, 2, 3, 4])}
    assert [f.kind for f in detect_loss_beyond_cross_entropy(held, 32000)] == ["impossible_loss"]


def test_a_loss_beyond_ln_v_that_comes_down_under_it_is_no_impossible_loss():
    loss = {"loss": pd.Series(3.4 + 33.57 * np.exp(-np.arange(50) / 5.0), index=range(10, 501, 10))}
    assert detect_loss_beyond_cross_entropy(loss, 32128) == []
    found = detect_start_above_uniform_guess(loss, Thresholds(), "lora", 32128, "SEQ_2_SEQ_LM")
    assert [(f.kind, f.step) for f in found] == [("start_above_uniform_guess", 10)]


def test_mumaramanat_one_step_flan_t5_lora_starts_above_the_guess():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = forensics.analyze(CORPUS / "MUmarAmanat_peft-example")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "start_above_uniform_guess", 1)


@pytest.mark.parametrize("name", ["/home/user/models/flan-t5-small", "google/flan-t5-xxl", "t5-base",
                                  "google/t5-v1_1-large"])
def test_t5_and_flan_t5_have_their_published_vocabulary(name):
    config = RunConfig()
    config.add("adapter.base_model_name_or_path", name, "adapter_config.json")
    derive_vocab_size(config)
    assert config.get("model.vocab_size") == 32128


@pytest.mark.parametrize("name", ["google/mt5-small", "google/byt5-base", "t5-small-finetuned-xsum"])
def test_other_t5_families_and_fine_tunes_are_not_given_it(name):
    config = RunConfig()
    config.add("adapter.base_model_name_or_path", name, "adapter_config.json")
    derive_vocab_size(config)
    assert config.get("model.vocab_size") is None


def test_three_single_batch_losses_at_the_start_are_no_clear_fall():
    loss = pd.Series([5.236396, 5.114337, 5.036678], index=[1, 2, 3])
    assert not fell_clearly(loss, Thresholds())[0]


def test_three_window_means_and_four_single_batch_points_still_are():
    assert fell_clearly(pd.Series([5.236396, 5.114337, 5.036678], index=[100, 200, 300]), Thresholds())[0]
    assert fell_clearly(pd.Series(np.linspace(5.2, 4.4, 8), index=range(1, 9)), Thresholds())[0]
