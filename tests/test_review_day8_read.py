"""Day 8 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AO2 / AO3).

* HF Trainer dict lines pasted with typographic quotes (`{‘loss’: 1.453, ...}`, huggingface/transformers issue
  33336) are read as the plain-quoted dicts they are.
* DeepSpeed-Chat's PPO lines are put at their own `step: N` (deepspeedai/DeepSpeedExamples issue 586 pastes steps
  259-264), numbered on across epochs where the script's count starts again.
* Old Megatron-LM's step line, its fields without colons (` iteration N/ M | elapsed time per iteration (ms): T |
  learning rate X | lm loss X | loss scale X |`, THUDM/Chinese-Transformer-XL issue 7), is read field by field; a
  loss scale that fell under DeepSpeed's floor and then rose again is a storm the run came through (warning), not
  a run DeepSpeed stopped.
* A divergence whose low is the log's first point states that point as the low (lit-gpt issue 628: 1.70, then
  10-12), not the centred median's mean of it and the jump (6.58).
* A log that counts its lines by iteration and prints the optimizer step beside each (lit-gpt's `iter 1152 step 144:
  loss X`, issues 628 and 689) dates its findings by the optimizer step; one whose step never advances keeps its
  iterations.
* The Trainer dicts of a resumed run, printed after its progress bar (stdout buffered, the bar jumping 0 -> n/T), are
  dated by their own epochs x the steps an epoch makes (the bar's total over the closing summary's epoch), not by
  their position from step 0 (vivsn289/Benchmarking-vanilla-llm-to-validate-forgetting: 1650-3250, not 99-3267).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.divergence import detect_divergence
from forensics.analyzers.overflow import detect_loss_scale_overflow
from forensics.config import Thresholds
from forensics.ingest import stdout
from forensics.ingest.pretrain_lines import parse_line
from forensics.ingest.deepspeed_chat import DeepSpeedChat


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- typographic quotes in a Trainer dict line -------------------------------------------------------------------

def _trainer_dicts(path: Path, open_q: str, close_q: str) -> Path:
    lines = []
    for i in range(12):
        loss = 1.45 + 0.015 * i
        lr = 5e-5 * (1 - 4 * (i + 1) / 63)
        keys = [f"{open_q}{k}{close_q}" for k in ("loss", "grad_norm", "learning_rate", "epoch")]
        lines.append("{" + f"{keys[0]}: {loss:.4f}, {keys[1]}: 2.5, {keys[2]}: {lr}, {keys[3]}: {0.19 * (i + 1):.2f}"
                     + "}\n")
    (path / "train.log").write_text("".join(lines), encoding="utf-8")
    return path


def test_trainer_dicts_with_typographic_single_quotes_are_read(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "\u2018", "\u2019") / "train.log").frame
    assert len(_metric(frame, "loss")) == 12 and _metric(frame, "loss")[0][1] == 1.45
    a = forensics.analyze(tmp_path)
    assert a.run_profile.framework == "hf_trainer"


def test_trainer_dicts_with_typographic_double_quotes_are_read(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "\u201c", "\u201d") / "train.log").frame
    assert len(_metric(frame, "loss")) == 12


def test_plain_quoted_trainer_dicts_read_as_before(tmp_path):
    frame = stdout.read(_trainer_dicts(tmp_path, "'", "'") / "train.log").frame
    assert [v for _, v in _metric(frame, "loss")] == [round(1.45 + 0.015 * i, 4) for i in range(12)]


# ---- DeepSpeed-Chat PPO steps ------------------------------------------------------------------------------------

def _ppo_lines(epochs_steps: list[tuple[int, int]]) -> list[str]:
    lines = []
    for epoch, step in epochs_steps:
        lines += [f"epoch: {epoch}|step: {step}|ppo_ep: 1|act_loss: 0.02|cri_loss: 0.21|unsuper_loss: 0.0",
                  f"average reward score: {0.2 + step / 1000}", "-" * 85]
    return lines


def _ppo_steps(lines: list[str]) -> list[tuple[int, str]]:
    chat = DeepSpeedChat()
    return [(r.step, r.metrics[0][0]) for r in (chat.feed(line) for line in lines) if r is not None]


def test_deepspeed_chat_ppo_lines_are_put_at_their_printed_step():
    steps = _ppo_steps(_ppo_lines([(0, s) for s in range(259, 265)]))
    assert [s for s, name in steps if name == "actor_loss"] == list(range(259, 265))
    assert [s for s, name in steps if name == "reward"] == list(range(259, 265))


def test_a_pasted_ppo_excerpt_is_dated_at_its_own_steps(tmp_path):
    (tmp_path / "train.log").write_text("\n".join(_ppo_lines([(0, s) for s in range(259, 265)])) + "\n")
    frame = stdout.read(tmp_path / "train.log").frame
    assert [s for s, _ in _metric(frame, "reward")] == list(range(259, 265))


def test_deepspeed_chat_ppo_steps_counted_from_0_each_epoch_are_numbered_on():
    steps = _ppo_steps(_ppo_lines([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]))
    assert [s for s, name in steps if name == "actor_loss"] == [0, 1, 2, 3, 4]


def test_a_ppo_log_from_step_0_keeps_its_numbering():
    steps = _ppo_steps(_ppo_lines([(0, s) for s in range(5)]))
    assert [s for s, name in steps if name == "actor_loss"] == [0, 1, 2, 3, 4]


# ---- old Megatron-LM step lines ----------------------------------------------------------------------------------

_OLD_MEGATRON = [(400, "6.758929E+00", "64.0"), (500, "6.286667E+00", "8.0"), (600, "5.763325E+00", "4.0"),
                 (700, "NAN", "4.0"), (800, "5.193296E+00", "0.1"), (900, "4.792100E+00", "0.1"),
                 (1000, "4.454510E+00", "0.1"), (1100, "4.326191E+00", "0.1"), (1200, "3.978439E+00", "0.2")]


def _old_megatron_line(step: int, loss: str, scale: str) -> str:
    return (f" iteration {step:8d}/    3000 | elapsed time per iteration (ms): 11092.2 | learning rate "
            f"{(6.3 + step / 1000):.3f}E-06 | lm loss {loss} | loss scale {scale} |")


def test_old_megatron_fields_without_a_colon_are_read():
    record = parse_line(_old_megatron_line(500, "6.286667E+00", "8.0"))
    assert record.kind == "megatron" and record.step == 500
    assert dict(record.metrics) == {"iteration_time_ms": 11092.2, "learning_rate": 6.8e-06, "loss": 6.286667,
                                    "loss_scale": 8.0}


def test_an_old_megatron_console_shows_its_loss_its_nan_and_its_loss_scale(tmp_path):
    lines = [_old_megatron_line(*row) for row in _OLD_MEGATRON]
    lines.insert(4, "Warning: NaN or Inf found in input tensor.")
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    frame = stdout.read(tmp_path / "train.log").frame
    assert [s for s, _ in _metric(frame, "loss")] == list(range(400, 1300, 100))
    assert [v for _, v in _metric(frame, "loss_scale")][:2] == [64.0, 8.0]
    a = forensics.analyze(tmp_path)
    assert a.run_profile.precision == "fp16"
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("warning", "loss_scale_overflow", 500)
    assert any(f.kind == "nonfinite_metric" and f.step == 700 for f in a.findings)


def test_a_forks_line_with_its_own_fields_before_the_iteration_reads_as_before():
    """CPM-2's `epoch 3/ 10 | global iteration N/ M | ...` keeps its epoch: read as a generic line."""
    record = parse_line("epoch   3/ 10 | global iteration     1360/    3402 | learning rate 3e-06 | lm loss 0.699219 | "
                        "loss scale 1024.0 |")
    assert record.kind == "generic" and dict(record.metrics)["epoch"] == 3.0


def test_a_colon_megatron_line_reads_as_before():
    record = parse_line(" iteration      100/    1000 | consumed samples:        12800 | elapsed time per iteration (ms): "
                        "512.3 | learning rate: 1.500E-04 | global batch size:   128 | lm loss: 7.104E+00 | loss scale: "
                        "65536.0 | grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |")
    assert dict(record.metrics)["loss"] == 7.104 and dict(record.metrics)["loss_scale"] == 65536.0
    assert len(record.metrics) == 9


def _scale(values: list[float]) -> dict:
    return {"loss_scale": pd.Series(values, index=[100 * (i + 4) for i in range(len(values))], dtype="float64")}


def test_a_loss_scale_that_rose_again_after_its_floor_is_a_warning():
    (found,) = detect_loss_scale_overflow(_scale([64, 8, 4, 4, 0.1, 0.1, 0.1, 0.1, 0.2]), Thresholds())
    assert (found.kind, found.severity, found.step) == ("loss_scale_overflow", "warning", 500)
    assert "rose again" in found.message and "stops the run" not in found.message


def test_a_loss_scale_that_ends_at_its_floor_is_still_an_error():
    (found,) = detect_loss_scale_overflow(_scale([64, 8, 4, 1, 2, 1, 1]), Thresholds())
    assert (found.kind, found.severity) == ("loss_scale_overflow", "error")


# ---- the low a divergence message states -------------------------------------------------------------------------

_JUMP = [1.7019, 11.463, 11.7545, 11.5019, 11.4807, 12.1935, 10.022, 10.9364, 10.5513]


def test_a_divergence_from_the_logs_first_point_states_that_point_as_its_low():
    loss = pd.Series(_JUMP, index=range(1151, 1160), dtype="float64")
    (found,) = detect_divergence({"loss": loss}, Thresholds())
    assert found.kind == "divergence" and found.step == 1152
    assert "a low of about 1.702" in found.message and "6.582" not in found.message
    assert found.evidence["floor"] == 1.7019


def test_a_divergence_after_a_long_fall_states_the_smoothed_low_as_before():
    values = [3.0 - 0.05 * i for i in range(40)] + [6.0 + 0.01 * i for i in range(20)]
    (found,) = detect_divergence({"loss": pd.Series(values, index=range(10, 610, 10), dtype="float64")}, Thresholds())
    assert found.step == 410 and "a low of about 1.2 and" in found.message and found.evidence["floor"] == 1.2


# ---- a resumed run's buffered dict lines ------------------------------------------------------------------------

def _buffered_console(path: Path, first: int, total: int, every: int, epochs: int) -> Path:
    """An HF Trainer console whose stdout was buffered: the whole tqdm bar (stderr) first, jumping from 0 to `first`
    where the run resumed, then every dict line, then the summary."""
    per_epoch = total / epochs
    bar = [f"  0%|          | 0/{total} [00:00<?, ?it/s]"]
    bar += [f" {100 * n // total}%|#####     | {n}/{total} [00:{n % 60:02d}<00:05, 3.57s/it]"
            for n in range(first or 1, total + 1, 7)] + [f"100%|##########| {total}/{total} [2:04:36<00:00, 3.57s/it]"]
    lines = ["\r".join(bar)]
    for k, step in enumerate(range(((first // every) + 1) * every, total + 1, every)):
        lines.append("{" + f"'loss': '{0.95 - 0.0002 * (k % 5):.4g}', 'grad_norm': '0.31', 'learning_rate': "
                     f"'{1e-4 * (1 - step / total):.4g}', 'epoch': '{step / per_epoch:.4g}'" + "}")
    lines.append("{'train_runtime': '7476', 'train_samples_per_second': '13.91', 'train_steps_per_second': '0.435', "
                 f"'train_loss': '0.4697', 'epoch': '{epochs}'" + "}")
    (path / "finetune.log").write_text("\n".join(lines) + "\n")
    return path / "finetune.log"


def test_a_resumed_runs_buffered_dicts_are_dated_by_their_epochs():
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        frame = stdout.read(_buffered_console(Path(tmp), 1627, 3252, 50, 2)).frame
    steps = [s for s, _ in _metric(frame, "loss")]
    assert len(steps) == 33 and abs(steps[0] - 1650) <= 2 and abs(steps[-1] - 3250) <= 2


def test_a_buffered_run_from_step_0_keeps_its_position_steps(tmp_path):
    frame = stdout.read(_buffered_console(tmp_path, 0, 3252, 50, 2)).frame
    steps = [s for s, _ in _metric(frame, "loss")]
    assert steps[:3] == [50, 100, 150] and len(steps) == 65


# ---- findings of an iteration-counted log dated by its optimizer step --------------------------------------------

def _litgpt_log(path: Path, losses: list[float], first_iter: int, accumulation: int) -> Path:
    lines = []
    for k, loss in enumerate(losses):
        it = first_iter + k
        stepping = (it + 1) % accumulation == 0
        step = (it + 1) // accumulation
        lines.append(f"iter {it} step {step}: loss {loss:.4f}, iter time: 1106.53ms{' (optimizer.step)' if stepping else ''}")
    (path / "train.log").write_text("\n".join(lines) + "\n")
    return path


def test_a_divergence_in_an_iteration_counted_log_is_dated_by_its_optimizer_step(tmp_path):
    a = forensics.analyze(_litgpt_log(tmp_path, _JUMP, 1151, 8))
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "divergence", 144)
    assert "iteration 1152 is optimizer step 144" in a.first_incident.message


def test_a_flat_loss_in_an_iteration_counted_log_is_dated_by_its_optimizer_step(tmp_path):
    a = forensics.analyze(_litgpt_log(tmp_path, [10.8259] * 23, 76, 2))
    assert (a.first_incident.kind, a.first_incident.step) == ("never_learned", 38)


def test_an_iteration_counted_log_whose_optimizer_step_never_advances_keeps_its_iterations(tmp_path):
    a = forensics.analyze(_litgpt_log(tmp_path, [3.72 - 0.003 * k for k in range(17)], 46, 64))
    assert (a.first_incident.kind, a.first_incident.step) == ("no_learning_evidence", 46)


def test_a_log_without_an_optimizer_step_is_dated_as_before(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"iter {i}: loss {v:.4f}, time 1106.53ms\n"
                                                for i, v in zip(range(1151, 1160), _JUMP)))
    a = forensics.analyze(tmp_path)
    assert (a.first_incident.kind, a.first_incident.step) == ("divergence", 1152)


# ---- a dict line pasted without the bar above it -----------------------------------------------------------------

def _pasted_from_mid_run(path: Path, first_bar: int | None) -> Path:
    """A paste that begins with a dict line whose bar was cut, then `bar, dict` pairs at steps 2565-2569 of 5197 (the
    HF Trainer's console logging every step); with `first_bar`, the first dict keeps its bar too."""
    lines = [] if first_bar is None else [f" 49%|████▉     | {first_bar}/5197 [4:10:10<4:05:00,  5.72s/it]\n"]
    lines.append("{'loss': 0.7358, 'learning_rate': 1.2e-05, 'epoch': 0.49}\n")
    for step, loss in zip(range(2565, 2570), (0.7453, 4.2651, 0.7702, 0.7311, 0.7517)):
        lines.append(f" 49%|████▉     | {step}/5197 [4:10:{step - 2500}<4:05:00,  5.72s/it]\n")
        lines.append(f"{{'loss': {loss}, 'learning_rate': 1.2e-05, 'epoch': 0.49}}\n")
    (path / "train.log").write_text("".join(lines), encoding="utf-8")
    return path / "train.log"


def test_a_first_dict_without_its_bar_is_dated_back_from_the_bar_dated_ones(tmp_path):
    """haotian-liu/LLaVA issue 918: the paste's first dict has no bar above it (the tool put it at 428, 2569 / 6)."""
    steps = [s for s, _ in _metric(stdout.read(_pasted_from_mid_run(tmp_path, None)).frame, "loss")]
    assert steps == [2564, 2565, 2566, 2567, 2568, 2569]


def test_dicts_that_each_follow_their_bar_keep_the_bars_steps(tmp_path):
    steps = [s for s, _ in _metric(stdout.read(_pasted_from_mid_run(tmp_path, 2564)).frame, "loss")]
    assert steps == [2564, 2565, 2566, 2567, 2568, 2569]
