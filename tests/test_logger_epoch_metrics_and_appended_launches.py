"""Tests of a logger's epoch headers and train / eval metrics lines (ingest.console_lines.stepless) in a log of
appended launches, a cut last line and OpenNMT's parameter count (ingest.console_facts).

Corpus batch AS56's misread consoles: cs230's logger lines (`2018-09-04 17:46:35,724:INFO: Epoch 1/10`, then
`- Train metrics: loss: X` and `- Eval metrics: loss: Y`) in a file of many appended launches
(junkwhinger_babynames_generator)."""
from __future__ import annotations

from pathlib import Path

import forensics
from forensics.ingest import stdout
from forensics.ingest.console_lines.stepless import epoch_header, headed_line

CORPUS = Path(__file__).parent / "realworld"
_STAMP = "2018-09-04 18:24:34,551:INFO: "


def _launch(train: list[float], evals: list[float] | None = None) -> str:
    """One cs230 launch as its logger writes it: the start line, then each epoch's header and metric lines."""
    text = f"{_STAMP}-- start training for {len(train)} epoch(s)\n"
    for e, loss in enumerate(train, 1):
        text += f"{_STAMP}Epoch {e}/{len(train)}\n{_STAMP}- Train metrics: loss: {loss:.3f}, acc: 0.500\n"
        if evals is not None:
            text += f"{_STAMP}- Eval metrics: loss: {evals[e - 1]:.3f}, acc: 0.520\n{_STAMP}-- Found new best accuracy\n"
    return text


def _series(path: Path, metric: str) -> dict[int, float]:
    frame = stdout.read(path).frame
    rows = frame[frame.metric == metric]
    return dict(zip(rows.step.astype(int), rows.value))


def test_an_epoch_header_after_a_loggers_date_and_level_is_a_header():
    assert epoch_header(_STAMP + "Epoch 3/10") == ("epoch_header", 3, 10)
    assert epoch_header("2024-01-01 12:00:00,123 - train - INFO - Epoch 4/5") == ("epoch_header", 4, 5)
    assert epoch_header(_STAMP + "Epoch 3/10 took 40s") is None  # (more than the epoch: no header)


def test_an_eval_metrics_line_gives_the_held_out_loss_and_a_train_line_the_loss():
    assert headed_line(_STAMP + "- Eval metrics: loss: 1.539, acc: 0.520", False).metrics == (
        ("eval_loss", 1.539), ("eval_accuracy", 0.52))
    assert headed_line(_STAMP + "- Train metrics: loss: 1.632, acc: 0.496", False).metrics == (
        ("loss", 1.632), ("accuracy", 0.496))


def test_logged_train_and_eval_metrics_are_each_epochs_losses(tmp_path: Path):
    train, evals = [1.632, 1.518, 1.476, 1.450], [1.539, 1.486, 1.448, 1.420]
    (tmp_path / "train.log").write_text(_launch(train, evals))
    assert list(_series(tmp_path / "train.log", "loss").values()) == train
    assert list(_series(tmp_path / "train.log", "eval_loss").values()) == evals


def test_the_last_launch_appended_to_a_log_stands_though_an_earlier_one_got_further(tmp_path: Path):
    """A longer launch (six epochs, rising), then a shorter one of four that learned: the file's order says which
    came last, not how far each got."""
    (tmp_path / "train.log").write_text(_launch([1.88, 1.98, 2.06, 2.09, 2.15, 2.15]) +
                                        _launch([1.632, 1.518, 1.476, 1.450], [1.539, 1.486, 1.448, 1.420]))
    timeline = forensics.analyze(tmp_path).timeline
    assert list(timeline.series("loss")) == [1.632, 1.518, 1.476, 1.450]
    abandoned = timeline.frame[timeline.frame["abandoned"] & (timeline.frame["metric"] == "loss")]
    assert list(abandoned["value"]) == [1.88, 1.98, 2.06, 2.09, 2.15, 2.15]


def test_the_babynames_console_reads_its_final_launch():
    """junkwhinger_babynames_generator: the final launch's train 1.632 -> 1.364 and eval 1.539 -> 1.333 stand."""
    timeline = forensics.analyze(CORPUS / "junkwhinger_babynames_generator").timeline
    loss, held_out = timeline.series("loss"), timeline.series("eval_loss")
    assert (loss.iloc[0], loss.iloc[-1], len(loss)) == (1.632, 1.364, 10)
    assert (held_out.iloc[0], held_out.iloc[-1], len(held_out)) == (1.539, 1.333, 10)


def _chatbot_console(last: str) -> str:
    """The PyTorch chatbot tutorial's training print, one line an iteration; `last` ends the file with no newline."""
    lines = [f"Iteration: {i}; Percent complete: {i / 50:.1f}%; Average loss: {8.9 - i / 10:.4f}" for i in range(1, 50)]
    return "Starting Training!\n" + "\n".join(lines) + "\n" + last


def test_a_whole_last_line_without_its_newline_is_read(tmp_path: Path):
    """ChattyBuddy_ChatBot: the file's last line, iteration 4000, has no newline after it, printed as every line
    before it: it is the run's last point, not a line cut mid-write."""
    (tmp_path / "training_output.txt").write_text(_chatbot_console("Iteration: 50; Percent complete: 1.0%; "
                                                                   "Average loss: 3.9000"))
    assert _series(tmp_path / "training_output.txt", "loss")[50] == 3.9


def test_a_last_line_cut_inside_its_number_stays_unread(tmp_path: Path):
    (tmp_path / "training_output.txt").write_text(_chatbot_console("Iteration: 50; Percent complete: 1.0%; "
                                                                   "Average loss: 3.9"))
    assert 50 not in _series(tmp_path / "training_output.txt", "loss")


def test_opennmts_number_of_parameters_is_the_models_size():
    """kmilink_OpenNMT-Indonesia-Bima: `[... INFO] * number of parameters: 10240656`, OpenNMT-py's whole count."""
    from forensics.ingest.console_facts import console_facts
    text = ("[2025-09-21 08:38:44,809 INFO] encoder: 4113920\n[2025-09-21 08:38:44,810 INFO] decoder: 6126736\n"
            "[2025-09-21 08:38:44,810 INFO] * number of parameters: 10240656\n")
    assert console_facts(text)["console_n_params"] == 10240656
    assert "console_n_params" not in console_facts("[2025-09-21 08:38:44,809 INFO] encoder: 4113920\n")
