"""Review of the day's changes 72c43fc..HEAD: inputs that real runs plausibly produce and that the new rules must not
misread. A failing test is a misfire (or a hole the change meant to close); its docstring says which real input it
stands for, what the tool says instead, and where the fix belongs. The passing ones record shapes that held."""
from __future__ import annotations

import json

import numpy as np

import forensics
from support.review_runs import falling, nemo2_console, training_notebook


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _write(folder, name, text, newline=None):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, newline=newline)
    return folder


def _kinds(a):
    return [(f.kind, f.step) for f in a.findings]


def _trainer_state(folder, log_history):
    return _write(folder, "trainer_state.json", json.dumps({"log_history": log_history,
                                                            "global_step": log_history[-1]["step"]}))


def _bar(label, n, total, postfix):
    return f"{label}: {100 * n // total}%|{'#' * (10 * n // total):10s}| {n}/{total} [00:{n % 60:02d}<00:10, 9.50it/s, {postfix}]"


# ---- stdout._nemo2_evaluations_once --------------------------------------------------------------------------------


def test_nemo2_validation_every_log_interval_keeps_every_eval(tmp_path):
    """Stands for a NeMo 2.0 fine-tune with val_check_interval equal to log_every_n_steps (both 10): every progress
    line carries a new val_loss (the validation just before it), so no value is printed twice. The eval loss falls
    to 1.6 at step 170 and climbs to 2.36 by 400 while the training loss keeps falling. The tool keeps one eval point
    of 39 (a value never repeated is never 'settled') plus one, and says healthy; before the change it said
    overfitting at 179. Fix: stdout._nemo2_evaluations_once: drop a value only when the next line shows it again
    (a repeat) or it is the partial average right after a validation block, not every value the next line changes."""
    vals = {it: max(2.2 - 0.004 * it, 1.6) + max(0, it - 200) * 0.004 for it in range(9, 400, 10)}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals, 400, 10)))
    assert len(a.timeline.series("eval_loss")) >= 30
    assert "overfitting" in [k for k, _ in _kinds(a)], _kinds(a)


# ---- overfitting._settled_above's lucky-low guard -----------------------------------------------------------------


def test_eval_rising_three_epochs_after_a_steep_descent_is_overfitting(tmp_path):
    """Stands for an epoch-wise fine-tune evaluated once an epoch: eval 3.0, 2.2, 1.8, 1.5 (best), then 1.75, 1.85,
    1.95 (each above the last, 17-30% over the best) while the training loss falls. The new guard compares the
    median after the best (1.85) with the median of the whole descent before it (2.2) and calls the best a lucky low:
    healthy (before the change: overfitting at 500). Fix: overfitting._settled_above: 'back at the level before'
    must compare with the evals just before the best (1.8), not the steep descent's median, or not apply when the
    evals after the best rise at each point."""
    evals = [3.0, 2.2, 1.8, 1.5, 1.75, 1.85, 1.95]
    hist = []
    for s in range(10, 710, 10):
        hist.append({"step": s, "epoch": s / 100, "loss": round(2.5 * np.exp(-s / 390) + 0.02 * np.sin(s), 4),
                     "learning_rate": 2e-5})
        if s % 100 == 0:
            hist.append({"step": s, "epoch": s / 100, "eval_loss": evals[s // 100 - 1]})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "overfitting" in [k for k, _ in _kinds(a)], _kinds(a)


# ---- learning_evidence._ranked_wrong -------------------------------------------------------------------------------


def test_dpo_accuracy_zero_on_its_first_step_is_no_rise(tmp_path):
    """Stands for a TRL DPO run from an SFT'd policy whose loss starts above 1 (an LM term) and falls to 0.95, while
    rewards/accuracies is 0.0 on the first logged step (policy == reference: every margin 0, as every reference-based
    TRL DPO logs) then 0.25-0.5 at random on 8-pair batches, margins about -0.05: pairs still ranked the wrong way.
    The first tenth's mean holds the forced 0.0, so the accuracy 'rose' 0.19 and _ranked_wrong says no: healthy
    (before: no_learning_evidence). Fix: learning_evidence._ranked_wrong: leave out the first logged point (or any
    accuracy exactly 0 with margins 0) from the start level, or ask the rise of the median of the first and last
    halves."""
    rng = np.random.default_rng(1)
    hist = []
    for i in range(20):
        s = (i + 1) * 10
        acc = 0.0 if i == 0 else float(rng.choice([0.25, 0.375, 0.5, 0.375, 0.25, 0.5, 0.375]))
        hist.append({"step": s, "epoch": s / 200, "loss": round(1.35 - 0.4 * i / 19 + rng.normal(0, 0.03), 4),
                     "rewards/accuracies": acc, "rewards/margins": round(-0.05 + rng.normal(0, 0.05), 4),
                     "rewards/chosen": round(-0.1 * i / 20, 4), "rewards/rejected": round(-0.08 * i / 20, 4),
                     "logps/chosen": -300.0, "logps/rejected": -290.0, "learning_rate": 5e-7})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" in [k for k, _ in _kinds(a)], _kinds(a)


# ---- metrics._beside_nan_eval --------------------------------------------------------------------------------------


def test_nan_eval_from_the_first_eval_beside_a_memorized_zero_is_no_masked_nan(tmp_path):
    """Stands for an SFT on a tiny dataset with a broken eval split (TRL's completion-only collator finds no
    response key in the eval examples, every label -100: eval_loss NaN from the first evaluation on) while the
    training loss falls smoothly 2.0 -> 0.0022 -> 0.0001 and then logs 0.0 (HF rounds logged losses to 4 digits).
    The tool adds masked_nan_loss (error) at 700: 'the evaluation ran NaN weights, so the training loss was NaN too'.
    The eval was NaN while the weights were fine (never finite before, training loss falling); the NaN eval tells
    nothing about the weights. Fix: metrics._beside_nan_eval: only a NaN eval that follows finite evals (the weights
    went bad), and not after a training loss that has descended smoothly to the rounding floor."""
    hist = []
    for s in range(10, 1010, 10):
        hist.append({"step": s, "epoch": s / 100, "loss": round(2.0 * float(np.exp(-s / 60.0)), 4),
                     "learning_rate": 2e-5})
        if s % 100 == 0:
            hist.append({"step": s, "epoch": s / 100, "eval_loss": float("nan")})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "masked_nan_loss" not in [k for k, _ in _kinds(a)], [f.message for f in a.findings]


# ---- run._LOSS_PRINT -----------------------------------------------------------------------------------------------


def test_lucidrains_prints_with_crlf_line_ends_are_read(tmp_path):
    """Stands for an x-transformers / lucidrains script's stdout saved on Windows (CRLF): `training loss: X` once a
    batch, `validation loss: X` every tenth. _hinted turns every \\r into \\n, so each print is followed by an empty
    line and the new back-to-back lookahead never matches: NotARunDirectory (before the change: 60 losses read,
    healthy). Fix: run._hinted (replace \\r\\n by \\n before lone \\r) or run._LOSS_PRINT (allow \\n\\n)."""
    v = falling(60, 3.0, 1.8)
    text = "".join(f"training loss: {x:.4f}\r\n" + (f"validation loss: {x + 0.1:.4f}\r\n" if i % 10 == 0 else "")
                   for i, x in enumerate(v))
    a = _analyze(_write(tmp_path, "train.log", text, newline=""))
    assert len(a.timeline.series("loss")) == 60


# ---- pretrain_lines._tqdm_postfix ----------------------------------------------------------------------------------


def test_tqdm_postfix_capitalised_single_word_loss_is_the_training_loss(tmp_path):
    """Stands for a hand-written loop's `pbar.set_postfix(Loss=loss.item())` (tqdm draws `Loss=2.312`), with an
    `Evaluating` bar's `Val Loss=` after each epoch. The bar is now matched (case-insensitive `loss`) but only a key
    of several words is lower-cased: `Loss` stays `Loss`, not the training loss, so the tool reads the three eval
    points and no training loss at all (healthy from evals alone). Fix: pretrain_lines._tqdm_postfix: lower-case
    every key (`Loss`, `LR`) before canonical_metric, not only keys with a space."""
    rng = np.random.default_rng(0)
    lines = []
    for e in range(3):
        lines += [_bar(f"Epoch {e + 1}/3", n, 100, f"Loss={2.5 - 0.005 * (e * 100 + n) + rng.normal(0, .02):.3f}")
                  for n in range(1, 101)]
        lines += [_bar(f"Epoch {e + 1} [val]", n, 20, f"Val Loss={1.6 - 0.1 * e:.3f}") for n in range(1, 21)]
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(a.timeline.series("loss")) >= 250


def test_eval_bar_without_epoch_label_keeps_the_training_loss(tmp_path):
    """Stands for a custom loop: `Epoch 1/3` bar (100 batches, `loss=`) then an `Evaluating` bar (20 batches,
    `val_loss=`) with no epoch in its label, three epochs. Each eval bar's steps 1..20 read as a restart: four
    segments, the judged series only the last epoch's loss (99 of 300 points, from step 201) and evals at 1 and 21 (already so before the change; the new
    _evaluation_placed places only an eval bar that names its epoch). Fix: stdout._evaluation_placed /
    _tqdm_postfix_changes: an eval-only bar with no epoch goes at the last training step seen, and does not restart
    the training numbering."""
    rng = np.random.default_rng(0)
    lines = []
    for e in range(3):
        lines += [_bar(f"Epoch {e + 1}/3", n, 100, f"loss={2.5 - 0.005 * (e * 100 + n) + rng.normal(0, .02):.3f}")
                  for n in range(1, 101)]
        lines += [_bar("Evaluating", n, 20, f"val_loss={1.6 - 0.1 * e:.3f}") for n in range(1, 21)]
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert len(a.timeline.series("loss")) >= 250
    assert list(a.timeline.series("eval_loss").index) == [100, 200, 300]


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


def test_epoch_labelled_val_bar_with_multi_word_keys_is_placed_at_its_epochs_end(tmp_path):
    """Coverage: `Training Loss=` bars and an `Epoch E [val]` bar with `Val Loss=`: evals at 100, 200, 300."""
    rng = np.random.default_rng(0)
    lines = []
    for e in range(3):
        lines += [_bar(f"Epoch {e + 1}/3", n, 100,
                       f"Training Loss={2.5 - 0.005 * (e * 100 + n) + rng.normal(0, .02):.3f}") for n in range(1, 101)]
        lines += [_bar(f"Epoch {e + 1} [val]", n, 20, f"Val Loss={1.6 - 0.1 * e:.3f}") for n in range(1, 21)]
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert list(a.timeline.series("eval_loss").index) == [100, 200, 300]
    assert a.status == "healthy", _kinds(a)


def test_nemo2_validation_every_fifth_log_line_is_one_eval_each(tmp_path):
    """Coverage: validation every 50 steps, log interval 10: 7 evals, one each, at the line where it settles."""
    vals = {it: 2.2 - 0.002 * it for it in range(49, 400, 50)}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals, 400, 10)))
    assert len(a.timeline.series("eval_loss")) == 7


def test_odd_tqdm_postfixes_give_no_traceback(tmp_path):
    """Coverage: `Loss (avg)=`, nan/inf values, a key of six words, `lr 1e-5` without '=': no exception."""
    for i, post in enumerate(["Loss (avg)=0.5, Val Loss=0.6", "loss=nan, Val Loss=inf", "Train Loss=0.5 lr 1e-5",
                              "a b c d e f loss=0.3", "Epoch Loss=1, Batch Loss=2"]):
        lines = [_bar(f"Epoch {e}", n, 10, post) for e in range(3) for n in range(1, 11)]
        try:
            _analyze(_write(tmp_path / str(i), "train.log", "\n".join(lines) + "\n"))
        except forensics.errors.NotARunDirectory:
            pass
