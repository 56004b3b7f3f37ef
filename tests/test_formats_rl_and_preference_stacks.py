"""Tests of the readers of RL and preference post-training stacks' logs: ROLL, AReaL, slime, EasyR1, TRL, OpenRLHF.

Formats found in the frameworks' own source (fmt6 sweep): RL and preference post-training stacks, alibaba ROLL,
inclusionAI AReaL, THUDM slime, hiyouga EasyR1, TRL's newer trainers (XPO / Nash-MD / CPO / BCO / GKD / PRM / Reward:
all Trainer subclasses, their log_history keeps `loss`), Unsloth's GRPO notebook table, LLaMA-Factory's PPO stage
console and OpenRLHF's DPO / RM bars. Each run below is built as that code prints or writes it (the source file and
line in each docstring; commits: ROLL 8eb27cc, AReaL 4aef98d, slime 624b824, EasyR1 b44b311, TRL f2cd577,
LLaMA-Factory ff6d4d1, OpenRLHF 3c3be62). A failing test is a reader gap; a passing one records coverage (at most one
per framework). An RL run is healthy only where its reward rises; its broken copy has a NaN loss and grad norm from the
25th logged step on."""
from __future__ import annotations

import json
import math

import pytest

from support.format_runs import N, analyze_logs, assert_broken_at, losses, write_file


def rl_losses(nan_at=None):
    """A policy loss near zero (as an RL objective's is), NaN from the `nan_at`-th logged step on."""
    return [v if v != v else round((v - 1.2) / 20, 5) for v in losses(nan_at)]


def reward(i):
    """The mean reward at the i-th logged step (1-based): rising from 0.11 to 0.40."""
    return round(0.1 + i / 100, 4)


def grad_norm(i, nan_at):
    return math.nan if nan_at is not None and i >= nan_at else 0.3


def assert_reads_healthy(a, name, steps=N):
    """`name` (a timeline metric) has `steps` points and the run is healthy."""
    wide = a.timeline.wide()
    assert name in wide, sorted(wide)
    assert int(wide[name].notna().sum()) == steps
    assert a.status == "healthy", (a.status, a.first_incident)


# --- hiyouga EasyR1 -------------------------------------------------------------------------------------------------


def _yaml_float(v):
    """PyYAML's float: `repr().lower()`, `.nan`, a dot put into an exponent form (`1.0e-06`)."""
    if v != v:
        return ".nan"
    text = repr(float(v)).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


def _yaml_dump(data, indent=0):
    """yaml.dump(data, indent=2) of a nested dict of numbers (keys sorted, as PyYAML's default sort_keys)."""
    out = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, dict):
            out.append(" " * indent + f"{key}:")
            out.append(_yaml_dump(value, indent + 2))
        else:
            out.append(" " * indent + f"{key}: {_yaml_float(value) if isinstance(value, float) else value}")
    return "\n".join(out)


def _unflatten(flat):
    """EasyR1 verl/utils/py_functional.py:91 `unflatten_dict` (split on `/`)."""
    out = {}
    for key, value in flat.items():
        *heads, last = key.split("/")
        node = out
        for head in heads:
            node = node.setdefault(head, {})
        node[last] = value
    return out


def easyr1_metrics(i, loss, nan_at):
    """EasyR1's step metrics: verl/workers/actor/dp_actor.py:282-295 (`actor/pg_loss`, `actor/kl_loss`,
    `actor/grad_norm`), fsdp_workers.py:583 (`actor/lr`), trainer/metrics.py:69-79 (`critic/score/mean`, ...),
    ray_trainer.py:631 (`reward/{k}`: the reward function's `overall`, `format`, `accuracy`)."""
    return {"actor/pg_loss": loss, "actor/kl_loss": 0.001 * i, "actor/entropy_loss": 0.5, "actor/pg_clipfrac": 0.001,
            "actor/ppo_kl": 0.0, "actor/grad_norm": grad_norm(i, nan_at), "actor/lr": 1e-06,
            "critic/score/mean": reward(i), "critic/rewards/mean": reward(i), "critic/advantages/mean": 0.0,
            "reward/overall": reward(i), "reward/format": 0.9, "reward/accuracy": reward(i),
            "response_length/mean": 300.0, "timing_s/gen": 10.0, "timing_s/step": 30.0}


def easyr1_console(nan_at=None):
    """EasyR1 verl/utils/logger/logger.py:56-60 ConsoleLogger: `print("Config\\n" + convert_dict_to_str(config))`, then
    per step `print(f"Step {step}\\n" + convert_dict_to_str(unflatten_dict(data)))`, convert_dict_to_str being
    `yaml.dump(data, indent=2)` (py_functional.py:119): a nested, key-sorted YAML block per step, a NaN `.nan`."""
    out = ["Config", "algorithm:", "  adv_estimator: grpo", "  kl_coef: 0.01", "worker:", "  actor:",
           "    model:", "      model_path: Qwen/Qwen2.5-7B-Instruct"]
    for i, loss in enumerate(rl_losses(nan_at), 1):
        out.append(f"Step {i}")
        out.append(_yaml_dump(_unflatten(easyr1_metrics(i, loss, nan_at))))
    return "\n".join(out) + "\n"


def test_easyr1_console_yaml_step_blocks_are_read_and_a_nan_is_broken(tmp_path):
    """EasyR1 verl/utils/logger/logger.py:59-60 prints each step as `Step 1` and a YAML block of the nested metrics
    (`actor:` / `  grad_norm: 0.3` / `  pg_loss: ...`, `critic:` / `  score:` / `    mean: 0.11`). The actor's
    grad norm and the score must be read (actor/grad_norm, critic/score/mean), the clean run healthy, the NaN run
    broken at step 25. The tool: NotARunDirectory ('no training logs or checkpoints found'). Fix: run.py's log hint
    and ingest/stdout.py (a `Step N` line opening an indented YAML block; nested keys joined with `/`, `.nan`)."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", easyr1_console()))
    assert_reads_healthy(a, "grad_norm")
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", easyr1_console(nan_at=25))), 25)


def easyr1_file_log(nan_at=None):
    """EasyR1 verl/utils/logger/logger.py:77-79 FileLogger: `f.write(json.dumps({"step": step,
    **unflatten_dict(data)}) + "\\n")` to {save_checkpoint_path}/experiment_log.jsonl (json.dumps: NaN is `NaN`)."""
    return "".join(json.dumps({"step": i, **_unflatten(easyr1_metrics(i, loss, nan_at))}) + "\n"
                   for i, loss in enumerate(rl_losses(nan_at), 1))


def test_easyr1_experiment_log_jsonl_nested_metrics_are_read_and_a_nan_is_broken(tmp_path):
    """EasyR1 logger.py:67-79 writes checkpoints/<project>/<experiment>/experiment_log.jsonl (beside
    experiment_config.json) with the metrics nested: `{"step": 1, "actor": {"pg_loss": ..., "grad_norm": 0.3},
    "critic": {"score": {"mean": 0.11}}, "reward": {"overall": 0.11}}`. The actor's grad norm must be read. The
    tool: status `warning` (no_learning_evidence at step 0), no metric at all, framework unknown. Fix:
    ingest/jsonl.py / _jsonlines.read_jsonl (flatten nested objects with `/`, as verl's `data` object)."""
    name = "checkpoints/easy_r1/qwen2_5_7b_math/experiment_log.jsonl"
    a = analyze_logs(write_file(tmp_path / "ok", name, easyr1_file_log()))
    assert_reads_healthy(a, "grad_norm")
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", name, easyr1_file_log(nan_at=25))), 25)


# --- THUDM slime ----------------------------------------------------------------------------------------------------


def slime_console(nan_at=None):
    """slime slime/observability/logging_utils.py:19-24 (`[%(asctime)s] %(filename)s:%(lineno)d - %(message)s`);
    slime/backends/megatron_utils/model.py:880-918 `logger.info(f"{role_tag}step {accumulated_step_id}: {log_dict}")`
    with `train/loss`, `train/pg_loss`, `train/kl_loss`, ..., `train/grad_norm`, `train/lr-pg_0`,
    `train/global_batch_size`, `train/step` (accumulated_step_id: from 0); train_metric_utils.py:135
    `logger.info(f"{metric_name} {rollout_id}: {reduced_log_dict}")` for the rollout's `rollout/rewards`,
    `rollout/raw_reward`, `rollout/response_lengths`."""
    out = []
    for i, loss in enumerate(rl_losses(nan_at), 1):
        s = i - 1
        roll = {"rollout/rewards": 0.0, "rollout/raw_reward": reward(i), "rollout/response_lengths": 812.5,
                "rollout/truncated": 0.01, "rollout/log_probs": -0.3, "rollout/advantages": 0.0}
        out.append(f"[2026-08-21 17:{s:02d}:01] train_metric_utils.py:135 - rollout {s}: {roll}")
        log = {"train/loss": loss, "train/pg_loss": loss, "train/entropy_loss": 0.5, "train/pg_clipfrac": 0.001,
               "train/ppo_kl": 0.0, "train/kl_loss": 0.001 * i, "train/grad_norm": grad_norm(i, nan_at),
               "train/lr-pg_0": 1e-06, "train/global_batch_size": 256, "train/step": s}
        out.append(f"[2026-08-21 17:{s:02d}:30] model.py:918 - step {s}: {log}")
    return "\n".join(out) + "\n"


def test_slime_step_dict_lines_are_read_and_a_nan_is_broken(tmp_path):
    """slime model.py:918 `step {N}: {'train/loss': ..., 'train/grad_norm': ..., 'train/step': N}` (N from 0,
    one per train step), between `rollout {N}: {'rollout/raw_reward': ...}` lines (train_metric_utils.py:135). The
    loss must be read at each step, the clean run healthy, the NaN run broken at step 24 (the 25th line). The tool:
    NotARunDirectory. Fix: run.py's log hint and ingest/stdout.py `_pairs` (a dict after `step N: ` whose keys are
    `train/...`; `_LOG_KEYS` has none of them)."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", slime_console()))
    assert_reads_healthy(a, "loss")
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", slime_console(nan_at=25))), 24)


# --- alibaba ROLL ---------------------------------------------------------------------------------------------------


def roll_console(nan_at=None):
    """ROLL roll/utils/logging.py:58-62 (`[%(asctime)s] [%(filename)s (%(lineno)d)] [%(levelname)s]
    [%(WORKER_NAME)s %(RANK)s / %(WORLD_SIZE)s][PID {pid}] %(message)s`), to stdout and to
    ./output/logs/log_rank_DRIVER_0_1.log; roll/pipeline/rlvr/rlvr_pipeline.py:487 `pipeline step {global_step}
    start...`, :838 `logger.info(json.dumps(metrics, ensure_ascii=False))`, :840 `pipeline step {global_step}
    finished` (global_step from 0). The metrics (roll/utils/metrics/metrics_manager.py:41-60, 174-215): `system/
    global_step`, `critic/score/mean`, `critic/rewards/mean`; the actor's (rlvr/actor_worker.py:145-148) keep their
    `@sum` tag here (functionals.py:385 reduce_metrics keeps the key; only the trackers strip it):
    `actor/pg_loss@sum`, `actor/total_loss@sum`, `actor/kl_loss@sum`; the grad norm is `actor_train/grad_norm`
    (megatron_strategy.py:1348, `{worker name}/grad_norm`)."""
    head = "[2026-08-19 15:{:02d}:{:02d}] [rlvr_pipeline.py ({})] [INFO] [DRIVER 0 / 1][PID 4242] "
    out = []
    for i, loss in enumerate(rl_losses(nan_at), 1):
        s = i - 1
        m = {"system/global_step": s, "system/batch_size": 512, "system/samples": (s + 1) * 512,
             "time/step_total": 95.2, "critic/score/mean": reward(i), "critic/rewards/mean": reward(i),
             "critic/advantages/mean": 0.0, "tokens/response_length/mean": 812.5,
             "actor/pg_loss@sum": loss, "actor/kl_loss@sum": 0.001 * i, "actor/total_loss@sum": loss,
             "actor/approxkl@sum": 0.0001, "actor/clipfrac@sum": 0.001, "actor_train/grad_norm": grad_norm(i, nan_at),
             "actor_train/lr": 1e-06, "math_rule/critic/score/mean": reward(i)}
        out.append(head.format(s, 0, 487) + f"pipeline step {s} start...")
        out.append(head.format(s, 50, 837) + json.dumps([{"prompt": "1+1=?", "response": "2"}]))
        out.append(head.format(s, 50, 838) + json.dumps(m, ensure_ascii=False))
        out.append(head.format(s, 51, 840) + f"pipeline step {s} finished")
    return "\n".join(out) + "\n"


def test_roll_rlvr_metrics_json_lines_are_read_and_a_nan_is_broken(tmp_path):
    """ROLL rlvr_pipeline.py:838 logs each step's metrics as one JSON object after the logger's prefix (`[...]
    [DRIVER 0 / 1][PID 4242] {"system/global_step": 0, ..., "actor/pg_loss@sum": ..., "actor_train/grad_norm":
    0.3}`), the step in `system/global_step` (from 0). The grad norm and the score must be read, the clean run
    healthy, the NaN run broken at step 24 (the 25th step). The tool: NotARunDirectory. Fix: run.py's log hint and
    ingest/stdout.py (a JSON object after a logger prefix, step from `system/global_step`); metric_names.py
    (`actor/pg_loss@sum`, `actor_train/grad_norm`)."""
    name = "output/logs/log_rank_DRIVER_0_1.log"
    a = analyze_logs(write_file(tmp_path / "ok", name, roll_console()))
    grad = "grad_norm" if "grad_norm" in a.timeline.wide() else "actor_train/grad_norm"
    assert_reads_healthy(a, grad)
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", name, roll_console(nan_at=25))), 24)


# --- inclusionAI AReaL ----------------------------------------------------------------------------------------------


def _tabulate_fancy_grid(rows):
    """tabulate(rows, floatfmt=".4e", tablefmt="fancy_grid") of rows [key, value, key, value, ...] (no header)."""
    cells = [[c if isinstance(c, str) else format(c, ".4e") if isinstance(c, float) else str(c) for c in r]
             for r in rows]
    ncol = max(len(r) for r in cells)
    cells = [r + [""] * (ncol - len(r)) for r in cells]
    width = [max(len(r[j]) for r in cells) for j in range(ncol)]
    nums = [all(not isinstance(r[j], str) for r in rows if j < len(r)) for j in range(ncol)]

    def line(left, mid, right):
        return left + mid.join("═" * (w + 2) for w in width) + right

    def row(r):
        return "│" + "│".join(" " + (c.rjust(w) if nums[j] else c.ljust(w)) + " "
                              for j, (c, w) in enumerate(zip(r, width))) + "│"

    out = [line("╒", "╤", "╕")]
    for k, r in enumerate(cells):
        out.append(row(r))
        out.append(line("╘", "╧", "╛") if k == len(cells) - 1 else
                   "├" + "┼".join("─" * (w + 2) for w in width) + "┤")
    return "\n".join(out)


def areal_console(nan_at=None):
    """AReaL areal/utils/logging.py:19-22 (file log: `(AReaL) %(asctime)s.%(msecs)03d %(name)s %(levelname)s:
    %(message)s`, date `%Y%m%d-%H:%M:%S`); areal/utils/stats_logger.py:137-162 per step `Epoch {e}/{E} Step {s}/{S}
    Train step {global_step + 1}/{T} done.`, `Stats (1/1):`, then `logger.info("\\n" + tabulate_stats(stats))`,
    areal/utils/printing.py:6-21: key/value pairs four to a row, column-major, `fancy_grid`, floats `.4e`. Names
    (areal/trainer/ppo/actor.py:252, 297-307, 341; engine/fsdp_engine.py:709-713): `ppo_actor/task_reward/avg`,
    `ppo_actor/update/actor_loss/avg`, `ppo_actor/update/grad_norm`, `ppo_actor/update/lr`."""
    out = []
    for i, loss in enumerate(rl_losses(nan_at), 1):
        stats = {"ppo_actor/final_reward/avg": reward(i), "ppo_actor/seq_len/avg": 812.5,
                 "ppo_actor/task_reward/avg": reward(i), "ppo_actor/task_reward/max": 1.0,
                 "ppo_actor/task_reward/min": 0.0, "ppo_actor/update/actor_loss/avg": loss,
                 "ppo_actor/update/clip_ratio/avg": 0.001, "ppo_actor/update/entropy/avg": 0.5,
                 "ppo_actor/update/grad_norm": grad_norm(i, nan_at), "ppo_actor/update/lr": 1e-06,
                 "ppo_actor/update/update_successful": 0.0 if nan_at and i >= nan_at else 1.0,
                 "timeperf/rollout": 60.2}
        items = list(stats.items())
        nrow = (len(items) + 3) // 4
        rows = [[x for j in range(4) if r + j * nrow < len(items) for x in items[r + j * nrow]] for r in range(nrow)]
        t = f"(AReaL) 20260521-18:{i:02d}:00.123 StatsLogger INFO: "
        out.append(t + f"Epoch 1/1 Step {i}/{N} Train step {i}/{N} done.")
        out.append(t + "Stats (1/1):")
        out.append(t + "\n" + _tabulate_fancy_grid(rows))
    return "\n".join(out) + "\n"


@pytest.mark.xfail(strict=True, reason="AReaL's fancy_grid stats tables (four key/value pairs a row) are not read yet")
def test_areal_fancy_grid_stats_tables_are_read_and_a_nan_is_broken(tmp_path):
    """AReaL stats_logger.py:139-162 prints each step as `Epoch 1/1 Step 1/30 Train step 1/30 done.` and a
    tabulate fancy_grid table of key/value pairs, four pairs a row (printing.py:6-21): `│ ppo_actor/update/grad_norm
    │ 3.0000e-01 │ ...`. The actor loss and grad norm must be read per step, the clean run healthy, the NaN run
    broken at step 25. The tool: NotARunDirectory. Fix: run.py's log hint and a console reader for the box table
    (ingest/results_table.py or stdout.py: `│ key │ value │` pairs, step from `Train step N/T done.`);
    metric_names.py (`ppo_actor/update/actor_loss/avg`, `ppo_actor/update/grad_norm`, `ppo_actor/task_reward/avg`)."""
    a = analyze_logs(write_file(tmp_path / "ok", "main.log", areal_console()))
    wide = a.timeline.wide()
    assert any("actor_loss" in k for k in wide) or "loss" in wide, sorted(wide)
    assert a.status == "healthy", (a.status, a.first_incident)
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "main.log", areal_console(nan_at=25))), 25)


# --- TRL's newer trainers ---------------------------------------------------------------------------------------


def _trainer_state(rows):
    return json.dumps({"global_step": N, "max_steps": N, "logging_steps": 1, "epoch": 1.0, "log_history": rows})


def test_trl_xpo_trainer_state_is_read_and_a_nan_is_broken(tmp_path):
    """TRL trl/experimental/xpo/xpo_trainer.py:154-172 (stats `loss/dpo`, `loss/xpo`, `objective/kl`,
    `objective/entropy`, `rewards/chosen|rejected|accuracies|margins`, `logps/...`, `val/model_contain_eos_token`,
    `objective/model_scores`, `objective/ref_scores`, `objective/scores_margin`), logged with the Trainer's `loss`,
    `grad_norm`, `learning_rate`, `epoch`, `step` (OnlineDPOTrainer's _maybe_log_save_evaluate)."""
    def rows(nan_at):
        out = []
        for i, loss in enumerate(losses(nan_at), 1):
            v = (loss - 1.2) / 2 if loss == loss else loss
            out.append({"loss": round(v, 4), "grad_norm": grad_norm(i, nan_at), "learning_rate": 5e-7,
                        "loss/dpo": v, "loss/xpo": -0.01, "objective/kl": 0.01 * i, "objective/entropy": 40.0,
                        "objective/model_scores": reward(i), "objective/ref_scores": 0.1,
                        "objective/scores_margin": reward(i) - 0.1, "rewards/chosen": 0.01 * i,
                        "rewards/rejected": -0.01 * i, "rewards/accuracies": 0.5 + i / 100,
                        "rewards/margins": 0.02 * i, "logps/chosen": -200.0, "logps/rejected": -210.0,
                        "val/model_contain_eos_token": 0.9, "val/ref_contain_eos_token": 0.9, "alpha": 1e-05,
                        "beta": 0.1, "epoch": i / N, "step": i})
        return out

    a = analyze_logs(write_file(tmp_path / "ok", "out/trainer_state.json", _trainer_state(rows(None))))
    assert_reads_healthy(a, "loss")
    assert a.run_profile.framework == "trl"
    broken = analyze_logs(write_file(tmp_path / "nan", "out/trainer_state.json", _trainer_state(rows(25))))
    assert_broken_at(broken, 25)


# --- Unsloth GRPO notebooks -----------------------------------------------------------------------------------------


def unsloth_rl_table(nan_at=None):
    """An Unsloth GRPO notebook's training table copied as text: its header `Step | Training Loss | reward |
    reward_std | completion_length | kl` and the per-reward-function columns
    (`rewards / correctness_reward_func`, unsloth_zoo's patched NotebookProgressCallback writes every logged key,
    `/` spaced), tab separated."""
    cols = ["Step", "Training Loss", "reward", "reward_std", "completion_length", "kl",
            "rewards / xmlcount_reward_func", "rewards / correctness_reward_func"]
    rows = ["\t".join(cols)]
    for i, loss in enumerate(losses(nan_at), 1):
        v = loss if loss != loss else round(0.0001 * i * (loss / 2), 6)
        rows.append("\t".join([str(i), f"{v:.6f}", f"{reward(i) * 5:.6f}", "0.812300", f"{180.5 - i:.6f}",
                               f"{0.001 * i:.6f}", "0.120000", f"{reward(i) * 4:.6f}"]))
    banner = ("==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1\n"
              "   \\\\   /|    Num examples = 7,473 | Num Epochs = 1 | Total steps = 30\n"
              "O^O/ \\_/ \\    Batch size per device = 6 | Gradient accumulation steps = 1\n"
              "\\        /    Data Parallel GPUs = 1 | Total batch size (6 x 1 x 1) = 6\n"
              ' "-____-"     Trainable parameters = 29,933,568 of 3,242,683,392 (0.92% trained)\n')
    return banner + f" [{N}/{N} 12:03, Epoch 0/1]\n" + "\n".join(rows) + "\n"


def test_unsloth_rl_notebook_table_reward_columns_are_read_and_a_nan_is_broken(tmp_path):
    """Unsloth's GRPO notebooks (Llama3.1_(8B)-GRPO.ipynb, Qwen2.5_(3B)-GRPO.ipynb): the printed table's `reward`
    column must be read as the reward (rising: healthy) beside the loss; a NaN `Training Loss` from step 25 is
    broken at 25."""
    a = analyze_logs(write_file(tmp_path / "ok", "notebook_output.txt", unsloth_rl_table()))
    assert_reads_healthy(a, "reward")
    assert a.run_profile.framework == "unsloth"
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "notebook_output.txt", unsloth_rl_table(25))), 25)


# --- LLaMA-Factory PPO stage ----------------------------------------------------------------------------------------


def llamafactory_ppo_console(nan_at=None):
    """LLaMA-Factory src/llamafactory/train/ppo/trainer.py:285-295: every logging_steps, `logs = dict(
    loss=round(loss_meter.avg, 4), reward=round(reward_meter.avg, 4), learning_rate=stats["ppo/learning_rate"],
    epoch=round(step / steps_in_epoch, 2))`, `tqdm.write(str(logs))` (step, from 0, not printed), between the
    tqdm bar's updates."""
    out = ["[INFO|2026-08-01 10:00:00] llamafactory.train.ppo.trainer:143 >> ***** Running training *****",
           "[INFO|2026-08-01 10:00:00] llamafactory.train.ppo.trainer:144 >>   Num examples = 960",
           "[INFO|2026-08-01 10:00:00] llamafactory.train.ppo.trainer:145 >>   Num Epochs = 1"]
    for i, loss in enumerate(losses(nan_at), 1):
        v = loss if loss != loss else round(loss / 10, 4)
        out.append(f"\r  {int(i / N * 100)}%|███     | {i - 1}/{N} [00:{i:02d}<00:30,  1.02s/it]")
        out.append(str({"loss": v, "reward": round(reward(i) * 3, 4), "learning_rate": 1e-05,
                        "epoch": round((i - 1) / N, 2)}))
    return "\n".join(out) + "\n"


def test_llamafactory_ppo_reward_dicts_are_read_and_a_nan_is_broken(tmp_path):
    """LLaMA-Factory ppo/trainer.py:292 `tqdm.write(str(logs))`: `{'loss': 0.25, 'reward': 0.33, 'learning_rate':
    1e-05, 'epoch': 0.0}` per logged step; the loss and the reward must be read, the run healthy, the NaN run
    broken at the 25th logged step."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", llamafactory_ppo_console()))
    assert_reads_healthy(a, "reward")
    broken = analyze_logs(write_file(tmp_path / "nan", "train.log", llamafactory_ppo_console(25)))
    assert broken.status == "broken" and broken.first_incident is not None


# --- OpenRLHF DPO / RM bars -----------------------------------------------------------------------------------------


def _tqdm_num(x):
    """tqdm's `format_num` for a postfix value."""
    f = "{0:.3g}".format(x).replace("+0", "+").replace("-0", "-")
    n = str(x)
    return f if len(f) < len(n) else n


def openrlhf_dpo_bar(nan_at=None):
    """OpenRLHF openrlhf/trainer/dpo_trainer.py:140-143 (`tqdm(..., desc="Train step of epoch %d" % epoch)`),
    :188-200 (`logs_dict = {"loss", "acc", "chosen_reward", "reject_reward", "lr", "grad_norm"}`, `nll_loss` with
    an NLL coefficient; `step_bar.set_postfix(logs_dict)`); rm_trainer.py:179-192 the same keys for the reward
    model."""
    out = ["Train epoch:   0%|          | 0/1 [00:00<?, ?it/s]"]
    for i, loss in enumerate(losses(nan_at), 1):
        v = loss if loss != loss else loss / 3.6
        post = {"loss": v, "acc": 0.5 + i / 100, "chosen_reward": 0.01 * i, "reject_reward": -0.01 * i,
                "lr": 5e-07, "grad_norm": grad_norm(i, nan_at)}
        bar = f"\rTrain step of epoch 0:  {int(i / N * 100)}%|███     | {i}/{N} [00:{i:02d}<00:30,  1.02s/it, "
        out.append(bar + ", ".join(f"{k}={_tqdm_num(x)}" for k, x in post.items()) + "]")
    return "".join(out) + "\n"


def test_openrlhf_preference_bar_postfix_is_read_and_a_nan_is_broken(tmp_path):
    """OpenRLHF dpo_trainer.py:200 `step_bar.set_postfix(logs_dict)`: `Train step of epoch 0: 3%|... | 1/30 [...,
    loss=0.694, acc=0.51, chosen_reward=0.01, reject_reward=-0.01, lr=5e-7, grad_norm=0.3]`."""
    a = analyze_logs(write_file(tmp_path / "ok", "train.log", openrlhf_dpo_bar()))
    assert_reads_healthy(a, "loss")
    assert_broken_at(analyze_logs(write_file(tmp_path / "nan", "train.log", openrlhf_dpo_bar(25))), 25)
