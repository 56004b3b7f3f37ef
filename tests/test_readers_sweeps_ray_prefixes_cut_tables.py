"""Tests of the run readers on odd files: a sweep summary, lucidrains prints, Ray prefixes, a
cut CSV, an epoch table's eval-only row.

From the review of the day's changes a5f3681..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire of a new rule; the passing ones record shapes that held."""
from __future__ import annotations

import json
import pytest

import forensics
from support.review_runs import falling
from support.written_runs import _analyze, _kinds, _trainer_state, _write


# ---- lucidrains' `training loss: X` prints ----------------------------------------------------------------------


def test_sweep_summary_of_training_loss_lines_beside_a_run_is_not_its_log(tmp_path):
    """Stands for a run folder holding the Trainer's trainer_state.json (healthy, 40 logged losses) and the user's
    sweep_results.txt: ten trials, each written as `trial i: lr=...`, `training loss: X`, `validation loss: Y` (one
    trial diverged: `training loss: nan`). The ten whole-line prints pass _LOSS_PRINTS, so the summary is read as a
    lucidrains loop: ten more losses join the run's and the tool says warning `nonfinite_metric` at step 7 (healthy
    before). Ten final losses of ten trials, each between `trial` headers, are not one loop's batch prints. Fix:
    run._hinted (_LOSS_PRINT) / step_numbering._loss_prints_numbered: need the prints to come in runs of consecutive
    lines (a loop prints them back to back, between bar redraws), not each under a header of its own."""
    _trainer_state(tmp_path, [{"loss": v, "learning_rate": 2e-5, "epoch": s / 10, "step": s * 10}
                              for s, v in enumerate(falling(40), 1)])
    text = ""
    trials = [(1e-5, 1.42), (2e-5, 1.31), (5e-5, 1.22), (1e-4, 1.18), (2e-4, 1.25), (5e-4, 1.9), (1e-3, "nan"),
              (3e-5, 1.27), (8e-5, 1.2), (3e-4, 1.6)]
    for i, (lr, loss) in enumerate(trials):
        val = "nan" if loss == "nan" else f"{loss + 0.1:.2f}"
        text += f"trial {i}: lr={lr}\ntraining loss: {loss}\nvalidation loss: {val}\n\n"
    a = _analyze(_write(tmp_path, "sweep_results.txt", text))
    assert a.status == "healthy", _kinds(a)
    assert len(a.timeline.series("loss")) == 40


def test_lucidrains_prints_after_tqdm_bar_are_read(tmp_path):
    """Coverage: x-transformers' `training loss: X` prints (behind the bar) with a NaN from batch 25 are broken at 25."""
    lines = []
    for i, v in enumerate(falling(30), 1):
        shown = "nan" if i >= 25 else f"{v:.4f}"
        lines.append(f"training:   {i}%|          | {i}/100 [00:{i:02d}<00:10,  1.00it/s]training loss: {shown}")
        if i % 10 == 0:
            lines.append(f"validation loss: {v + 0.1:.4f}")
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert a.status == "broken" and a.first_incident.step == 25, _kinds(a)


# ---- shapes checked that held -------------------------------------------------------------------------------------


def test_ray_prefix_on_only_the_workers_lines_still_reads_them(tmp_path):
    """Ray Train driver log: Tune's status lines unprefixed (a third of the lines and more), the worker's Trainer dicts
    behind `(RayTrainWorker pid=4112) `: the prefix is not stripped, and the dicts are still read."""
    out = []
    for s, v in enumerate(falling(30), 1):
        out += ["== Status ==", f"Current time: 2024-06-01 10:00:{s:02d} (running for 00:00:{s:02d})",
                f"(RayTrainWorker pid=4112) {{'loss': {v:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, "
                f"'epoch': {s / 10:.2f}}}"]
    a = _analyze(_write(tmp_path, "ray_driver.log", "\n".join(out) + "\n"))
    assert a.status == "healthy" and len(a.timeline.series("loss")) == 30


def test_csv_whose_last_line_was_cut_mid_write_is_no_nan_loss(tmp_path):
    """A block-buffered metrics.csv of a killed run ends mid-line (`61,`): no NaN loss is made of it."""
    rows = ["step,loss,lr"] + [f"{s},{v:.4f},0.0001" for s, v in enumerate(falling(60), 1)]
    a = _analyze(_write(tmp_path, "metrics.csv", "\n".join(rows + ["61,"])))
    assert a.status == "healthy", _kinds(a)


def test_epoch_table_with_a_final_eval_only_row_is_no_nan_loss(tmp_path):
    """A script's dense epoch table ending with a re-evaluation of the best checkpoint (`10,,0.39,0.89`)."""
    tl = [0.62, 0.45, 0.38, 0.33, 0.30, 0.27, 0.25, 0.23, 0.22, 0.21]
    vl = [0.50, 0.44, 0.41, 0.40, 0.39, 0.395, 0.39, 0.40, 0.395, 0.40]
    rows = ["epoch,train_loss,val_loss,val_acc"] + [f"{e + 1},{tl[e]},{vl[e]},{0.80 + e * 0.01:.2f}" for e in range(10)]
    a = _analyze(_write(tmp_path, "history.csv", "\n".join(rows + ["10,,0.39,0.89"]) + "\n"))
    assert a.status == "healthy", _kinds(a)


@pytest.mark.parametrize("name, text", [
    ("training_statistics.json", json.dumps({"training": {"combined": {"loss": [2.5 - i * 0.03 for i in range(55)]
                                                                                + [None] * 5}},
                                             "validation": {"combined": {"loss": [None, "x", 2.4]}}})),
    ("training_statistics.json", json.dumps({"training": "x", "validation": 3})),
    ("train.log", "[INFO:swift] args: SftArguments(model='a, train_type=\"lora)\n"
                  + "".join(f"{{'loss': {2.5 - i * 0.03:.4f}, 'epoch': {i / 10:.2f}}}\n" for i in range(40))),
    ("train.log", "".join(f"Training epoch 0, iteration {i}/10 | global_step: inf | reduced_train_loss: 2.{i}\n"
                          for i in range(20))),
    ("train.log", "".join(f"{{ Epoch:[  1/  0], step:[ {i}/    0], loss: 2.{i}, global_norm: [inf]\n"
                          for i in range(1, 20))),
])
def test_odd_files_of_the_new_formats_give_no_traceback(tmp_path, name, text):
    """Damaged or odd Ludwig statistics, ms-swift printed args, NeMo 2.0 and MindFormers lines: a judgement or a
    NotARunDirectory, never a traceback."""
    _write(tmp_path, name, text)
    try:
        _analyze(tmp_path)
    except forensics.errors.NotARunDirectory:
        pass
