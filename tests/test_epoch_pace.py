"""The epoch axis of a notebook Trainer table paced from its progress line, and what it lets the analyzers say.

The notebook callback closes its progress line on int(state.epoch) (`[500/500 1:17:36, Epoch 1/2]`): a floor. Paced
from `Epoch 1` of more planned, a table would end at exactly one pass (changyuhsin1999_duke_chatbot, AS51: 1.53
epochs, its second pass overfitting); a banner's steps an epoch outrank it even beside the closing `TrainOutput`
(DAViDChen1999_RLHF-Homework-Portfolio, AS53: 6 steps a pass, its DPO loss ten-fold lower at the first re-seen step).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.pairwise_loss import pairs_separated_on_return
from forensics.ingest import stdout

_CORPUS = Path(__file__).parent / "realworld"

# changyuhsin1999_duke_chatbot's table: eval every 25 steps, 326 steps an epoch, 500 steps by max_steps
_TRAIN = [1.273, 0.7813, 0.7761, 0.7523, 0.7323, 0.7632, 0.7303, 0.7305, 0.7472, 0.7145, 0.6879, 0.6705, 0.6768,
          0.5639, 0.4854, 0.4657, 0.5185, 0.5366, 0.5016, 0.5064]
_EVAL = [0.872, 0.8238, 0.7824, 0.7853, 0.7558, 0.7416, 0.736, 0.7342, 0.7188, 0.7195, 0.7113, 0.7127, 0.71, 0.7184,
         0.7318, 0.7338, 0.73, 0.7274, 0.7242, 0.7234]


def _table(progress: str) -> str:
    rows = "".join(f"{25 * (i + 1)}\t{t}\t{e}\n" for i, (t, e) in enumerate(zip(_TRAIN, _EVAL)))
    return progress + "\nStep\tTraining Loss\tValidation Loss\n" + rows


def _epochs(frame: pd.DataFrame) -> dict[int, float]:
    rows = frame[frame["metric"] == "epoch"]
    return dict(zip(rows["step"].tolist(), rows["value"].tolist()))


def test_a_finished_progress_line_at_epoch_1_of_2_dates_no_row(tmp_path):
    (tmp_path / "train.log").write_text(_table("[500/500 1:17:36, Epoch 1/2]"))
    assert _epochs(stdout.read(tmp_path / "train.log").frame) == {}


def test_a_progress_line_at_its_planned_epochs_or_past_two_still_paces_the_rows(tmp_path):
    (tmp_path / "train.log").write_text(_table("[500/500 1:17:36, Epoch 2/2]"))
    assert _epochs(stdout.read(tmp_path / "train.log").frame)[500] == 2.0
    (tmp_path / "train.log").write_text(_table("[500/500 1:17:36, Epoch 3/5]"))  # a floor of 3: no one-pass claim
    assert _epochs(stdout.read(tmp_path / "train.log").frame)[250] == 1.5


def test_a_second_pass_over_the_data_stopped_by_max_steps_is_overfitting_not_a_one_pass_wobble(tmp_path):
    (tmp_path / "train.log").write_text(_table("[500/500 1:17:36, Epoch 1/2]"))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "overfitting", 350)


def test_the_corpus_run_stopped_inside_its_second_pass_is_overfitting():
    a = forensics.analyze(_CORPUS / "changyuhsin1999_duke_chatbot")
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "overfitting", 350)


# DAViDChen1999_RLHF-Homework-Portfolio: Unsloth's banner, the DPO table (loss and margins) and the closing TrainOutput
_BANNER = ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
           "   \\\\   /|    Num examples = 50 | Num Epochs = 3 | Total steps = 18\n"
           "O^O/ \\_/ \\    Batch size per device = 2 | Gradient accumulation steps = 4\n"
           "\\        /    Data Parallel GPUs = 1 | Total batch size (2 x 4 x 1) = 8\n")
_DPO = [0.6931, 0.6931, 0.6611, 0.5643, 0.465, 0.4274, 0.0434, 0.0691, 0.1108, 0.0583, 0.0866, 0.0557, 0.0426,
        0.0016, 0.0291, 0.0188, 0.0148, 0.0075]
_SUMMARY = ("TrainOutput(global_step=18, training_loss=0.22457976274502775, metrics={'train_runtime': 130.0781, "
            "'train_samples_per_second': 1.153, 'train_steps_per_second': 0.138, 'total_flos': 0.0, "
            "'train_loss': 0.22457976274502775, 'epoch': 2.64})\n")


def _dpo_log(losses: list[float]) -> str:
    rows = "".join(f"{i + 1}\t{loss}\t{0.1 * (i + 1)}\t1.0\n" for i, loss in enumerate(losses))
    return (_BANNER + "[18/18 02:00, Epoch 2/3]\nStep\tTraining Loss\trewards / margins\trewards / accuracies\n"
            + rows + _SUMMARY)


def test_the_banners_steps_an_epoch_date_a_table_closed_by_its_train_output(tmp_path):
    (tmp_path / "train.log").write_text(_dpo_log(_DPO))
    epochs = _epochs(stdout.read(tmp_path / "train.log").frame)
    assert epochs[6] == 1.0 and epochs[18] == 3.0 and len(epochs) == 18


def test_a_dpo_loss_ten_fold_lower_at_the_first_re_seen_step_is_memorization(tmp_path):
    (tmp_path / "train.log").write_text(_dpo_log(_DPO))
    a = forensics.analyze(tmp_path)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "memorization", 7)


def _pairwise(losses: list[float], per_pass: int, **extra: list[float]) -> dict[str, pd.Series]:
    steps = range(1, len(losses) + 1)
    series = {"loss": losses, "epoch": [s / per_pass for s in steps], "rewards/margins": [0.1 * s for s in steps]}
    return {k: pd.Series(v, index=list(steps), dtype="float64") for k, v in {**series, **extra}.items()}


def test_the_rule_dates_the_first_step_of_the_second_pass():
    (found,) = pairs_separated_on_return(_pairwise(_DPO, 6))
    assert (found.kind, found.severity, found.step) == ("memorization", "warning", 7)


def test_a_dpo_loss_that_keeps_falling_across_the_boundary_or_is_held_out_stays_silent():
    gradual = [0.6931 * 0.85 ** i for i in range(18)]  # 0.69 -> 0.04, no step at the boundary
    assert pairs_separated_on_return(_pairwise(gradual, 6)) == []
    assert pairs_separated_on_return(_pairwise(_DPO, 6, eval_loss=[0.5] * 18)) == []
    back_up = _DPO[:9] + [0.5] + _DPO[10:]  # the loss comes back to the first pass's level: no settled separation
    assert pairs_separated_on_return(_pairwise(back_up, 6)) == []
    assert pairs_separated_on_return(_pairwise(_DPO, 18)) == []  # one pass: no pair seen twice


def test_healthy_multi_pass_dpo_runs_of_the_corpus_stay_silent():
    # two passes or more, no held-out pairs: the loss 1.09x (DhanushGD) and 1.52x (shreyashreddyk) lower at the first
    # re-seen step, not a pair separated by heart
    for case in ("DhanushGD_LlamaRefine-RLHF-DPO", "shreyashreddyk_json-extraction-qlora-dpo"):
        a = forensics.analyze(_CORPUS / case)
        assert a.status == "healthy" and not any(f.kind == "memorization" for f in a.findings), case
