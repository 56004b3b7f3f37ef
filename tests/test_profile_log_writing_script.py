"""The script beside a metric log that writes it, read for the run profile (session 30, fx-as115): a CSV of step and
loss says nothing of the run's settings; the copied script whose code names that CSV does
(mitchellhoesing_NietzcheLLM's scripts/train.py writes outputs/loss_log.csv from a TRL QLoRA SFT run).

Each test fails on the code before its change; the guards keep a script that names another file, or one of several
that name the log, unread."""
from __future__ import annotations

import forensics

_QLORA_SFT = '''
import torch
from pathlib import Path
from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from peft import LoraConfig
from trl import SFTConfig, SFTTrainer

LOG = Path("outputs") / "{log}"
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", quantization_config=bnb)
peft_config = LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM")
args = SFTConfig(output_dir="outputs/run", bf16=True, logging_steps=10)
trainer = SFTTrainer(model=model, args=args, train_dataset=None, peft_config=peft_config)
trainer.train()
'''


def _run(folder, scripts: dict[str, str]):
    (folder / "outputs").mkdir(parents=True)
    rows = "".join(f"{10 * (i + 1)},{4.0 - 0.03 * i:.4f}\n" for i in range(30))
    (folder / "outputs" / "loss_log.csv").write_text("step,loss\n" + rows)
    for name, code in scripts.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code)
    return forensics.analyze(folder).run_profile


def test_the_script_that_writes_the_loss_log_gives_the_profile(tmp_path):
    profile = _run(tmp_path / "run", {"scripts/train.py": _QLORA_SFT.format(log="loss_log.csv")})
    assert (profile.method, profile.objective, profile.framework, profile.precision) == ("qlora", "sft", "trl", "bf16")
    assert "scripts/train.py (the script that writes loss_log.csv)" in profile.evidence["precision"]


def test_a_script_that_writes_another_file_says_nothing_of_the_log(tmp_path):
    # a repository's other stage (its DPO script writes dpo_loss_log.csv): not this log's writer
    profile = _run(tmp_path / "run", {"scripts/train.py": _QLORA_SFT.format(log="dpo_loss_log.csv")})
    assert (profile.method, profile.objective, profile.framework, profile.precision) == (
        "unknown", "unknown", "unknown", "unknown")


def test_two_scripts_that_name_the_log_leave_it_unread(tmp_path):
    # which of them wrote it is not said
    code = _QLORA_SFT.format(log="loss_log.csv")
    profile = _run(tmp_path / "run", {"scripts/train.py": code, "scripts/train_v2.py": code.replace("bf16", "fp16")})
    assert (profile.method, profile.precision) == ("unknown", "unknown")


_SEQ2SEQ_CELLS = [
    "import csv\nimport torch\nfrom model import Encoder, Decoder, Seq2Seq",
    "model = Seq2Seq(Encoder(8000, 256, 512, 2, 0.3), Decoder(8000, 256, 512, 2, 0.3))\n"
    "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)",
    "CSV_LOG_PATH = '{log}'\nfor epoch in range(10):\n    for src, trg in loader:\n"
    "        optimizer.zero_grad()\n        loss = criterion(model(src, trg), trg)\n        loss.backward()\n"
    "        optimizer.step()\n    with open(CSV_LOG_PATH, 'a') as f:\n        csv.writer(f).writerow([epoch, loss])",
]


def _notebook_run(folder, log: str):
    import json
    (folder / "logs").mkdir(parents=True)
    rows = "".join(f"{i + 1},{5.6 - 0.1 * i:.4f},{5.9 - 0.02 * i:.4f}\n" for i in range(10))
    (folder / "logs" / "train_metrics.csv").write_text("epoch,train_loss,val_loss\n" + rows)
    cells = [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "outputs": [],
              "source": code.format(log=log)} for i, code in enumerate(_SEQ2SEQ_CELLS)]
    (folder / "train.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                                                    "metadata": {}}))
    return forensics.analyze(folder).run_profile


def test_a_notebook_that_printed_no_training_but_writes_the_log_gives_its_precision(tmp_path):
    # teddydog23_Novel-Machine-Translation's train.ipynb writes logs/train_metrics.csv and prints no training line
    profile = _notebook_run(tmp_path / "run", "logs/train_metrics.csv")
    assert profile.precision == "fp32"
    assert "train.ipynb (the notebook that writes train_metrics.csv)" in profile.evidence["precision"]


def test_a_notebook_that_writes_another_file_says_nothing_of_the_log(tmp_path):
    assert _notebook_run(tmp_path / "run", "logs/eval_metrics.csv").precision == "unknown"


_SENTENCE_FINE_TUNE = '''
from sentence_transformers import SentenceTransformer, losses
from sentence_transformers.trainer import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
{adapter}
model = SentenceTransformer("sentence-transformers/all-MiniLM-L6-v2")
{wrap}
args = SentenceTransformerTrainingArguments(output_dir="models/tuned", num_train_epochs=1)
trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=None,
                                     loss=losses.MultipleNegativesRankingLoss(model))
trainer.train()
open("outputs/loss_log.csv", "w").write("step,loss")
'''


def test_a_sentence_transformer_trained_by_its_trainer_is_trained_whole(tmp_path):
    # AndrewKM210_code-search-engine's scripts/fine_tune.py: SentenceTransformer(name) loads the trained model itself
    profile = _run(tmp_path / "run", {"fine_tune.py": _SENTENCE_FINE_TUNE.format(adapter="", wrap="")})
    assert profile.method == "full"


def test_a_sentence_transformer_given_a_lora_adapter_is_not_trained_whole(tmp_path):
    code = _SENTENCE_FINE_TUNE.format(adapter="from peft import LoraConfig",
                                      wrap="model.add_adapter(LoraConfig(r=8, task_type='FEATURE_EXTRACTION'))")
    assert _run(tmp_path / "run", {"fine_tune.py": code}).method != "full"


# --- review 30b: only a script that trains is the log's writer; only the scripts discovery met are read ----------

_PLOT_LOSS = '''
import pandas as pd
import torch
import matplotlib.pyplot as plt
from transformers import AutoModelForCausalLM

history = pd.read_csv("outputs/loss_log.csv")
plt.plot(history["step"], history["loss"])
plt.savefig("loss.png")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-1.5B-Instruct", torch_dtype=torch.float16)
'''


def test_a_script_that_only_reads_the_log_is_not_its_writer(tmp_path):
    # a plot_loss.py reading the log and loading the model in float16 says nothing of how the run trained
    profile = _run(tmp_path / "run", {"plot_loss.py": _PLOT_LOSS})
    assert (profile.method, profile.objective, profile.framework, profile.precision) == (
        "unknown", "unknown", "unknown", "unknown")


def test_the_training_script_beside_a_plotting_script_is_still_read(tmp_path):
    profile = _run(tmp_path / "run", {"plot_loss.py": _PLOT_LOSS,
                                      "scripts/train.py": _QLORA_SFT.format(log="loss_log.csv")})
    assert (profile.method, profile.precision) == ("qlora", "bf16")
    assert "scripts/train.py (the script that writes loss_log.csv)" in profile.evidence["precision"]


def test_a_named_pipe_named_like_a_script_is_not_read(tmp_path):
    # a FIFO blocks its reader until someone writes; here a writer feeds it a training script, so the code before
    # this change read it (and took its bf16) instead of hanging; discovery passes a FIFO over, and so does the reader
    import os
    import threading
    folder = tmp_path / "run"
    folder.mkdir()
    pipe = folder / "pipe.py"
    os.mkfifo(pipe)

    def feed():
        with open(pipe, "w") as fh:  # blocks until a reader opens the pipe
            fh.write(_QLORA_SFT.format(log="loss_log.csv"))

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        profile = _run(folder, {})
    finally:
        released = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # lets a writer still waiting open, write and close
        writer.join()
        os.close(released)
    assert profile.precision == "unknown"


def test_a_script_that_cannot_be_read_is_passed_over(tmp_path, monkeypatch):
    from pathlib import Path
    read_text = Path.read_text

    def refused(self, *args, **kwargs):
        if self.suffix == ".py":
            raise PermissionError(13, "Permission denied", str(self))
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", refused)
    profile = _run(tmp_path / "run", {"scripts/train.py": _QLORA_SFT.format(log="loss_log.csv")})
    assert profile.precision == "unknown"


def test_one_log_file_analyzed_reads_no_script_of_its_folder(tmp_path):
    # the log given alone: a script three folders down in another project beside it is not this run's code
    folder = tmp_path / "run"
    _run(folder, {"outputs/other_project/src/train/train.py": _QLORA_SFT.format(log="loss_log.csv")})
    profile = forensics.analyze(folder / "outputs" / "loss_log.csv").run_profile
    assert (profile.method, profile.precision) == ("unknown", "unknown")


def test_discovery_lists_the_small_scripts_of_a_run_folder_and_none_of_a_single_file(tmp_path):
    from forensics.discover.run import discover
    folder = tmp_path / "run"
    _run(folder, {"scripts/train.py": "x = 1\n", "a.py": "y = 2\n", "vendored.py": "#" * (300 * 1024),
                  ".venv/lib/site.py": "z = 3\n"})
    assert [p.relative_to(folder.resolve()).as_posix() for p in discover(folder).scripts] == [
        "a.py", "scripts/train.py"]
    assert discover(folder / "outputs" / "loss_log.csv").scripts == []


def test_the_script_that_writes_a_json_lines_log_gives_the_profile(tmp_path):
    # AS119 (WFJKK_vlm-spatial-bottleneck): train_grpo_custom.py appends checkpoints/training_log.jsonl
    run = tmp_path / "run"
    (run / "outputs").mkdir(parents=True)
    lines = "".join(f'{{"step": {10 * (i + 1)}, "loss": {4.0 - 0.03 * i:.4f}}}\n' for i in range(30))
    (run / "outputs" / "loss_log.jsonl").write_text(lines)
    (run / "train.py").write_text(_QLORA_SFT.format(log="loss_log.jsonl"))
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.precision) == ("qlora", "bf16")
    assert "train.py (the script that writes loss_log.jsonl)" in profile.evidence["precision"]
