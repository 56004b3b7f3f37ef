"""What verl's and torchtitan-family consoles leave, read as their users expect.

* A verl console that stopped before its first `step:N - ...` line (an out-of-memory error in the first optimizer
  step, a TPU port stuck compiling) is still a training run's console: verl pprints its whole config as it starts
  (`{'actor_rollout_ref': {'actor': {...`). A warning naming the crash, never 'not a run'.
* A torchtitan-derived trainer that prints `step=N global_avg_loss=X global_max_loss=Y throughput(tps)=...` (saforem2's
  mmm.train) is read: its averaged loss is the loss, the worst rank's max loss keeps its own name. Prose that holds
  `step=` and a hand-written loop's `step=3 loss=2.1` are not taken for it.
* reward_decline judges verl's held-out reward (`val-core/<data>/reward/mean@1`) where one is logged, and a swing of
  the train reward inside its own noise is no decline.
* verl's printed RL-trainer config names the framework (verl), the objective (rl) and, with no LoRA key in it
  (`lora_rank` absent, as in older verl), the method full: the whole actor is trained. A config that is not verl's says
  nothing of the method.
* Model size and precision from the consoles' own lines: torchtitan's `Model <name> size: N total parameters` and its
  echoed `--training.mixed_precision_param=bfloat16`, lit-gpt's `Total parameters N`, Lightning's `Using 16-bit
  Automatic Mixed Precision (AMP)`, Megatron's arguments and rank (0, 0) count behind an MPI launcher's `[host:0]:`
  prefix (beating a size in the file's name).
The consoles are written as the real programs print them: Ray's `(TaskRunner pid=N)` prefix on every line of the
driver, pprint's indented dict, tqdm's `Training Progress` bar.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forensics
from forensics.analyzers.reward_decline import detect_reward_decline
from forensics.config import Thresholds
from forensics.errors import NotARunDirectory
from forensics.ingest.pretrain_lines import parse_line

_RAY = "\x1b[36m(TaskRunner pid=563119)\x1b[0m "

VERL_CONFIG = "".join(_RAY + line + "\n" for line in (
    "{'actor_rollout_ref': {'actor': {'clip_ratio': 0.2,",
    "                                 'fsdp_config': {'dtype': 'bfloat16',",
    "                                                 'param_offload': False},",
    "                                 'optim': {'lr': 1e-06,",
    "                                           'lr_warmup_steps': -1}},",
    "                       'model': {'lora_rank': 0,",
    "                                 'path': 'Qwen/Qwen2.5-0.5B-Instruct'},",
    "                       'rollout': {'dtype': 'bfloat16', 'n': 4}},",
    " 'algorithm': {'adv_estimator': 'grpo', 'kl_ctrl': {'kl_coef': 0.001}},",
    " 'trainer': {'total_epochs': 1, 'total_training_steps': 3}}",
))

STARTED = (VERL_CONFIG
           + "\x1b[36m(WorkerDict pid=565738)\x1b[0m Qwen2ForCausalLM contains 494.03M parameters\n"
           + _RAY + "Total training steps: 3\n"
           + _RAY + "Training Progress:   0%|          | 0/3 [00:00<?, ?it/s]\n")

OOM_IN_FIRST_STEP = STARTED + _RAY + "Training Progress:   0%|          | 0/3 [14:21<?, ?it/s]\n" + """\
Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'trainer.total_training_steps=3']
Traceback (most recent call last):
  File "/workspace/verl/verl/trainer/main_ppo.py", line 42, in main
    run_ppo(config)
  File "/workspace/verl/verl/trainer/main_ppo.py", line 96, in run_ppo
    ray.get(runner.run.remote(config))
ray.exceptions.RayTaskError(OutOfMemoryError): \x1b[36mray::TaskRunner.run()\x1b[39m (pid=563119, ip=172.17.0.8)
  File "/usr/local/lib/python3.12/dist-packages/torch/optim/adam.py", line 213, in step
    adam(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 234.00 MiB. GPU 0 has a total capacity of 79.11 GiB \
of which 99.31 MiB is free.
"""


def _verl_step(step: int, score: float) -> str:
    return (f"{_RAY}step:{step} - actor/entropy:0.512 - actor/pg_loss:{0.01 * (-1) ** step:.3f} - "
            f"actor/grad_norm:{0.30 + 0.01 * (step % 3):.3f} - actor/lr:0.000 - critic/score/mean:{score:.3f} - "
            f"critic/rewards/mean:{score:.3f} - response_length/mean:{180 + step:.3f} - timing_s/step:41.250\n")


def _folder(tmp_path, text: str, name: str = "verl_demo.log"):
    (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_verl_console_that_ran_out_of_memory_in_its_first_step_is_a_warning_naming_the_crash(tmp_path):
    a = forensics.analyze(_folder(tmp_path, OOM_IN_FIRST_STEP))
    assert a.status == "warning"
    assert a.first_incident.kind == "run_crashed" and a.first_incident.step == 0
    assert "OutOfMemoryError" in a.first_incident.message


def test_a_verl_console_stopped_before_its_first_step_without_an_error_shows_no_learning(tmp_path):
    a = forensics.analyze(_folder(tmp_path, STARTED + "2025-07-18 19:17:05.123 compiling graph 17\n" * 3))
    assert a.status == "warning"
    assert a.first_incident.kind == "no_learning_evidence"


def test_a_verl_console_that_logged_steps_is_read_from_its_steps(tmp_path):
    """Not fire: a run that logged its steps is judged on them (a rising reward), no crash before a first step."""
    steps = "".join(_verl_step(s, 0.20 + 0.02 * s) for s in range(1, 31))
    a = forensics.analyze(_folder(tmp_path, STARTED + steps + "Training Progress: 100%|##########| 30/30\n"))
    assert a.status == "healthy", [f.message for f in a.findings]
    assert "run_crashed" not in {f.kind for f in a.findings}


def test_a_notes_file_quoting_verls_config_alone_is_no_run(tmp_path):
    """Not fire: the printed config alone (pasted in notes) is one sign, not a training console."""
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_folder(tmp_path, "Our settings:\n" + VERL_CONFIG, name="notes.txt"))


def _titan_key_value_console(max_loss_at_60: float = 8.1) -> str:
    """mmm.train's start and its step lines every 10 steps: a pre-training falling from about ln(128256)."""
    lines = ["[2025-02-03 09:19:41][I][mmm/train:71:__main__] Starting job: Llama 3 8B training",
             "[2025-02-03 09:19:51][I][mmm/train:300:__main__] Training starts at step 1, with local batch size 1, "
             "global batch size 8, sequence length 2048, total steps 1000 (warmup 200)"]
    losses = [12.27, 11.10, 9.30, 8.36, 7.75, 7.41, 7.38, 7.18, 6.95, 6.98, 6.87]
    for i, loss in enumerate(losses):
        step = max(1, 10 * i)
        worst = max_loss_at_60 if step == 60 else loss + 1.2
        lines.append(f"[2025-02-03 09:20:14][I][mmm/train:458:__main__] step={step} global_avg_loss={loss:.6f} "
                     f"global_max_loss={worst:.6f} throughput(tps)=110.670108 mfu(%)=1.711512 "
                     f"end_to_end(s)=18.505449 data_loading(s)=0.002796 data_loading(%)=0.015172")
    return "\n".join(lines) + "\n"


def test_a_titan_key_value_line_is_read_with_its_averaged_loss_as_the_loss():
    line = ("[2025-02-03 09:50:52][I][mmm/train:458:__main__] step=100 global_avg_loss=6.869817 "
            "global_max_loss=8.179618 throughput(tps)=110.670108 mfu(%)=1.711512 end_to_end(s)=18.505449")
    record = parse_line(line)
    assert record.step == 100
    assert dict(record.metrics) == {"loss": 6.869817, "global_max_loss": 8.179618, "throughput_tps": 110.670108,
                                    "mfu_pct": 1.711512, "end_to_end_s": 18.505449}


def test_a_titan_key_value_pre_training_falling_from_ln_vocab_is_healthy_despite_one_ranks_max_loss(tmp_path):
    a = forensics.analyze(_folder(tmp_path, _titan_key_value_console(max_loss_at_60=16.77), name="train.log"))
    assert a.status == "healthy", [f.message for f in a.findings]
    assert a.run_profile.objective == "pretrain"


def test_prose_holding_step_equals_is_no_step_line(tmp_path):
    """Not fire: a sentence that says `step=` and `loss=` is no metric line, and no run."""
    prose = "We stopped at step=5 because loss=nan was printed, then restarted with a lower LR.\n"
    assert parse_line(prose.strip()) is None
    with pytest.raises(NotARunDirectory):
        forensics.analyze(_folder(tmp_path, prose * 3, name="notes.log"))


def test_a_hand_written_loops_step_equals_loss_line_stays_the_loops():
    """Not fire: `step=3 loss=2.1 lr=...` is read as before, a hand-written loop's line (kind generic)."""
    record = parse_line("step=3 loss=2.1 lr=0.001")
    assert record.kind == "generic" and dict(record.metrics) == {"loss": 2.1, "learning_rate": 0.001}


_VAL = "val-core/openai/gsm8k/reward/mean@1"


def _flat_train_reward(seed: int = 0) -> pd.Series:
    """A PPO train reward saturated near 0.95: 256 prompts a step, each right or wrong (about 0.013 a step of noise)."""
    rng = np.random.default_rng(seed)
    steps = np.arange(101, 436)
    return pd.Series(rng.binomial(256, 0.947, len(steps)) / 256, index=steps, dtype="float64")


def _val_reward(levels: list[float], seed: int = 1) -> pd.Series:
    """Greedy accuracy on 1319 test questions every 10 steps, around the given level at each eval."""
    rng = np.random.default_rng(seed)
    steps = np.arange(110, 110 + 10 * len(levels), 10)
    return pd.Series(rng.binomial(1319, levels) / 1319, index=steps, dtype="float64")


def test_a_held_out_reward_that_slides_while_the_train_reward_holds_is_a_decline_dated_where_it_left_its_level():
    val = _val_reward([0.897] * 10 + [0.876] * 24)
    found = detect_reward_decline({"reward": _flat_train_reward(), _VAL: val}, Thresholds())
    assert [f.kind for f in found] == ["reward_decline"]
    assert found[0].metric == _VAL and found[0].evidence["held_out"]
    assert 170 <= found[0].step <= 230


def test_a_train_reward_swinging_inside_its_noise_is_no_decline():
    """A saturated train reward whose smoothed level drifts 0.949 -> 0.953 -> 0.945 under 0.013 of noise a step: the
    'peak' is no higher above the start than a flat series' highest window stands, and the end no further below the
    start than its noise."""
    steps = np.arange(101, 436)
    drift = np.interp(steps, [101, 123, 435], [0.949, 0.953, 0.945])
    noise = np.tile([0.0, 0.016, -0.012, 0.008, -0.019, 0.004, 0.012, -0.009], 42)[:len(steps)]
    reward = pd.Series(np.round(drift + noise, 3), index=steps)
    assert detect_reward_decline({"reward": reward}, Thresholds()) == []


def test_a_healthy_verl_run_whose_held_out_reward_rises_is_no_decline():
    """Not fire: the held-out accuracy climbs and levels off (as a learning run's does), the train reward rising too."""
    levels = list(0.54 + 0.08 * (1 - np.exp(-np.arange(49) / 10)))
    train = pd.Series(0.50 + 0.2 * (1 - np.exp(-np.arange(1, 241) / 60)), index=np.arange(1, 241))
    assert detect_reward_decline({"reward": train, _VAL: _val_reward(levels)}, Thresholds()) == []


def _profile(tmp_path, text: str, name: str = "verl_demo.log") -> dict:
    return forensics.analyze(_folder(tmp_path, text, name)).run_profile.to_dict()


def test_a_verl_console_that_never_logged_a_step_says_verl_rl_full_from_its_printed_config(tmp_path):
    profile = _profile(tmp_path, OOM_IN_FIRST_STEP)
    assert (profile["framework"], profile["objective"], profile["method"]) == ("verl", "rl", "full")


def test_a_verl_config_without_any_lora_key_trains_the_whole_actor(tmp_path):
    config = VERL_CONFIG.replace("'model': {'lora_rank': 0,", "'model': {'enable_gradient_checkpointing': True,")
    steps = "".join(_verl_step(s, 0.20 + 0.02 * s) for s in range(1, 31))
    assert _profile(tmp_path, config + steps)["method"] == "full"


def test_a_verl_config_with_a_lora_rank_is_lora(tmp_path):
    """Not fire: a rank above 0 is an adapter."""
    steps = "".join(_verl_step(s, 0.20 + 0.02 * s) for s in range(1, 31))
    assert _profile(tmp_path, VERL_CONFIG.replace("'lora_rank': 0,", "'lora_rank': 32,") + steps)["method"] == "lora"


def test_a_printed_config_that_is_not_verls_says_nothing_of_the_method(tmp_path):
    """Not fire: a hand-written loop's pprinted settings with no LoRA key leave the method unknown."""
    settings = "{'model': {'path': 'Qwen/Qwen2.5-0.5B-Instruct'},\n 'optim': {'lr': 1e-06},\n 'trainer': {'epochs': 1}}\n"
    steps = "".join(f"step {s} | loss {2.5 - 0.03 * s:.3f} | lr 1e-06\n" for s in range(1, 31))
    assert _profile(tmp_path, settings + steps, name="train.log")["method"] == "unknown"


_TITAN = "[rank0]:[titan] 2026-08-13 22:49:{:02d},421 - root - INFO - "


def _titan_console(command_flags: str) -> str:
    lines = [f"Command: torchrun --nproc_per_node=1 -m torchtitan.train --job.config_file debug_model.toml "
             f"--training.steps=40{command_flags}",
             _TITAN.format(16) + "Building glm5 debugmodel with Glm5ModelArgs(dim=256, n_layers=6, vocab_size=2048)",
             _TITAN.format(16) + "Model glm5 debugmodel size: 8,566,272 total parameters"]
    lines += [_TITAN.format(19) + f"step: {s:2d}  loss: {8.1 - 0.13 * s:7.5f}  grad_norm:  1.3505  memory:  0.16GiB(0.27%)"
              f"  tps: 4,748  tflops: 0.14  mfu: 0.04%" for s in range(1, 41)]
    return "\n".join(lines) + "\n"


def test_torchtitans_model_size_line_and_echoed_mixed_precision_flag_give_size_and_precision(tmp_path):
    profile = _profile(tmp_path, _titan_console(" --training.mixed_precision_param=bfloat16"), name="runtime.log")
    assert (profile["model_params"], profile["precision"]) == (8566272, "bf16")


def test_a_torchtitan_console_without_the_flag_says_no_precision(tmp_path):
    """Not fire: no dtype printed, no precision guessed."""
    assert _profile(tmp_path, _titan_console(""), name="runtime.log")["precision"] == "unknown"


def _litgpt_console(amp_line: str) -> str:
    lines = [amp_line, "Loading model with {'name': 'pythia-160m', 'block_size': 2048, 'vocab_size': 50254}",
             "Total parameters 162,322,944"]
    lines += [f"iter {i * 100} step {i * 100 + 1}: loss {10.98 - 0.35 * i:.4f}, LR: 0.000300, iter time: 625.12ms "
              "(optimizer.step)" for i in range(14)]
    return "\n".join(lines) + "\n"


def test_litgpts_total_parameters_and_lightnings_16_bit_amp_line_give_size_and_fp16(tmp_path):
    profile = _profile(tmp_path, _litgpt_console("INFO: Using 16-bit Automatic Mixed Precision (AMP)"), name="train.log")
    assert (profile["model_params"], profile["precision"]) == (162322944, "fp16")


def test_lightnings_bfloat16_amp_line_is_bf16_not_fp16(tmp_path):
    """Not fire: the bfloat16 plugin's line is no 16-bit (float16) AMP."""
    profile = _profile(tmp_path, _litgpt_console("Using bfloat16 Automatic Mixed Precision (AMP)"), name="train.log")
    assert profile["precision"] == "bf16"


def _megatron_console(prefix: str) -> str:
    args = [("bf16", "True"), ("fp16", "False"), ("pipeline_model_parallel_size", "1"),
            ("tensor_model_parallel_size", "1")]
    lines = [f"{prefix}------------------------ arguments ------------------------"]
    lines += [f"{prefix}  {name} {'.' * (48 - len(name))} {value}" for name, value in args]
    lines += [f"{prefix}-------------------- end of arguments ---------------------",
              f"{prefix} > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 74702080"]
    lines += [f"{prefix} iteration {10 * i:8d}/   25533 | consumed samples: {2560 * i:12d} | learning rate: 3.000E-04 | "
              f"global batch size:   256 | lm loss: {10.9 - 0.4 * i:.6E} | loss scale: 1.0 | grad norm: 1.2 | "
              "number of skipped iterations:   0 | number of nan iterations:   0 |" for i in range(1, 21)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("prefix", ["[ip-26-0-147-189:0]: ", "[default0]: "])
def test_megatrons_arguments_and_rank_count_behind_a_launcher_prefix_beat_the_file_names_size(tmp_path, prefix):
    profile = _profile(tmp_path, _megatron_console(prefix), name="job_74m.log")
    assert (profile["model_params"], profile["precision"]) == (74702080, "bf16")
