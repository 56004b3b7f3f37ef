"""Tests of the run profile's method from notebook code: a frozen encoder, a helper, a full
fine-tune.

From the review of the day's changes a5f3681..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire of a new rule; the passing ones record shapes that held."""
from __future__ import annotations

from support.review_runs import training_notebook
from support.written_runs import _analyze


# ---- notebook_code._trains_whole_model ---------------------------------------------------------------------------


def test_notebook_that_freezes_the_encoder_is_not_a_full_fine_tune(tmp_path):
    """Stands for a Colab classifier notebook: `AutoModelForSequenceClassification.from_pretrained('bert-base-
    uncased')`, then `for param in model.bert.parameters(): param.requires_grad = False` (only the head trains), then
    Trainer(...).train(). The tool says method `full` from the notebook's code (unknown before): every weight trained.
    Fix: notebook_code._trains_whole_model: no `full` where the code sets `requires_grad = False` / calls
    `.requires_grad_(False)` or freezes layers."""
    a = _analyze(training_notebook(tmp_path, [
        "from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments\n",
        "model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased', num_labels=2)\n"
        "for param in model.bert.parameters():\n    param.requires_grad = False\n",
        "args = TrainingArguments(output_dir='out', learning_rate=1e-3, num_train_epochs=3, logging_steps=10)\n"
        "trainer = Trainer(model=model, args=args, train_dataset=train_ds)\ntrainer.train()\n"]))
    assert a.run_profile.method != "full", a.run_profile.evidence


def test_notebook_whose_model_goes_through_an_imported_helper_is_not_said_full(tmp_path):
    """Stands for a project notebook: `model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf')`,
    then `model = prepare_model(model, cfg)` from the repo's own `src.model_utils` with cfg read from a YAML file
    (where the LoRA is set up), then Trainer(...).train() with fp16 on one GPU. The notebook's own code names no
    adapter, so the tool says method `full` (unknown before), for a 7B model trained in a notebook. A model handed to a
    function the notebook imports from its own code may come back wrapped. Fix: notebook_code._trains_whole_model: no
    `full` where the loaded model is passed to (or reassigned from) a call the notebook does not know (only the
    Trainer, known wrappers like `.to()`, `gradient_checkpointing_enable`)."""
    a = _analyze(training_notebook(tmp_path, [
        "import yaml, torch\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
        "from src.model_utils import prepare_model\n",
        "cfg = yaml.safe_load(open('configs/train.yaml'))\n"
        "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', torch_dtype=torch.float16)\n"
        "model = prepare_model(model, cfg)\n",
        "args = TrainingArguments(output_dir='out', learning_rate=2e-4, fp16=True, logging_steps=10)\n"
        "trainer = Trainer(model=model, args=args, train_dataset=train_ds)\ntrainer.train()\n"]))
    assert a.run_profile.method != "full", a.run_profile.evidence


def test_notebook_full_fine_tune_of_gpt2_is_full(tmp_path):
    """Coverage: GPT-2 loaded with from_pretrained and trained by the Trainer, no adapter anywhere: full."""
    a = _analyze(training_notebook(tmp_path, [
        "from transformers import GPT2LMHeadModel, Trainer, TrainingArguments\n",
        "model = GPT2LMHeadModel.from_pretrained('gpt2')\n",
        "args = TrainingArguments(output_dir='out', learning_rate=5e-5, logging_steps=10)\n"
        "trainer = Trainer(model=model, args=args, train_dataset=train_ds)\ntrainer.train()\n"]))
    assert a.run_profile.method == "full", a.run_profile.evidence
