"""Logs the tool did not read, or read wrongly, found on real runs (day 7): each test builds a small log as the real
program writes it and checks that it is read as the run it is."""
from __future__ import annotations

import json
import math

import forensics


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _series(analysis, metric):
    """{step: value} of one metric in the analysis' final history."""
    rows = analysis.timeline.final()
    rows = rows[rows["metric"] == metric]
    return dict(zip(rows["step"].astype(int), rows["value"]))


# ---- (1) the Meta research repositories' log.txt: JSON lines, one dict an epoch ---------------------------------------


def _meta_log(path, epochs, loss, test=None):
    """DINO / DeiT / MAE / ConvNeXt main_*.py: `log_stats = {**{f'train_{k}': v ...}, **{f'test_{k}': v ...},
    'epoch': epoch}` written with `f.write(json.dumps(log_stats) + "\\n")` to output_dir/log.txt."""
    with open(path, "w") as fh:
        for i, epoch in enumerate(epochs):
            stats = {"train_loss": loss(i), "train_lr": 5e-4 * (1 - i / len(epochs)), "train_wd": 0.04 + 0.001 * i}
            if test is not None:
                stats.update({"test_loss": test(i), "test_acc1": 40.0 + i, "test_acc5": 70.0 + i})
            stats.update({"epoch": epoch, "n_parameters": 21_000_000})
            fh.write(json.dumps(stats) + "\n")


def test_a_dino_log_txt_stuck_at_ln_of_its_head_is_read_and_never_learned(tmp_path):
    """DINO's log.txt (one `{"train_loss", "train_lr", "train_wd", "epoch"}` line an epoch) whose loss sits at
    ln(65536) on every line: the file was not read at all (NotARunDirectory); it is a JSON-lines log at its epochs."""
    _meta_log(tmp_path / "log.txt", range(100, 112), lambda i: math.log(65536) - 1e-6)
    a = _analyze(tmp_path)
    assert a.status == "broken" and a.first_incident.kind == "never_learned"
    assert a.first_incident.step == 100
    assert any("epoch is its step" in s.reason for s in a.skipped if s.note)


def test_a_deit_log_txt_with_test_loss_reads_train_as_loss_and_test_as_eval(tmp_path):
    """DeiT / MAE finetune / ConvNeXt log.txt with `test_loss` / `test_acc1` beside `train_loss`, under any name
    (train.log): train_loss is the training loss, test_loss the held-out one; the epochs are the steps."""
    _meta_log(tmp_path / "train.log", range(0, 30), lambda i: 6.9 * 0.93 ** i, test=lambda i: 6.5 * 0.95 ** i)
    a = _analyze(tmp_path)
    loss, held = _series(a, "loss"), _series(a, "eval_loss")
    assert sorted(loss) == list(range(30)) and sorted(held) == list(range(30))
    assert math.isclose(loss[0], 6.9) and math.isclose(held[29], 6.5 * 0.95 ** 29)
    assert a.status == "healthy", [f.message for f in a.findings]


def test_a_console_with_one_json_line_is_still_a_console(tmp_path):
    """A console whose first line is a JSON dict of the run's arguments (no step, no loss) and then HF dict lines is
    read by the console reader as before, not as JSON lines."""
    lines = [json.dumps({"model": "gpt2", "lr": 1e-4})]
    lines += [str({"loss": round(3.0 - 0.1 * i, 3), "learning_rate": 1e-4, "epoch": round(0.1 * i, 2)})
              for i in range(1, 20)]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    assert {s.format for s in a.timeline.segments} != {"jsonl"}
    assert len(_series(a, "loss")) == 19


# ---- (2) a hand-written GRPO loop's python-logging lines: `rl_loss: X, ..., l2_norm: G, reward_data: {...}` ----------


def _grpo_log(path, steps, reward_of, record=None):
    """CS336 assignment 5's GRPO loop: `logger.info(f"rl_loss: {loss}, time: {t}, l2_norm: {norm}, token_entropy:
    {h}, reward_data: {reward_data}")` once a GRPO step (no step printed; a `rollout batch N generated` line before
    it, a sampled prompt and the model's output now and then)."""
    stamp = "2025-09-23 09:01:00,984 - train - INFO - "
    lines = []
    for i in range(steps):
        lines.append(f"{stamp}rollout batch {i} generated, length: 256")
        data = record(i) if record else {"total_num": 256, "total_reward": float(round(256 * reward_of(i))),
                                           "total_format_reward": 240.0, "total_answer_reward": 0.0}
        loss = 0.0 if i % 3 else -0.0012 * (1 + i % 2)
        lines.append(f"{stamp}rl_loss: {loss}, time: {110.0 + i % 7}, l2_norm: {0.1 + 0.003 * i}, "
                     f"token_entropy: {0.8 - 0.002 * i}, reward_data: {data}")
        if i % 8 == 0:
            lines += [f"{stamp}prompt: A conversation between User and Assistant. The loss: of nothing.",
                      "Assistant: <think> 2 + 2 = 4 </think> <answer> 4 </answer>",
                      f"{stamp}rollout batch {i} done, eval_acc: {0.48 + 0.001 * i}"]
    path.write_text("\n".join(lines) + "\n")


def test_a_grpo_loops_rl_loss_lines_are_read_with_the_mean_reward(tmp_path):
    """The loop's lines were not read at all (NotARunDirectory): `rl_loss` is the loss (the objective's name), the
    l2_norm the gradient norm, total_reward / total_num the step's mean reward; each line one step, said in a note."""
    _grpo_log(tmp_path / "rl_grpo.log", 60, lambda i: 0.45 + 0.005 * i + 0.03 * ((i * 7) % 5 - 2) / 2)
    a = _analyze(tmp_path)
    loss, reward, norm = _series(a, "loss"), _series(a, "reward"), _series(a, "grad_norm")
    assert sorted(loss) == list(range(1, 61)) and sorted(reward) == list(range(1, 61))
    assert math.isclose(reward[1], round(256 * (0.45 - 0.03)) / 256) and math.isclose(norm[60], 0.1 + 0.003 * 59)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert any("print no step" in s.reason for s in a.skipped if s.note)


def test_a_reward_dict_without_a_total_over_a_count_gives_no_reward(tmp_path):
    """A dict of other counts (`{'correct': 130, 'seen': 256}`) is no mean reward the reader can tell: the loss and
    grad norm are read, no reward is made up."""
    _grpo_log(tmp_path / "rl.log", 30, None, record=lambda i: {"correct": 100 + i, "seen": 256})
    a = _analyze(tmp_path)
    assert len(_series(a, "loss")) == 30 and "reward" not in set(a.timeline.final()["metric"])


def test_a_held_out_loss_with_a_rate_is_no_training_loss(tmp_path):
    """`val_loss: X, lr: Y` lines (an evaluation summary printing the rate) are not a training loss."""
    (tmp_path / "train.log").write_text("".join(f"val_loss: {2.0 - 0.01 * i}, lr: 1e-4\n" for i in range(30)))
    try:
        a = _analyze(tmp_path)
    except forensics.NotARunDirectory:
        return
    assert "loss" not in set(a.timeline.final()["metric"])


# ---- (3) LitGPT's `iter N step S`: an optimizer step that never advances is no update -------------------------------


def _litgpt_log(path, iters, accumulation, loss):
    """litgpt/finetune/lora.py fit(): `fabric.print(f"Epoch {epoch} | iter {iter_num} step {step_count} | loss train:
    {loss:.3f}, val: {val_loss} | iter time: {t * 1000:.2f} ms{' (step)' if not is_accumulating else ''}")`."""
    lines = []
    for it in iters:
        step = it // accumulation
        lines.append(f"Epoch 1 | iter {it} step {step} | loss train: {loss(it):.3f}, val: n/a | iter time: 45.73 ms"
                     + (" (step)" if it % accumulation == 0 else ""))
    path.write_text("\n".join(lines) + "\n")


def test_litgpt_lines_whose_optimizer_step_never_advances_show_no_learning(tmp_path):
    """17 lines all at `step 1` (gradient accumulation longer than the excerpt) whose printed running-mean loss drifts
    3.72 -> 3.67: the tool called it healthy (the loss fell); no update happened between the lines, so it is a
    warning that nothing shows the run learned (no event, no first incident worse than that)."""
    _litgpt_log(tmp_path / "train.log", range(46, 63), 64, lambda it: 3.73 - 0.004 * (it - 46) + 0.005 * (it % 2))
    a = _analyze(tmp_path)
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence"
    assert "optimizer step" in a.first_incident.message


def test_litgpt_lines_whose_optimizer_step_advances_are_judged_on_their_loss(tmp_path):
    """The same lines where the step goes on (4 micro-batches a step) and the loss falls: healthy, as before."""
    _litgpt_log(tmp_path / "train.log", range(1, 200), 4, lambda it: 3.7 * 0.995 ** it + 0.01 * (it % 3))
    a = _analyze(tmp_path)
    assert a.status == "healthy", [f.message for f in a.findings]
    assert sorted(set(_series(a, "optimizer_step").values()))[-1] == 199 // 4


# ---- (4) a step counter that restarts each epoch under an `[E<n>]` tag goes on --------------------------------------


def test_an_epoch_tag_rising_with_a_restarted_step_counter_numbers_the_steps_on(tmp_path):
    """`print(f"[E{epoch}] step {step} loss {loss:.4f}")` every 10 steps, the counter back at 0 each epoch, the first
    loss of an epoch a single batch's (sometimes higher than the epoch before ended): the tool read each restart as a
    resume and judged only the last attempts. The tag rises with the restart: the run goes on, at (E - 1) x the
    epoch's steps + step."""
    lines = ["trainable params: 5,898,240 || all params: 4,028,366,336 || trainable%: 0.1464"]
    for epoch in range(1, 4):
        for step in range(0, 2000, 10):
            loss = 2.0 / epoch * (1 - step / 4000) * (4.0 if step == 0 else 1.0 + 0.2 * ((step // 10) % 3))
            lines.append(f"[E{epoch}] step {step} loss {loss:.4f}")
        lines.append(f"Epoch {epoch} avg-loss {1.8 / epoch:.4f}")
    (tmp_path / "train_log.txt").write_text("\n".join(lines + ["Training completed!"]) + "\n")
    a = _analyze(tmp_path)
    loss = _series(a, "loss")
    assert len(loss) == 600 and min(loss) == 0 and max(loss) == 5990
    assert not any(s.abandoned for s in a.timeline.segments)
    assert math.isclose(loss[2000], 2.0 / 2 * 4.0)


# ---- (5) known reading quirks: nanochat's `Step N | Training loss:`; `eval/loss` beside `test/loss` ---------------------


def test_a_nanochat_training_line_without_its_total_is_a_training_line(tmp_path):
    """nanochat's chat_sft printing `Step 00012 | Training loss: 1.234567| lrm: 1.000000| num_tokens: 9,876` (no `/M`)
    was read as an evaluation (eval_loss, eval_lr_multiplier): it is the training loss; `Step N | Validation loss:`
    lines stay the evaluation's."""
    lines = []
    for step in range(1, 41):
        lines.append(f"Step {step:05d} | Training loss: {3.0 * 0.97 ** step:.6f}| lrm: 1.000000| num_tokens: 9,876")
        if step % 10 == 0:
            lines.append(f"Step {step:05d} | Validation loss: {3.1 * 0.975 ** step:.6f}")
    (tmp_path / "chat_sft.log").write_text("\n".join(lines) + "\n")
    a = _analyze(tmp_path)
    loss, held = _series(a, "loss"), _series(a, "eval_loss")
    assert sorted(loss) == list(range(1, 41)) and sorted(held) == [10, 20, 30, 40]
    assert "eval_lr_multiplier" not in set(a.timeline.final()["metric"])


def test_tensorboard_eval_loss_and_test_loss_are_two_series(tmp_path):
    """A TensorBoard log with `eval/loss` and `test/loss` at the same steps (torch.utils.tensorboard): both were read
    as eval_loss, one series holding two curves (one of each pair lost); the first held-out split is the eval loss,
    the test split its own series, test_loss."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "runs"))
    for step in range(1, 101):
        writer.add_scalar("train/loss", 3.0 * 0.98 ** step, step)
        if step % 10 == 0:
            writer.add_scalar("eval/loss", 3.1 * 0.985 ** step, step)
            writer.add_scalar("test/loss", 3.3 * 0.985 ** step, step)
    writer.close()
    a = _analyze(tmp_path)
    held, test = _series(a, "eval_loss"), _series(a, "test_loss")
    assert sorted(held) == sorted(test) == list(range(10, 101, 10))
    assert math.isclose(held[50], 3.1 * 0.985 ** 50, rel_tol=1e-6) and math.isclose(test[50], 3.3 * 0.985 ** 50,
                                                                                     rel_tol=1e-6)


def test_tensorboard_test_loss_alone_is_still_the_eval_loss(tmp_path):
    """The torch.utils.tensorboard tutorial's `Loss/train` beside `Loss/test` alone: the test split is the only
    held-out one, so it is the eval loss, as before."""
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tmp_path / "runs"))
    for step in range(1, 51):
        writer.add_scalar("Loss/train", 2.0 * 0.98 ** step, step)
        if step % 10 == 0:
            writer.add_scalar("Loss/test", 2.1 * 0.985 ** step, step)
    writer.close()
    assert sorted(_series(_analyze(tmp_path), "eval_loss")) == [10, 20, 30, 40, 50]
