"""Tests of the run profile's method from notebook code: `full` despite freeze_support,
torchinfo, ia3 words; an ia3 adapter.

From the review of the day's changes 72c43fc..HEAD: inputs real runs plausibly produce that the new rules must not
misread. A failing test was a misfire; the passing ones record shapes that held."""
from __future__ import annotations

from support.review_runs import training_notebook
from support.written_runs import _analyze


# ---- notebook_code._trains_whole_model ----------------------------------------------------------------------------


_HEAD = "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
_MODEL = "model = AutoModelForCausalLM.from_pretrained('gpt2')\n"
_TRAIN = ("args = TrainingArguments(output_dir='out', learning_rate=5e-5, logging_steps=10)\n"
          "trainer = Trainer(model=model, args=args, train_dataset=train_ds)\ntrainer.train()\n")


def test_notebook_calling_freeze_support_is_still_full(tmp_path):
    """Stands for a Windows-run GPT-2 full fine-tune notebook that calls multiprocessing's `freeze_support()` (or
    says `# no layer is frozen` in a comment). _FREEZES' bare `\\bfreeze` matches it: method unknown (was full).
    Fix: notebook_code._FREEZES: match freezing calls on weights (`freeze_`-prefixed helpers on a model, `.freeze()`),
    not any word starting with freeze, and read the code without comments."""
    a = _analyze(training_notebook(tmp_path, [_HEAD + "from multiprocessing import freeze_support\nfreeze_support()\n",
                                      _MODEL, _TRAIN]))
    assert a.run_profile.method == "full", a.run_profile.evidence


def test_notebook_printing_a_torchinfo_summary_is_still_full(tmp_path):
    """Stands for a full fine-tune notebook that prints `torchinfo.summary(model)` (or logs it with mlflow): a
    library, not the notebook's own code, but missing from _KNOWN_PACKAGES, so the model 'goes to own code': method
    unknown (was full). Fix: notebook_code._model_handed_to_own_code: own code is a relative import or a module
    that is not an installed/known library (torchinfo, torchsummary, thop, fvcore, mlflow, deepspeed, optimum...),
    or only calls whose result is assigned back to the model."""
    a = _analyze(training_notebook(tmp_path, [_HEAD + "from torchinfo import summary\n", _MODEL + "summary(model)\n", _TRAIN]))
    assert a.run_profile.method == "full", a.run_profile.evidence


def test_notebook_whose_folder_name_holds_ia3_is_still_full(tmp_path):
    """eduseiti's course notebook (AS35) keeps its files under `drive/MyDrive/unicamp/ia368v_dd/aula_05`: the `ia3` in
    `ia368v` read as an IA3 adapter, method unknown (full judged)."""
    folder = "WORKING_FOLDER = 'drive/MyDrive/unicamp/ia368v_dd/aula_05'\n"
    a = _analyze(training_notebook(tmp_path, [_HEAD + folder, _MODEL, _TRAIN]))
    assert a.run_profile.method == "full", a.run_profile.evidence


def test_notebook_setting_up_an_ia3_adapter_is_not_full(tmp_path):
    adapter = "from peft import IA3Config\nconfig = IA3Config(task_type='CAUSAL_LM')\n"
    a = _analyze(training_notebook(tmp_path, [_HEAD + adapter.replace("from peft import ", "from x import "),
                                              _MODEL, _TRAIN]))
    assert a.run_profile.method != "full", a.run_profile.evidence


# ---- shapes checked that held -------------------------------------------------------------------------------------


def test_notebook_importing_local_utils_for_data_only_is_full(tmp_path):
    """Coverage: `from utils import load_split, tokenize_fn` used on the data only: still full."""
    a = _analyze(training_notebook(tmp_path, [_HEAD + "from utils import load_split, tokenize_fn\n",
                                      "train_ds = load_split('train').map(lambda x: tokenize_fn(x, tok))\n" + _MODEL,
                                      _TRAIN]))
    assert a.run_profile.method == "full", a.run_profile.evidence
