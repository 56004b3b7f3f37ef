"""What a console's tracebacks and warnings say of the run's profile (forensics/ingest/console_warnings.py,
console_facts.py; profile/method.py, precision.py): TRL's trainer in a traceback's frame, a training step's forward
through PEFT's PeftModel, transformers' `We will cast back the input in torch.bfloat16`.

From corpus batch AS95 (namwoam_dl-final: LoRA SFT with TRL's SFTTrainer on an 8-bit base, bf16, whose two crashed
launches' tracebacks name the trainer and PEFT before the relaunch that finished)."""
from __future__ import annotations

from pathlib import Path

import forensics

CORPUS = Path(__file__).parent / "realworld"
_SITE = "/home/u/env/lib/python3.10/site-packages"
_CAST_BACK = ("The input hidden states seems to be silently casted in float32, this might be related to the fact you "
              "have upcasted embedding or layer norm layers in float32. We will cast back the input in torch.{}.\n")


def _oom_in_training_step(trainer_frame: str, forward_frame: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/home/u/finetune/./instruction-tuning.py", line 114, in main\n    trainer.train()\n'
            f'{trainer_frame}'
            f'  File "{_SITE}/transformers/trainer.py", line 3238, in training_step\n'
            "    loss = self.compute_loss(model, inputs)\n"
            f'  File "{_SITE}/transformers/trainer.py", line 3264, in compute_loss\n    outputs = model(**inputs)\n'
            f'  File "{_SITE}/torch/nn/modules/module.py", line 1520, in _call_impl\n'
            f"{forward_frame}"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 488.00 MiB.\n")


_SFT_FRAME = f'  File "{_SITE}/trl/trainer/sft_trainer.py", line 361, in train\n    output = super().train()\n'
_PEFT_FRAME = f'  File "{_SITE}/peft/peft_model.py", line 1430, in forward\n    return self.base_model(\n'


def _console(crashed: str, extra: str = "") -> str:
    dicts = "".join(f"{{'loss': {2.4 - 0.2 * i:.4f}, 'grad_norm': 2.1, 'learning_rate': {3e-5 * (1 - i / 10):.3e}, "
                    f"'epoch': {2.0 * i + 2:.2f}}}\n" for i in range(9))
    launch = "Loaded lora weight from: cp-all_textbook/\n" + extra
    return (launch + crashed + launch + dicts
            + "{'train_runtime': 9837.0, 'train_samples_per_second': 0.9, 'train_steps_per_second': 0.09, "
              "'train_loss': 0.86, 'epoch': 19.66}\n")


def _profile(tmp_path, text: str):
    (tmp_path / "nohup.out").write_text(text)
    return forensics.analyze(tmp_path).run_profile


def test_a_crashed_launchs_frames_name_trls_trainer_and_a_peft_model_trained(tmp_path):
    profile = _profile(tmp_path, _console(_oom_in_training_step(_SFT_FRAME, _PEFT_FRAME)))
    assert (profile.framework, profile.objective, profile.method) == ("trl", "sft", "lora")
    assert "sft_trainer.py" in profile.evidence["framework"]
    assert "peft/peft_model.py" in profile.evidence["method"]


def test_the_cast_back_warning_names_the_compute_dtype(tmp_path):
    profile = _profile(tmp_path, _console("", _CAST_BACK.format("bfloat16")))
    assert profile.precision == "bf16" and "cast back the input in torch.bfloat16" in profile.evidence["precision"]
    assert _profile(tmp_path, _console("", _CAST_BACK.format("float16"))).precision == "fp16"


def test_a_traceback_outside_the_trainers_and_the_training_step_says_nothing(tmp_path):
    """A traceback through trl's utilities and PEFT's generate (an evaluation script's sampling), no cast-back line:
    no framework beyond the Trainer's dicts, no adapter trained, no precision."""
    sampling = ("Traceback (most recent call last):\n"
                f'  File "{_SITE}/trl/trainer/utils.py", line 120, in generate\n'
                f'  File "{_SITE}/peft/peft_model.py", line 1190, in generate\n'
                "torch.cuda.OutOfMemoryError: CUDA out of memory.\n")
    profile = _profile(tmp_path, _console(sampling).replace("Loaded lora weight from: cp-all_textbook/\n", ""))
    assert (profile.framework, profile.method, profile.precision) == ("hf_trainer", "unknown", "unknown")


def test_the_breeze_lora_console_is_profiled_from_its_own_lines():
    profile = forensics.analyze(CORPUS / "namwoam_dl-final").run_profile
    assert (profile.method, profile.objective, profile.framework, profile.precision) == ("lora", "sft", "trl", "bf16")
