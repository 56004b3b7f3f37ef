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
        writer.join(timeout=60)
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


# --- session 31 (fx-as118): a JSONL log, a script's `%`-formatting continuation line ----------------------------

_OWN_LOOP = '''
import json
import torch
from model import GPT

model = GPT.load("base.pth")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-7)
for i in range(100):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(*loader.next_batch())
    loss.backward()
    optimizer.step()
    print("step %d loss %.4f"{newline}% (i, loss.item()))
    with open(f"{{log_dir}}/{log}", "a") as f:
        f.write(json.dumps({{"step": i, "train_loss": loss.item()}}) + "\\n")
'''


def _jsonl_run(folder, scripts: dict[str, str]):
    (folder / "logs").mkdir(parents=True)
    rows = "".join('{"step": %d, "train_loss": %.4f}\n' % (16 * i, 2.9 - 0.02 * i) for i in range(30))
    (folder / "logs" / "training_log.jsonl").write_text(rows)
    for name, code in scripts.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code)
    return forensics.analyze(folder).run_profile


def test_the_script_that_appends_a_jsonl_log_gives_its_precision(tmp_path):
    # feljost_fgpt's instruct_train.py appends f"{log_dir}/training_log.jsonl" under a bfloat16 autocast
    code = _OWN_LOOP.format(log="training_log.jsonl", newline=" ")
    profile = _jsonl_run(tmp_path / "run", {"src/instruct_train.py": code})
    assert profile.precision == "bf16"
    assert "src/instruct_train.py (the script that writes training_log.jsonl)" in profile.evidence["precision"]


def test_a_script_that_appends_another_jsonl_says_nothing_of_the_log(tmp_path):
    code = _OWN_LOOP.format(log="eval_log.jsonl", newline=" ")
    profile = _jsonl_run(tmp_path / "run", {"src/instruct_train.py": code})
    assert profile.precision == "unknown"


def test_a_script_whose_line_starts_with_a_percent_continuation_is_read_as_python(tmp_path):
    # Rogithgoud_text-transformer's train.py: `print("... %d" \n % (...))` - a Python line, not an IPython magic;
    # blanking it left the whole script unparsed
    code = _OWN_LOOP.format(log="training_log.jsonl", newline="\n          ")
    assert "\n          % (i" in code
    assert _jsonl_run(tmp_path / "run", {"train.py": code}).precision == "bf16"


_PURE_PYTHON = '''
import json
import os
import random
{extra}
from model import Model
from optim import Adam

model = Model(vocab_size=65, d_model=32)
opt = Adam(model.parameters(), lr=3e-3)
for step in range(1, 2001):
    model.zero_grad()
    loss, dlogits = model.loss(random.random())
    model.backward(dlogits)
    opt.step()
    with open(os.path.join("runs", "train_log.txt"), "a") as f:
        f.write("%d\\t%.6f\\n" % (step, loss))
'''


def _pure_python_run(folder, extra: str, own_module: str = "class Model:\n    pass\n"):
    (folder / "runs").mkdir(parents=True)
    rows = "".join(f"{25 * i + 1}\t{4.2 - 0.05 * i:.4f}\n" for i in range(30))
    (folder / "runs" / "train_log.txt").write_text("step\ttrain_loss\n" + rows)
    (folder / "src").mkdir()
    (folder / "src" / "train.py").write_text(_PURE_PYTHON.format(extra=extra))
    for own in ("model", "optim"):
        (folder / "src" / f"{own}.py").write_text("class Model:\n    pass\n")
    (folder / "src" / "layers.py").write_text(own_module)
    return forensics.analyze(folder).run_profile


def test_a_pure_python_training_script_says_no_float32(tmp_path):
    # Rogithgoud_text-transformer's train.py: standard library and its own modules only; Python's floats are 64-bit,
    # so "nothing below float32 asked for" is no fp32 - it says no precision of the profile's terms
    profile = _pure_python_run(tmp_path / "run", "")
    assert "src/train.py (the script that writes train_log.txt)" in profile.evidence["method"]
    assert profile.precision == "unknown"


def test_the_same_loop_importing_torch_is_fp32(tmp_path):
    assert _pure_python_run(tmp_path / "run", "import torch").precision == "fp32"


def test_a_numpy_only_training_script_says_no_float32(tmp_path):
    # NumPy's default float is float64, as Python's: nothing below float32 asked for is no fp32 either
    assert _pure_python_run(tmp_path / "run", "import numpy as np").precision == "unknown"


def test_a_numpy_script_that_names_float32_is_fp32(tmp_path):
    assert _pure_python_run(tmp_path / "run", "import numpy as np\nDTYPE = np.float32").precision == "fp32"


def test_a_star_import_of_its_own_module_that_imports_torch_is_fp32(tmp_path):
    # `from layers import *` of a module beside the script that imports torch brings torch's float32 default in
    profile = _pure_python_run(tmp_path / "run", "from layers import *",
                               own_module="import torch\nclass Model(torch.nn.Module):\n    pass\n")
    assert profile.precision == "fp32"


def test_a_star_import_of_its_own_pure_python_module_says_no_float32(tmp_path):
    assert _pure_python_run(tmp_path / "run", "from layers import *").precision == "unknown"


def test_torch_imported_through_importlib_is_fp32(tmp_path):
    assert _pure_python_run(tmp_path / "run", "import importlib\ntorch = importlib.import_module('torch')"
                            ).precision == "fp32"


def _notebook_counted(folder, counted: set[int], extra_cells: tuple[str, ...] = ()):
    """The seq2seq notebook writing logs/train_metrics.csv, with a pip cell first, no outputs, and execution counts
    only on the cells of `counted` (by position)."""
    import json
    (folder / "logs").mkdir(parents=True)
    rows = "".join(f"{i + 1},{5.6 - 0.1 * i:.4f},{5.9 - 0.02 * i:.4f}\n" for i in range(10))
    (folder / "logs" / "train_metrics.csv").write_text("epoch,train_loss,val_loss\n" + rows)
    sources = ["!pip install sacrebleu", *(c.format(log="logs/train_metrics.csv") for c in _SEQ2SEQ_CELLS),
               *extra_cells]
    cells = [{"cell_type": "code", "execution_count": i + 1 if i in counted else None, "metadata": {},
              "outputs": [], "source": code} for i, code in enumerate(sources)]
    (folder / "train.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                                                    "metadata": {}}))
    return forensics.analyze(folder).run_profile


def test_a_notebook_whose_counted_cells_never_wrote_the_log_is_read_whole(tmp_path):
    # MohammadAnsariShiri_Enhanced-BioBART's notebook: only its pip cell carries a count, no cell an output, yet the
    # log its training cell names sits in the run: that cell ran in a session the saved counts do not record
    profile = _notebook_counted(tmp_path / "run", counted={0})
    assert profile.precision == "fp32"
    assert "train.ipynb (the notebook that writes train_metrics.csv)" in profile.evidence["precision"]


_BF16_LOOP = ("for epoch in range(10):\n    for src, trg in loader:\n"
              "        with torch.autocast('cuda', dtype=torch.bfloat16):\n"
              "            loss = criterion(model(src, trg), trg)\n        loss.backward()\n        optimizer.step()")


def test_an_uncounted_bf16_cell_beside_the_counted_fp32_writer_leaves_the_precision_unknown(tmp_path):
    # the counted cells wrote the log: a cell without a count beside them (a bfloat16 variant) did not run with them,
    # so it gives no bf16; but the fp32 default is said only where nothing in the code, run or not, asks for lower
    assert _notebook_counted(tmp_path / "all", counted={0, 1, 2, 3, 4}, extra_cells=(_BF16_LOOP,)).precision == "bf16"
    assert _notebook_counted(tmp_path / "run", counted={0, 1, 2, 3}, extra_cells=(_BF16_LOOP,)).precision == "unknown"


def test_a_notebook_read_whole_with_two_training_cells_that_disagree_leaves_the_precision_unread(tmp_path):
    # review 31b: only the pip cell counted, an fp32 loop and a bf16 variant loop: which one wrote the log is not said
    profile = _notebook_counted(tmp_path / "run", counted={0}, extra_cells=(_BF16_LOOP,))
    assert profile.precision == "unknown"


def test_a_notebook_read_whole_with_two_training_cells_that_agree_keeps_the_precision(tmp_path):
    # a second fp32 loop (a re-run) says the same precision as the first
    fp32 = _BF16_LOOP.replace("with torch.autocast('cuda', dtype=torch.bfloat16):", "if True:")
    assert _notebook_counted(tmp_path / "run", counted={0}, extra_cells=(fp32,)).precision == "fp32"


def test_a_notebook_read_whole_with_two_argument_cells_that_disagree_leaves_the_precision_unread(tmp_path):
    # "Option A: fp16" and "Option B: bf16" both bind `args`; neither cell counted, the trainer cell trains on one
    import json
    folder = tmp_path / "run"
    folder.mkdir()
    sources = ["!pip install transformers",
               "from transformers import TrainingArguments, Trainer\nargs = TrainingArguments('out', fp16=True)",
               "args = TrainingArguments('out', bf16=True)",
               "trainer = Trainer(model=model, args=args)\ntrainer.train()\nimport pandas as pd\n"
               "pd.DataFrame(trainer.state.log_history).to_csv('train_log.csv')"]
    cells = [{"cell_type": "code", "execution_count": 1 if i == 0 else None, "metadata": {}, "outputs": [],
              "source": code} for i, code in enumerate(sources)]
    (folder / "nb.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {}}))
    rows = "".join(f"{10 * (i + 1)},{4.0 - 0.03 * i:.4f}\n" for i in range(30))
    (folder / "train_log.csv").write_text("step,loss\n" + rows)
    assert forensics.analyze(folder).run_profile.precision == "unknown"


# --- a log name a settings module binds, read by the one script that trains ----------------------------------------

_SETTINGS = '''
from dataclasses import dataclass


@dataclass
class ModelConfig:
    log_dir: str = "logs"
    training_log_name: str = "training_metrics.json"
'''

_TRAINER_READING_IT = '''
import torch
from pathlib import Path
from model import LM
from utils.config import ModelConfig

config = ModelConfig()
model = LM(vocab_size=50260)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
logger = Logger(Path(config.log_dir) / config.training_log_name)
for batch in loader:
    loss = model(batch)
    loss.backward()
    optimizer.step()
'''

_PLOT_READING_IT = '''
import json
import matplotlib.pyplot as plt
from utils.config import ModelConfig

config = ModelConfig()
history = json.load(open(f"{config.log_dir}/{config.training_log_name}"))
plt.plot([row["train_loss"] for row in history])
'''


def _settings_run(folder, scripts: dict[str, str]):
    import json
    (folder / "logs").mkdir(parents=True)
    rows = [{"epoch": i + 1, "train_loss": 7.4 - 0.3 * i, "validation_loss": 4.8 - 0.1 * i} for i in range(10)]
    (folder / "logs" / "training_metrics.json").write_text(json.dumps(rows))
    for name, code in {"utils/config.py": _SETTINGS, **scripts}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(code)
    return forensics.analyze(folder).run_profile


def test_the_one_training_script_reading_the_log_name_a_settings_module_binds_writes_it(tmp_path):
    # harsha-vardhan4_HarshaLM: utils/config.py binds training_log_name = "training_metrics.json"; training/trainer.py
    # opens its logger on config.training_log_name and trains
    profile = _settings_run(tmp_path / "run", {"training/trainer.py": _TRAINER_READING_IT,
                                               "plot.py": _PLOT_READING_IT})
    assert profile.precision == "fp32"
    assert "training/trainer.py (the script that writes training_metrics.json" in profile.evidence["precision"]


def test_a_script_that_only_reads_the_bound_log_name_is_no_writer(tmp_path):
    assert _settings_run(tmp_path / "run", {"plot.py": _PLOT_READING_IT}).precision == "unknown"


def test_two_training_scripts_reading_the_bound_log_name_leave_it_unread(tmp_path):
    profile = _settings_run(tmp_path / "run", {"training/trainer.py": _TRAINER_READING_IT,
                                               "training/trainer_v2.py": _TRAINER_READING_IT})
    assert profile.precision == "unknown"


def test_a_training_script_that_does_not_import_the_settings_module_is_no_writer(tmp_path):
    # the same attribute name read off another object (its own YAML's settings) is not the bound name
    own = _TRAINER_READING_IT.replace("from utils.config import ModelConfig", "import yaml").replace(
        "config = ModelConfig()", "config = Settings(yaml.safe_load(open('run.yaml')))")
    assert _settings_run(tmp_path / "run", {"training/trainer.py": own}).precision == "unknown"


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


# --- review 31b: a script that builds a trainer to evaluate, or only reads the log, is not its writer -------------

_EVALUATE_WITH_A_TRAINER = '''
import torch, config
import pandas as pd
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
model = AutoModelForCausalLM.from_pretrained(config.MODEL, torch_dtype=torch.float16)
args = TrainingArguments("eval_out", per_device_eval_batch_size=8, fp16=True)
print(Trainer(model=model, args=args).evaluate())
history = pd.read_csv({log})
history.plot(x="step", y="loss")
'''


def test_a_script_that_builds_a_trainer_only_to_evaluate_is_no_writer_of_a_bound_log_name(tmp_path):
    # config.py binds LOG_NAME; evaluate.py builds a Trainer in fp16, calls .evaluate() and plots the log
    profile = _run(tmp_path / "run", {"config.py": 'LOG_NAME = "loss_log.csv"\nMODEL = "gpt2"\n',
                                      "evaluate.py": _EVALUATE_WITH_A_TRAINER.format(log="config.LOG_NAME")})
    assert (profile.method, profile.precision) == ("unknown", "unknown")


def test_a_script_that_builds_a_trainer_only_to_evaluate_is_no_writer_of_the_log_it_names(tmp_path):
    profile = _run(tmp_path / "run", {"evaluate.py": _EVALUATE_WITH_A_TRAINER.format(log='"outputs/loss_log.csv"')})
    assert (profile.method, profile.precision) == ("unknown", "unknown")


_PROBE_READING_THE_LOG = '''
import torch
import pandas as pd
history = pd.read_csv("outputs/loss_log.csv")
probe = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
for x, y in zip(history["step"], history["loss"]):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = (probe(torch.tensor([[float(x)]])) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
'''


def test_a_script_that_trains_but_only_reads_the_log_is_not_its_writer(tmp_path):
    # it fits a probe (under bf16 autocast) to the log's curve: it names the log only to read it
    profile = _run(tmp_path / "run", {"fit_curve.py": _PROBE_READING_THE_LOG})
    assert profile.precision == "unknown"


def test_a_trainer_built_by_a_function_of_the_script_and_trained_is_the_writer(tmp_path):
    # gianfrancobarba_PST-Parser's sft_lora.py: `trainer = build_trainer(...)` returns the SFTTrainer it builds
    factory = _QLORA_SFT.replace("trainer = SFTTrainer(", "def build_trainer():\n    return SFTTrainer(") \
        .replace("trainer.train()", "trainer = build_trainer()\ntrainer.train()")
    profile = _run(tmp_path / "run", {"scripts/train.py": factory.format(log="loss_log.csv")})
    assert (profile.method, profile.precision) == ("qlora", "bf16")
