"""A notebook's precision flag passed as a test of the machine (`fp16=torch.cuda.is_available()`,
`bf16=torch.cuda.is_bf16_supported()`), answered only by what the notebook's outputs print of that machine
(Yiwen543_6895-Final-Project-Cathey, BDH-teacher_Deep_Learning_Audit_code, Alvarofp537_MG-LoRA-RAG)."""
from __future__ import annotations

import json
from pathlib import Path

import forensics
from forensics.ingest.notebook_code.machine import PrintedMachine, printed_machine


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}


_TRAINING = _stream("".join(f"{{'loss': {2.5 - 0.03 * i}, 'grad_norm': 1.5, 'learning_rate': 0.0002, "
                            f"'epoch': {i / 40:.3f}}}\n" for i in range(1, 41)))


def _flag_notebook(folder: Path, flags: str, printed: str) -> Path:
    """A Trainer run whose TrainingArguments pass `flags`, after a cell that printed `printed`."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = [("import torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
              "model = AutoModelForCausalLM.from_pretrained('gpt2')\nprint('device:', model.device)\n",
              [_stream(printed)] if printed else [], 1),
             (f"args = TrainingArguments(output_dir='out', {flags})\n"
              "trainer = Trainer(model=model, args=args)\ntrainer.train()\n", [_TRAINING], 2)]
    nb = {"cells": [{"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
                     "outputs": outputs} for source, outputs, count in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "finetune.ipynb").write_text(json.dumps(nb, indent=1))
    return folder


def test_fp16_if_cuda_is_available_is_fp16_where_the_outputs_print_a_cuda_device(tmp_path):
    _flag_notebook(tmp_path, "fp16=torch.cuda.is_available()", "device: cuda:0\n")
    assert forensics.analyze(tmp_path).run_profile.precision == "fp16"


def test_fp16_if_cuda_is_available_is_fp32_where_the_outputs_print_the_cpu(tmp_path):
    _flag_notebook(tmp_path, "fp16=torch.cuda.is_available()", "device: cpu\n")
    assert forensics.analyze(tmp_path).run_profile.precision == "fp32"


def test_fp16_if_cuda_is_available_stays_unknown_where_the_outputs_say_nothing_of_the_machine(tmp_path):
    """pip's CUDA wheels are installed on machines without a GPU: no answer."""
    _flag_notebook(tmp_path, "fp16=torch.cuda.is_available()",
                   "Downloading nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl (883 kB)\n")
    assert forensics.analyze(tmp_path).run_profile.precision == "unknown"


def test_bf16_if_supported_follows_the_gpu_the_outputs_name(tmp_path):
    flags = "bf16=torch.cuda.is_bf16_supported(), fp16=not torch.cuda.is_bf16_supported()"
    _flag_notebook(tmp_path / "a100", flags, "GPU: NVIDIA A100-SXM4-40GB\n")
    _flag_notebook(tmp_path / "t4", flags, "GPU: Tesla T4\n")
    assert forensics.analyze(tmp_path / "a100").run_profile.precision == "bf16"
    assert forensics.analyze(tmp_path / "t4").run_profile.precision == "fp16"


def test_a_flag_bound_to_a_name_first_is_answered_too(tmp_path):
    """`use_fp16 = torch.cuda.is_available()` then `fp16=use_fp16`."""
    folder = _flag_notebook(tmp_path, "fp16=use_fp16", "Using device: cuda\n")
    path = folder / "finetune.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] += "use_fp16 = torch.cuda.is_available()\n"
    path.write_text(json.dumps(nb))
    assert forensics.analyze(folder).run_profile.precision == "fp16"


def _device_notebook(folder: Path, flags: str, printed: str) -> Path:
    """A notebook that picks its device with `device = "cuda" if torch.cuda.is_available() else "cpu"` and passes
    `flags` that compare it (Onemaeus97_yifanbot, AjayChikate_DSL501-PROJECT-kto)."""
    _flag_notebook(folder, flags, printed)
    path = folder / "finetune.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] += 'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
    path.write_text(json.dumps(nb))
    return folder


def test_a_flag_that_compares_the_chosen_device_is_answered_by_the_printed_device(tmp_path):
    """Onemaeus97_yifanbot: `bf16=(device=="cuda")` after 'Device: cuda'."""
    _device_notebook(tmp_path / "bf16", 'bf16=(device=="cuda"), fp16=False', "Device: cuda\n")
    _device_notebook(tmp_path / "fp16", 'fp16=True if device == "cuda" else False', "Device: cuda\n")
    _device_notebook(tmp_path / "cpu", 'fp16=True if device == "cuda" else False', "Using device: cpu\n")
    assert forensics.analyze(tmp_path / "bf16").run_profile.precision == "bf16"
    assert forensics.analyze(tmp_path / "fp16").run_profile.precision == "fp16"
    assert forensics.analyze(tmp_path / "cpu").run_profile.precision == "fp32"


def test_a_flag_that_compares_the_chosen_device_stays_unknown_where_the_outputs_say_nothing_of_the_machine(tmp_path):
    """AjayChikate_DSL501-PROJECT-kto prints no device: which branch ran, nothing says."""
    _device_notebook(tmp_path, 'fp16=True if device == "cuda" else False', "")
    assert forensics.analyze(tmp_path).run_profile.precision == "unknown"


def test_printed_machine_reads_no_gpu_into_library_names_and_unsloths_banner_beats_a_name():
    assert printed_machine("Collecting nvidia-cuda-nvrtc-cu12==12.4.127\nloading libbitsandbytes_cuda124.so.\n"
                           "Unable to register cuFFT factory\n") == PrintedMachine(None, None)
    assert printed_machine("GPU = Tesla T4. Max memory = 14.7 GB.\n") == PrintedMachine(True, False)
    assert printed_machine("The model is already on multiple devices. Skipping the move\n") == PrintedMachine(True, None)
    assert printed_machine("NVIDIA A100-SXM4-40GB\n   Bfloat16 = FALSE. FA = True.\n") == PrintedMachine(True, False)
