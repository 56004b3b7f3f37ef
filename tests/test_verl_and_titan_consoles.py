"""What verl's and torchtitan-family consoles leave, read as their users expect.

* A verl console that stopped before its first `step:N - ...` line (an out-of-memory error in the first optimizer
  step, a TPU port stuck compiling) is still a training run's console: verl pprints its whole config as it starts
  (`{'actor_rollout_ref': {'actor': {...`). A warning naming the crash, never 'not a run'.
The consoles are written as the real programs print them: Ray's `(TaskRunner pid=N)` prefix on every line of the
driver, pprint's indented dict, tqdm's `Training Progress` bar.
"""
from __future__ import annotations

import pytest

import forensics
from forensics.errors import NotARunDirectory

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
