"""Three console formats the tool could not read at all (corpus cases that ended in NotARunDirectory):

* ParlAI's metric reports (parlai/scripts/train_model.py with utils/misc.py `nice_report`: a head line, then the
  report as pandas prints it: names, values) and its `Total parameters: N (M trainable)` line
  (ameerfayiz_ML-notebooks);
* Unsloth's own loop, `unsloth_train` (unsloth_zoo/training_utils.py: `progress_bar.write(f"{step}, {loss}")` after
  its `==((====))==` banner; unslothai_unsloth_issue1145);
* THUNLP-AIPoet's InfoLogger (`epoch: 1, 11/125 8.8%, 6.49s per iter, lr: 0.0003, ...` then indented loss lines;
  XiaoyuanYi_StyIns).

Each run below is written as that code prints it; each reader also has a test that an ordinary console is not misread.
"""
from __future__ import annotations

import json
import math

import forensics
from support.format_runs import analyze_logs, assert_broken_at, assert_healthy_loss, losses, write_file

# --- ParlAI -------------------------------------------------------------------------------------------------------


def _parlai_value(v: float) -> str:
    """ParlAI's float_formatter: 4 significant digits, a leading 0 dropped (`.9171`)."""
    text = f"{v:.4g}"
    return text[1:] if text.startswith("0.") else text


def parlai_console(nan_at=None, logger=True):
    """A TrainModel console: the head (`21:20:10 | time:10s total_exs:2432 epochs:0.04` through ParlAI's logger, or the
    2020 `[ time:10.0s total_exs:1828 epochs:304.67 ]`), the report's names and values, a valid report cut into two
    chunks (the first chunk's names end in `\\`) every 10 reports."""
    out = ["21:19:59 | Total parameters: 3,453,203 (3,453,203 trainable)" if logger
           else "Total parameters: 3,453,203 (3,453,203 trainable)", "21:20:00 | training..."]
    for s, v in enumerate(losses(nan_at), 1):
        updates = 150 * s
        head = f"time:{10 * s}s total_exs:{2432 * s} epochs:{0.04 * s:.2f}"
        out.append(f"21:20:{s:02d} | {head}" if logger else f"[ {head} ]")
        out.append("    clip  exs  gnorm  gpu_mem  loss  lr   ppl  token_acc  total_train_updates   tpb   ups")
        ppl = _parlai_value(math.exp(v)) if v == v else "nan"
        out.append(f"       1 2432  1.009   .02616 {_parlai_value(v) if v == v else 'nan'}   1 {ppl}     .09417"
                   f"                  {updates} 714.6 15.13")
        out.append("")
        if s % 10 == 0:
            out.append("21:22:36 | valid:" if logger else "valid:")
            out.append("    accuracy  ctpb  exs    f1  loss  lr   ppl  token_acc  total_train_updates  \\")
            out.append(f"           0 572.6 5738 .1084 {2.4 - s * 0.02:.4g}   1 605.5      .2173  {updates}   ")
            out.append("     tpb  tps  ")
            out.append("   821.7 8486")
            out.append("")
    return "\n".join(out) + "\n"


def test_parlai_reports_are_read_at_their_update_count_and_a_nan_is_broken(tmp_path):
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", parlai_console()))
    assert_healthy_loss(a)
    t = a.timeline
    assert list(t.series("loss").index[:3]) == [150, 300, 450]
    assert dict(t.series("eval_loss")) == {1500: 2.2, 3000: 2.0, 4500: 1.8}
    assert t.series("epoch").iloc[-1] == 1.2 and t.series("grad_norm").iloc[0] == 1.009
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", parlai_console(25))), 25 * 150)


def test_parlai_2020_bracket_head_is_read_and_its_banner_gives_the_size(tmp_path):
    a = analyze_logs(write_file(tmp_path, "train.log", parlai_console(logger=False)))
    assert_healthy_loss(a)
    assert a.run_profile.model_params == 3_453_203 and a.run_profile.method == "full"


def test_a_printed_pandas_table_is_no_parlai_report(tmp_path):
    """A Trainer console that prints a DataFrame (names, then values, a `total_train_updates` column among them) under
    a `valid:` line and beside a `total_exs:` word: read as before, the table adding nothing."""
    dicts = "".join(f"{{'loss': {v:.4f}, 'learning_rate': 1e-05, 'epoch': {s / 30:.2f}}}\n"
                    for s, v in enumerate(losses(), 1))
    table = ("data sizes total_exs: 2432\nvalid:\n   loss  accuracy  total_train_updates\n"
             "   0.1   0.9  5\n")
    a = analyze_logs(write_file(tmp_path, "train.log", table + dicts))
    assert_healthy_loss(a)
    assert "eval_loss" not in a.timeline.metrics and "accuracy" not in a.timeline.metrics


def _notebook(cells: list[str]) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "source": ["TrainModel.main()"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]} for text in cells]})


def _parlai_cell(params: int, first: int, losses_: list[float]) -> str:
    lines = [f"Total parameters: {params:,} ({params:,} trainable)"]
    for i, v in enumerate(losses_):
        lines += [f"[ time:{10 * (i + 1)}s total_exs:{100 * (i + 1)} epochs:{i + 1} ]",
                  "     clip  exs  gnorm   loss  lr  total_train_updates",
                  f"        1  100  1.368 {v}   1  {first + 30 * i}", ""]
    return "\n".join(lines) + "\n"


def test_a_notebook_cell_training_a_model_of_another_size_is_a_new_training(tmp_path):
    """ParlAI's tutorial trains a 87.5M transformer, then its own 16.8M LSTM, whose reports count on from the earlier
    run's updates: the last cell is the training judged, and the size is its model's (ameerfayiz_ML-notebooks)."""
    first = _parlai_cell(87_508_992, 33, [2.86, 2.78, 2.72])
    second = _parlai_cell(16_824_320, 1828, [9.1, 8.4, 7.9, 7.2])
    a = analyze_logs(write_file(tmp_path, "tutorial.ipynb", _notebook([first, second])))
    assert list(a.timeline.series("loss")) == [9.1, 8.4, 7.9, 7.2]
    assert a.run_profile.model_params == 16_824_320


def test_a_notebook_cell_that_carries_on_the_same_model_is_the_same_training(tmp_path):
    first = _parlai_cell(16_824_320, 30, [9.1, 8.4, 7.9])
    second = _parlai_cell(16_824_320, 120, [7.2, 6.8])
    a = analyze_logs(write_file(tmp_path, "tutorial.ipynb", _notebook([first, second])))
    assert list(a.timeline.series("loss")) == [9.1, 8.4, 7.9, 7.2, 6.8]


# --- Unsloth's unsloth_train -------------------------------------------------------------------------------------

_UNSLOTH_BANNER = """==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1
    \\   /|    Num examples = 2,500 | Num Epochs = 1
O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 8
\\        /    Total batch size = 16 | Total steps = 312
 "-____-"     Number of trainable parameters = 982,515,712
"""


def unsloth_train_console(nan_at=None, after_bar=True):
    """unsloth_train: the banner, then `step, loss` every logging_steps (10) steps from step 0, each after the tqdm
    bar's redraw where the capture lost the bar's carriage returns (unslothai/unsloth issue 1145), or alone."""
    out = []
    for i, v in enumerate(losses(nan_at)):
        step = 10 * i
        bar = f" {step * 100 // 312:2d}%|▎         | {step + 1}/312 [02:27<1:00:48, 12.12s/it]" if after_bar else ""
        out.append(f"{bar}{step}, {round(v, 4)}")
    return _UNSLOTH_BANNER + "\n".join(out) + "\n"


def test_unsloth_train_prints_after_the_bar_are_read_and_a_nan_is_broken(tmp_path):
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", unsloth_train_console()))
    assert_healthy_loss(a)
    assert a.timeline.series("loss").index[1] == 10
    assert a.run_profile.framework == "unsloth"
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", unsloth_train_console(25))), 240)


def test_unsloth_train_prints_on_lines_of_their_own_are_read(tmp_path):
    assert_healthy_loss(analyze_logs(write_file(tmp_path, "train.log", unsloth_train_console(after_bar=False))))


def test_step_comma_number_lines_without_the_unsloth_banner_are_not_read(tmp_path):
    """`0, 2.5` is any script's print (a CSV row): read only where unsloth_train's banner says whose it is."""
    dicts = "".join(f"{{'loss': {v:.4f}, 'learning_rate': 1e-05, 'epoch': {s / 30:.2f}}}\n"
                    for s, v in enumerate(losses(), 1))
    rows = "".join(f"{i}, {9.5 - i}\n" for i in range(5))
    a = analyze_logs(write_file(tmp_path, "train.log", rows + dicts))
    assert_healthy_loss(a)


# --- THUNLP-AIPoet's InfoLogger ----------------------------------------------------------------------------------


def info_logger_console(nan_at=None):
    """StyIns' log/train_log.txt: a record every 10 iterations of 125 an epoch, a head and three loss lines."""
    out = []
    for i, v in enumerate(losses(nan_at)):
        epoch, iteration = divmod(10 * i, 125)
        out += [f"epoch: {epoch + 1}, {iteration + 1}/125 {(iteration + 1) / 1.25:.1f}%, 6.49s per iter, lr: 0.0003, "
                f"tr: 1.00, ts: 0",
                f"    recon loss: {v:.3f}  ppl:{math.exp(v) if v == v else v:.2f}, style loss: 1.134, cycle loss: 5.831",
                "    dis real1 loss: 1.165, dis real2 loss: 1.072, dis fake loss: 1.046",
                "    teach prior loss: 0.000, teach post loss: 0.000, teach kl obj: 0.000", ""]
    return "\n".join(out) + "\n"


def test_info_logger_records_are_read_at_the_run_iteration_and_a_nan_is_broken(tmp_path):
    a = analyze_logs(write_file(tmp_path / "ok", "train_log.txt", info_logger_console()))
    assert_healthy_loss(a)
    loss = a.timeline.series("loss")
    assert list(loss.index[12:15]) == [121, 131, 141]  # epoch 2's iterations 6 and 16 follow epoch 1's 125
    assert a.timeline.series("style_loss").iloc[0] == 1.134
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train_log.txt", info_logger_console(25))), 241)


def test_indented_loss_lines_with_no_info_logger_head_are_not_its_records(tmp_path):
    """The same indented loss lines under a head of another shape (the InfoLogger's validation record, with no
    iteration) are nobody's training steps."""
    text = info_logger_console().replace("s per iter, lr:", "s each, lr:")
    try:
        a = forensics.analyze(write_file(tmp_path, "train_log.txt", text), check_checkpoints=False)
    except forensics.NotARunDirectory:
        return
    assert "style_loss" not in a.timeline.metrics
