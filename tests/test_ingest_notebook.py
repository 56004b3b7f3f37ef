"""A training run kept as a Jupyter notebook's cell outputs (ingest.notebook), as a Colab or Kaggle run often is.

The Trainer notebooks are real: the real `transformers.Trainer` trains a tiny model in a real Jupyter kernel
(support.kernel), where the Trainer shows its notebook progress table (an HTML display, no dict lines), and the
executed notebook is saved as the run's only file. The facts the tests compare with come from the Trainer's own
state in that kernel (support.runmaker), printed by a last cell that the saved notebooks leave out.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import forensics
from forensics.errors import NotARunDirectory
from forensics.ingest.results_table import trainer_tables
from forensics.discover.run import discover
from support.kernel import execute

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def trainer_notebooks(tmp_path_factory) -> dict:
    """{"healthy" | "nan": (folder holding only train.ipynb, the run's facts)}, from one kernel session."""
    work = tmp_path_factory.mktemp("notebook_runs")
    nb = new_notebook(cells=[
        new_code_cell(f"import sys; sys.path.insert(0, {str(TESTS)!r})\n"
                      "from support.runmaker import make_run, RunSpec, NanInjection"),
        new_code_cell(f"healthy = make_run({str(work / 'healthy_out')!r}, RunSpec(progress_bars=True, report_to=()))"),
        new_code_cell(f"nan = make_run({str(work / 'nan_out')!r}, RunSpec(progress_bars=True, report_to=(), "
                      "incidents=(NanInjection(31),)))"),
        new_code_cell("import json; print(json.dumps({'healthy': healthy.to_dict(), 'nan': nan.to_dict()}))"),
    ])
    execute(nb, work / "kernels", work)
    facts = json.loads(nb.cells[3].outputs[0].text)
    out = {}
    for name, cell in (("healthy", 1), ("nan", 2)):
        folder = work / f"{name}_notebook"
        folder.mkdir()
        kept = copy.deepcopy(nb)
        kept.cells = [nb.cells[0], nb.cells[cell]]
        nbformat.write(kept, folder / "train.ipynb")
        out[name] = (folder, facts[name])
    return out


def _logged_losses(facts: dict) -> dict[int, float]:
    return {e["step"]: e["loss"] for e in facts["log_history"] if "loss" in e}


def _timeline_losses(analysis) -> dict[int, float]:
    frame = analysis.timeline.frame
    rows = frame[frame["metric"] == "loss"]
    return dict(zip(rows["step"].astype(int), rows["value"]))


def test_trainer_notebook_table_gives_every_logged_loss(trainer_notebooks):
    folder, facts = trainer_notebooks["healthy"]
    read = _timeline_losses(forensics.analyze(folder))
    logged = _logged_losses(facts)
    assert sorted(read) == sorted(logged)
    assert all(read[step] == pytest.approx(loss, abs=1e-6) for step, loss in logged.items())  # printed to 6 places


def test_healthy_run_in_notebook_is_healthy_and_named_the_trainer(trainer_notebooks):
    folder, _ = trainer_notebooks["healthy"]
    a = forensics.analyze(folder)
    assert (a.status, a.first_incident) == ("healthy", None)
    assert a.run_profile.framework == "hf_trainer"
    assert "notebook progress table" in a.run_profile.evidence["framework"]


def test_masked_nan_in_notebook_table_warns_at_first_zero_loss(trainer_notebooks):
    """The table shows the NaN filter's 0.000000 and no grad norm: the log cannot tell a NaN from a fit (VERDICTS)."""
    folder, facts = trainer_notebooks["nan"]
    a = forensics.analyze(folder)
    assert a.status == "warning"
    assert (a.first_incident.kind, a.first_incident.step) == ("zero_loss_unexplained", facts["first_masked_loss_step"])


def _notebook(tmp_path: Path, outputs: list[dict], name: str = "run.ipynb", **cell) -> Path:
    nb = {"cells": [{"cell_type": "code", "execution_count": 1, "metadata": {}, "source": cell.get("source", ""),
                     "outputs": outputs}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / name
    path.write_text(json.dumps(nb, indent=1))
    return path


def _stream(text: str, name: str = "stdout") -> dict:
    return {"output_type": "stream", "name": name, "text": text.splitlines(keepends=True)}


def _dict_lines(losses: list[float]) -> str:
    return "".join(f"{{'loss': {loss}, 'grad_norm': 1.5, 'learning_rate': 0.0002, 'epoch': {i / 40:.3f}}}\n"
                   for i, loss in enumerate(losses, 1))


def test_printed_dict_lines_in_a_stream_output_are_read(tmp_path):
    _notebook(tmp_path, [_stream(_dict_lines([2.5 - 0.03 * i for i in range(40)]))])
    a = forensics.analyze(tmp_path)
    assert len(_timeline_losses(a)) == 40
    assert a.status == "healthy"


def test_nan_in_a_stream_output_is_broken_at_its_line(tmp_path):
    losses = [2.5 - 0.03 * i for i in range(24)] + [float("nan")] * 16
    _notebook(tmp_path, [_stream(_dict_lines(losses))])
    a = forensics.analyze(tmp_path)
    assert a.status == "broken"
    assert a.first_incident.step == 25


def test_error_output_after_the_dicts_is_read_as_the_crash(tmp_path):
    """An error output (`ename`, `evalue`, a traceback with colour codes): the run died in the cell."""
    crash = {"output_type": "error", "ename": "OutOfMemoryError",
             "evalue": "CUDA out of memory. Tried to allocate 2.00 GiB",
             "traceback": ["\u001b[0;31m-----------------------------------\u001b[0m",
                           "\u001b[0;31mOutOfMemoryError\u001b[0m    Traceback (most recent call last)",
                           "\u001b[0;31mOutOfMemoryError\u001b[0m: CUDA out of memory. Tried to allocate 2.00 GiB"]}
    _notebook(tmp_path, [_stream(_dict_lines([2.5 - 0.03 * i for i in range(30)])), crash])
    a = forensics.analyze(tmp_path)
    crashed = [f for f in a.findings if f.kind == "run_crashed"]
    assert crashed and "out of memory" in crashed[0].message.lower()


def test_train_output_result_gives_the_closing_summary(tmp_path):
    """`trainer.train()`'s value, shown as the cell's result: `TrainOutput(global_step=..., training_loss=...,
    metrics={...})`; its metrics dict is the Trainer's closing line."""
    result = {"output_type": "execute_result", "execution_count": 1, "metadata": {},
              "data": {"text/plain": "TrainOutput(global_step=40, training_loss=1.9, metrics={'train_runtime': "
                                     "120.5, 'train_samples_per_second': 2.6, 'train_steps_per_second': 0.33, "
                                     "'total_flos': 1.2e15, 'train_loss': 1.9, 'epoch': 1.0})"}}
    _notebook(tmp_path, [_stream(_dict_lines([2.5 - 0.03 * i for i in range(40)])), result])
    (rec,) = [r for r in forensics.ingest.read_logs(discover(tmp_path))[0]]
    assert rec.frame[rec.frame["metric"] == "train_loss"]["value"].tolist() == [1.9]


def test_html_table_that_is_no_training_table_is_left_out():
    html = "<table><thead><tr><th>name</th><th>value</th></tr></thead><tbody><tr><td>a</td><td>1</td></tr></tbody></table>"
    assert trainer_tables(html) == ""


def test_epoch_table_with_validation_column_keeps_its_progress_line_and_gets_its_steps():
    """transformers utils/notebook.py: the progress text under the bar, then a table a row an epoch (`No log` where
    no training loss had been logged yet). The plan in the progress line (126 steps over 2 epochs) puts each epoch's
    row at its optimizer step (epoch 1 ends at step 63), as a table with a Step column has it."""
    html = ("<div><progress value='39' max='126'></progress> [ 39/126 11:37 < 27:19, 0.05 it/s, Epoch 0.60/2]</div>"
            "<table border=\"1\" class=\"dataframe\"><thead><tr style=\"text-align: left;\"><th>Epoch</th>"
            "<th>Training Loss</th><th>Validation Loss</th></tr></thead><tbody>"
            "<tr><td>1</td><td>No log</td><td>1.234500</td></tr></tbody></table><p>")
    assert trainer_tables(html).splitlines() == [
        "[ 39/126 11:37 < 27:19, 0.05 it/s, Epoch 0.60/2]", "Step\tEpoch\tTraining Loss\tValidation Loss",
        "63\t1\tNo log\t1.234500"]


def test_nbformat3_notebook_outputs_are_read(tmp_path):
    """nbformat 3 (IPython 1-3): cells under `worksheets`, `stream` named by a `stream` key, results as `pyout`."""
    nb = {"worksheets": [{"cells": [{"cell_type": "code", "input": ["trainer.train()"], "language": "python",
                                     "outputs": [{"output_type": "stream", "stream": "stdout",
                                                  "text": _dict_lines([2.5 - 0.03 * i for i in range(40)])}]}]}],
          "metadata": {}, "nbformat": 3, "nbformat_minor": 0}
    (tmp_path / "old.ipynb").write_text(json.dumps(nb))
    assert len(_timeline_losses(forensics.analyze(tmp_path))) == 40


def test_code_of_a_cell_is_not_read_as_its_output(tmp_path):
    """A notebook whose code prints dicts but which was never run: no outputs, so no log."""
    _notebook(tmp_path, [], source=["print({'loss': float('nan'), 'grad_norm': 1.0})\n", "# {'loss': nan}\n"])
    with pytest.raises(NotARunDirectory):
        forensics.analyze(tmp_path)


def test_notebook_without_training_output_beside_a_log_changes_nothing(tmp_path):
    (tmp_path / "train.log").write_text(_dict_lines([2.5 - 0.03 * i for i in range(40)]))
    before = forensics.analyze(tmp_path)
    _notebook(tmp_path, [_stream("Loading dataset...\nDone: 1200 rows\n")], name="explore.ipynb",
              source=["metrics = {'loss': 0.0}\n"])
    after = forensics.analyze(tmp_path)
    assert (after.status, after.first_incident) == (before.status, before.first_incident)
    assert after.timeline.frame.equals(before.timeline.frame)


def test_checkpoint_copy_of_a_notebook_is_not_read_twice(tmp_path):
    """Jupyter's autosave copy (`.ipynb_checkpoints/run-checkpoint.ipynb`) is an older copy of the same outputs."""
    _notebook(tmp_path, [_stream(_dict_lines([2.5 - 0.03 * i for i in range(40)]))])
    (tmp_path / ".ipynb_checkpoints").mkdir()
    _notebook(tmp_path / ".ipynb_checkpoints", [_stream(_dict_lines([2.5] * 10))], name="run-checkpoint.ipynb")
    assert [p.name for p in discover(tmp_path).notebooks] == ["run.ipynb"]


def test_cut_notebook_is_named_with_its_problem(tmp_path):
    text = json.dumps({"cells": [{"cell_type": "code", "outputs": [_stream(_dict_lines([2.5] * 40))]}]})
    (tmp_path / "train.log").write_text(_dict_lines([2.5 - 0.03 * i for i in range(40)]))
    (tmp_path / "run.ipynb").write_text(text[: len(text) // 2])
    a = forensics.analyze(tmp_path)
    (skip,) = [s for s in a.skipped if s.path.endswith("run.ipynb")]
    assert "invalid JSON" in skip.reason


def test_notebook_named_on_the_command_line_is_read(tmp_path):
    path = _notebook(tmp_path, [_stream(_dict_lines([2.5 - 0.03 * i for i in range(40)]))])
    assert discover(path).notebooks == [path.resolve()]


# --- the code that ran: what it passed says the method, the precision and the model ---------------------------------

_UNSLOTH_BANNER = ("==((====))==  Unsloth 2024.8: Fast Llama patching. Transformers = 4.44.2.\n"
                   "   \\\\   /|    GPU: Tesla T4. Max memory: 14.748 GB. Platform = Linux.\n"
                   "O^O/ \\_/ \\    Pytorch: 2.4.0+cu121. CUDA = 7.5. CUDA Toolkit = 12.1.\n"
                   "\\        /    Bfloat16 = FALSE. FA [Xformers = 0.0.27.post2. FA2 = False]\n"
                   ' "-____-"     Free Apache license: http://github.com/unslothai/unsloth\n')


def _code_notebook(tmp_path: Path, cells: list[tuple[str, list[dict], int | None]], name: str = "finetune.ipynb") -> Path:
    nb = {"cells": [{"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
                     "outputs": outputs} for source, outputs, count in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / name
    path.write_text(json.dumps(nb, indent=1))
    return path


_TRAINING = _stream(_dict_lines([2.5 - 0.03 * i for i in range(40)]))


def test_unsloth_notebook_code_gives_qlora_and_the_precision_its_banner_answers(tmp_path):
    """Unsloth's Colab template: `load_in_4bit = True` passed by name, `FastLanguageModel.get_peft_model(r = 16)`,
    and `fp16 = not is_bfloat16_supported()`, which the banner's `Bfloat16 = FALSE` (a T4) answers: fp16."""
    _code_notebook(tmp_path, [
        ("%%capture\n!pip install unsloth\n", [], 1),
        ("from unsloth import FastLanguageModel\nload_in_4bit = True\nmodel, tokenizer = FastLanguageModel.from_pretrained("
         "\n    model_name = 'unsloth/llama-3-8b-bnb-4bit', max_seq_length = 2048, load_in_4bit = load_in_4bit)\n",
         [_stream(_UNSLOTH_BANNER)], 2),
        ("model = FastLanguageModel.get_peft_model(model, r = 16, lora_alpha = 16)\n", [], 3),
        ("from unsloth import is_bfloat16_supported\ntrainer = SFTTrainer(model = model, args = TrainingArguments(\n"
         "    learning_rate = 2e-4, fp16 = not is_bfloat16_supported(), bf16 = is_bfloat16_supported()))\n"
         "trainer_stats = trainer.train()\n", [_TRAINING], 4)])
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.precision) == ("qlora", "fp16")
    assert "notebook's code" in profile.evidence["precision"]


def test_peft_notebook_code_gives_lora_trl_config_and_bf16(tmp_path):
    _code_notebook(tmp_path, [
        ("from peft import LoraConfig\nfrom trl import SFTConfig, SFTTrainer\n"
         "peft_config = LoraConfig(r=8, lora_alpha=16, task_type='CAUSAL_LM')\n"
         "args = SFTConfig(output_dir='out', bf16=True, learning_rate=1e-4)\n", [], 1),
        ("trainer = SFTTrainer(model=model, args=args, peft_config=peft_config)\ntrainer.train()\n", [_TRAINING], 2)])
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.precision, profile.objective) == ("lora", "bf16", "sft")


def test_a_cell_that_never_ran_says_nothing_of_the_run(tmp_path):
    """A LoRA cell left unrun (no execution count where the others have one) is not the run's configuration."""
    _code_notebook(tmp_path, [
        ("from peft import LoraConfig\npeft_config = LoraConfig(r=8)\nargs = TrainingArguments(fp16=True)\n", [], None),
        ("trainer.train()\n", [_TRAINING], 1)])
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.precision) == ("unknown", "unknown")


def test_counts_cleared_notebook_reads_the_cells_up_to_its_last_output(tmp_path):
    """Saved with its execution counts cleared (an export tool's default): the cells before the training output ran;
    a cell after the last output (an alternative setup below it) did not."""
    _code_notebook(tmp_path, [
        ("args = TrainingArguments(bf16=True)\n", [], None),
        ("trainer.train()\n", [_TRAINING], None),
        ("args = TrainingArguments(fp16=True)\nfrom peft import LoraConfig\nLoraConfig(r=4)\n", [], None)])
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.precision) == ("unknown", "bf16")



def test_trainer_around_a_loaded_model_with_no_adapter_anywhere_is_a_full_fine_tune(tmp_path):
    """GPT-2 fine-tuned whole in a notebook: `GPT2LMHeadModel.from_pretrained("gpt2")`, a Trainer, no PEFT or
    quantization in the code that ran. A LoRA cell that never ran (no count where the others have one, no output)
    is not the run's code (AliN75_Memorization's freeze cell)."""
    cells = [("from transformers import GPT2LMHeadModel, Trainer, TrainingArguments\n"
              "model = GPT2LMHeadModel.from_pretrained('gpt2')\n", [], 1),
             ("trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\ntrainer.train()\n",
              [_TRAINING], 2)]
    _code_notebook(tmp_path, cells)
    assert forensics.analyze(tmp_path).run_profile.method == "full"
    _code_notebook(tmp_path, cells + [("from peft import LoraConfig\nLoraConfig(r=8)\n", [], None)])
    assert forensics.analyze(tmp_path).run_profile.method == "full"


def test_a_cell_still_running_when_saved_counts_as_run(tmp_path):
    """Saved mid-run: the training cell has its outputs but no execution count yet; its arguments ran."""
    _code_notebook(tmp_path, [("import torch\n", [], 1),
                              ("args = TrainingArguments(bf16=True)\ntrainer.train()\n", [_TRAINING], None)])
    assert forensics.analyze(tmp_path).run_profile.precision == "bf16"


def test_lora_task_type_from_the_code_says_the_objective(tmp_path):
    """`LoraConfig(task_type=TaskType.CAUSAL_LM)` on a language-model loss: supervised fine-tuning, as an
    adapter_config.json saying CAUSAL_LM does."""
    _code_notebook(tmp_path, [("from peft import LoraConfig, TaskType\n"
                               "config = LoraConfig(r=8, task_type=TaskType.CAUSAL_LM)\ntrainer.train()\n",
                               [_TRAINING], 1)], name="run.ipynb")
    profile = forensics.analyze(tmp_path).run_profile
    assert (profile.method, profile.objective) == ("lora", "sft")


def test_a_classifier_head_loaded_in_the_code_is_no_supervised_fine_tune(tmp_path):
    """`GPT2ForSequenceClassification.from_pretrained('gpt2', num_labels=3)`: a classifier, whatever the notebook is
    called; its objective is none of the language-model ones: classification, said from the code's loader."""
    _code_notebook(tmp_path, [("from transformers import GPT2ForSequenceClassification, Trainer\n"
                               "model = GPT2ForSequenceClassification.from_pretrained('gpt2', num_labels=3)\n"
                               "Trainer(model=model).train()\n", [_TRAINING], 1)])
    profile = forensics.analyze(tmp_path).run_profile
    assert profile.objective == "classification" and "GPT2ForSequenceClassification" in profile.evidence["objective"]


@pytest.mark.parametrize("output_dir, method", [("runs/llama3.2-3b-lora-v1", "lora"), ("runs/llama3.2-3b-v1", "peft")])
def test_the_training_cells_own_command_says_which_adapter_its_peft_banner_shows(tmp_path, output_dir, method):
    """Schwaldlander_DomainNameSuggest: the cell runs `!python training/train_sft.py --output_dir
    runs/llama3.2-3b-lora-v1 --config configs/training_lora.yaml` and prints PEFT's count banner, which shows an adapter
    and not its kind; the command names LoRA. With no LoRA named anywhere the adapter's kind is left unsaid (peft)."""
    banner = "trainable params: 24,313,856 || all params: 3,237,063,680 || trainable%: 0.7511\n"
    _notebook(tmp_path, [_stream(banner + _dict_lines([2.5 - 0.03 * i for i in range(40)]))],
              source=f"!python training/train_sft.py \\\n  --output_dir {output_dir}\n")
    assert forensics.analyze(tmp_path).run_profile.method == method
