"""LLaMA-Factory, ms-swift and generic JSON-lines readers, on lines built as their writers build them."""
from __future__ import annotations

import json
import math

import pytest

from forensics.errors import UnreadableFile
from forensics.ingest import jsonl, llamafactory, swift


def _values(frame, metric):
    rows = frame[frame["metric"] == metric]
    return rows["step"].tolist(), rows["value"].tolist()


def _lf_line(step, total, loss=None, eval_loss=None, lr=None, epoch=0.0, lr_key="lr"):
    """LogCallback.on_log of LLaMA-Factory (FORMATS.md section 7): None values dropped, json.dumps."""
    logs = dict(current_steps=step, total_steps=total, loss=loss, eval_loss=eval_loss, predict_loss=None,
                reward=None, accuracy=None, epoch=epoch, percentage=round(step / total * 100, 2),
                elapsed_time="0:09:01", remaining_time="5:29:08")
    logs[lr_key] = lr
    return json.dumps({k: v for k, v in logs.items() if v is not None}) + "\n"


def test_llamafactory_train_eval_and_final_lines(tmp_path):
    path = tmp_path / "trainer_log.jsonl"
    path.write_text(_lf_line(10, 30, loss=2.203, lr=2.63e-05, epoch=0.08)
                    + _lf_line(20, 30, loss=math.nan, lr=5e-05, epoch=0.16)
                    + _lf_line(20, 30, eval_loss=1.9, epoch=0.16)
                    + _lf_line(30, 30, loss=0.0, lr=1e-6, epoch=0.24, lr_key="learning_rate")
                    + _lf_line(30, 30, epoch=0.24))
    rec = llamafactory.read(path)
    steps, loss = _values(rec.frame, "loss")
    assert steps == [10, 20, 30] and loss[0] == 2.203 and math.isnan(loss[1]) and loss[2] == 0.0
    assert _values(rec.frame, "learning_rate") == ([10, 20, 30], [2.63e-05, 5e-05, 1e-6])
    assert _values(rec.frame, "eval_loss") == ([20], [1.9])
    assert set(rec.frame["metric"]) == {"loss", "learning_rate", "eval_loss", "epoch"}  # no percentage, no times
    assert rec.meta["max_steps"] == 30 and rec.format == "llamafactory"


def test_llamafactory_v1_lines_with_step_and_grad_norm(tmp_path):
    path = tmp_path / "trainer_log.jsonl"
    lines = [{"epoch": 0.1, "step": s, "loss": 1.0 / s, "grad_norm": 0.5 * s, "learning_rate": 1e-4,
              "total_steps": 3} for s in (1, 2, 3)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rec = llamafactory.read(path)
    assert _values(rec.frame, "grad_norm") == ([1, 2, 3], [0.5, 1.0, 1.5])


def test_cut_last_line_is_a_warning(tmp_path):
    path = tmp_path / "trainer_log.jsonl"
    path.write_text(_lf_line(10, 30, loss=2.0, lr=1e-5) + _lf_line(20, 30, loss=1.0, lr=1e-5)[:25])
    rec = llamafactory.read(path)
    assert _values(rec.frame, "loss") == ([10], [2.0]) and "cut" in rec.warnings[0]


def test_not_json_lines_is_unreadable(tmp_path):
    path = tmp_path / "trainer_log.jsonl"
    path.write_bytes(b"\x00\x01 binary junk\n")
    with pytest.raises(UnreadableFile):
        llamafactory.read(path)
    path.write_bytes(b"caf\xe9\n")
    with pytest.raises(UnreadableFile, match="UTF-8"):
        llamafactory.read(path)


def _swift_line(logs, step, max_steps, v3=True):
    """ms-swift add_train_message: step fraction string, float rounding, times, memory; json.dumps."""
    logs = {k: round(v, 8) if isinstance(v, float) else v for k, v in logs.items()}
    logs["global_step/max_steps"] = f"{step}/{max_steps}"
    if v3:
        logs["percentage"] = f"{step / max_steps * 100:.2f}%"
    logs["elapsed_time"], logs["remaining_time"] = "1m 2s", "3m 4s"
    logs["memory(GiB)"], logs["train_speed(iter/s)"] = 3.82, 0.157583
    return json.dumps(logs, ensure_ascii=False) + "\n"


def test_swift_steps_from_fraction_and_summary_not_double_counted(tmp_path):
    history = [{"loss": 7.39256144, "grad_norm": 22.3578167, "learning_rate": 1e-4, "token_acc": 0.345, "step": 1},
               {"loss": math.nan, "grad_norm": math.nan, "learning_rate": 1e-4, "token_acc": 0.5, "step": 10},
               {"eval_loss": 1.25, "eval_token_acc": 0.6, "step": 10}]
    text = "".join(_swift_line({k: v for k, v in h.items() if k != "step"}, h["step"], 20) for h in history)
    text += _swift_line({"train_runtime": 100.0, "train_loss": 3.5}, 20, 20)
    summary = {"last_model_checkpoint": "out/checkpoint-20", "best_model_checkpoint": "out/checkpoint-10",
               "best_metric": 1.25, "global_step": 20, "log_history": history, "memory": {"cuda:0": "3.82GiB"}}
    path = tmp_path / "logging.jsonl"
    path.write_text(text + json.dumps(summary) + "\n")
    rec = swift.read(path)
    steps, loss = _values(rec.frame, "loss")
    assert steps == [1, 10] and loss[0] == 7.39256144 and math.isnan(loss[1])
    assert _values(rec.frame, "eval_loss") == ([10], [1.25])
    assert _values(rec.frame, "train_loss") == ([20], [3.5])
    assert "percentage" not in set(rec.frame["metric"])
    assert rec.meta["best_model_checkpoint"] == "out/checkpoint-10" and rec.meta["max_steps"] == 20


def test_swift_megatron_iteration_and_old_plain_global_step(tmp_path):
    path = tmp_path / "logging.jsonl"
    path.write_text(json.dumps({"loss": 2.0, "iteration": "5/50"}) + "\n"
                    + json.dumps({"loss": 1.0, "acc": 0.5, "global_step": 10}) + "\n")
    assert _values(swift.read(path).frame, "loss") == ([5, 10], [2.0, 1.0])


def test_generic_jsonl_with_step_key_and_numeric_strings(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "train/loss": 2.5, "lr": "1e-4", "phase": "warmup", "hist": [1, 2]}\n'
                    '{"global_step": 2, "train/loss": NaN, "grad_norm": Infinity}\n'
                    '{"no_step": 3, "loss": 9}\n')
    rec = jsonl.read(path)
    got = list(zip(rec.frame["step"], rec.frame["metric"], [str(v) for v in rec.frame["value"].tolist()]))
    assert got == [(1, "loss", "2.5"), (1, "learning_rate", "0.0001"), (2, "loss", "nan"), (2, "grad_norm", "inf")]
    assert "1 lines without a step" in rec.warnings[0]


def _two_writers(total=200):
    """Two processes appending LogCallback lines for the same steps (each node's local rank 0 of a
    2-node job): the all-reduced loss is the same in both, their elapsed times differ. For the
    first 20 steps they write in turn (each step twice), then writer B lags one line behind A."""
    line = {s: (lambda who, s=s: _lf_line(s, total, loss=round(3.0 - s / 100, 4), lr=2e-5, epoch=s / total)
                .replace('"0:09:01"', f'"0:0{who}:{s % 60:02d}"')) for s in range(1, total + 1)}
    out = []
    for s in range(1, 21):
        out += [line[s](1), line[s](2)]
    for s in range(21, total + 1):
        out += [line[s](1), line[s - 1](2)] if s > 21 else [line[s](1)]
    out.append(line[total](2))
    return "".join(out)


def test_llamafactory_log_of_two_writers_is_read_once_with_one_note(tmp_path):
    from forensics.ingest import read_logs
    from forensics.discover.run import discover
    from forensics.timeline import build_timeline

    path = tmp_path / "trainer_log.jsonl"
    path.write_text(_two_writers())
    rec = llamafactory.read(path)
    steps, loss = _values(rec.frame, "loss")
    assert steps == list(range(1, 201)) and loss == [round(3.0 - s / 100, 4) for s in range(1, 201)]
    assert len(rec.notes) == 1 and rec.notes[0].startswith("records written twice: 200 of its 400 lines")
    records, skipped = read_logs(discover(tmp_path))
    assert [s.reason for s in skipped] == list(rec.notes)
    assert len(build_timeline(records).segments) == 1  # not ~180 resumes


def test_a_resume_that_replays_the_same_values_is_not_taken_for_two_writers(tmp_path):
    """A resume from checkpoint-50 after step 80 logs steps 51.. again with the same (rounded)
    values: the copies come 30 lines after their originals, so they stay a second attempt."""
    path = tmp_path / "trainer_log.jsonl"
    steps = list(range(1, 81)) + list(range(51, 101))
    path.write_text("".join(_lf_line(s, 100, loss=round(3.0 - s / 100, 4), lr=2e-5) for s in steps))
    rec = llamafactory.read(path)
    assert rec.notes == ()
    assert _values(rec.frame, "loss")[0] == steps


def _llamafactory_log(tmp_path, closing_eval: float):
    lines = [{"current_steps": s, "total_steps": 60, "loss": 1.0 - s / 100, "lr": 1e-4, "epoch": s / 20}
             for s in range(10, 70, 10)]
    lines.insert(2, {"current_steps": 20, "total_steps": 60, "eval_loss": 0.0082, "epoch": 1.0})
    lines.insert(5, {"current_steps": 40, "total_steps": 60, "eval_loss": 0.0390, "epoch": 2.0})
    lines.append({"current_steps": 8, "total_steps": 8, "eval_loss": closing_eval, "epoch": 3.0})
    path = tmp_path / "trainer_log.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    from forensics.ingest import llamafactory
    return llamafactory.read(path)


def test_llamafactorys_closing_evaluation_is_at_the_last_training_step_not_at_its_own_batch_count(tmp_path):
    """CoderJzy/llm: after 720 training steps the closing evaluate() logs current_steps 8 of total_steps 8 (eval
    batches); read as step 8 it made the first evaluation look like the best one."""
    rec = _llamafactory_log(tmp_path, 0.0170)
    evals = rec.frame[rec.frame["metric"] == "eval_loss"]
    assert dict(zip(evals["step"], evals["value"])) == {20: 0.0082, 40: 0.0390, 60: 0.0170}
    assert rec.meta["max_steps"] == 60


def test_a_closing_evaluation_equal_to_an_earlier_one_is_the_same_weights_again_and_left_out(tmp_path):
    rec = _llamafactory_log(tmp_path, 0.0082)  # load_best_model_at_end: the step-20 checkpoint evaluated again
    evals = rec.frame[rec.frame["metric"] == "eval_loss"]
    assert dict(zip(evals["step"], evals["value"])) == {20: 0.0082, 40: 0.0390}
    assert rec.notes == ()  # nothing was left unread: no line for the 'skipped' list


_VOICE_EDITS = ('{"epoch": 0, "step": 0, "lr": 0.0001, "nll": 0.502733760140257}\n'
                '{"epoch": 0, "step": 1, "lr": 9.777777777777778e-05, "nll": 0.4867911480333163}\n'
                '{"epoch": 0, "step": 2, "lr": 9.555555555555557e-05, "nll": 0.4446262221318953}\n'
                '{"epoch": 0, "val_nll": 0.07513519626661307}\n'
                '{"epoch": 1, "step": 3, "lr": 9.333333333333334e-05, "nll": 0.3271}\n')


def test_a_logged_nll_is_the_loss_where_no_key_is_named_a_loss(tmp_path):
    """sundial-org_voice-edits' out/train_log.jsonl: an SFT's mean negative log-likelihood a token, `nll`, is its
    cross-entropy loss."""
    path = tmp_path / "train_log.jsonl"
    path.write_text(_VOICE_EDITS)
    frame = jsonl.read(path).frame
    assert _values(frame, "loss") == ([0, 1, 2, 3], [0.502733760140257, 0.4867911480333163, 0.4446262221318953,
                                                     0.3271])


def test_an_nll_beside_a_loss_stays_its_own_series(tmp_path):
    """A VAE's `loss` (nll + kl) or a label-smoothed loss: the nll logged beside it is a part of the loss, not it."""
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "loss": 2.9, "nll": 2.5, "kl": 0.4}\n{"step": 2, "loss": 2.7, "nll": 2.4, "kl": 0.3}\n')
    frame = jsonl.read(path).frame
    assert _values(frame, "loss") == ([1, 2], [2.9, 2.7])
    assert _values(frame, "nll") == ([1, 2], [2.5, 2.4])


_RUN_START = ('{"timestamp": 1783899717.1694412, "event": "run_start", "config": {"out_dir": "out", "init_from": '
              '"scratch", "dataset": "tinystories", "batch_size": 12, "block_size": 1024, "n_layer": 12, '
              '"learning_rate": 0.0006, "max_iters": 2000, "dtype": "bfloat16", "compile": true}, '
              '"num_params": 123587328}\n')


def _train_steps(first: int = 0, n: int = 30) -> str:
    return "".join(json.dumps({"timestamp": 1783899759.0 + i, "event": "train_step", "iter": i,
                               "loss": 10.967 - i / 10, "lr": 3e-7 * (i + 1)}) + "\n" for i in range(first, n))


def test_a_metrics_logs_opening_config_record_gives_the_runs_precision_and_size(tmp_path):
    """czhou578_train-gpt2's out/metrics.jsonl: nanoGPT's globals and the model's count in a run_start record."""
    import forensics
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "metrics.jsonl").write_text(_RUN_START + _train_steps())
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.precision, profile.model_params, profile.method) == ("bf16", 123587328, "full")


def test_a_config_record_in_mid_log_is_no_runs_config(tmp_path):
    """The same record after the first step line (a second launch's, or a step's own): not read as the run's."""
    import forensics
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "metrics.jsonl").write_text(_train_steps(0, 1) + _RUN_START + _train_steps(1, 30))
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.precision, profile.model_params) == ("unknown", None)


def test_a_held_out_nll_logged_after_hundreds_of_step_rows_is_the_eval_loss(tmp_path):
    """`nll` every step and `val_nll` once an epoch of 250 steps: the held-out key first appears past row 200, and is
    still the eval loss (second review of session 28: the keys were gathered from the first 200 rows only)."""
    rows = []
    for epoch in range(3):
        rows += [{"step": epoch * 250 + s, "nll": 3.0 - 0.001 * (epoch * 250 + s)} for s in range(250)]
        rows.append({"step": epoch * 250 + 249, "epoch": epoch, "val_nll": 2.5 - 0.1 * epoch})
    path = tmp_path / "train_log.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    frame = jsonl.read(path).frame
    assert _values(frame, "eval_loss") == ([249, 499, 749], [2.5, 2.4, 2.3])
