"""Review of the day's changes a5f3681..HEAD (leaving aside ingest/notebook.py): inputs that real runs plausibly
produce and that the new rules must not misread. A failing test is a misfire of a new rule (its docstring says which
real input it stands for, what the tool says instead, and where the fix belongs); the passing ones record shapes that
were checked and held."""
from __future__ import annotations

import json

import numpy as np
import pytest

import forensics
from support.review_runs import falling, nemo2_console, training_notebook


def _analyze(folder):
    return forensics.analyze(folder, check_checkpoints=False)


def _write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return folder


def _trainer_state(folder, log_history):
    return _write(folder, "trainer_state.json", json.dumps({"log_history": log_history,
                                                            "global_step": log_history[-1]["step"]}))


def _kinds(a):
    return [(f.kind, f.step) for f in a.findings]


# ---- NeMo 2.0 ProgressPrinter: val_loss stays among the progress-bar metrics --------------------------------------


def test_nemo2_val_loss_repeated_on_every_progress_line_is_one_eval_per_validation(tmp_path):
    """Stands for a NeMo 2.0 fine-tune printed by ProgressPrinter (log_interval 1), validated every 50 steps: the
    val_loss of the last validation is printed again on every training line after it (prog_bar metric), 1.900 at its
    best and 1.912 / 1.915 / 1.921 at the last three validations (a 1% wobble). The tool reads 350 eval points for 7
    validations and calls the pseudo-replicated wobble `overfitting` (warning at step 201). It should read one eval
    point per validation (7) and stay healthy. Fix: pretrain_lines._nemo2_progress (or step_numbering, as the tqdm
    postfix reader does): keep val_loss / val_ppl only on the first line after a `Validation: iteration` block, or
    where the value changes."""
    vals = {49: 2.10, 99: 1.950, 149: 1.905, 199: 1.900, 249: 1.912, 299: 1.915, 349: 1.921}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals)))
    assert "overfitting" not in [k for k, _ in _kinds(a)], _kinds(a)
    assert len(a.timeline.series("eval_loss")) == len(vals)


def test_nemo2_val_loss_averaged_over_a_partial_interval_is_no_eval_dip(tmp_path):
    """Stands for a NeMo 2.0 run with ProgressPrinter(log_interval=10) and val_check_interval 25: on the first line
    after each validation the printer divides a val_loss summed over part of the interval by 10 (0.975 for a val_loss
    of 1.95), so the eval loss reads 0.97 ... then 1.95. The eval loss in truth fell steadily (1.95 -> 1.84); the tool
    says `overfitting` at step 39 (the fake dip the best, every later eval 15% above it: _settled_above). Fix:
    pretrain_lines._nemo2_progress: take val_loss only from a line whose interval held no validation start (or only
    where it changes, leaving out the first line after a validation)."""
    vals = {24: 1.95, 49: 1.90, 74: 1.88, 99: 1.87, 124: 1.86, 149: 1.86, 174: 1.85, 199: 1.85, 224: 1.845,
            249: 1.845, 274: 1.84}
    a = _analyze(_write(tmp_path, "log-nemo.txt", nemo2_console(vals, steps=300, log_interval=10)))
    assert "overfitting" not in [k for k, _ in _kinds(a)], _kinds(a)


# ---- learning_evidence._ranked_wrong ----------------------------------------------------------------------------


def _pairwise_history(n, loss, accuracy, extra=lambda f: {}):
    rng = np.random.default_rng(1)
    hist = []
    for i in range(n):
        f = i / (n - 1)
        hist.append({"loss": loss(f) + rng.normal(0, 0.03),
                     "rewards/accuracies": float(np.clip(accuracy(f) + rng.normal(0, 0.03), 0, 1)),
                     "rewards/chosen": -0.2 + 0.3 * f, "rewards/rejected": 0.3 - 0.1 * f,
                     "rewards/margins": -0.5 + 0.4 * f, "logps/chosen": -300.0, "logps/rejected": -280.0,
                     "learning_rate": 5e-6, "epoch": i / n, "step": (i + 1) * 10, **extra(f)})
    return hist


def test_dpo_accuracy_rising_from_far_below_chance_with_falling_loss_is_learning(tmp_path):
    """Stands for a TRL DPO run whose policy starts from an SFT adapter that is not the reference (the loss starts
    above ln 2, as giakhanhhii's): over 1,000 steps the loss falls 1.3 -> 0.85 and the reward accuracy climbs
    0.15 -> 0.45, the margins -0.5 -> -0.1. The pairs moved a long way the right way round; only the end is still
    under 0.5. The tool says warning `no_learning_evidence` (healthy before _ranked_wrong). _ranked_wrong should only
    hold where the accuracy also did not rise (giakhanhhii's went 0.36 -> 0.42): e.g. require end < start +
    PAIRWISE_RISE. Fix: learning_evidence._ranked_wrong / _told_apart."""
    hist = _pairwise_history(100, lambda f: 1.3 - 0.45 * f, lambda f: 0.15 + 0.30 * f)
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" not in [k for k, _ in _kinds(a)], _kinds(a)


def test_llamafactory_orpo_falling_loss_with_accuracy_under_half_is_learning(tmp_path):
    """Stands for a LLaMA-Factory ORPO run (stage dpo, pref_loss orpo: CustomDPOTrainer logs `sft_loss` and
    `odds_ratio_loss`, not TRL's `log_odds_ratio` / `nll_loss`): the loss (the SFT NLL plus beta x the odds-ratio term)
    falls 1.67 -> 1.17 while rewards/accuracies (beta x the average log-probs, compared) stays 0.40 -> 0.45. The SFT
    part clearly learned, as ORPO's rule (_MIXED_START) says; the tool does not see it as reference-free and says
    warning `no_learning_evidence` (healthy before _ranked_wrong). Fix: learning_evidence.reference_free
    (_REFERENCE_FREE_KEYS: add `sft_loss` / `odds_ratio_loss`)."""
    hist = _pairwise_history(100, lambda f: 1.6 - 0.5 * f + 0.075, lambda f: 0.40 + 0.05 * f,
                             lambda f: {"sft_loss": 1.6 - 0.5 * f, "odds_ratio_loss": 0.75 - 0.05 * f})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" not in [k for k, _ in _kinds(a)], _kinds(a)


def test_trl_orpo_with_accuracy_under_half_still_counts_its_lm_fall(tmp_path):
    """Coverage: TRL's ORPO (log_odds_ratio, nll_loss) with the accuracy under 0.5 keeps its LM term's fall as
    learning (reference_free)."""
    hist = _pairwise_history(100, lambda f: 1.6 - 0.5 * f, lambda f: 0.40 + 0.05 * f,
                             lambda f: {"nll_loss": 1.5 - 0.5 * f, "log_odds_ratio": -0.8})
    a = _analyze(_trainer_state(tmp_path, hist))
    assert "no_learning_evidence" not in [k for k, _ in _kinds(a)], _kinds(a)


# ---- overfitting._settled_above / _climbing --------------------------------------------------------------------


def _with_evals(evals, n_train=100, every=10):
    tr = falling(n_train, 0.7, 0.15)
    hist = []
    for s in range(1, n_train + 1):
        hist.append({"loss": tr[s - 1], "learning_rate": 2e-5, "epoch": s / every, "step": s * 10})
        if s % every == 0:
            hist.append({"eval_loss": evals[s // every - 1], "epoch": s / every, "step": s * 10})
    return hist


def test_lucky_low_eval_in_a_short_noisy_series_is_not_overfitting(tmp_path):
    """Stands for a 10-epoch classifier fine-tune on a small eval set: the eval loss levels off around 0.46-0.52 from
    epoch 3 (0.50, 0.47, 0.52, 0.46), dips once to 0.40 at epoch 7, and is back at its level after (0.48, 0.51,
    0.47) - where it was before the dip, not above it. The tool says warning `overfitting` at step 800 (every eval
    after the dip 15% above it: _settled_above; healthy before). A best that the evals before it never came near is a
    lucky batch, not a level the model reached (the series is under _LONG, so _best_level takes the raw minimum).
    Fix: overfitting._settled_above: also require the later evals above the level before the best (or take the
    best's level with its neighbours in a short series too)."""
    evals = [0.69, 0.56, 0.50, 0.47, 0.52, 0.46, 0.40, 0.48, 0.51, 0.47]
    a = _analyze(_trainer_state(tmp_path, _with_evals(evals)))
    assert a.status == "healthy", _kinds(a)


def test_eval_loss_settled_well_above_its_best_is_overfitting(tmp_path):
    """Coverage: ozguozkan's shape (best at epoch 2, then 27-32% above it for the rest) still fires."""
    evals = [0.60, 0.417, 0.551, 0.540, 0.528]
    a = _analyze(_trainer_state(tmp_path, _with_evals(evals, n_train=50)))
    assert "overfitting" in [k for k, _ in _kinds(a)], _kinds(a)


# ---- lucidrains' `training loss: X` prints ----------------------------------------------------------------------


def test_sweep_summary_of_training_loss_lines_beside_a_run_is_not_its_log(tmp_path):
    """Stands for a run folder holding the Trainer's trainer_state.json (healthy, 40 logged losses) and the user's
    sweep_results.txt: ten trials, each written as `trial i: lr=...`, `training loss: X`, `validation loss: Y` (one
    trial diverged: `training loss: nan`). The ten whole-line prints pass _LOSS_PRINTS, so the summary is read as a
    lucidrains loop: ten more losses join the run's and the tool says warning `nonfinite_metric` at step 7 (healthy
    before). Ten final losses of ten trials, each between `trial` headers, are not one loop's batch prints. Fix:
    run._hinted (_LOSS_PRINT) / step_numbering._loss_prints_numbered: need the prints to come in runs of consecutive
    lines (a loop prints them back to back, between bar redraws), not each under a header of its own."""
    _trainer_state(tmp_path, [{"loss": v, "learning_rate": 2e-5, "epoch": s / 10, "step": s * 10}
                              for s, v in enumerate(falling(40), 1)])
    text = ""
    trials = [(1e-5, 1.42), (2e-5, 1.31), (5e-5, 1.22), (1e-4, 1.18), (2e-4, 1.25), (5e-4, 1.9), (1e-3, "nan"),
              (3e-5, 1.27), (8e-5, 1.2), (3e-4, 1.6)]
    for i, (lr, loss) in enumerate(trials):
        val = "nan" if loss == "nan" else f"{loss + 0.1:.2f}"
        text += f"trial {i}: lr={lr}\ntraining loss: {loss}\nvalidation loss: {val}\n\n"
    a = _analyze(_write(tmp_path, "sweep_results.txt", text))
    assert a.status == "healthy", _kinds(a)
    assert len(a.timeline.series("loss")) == 40


def test_lucidrains_prints_after_tqdm_bar_are_read(tmp_path):
    """Coverage: x-transformers' `training loss: X` prints (behind the bar) with a NaN from batch 25 are broken at 25."""
    lines = []
    for i, v in enumerate(falling(30), 1):
        shown = "nan" if i >= 25 else f"{v:.4f}"
        lines.append(f"training:   {i}%|          | {i}/100 [00:{i:02d}<00:10,  1.00it/s]training loss: {shown}")
        if i % 10 == 0:
            lines.append(f"validation loss: {v + 0.1:.4f}")
    a = _analyze(_write(tmp_path, "train.log", "\n".join(lines) + "\n"))
    assert a.status == "broken" and a.first_incident.step == 25, _kinds(a)


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


# ---- shapes checked that held -------------------------------------------------------------------------------------


def test_ray_prefix_on_only_the_workers_lines_still_reads_them(tmp_path):
    """Ray Train driver log: Tune's status lines unprefixed (a third of the lines and more), the worker's Trainer dicts
    behind `(RayTrainWorker pid=4112) `: the prefix is not stripped, and the dicts are still read."""
    out = []
    for s, v in enumerate(falling(30), 1):
        out += ["== Status ==", f"Current time: 2024-06-01 10:00:{s:02d} (running for 00:00:{s:02d})",
                f"(RayTrainWorker pid=4112) {{'loss': {v:.4f}, 'grad_norm': 1.2, 'learning_rate': 2e-05, "
                f"'epoch': {s / 10:.2f}}}"]
    a = _analyze(_write(tmp_path, "ray_driver.log", "\n".join(out) + "\n"))
    assert a.status == "healthy" and len(a.timeline.series("loss")) == 30


def test_csv_whose_last_line_was_cut_mid_write_is_no_nan_loss(tmp_path):
    """A block-buffered metrics.csv of a killed run ends mid-line (`61,`): no NaN loss is made of it."""
    rows = ["step,loss,lr"] + [f"{s},{v:.4f},0.0001" for s, v in enumerate(falling(60), 1)]
    a = _analyze(_write(tmp_path, "metrics.csv", "\n".join(rows + ["61,"])))
    assert a.status == "healthy", _kinds(a)


def test_epoch_table_with_a_final_eval_only_row_is_no_nan_loss(tmp_path):
    """A script's dense epoch table ending with a re-evaluation of the best checkpoint (`10,,0.39,0.89`)."""
    tl = [0.62, 0.45, 0.38, 0.33, 0.30, 0.27, 0.25, 0.23, 0.22, 0.21]
    vl = [0.50, 0.44, 0.41, 0.40, 0.39, 0.395, 0.39, 0.40, 0.395, 0.40]
    rows = ["epoch,train_loss,val_loss,val_acc"] + [f"{e + 1},{tl[e]},{vl[e]},{0.80 + e * 0.01:.2f}" for e in range(10)]
    a = _analyze(_write(tmp_path, "history.csv", "\n".join(rows + ["10,,0.39,0.89"]) + "\n"))
    assert a.status == "healthy", _kinds(a)


@pytest.mark.parametrize("name, text", [
    ("training_statistics.json", json.dumps({"training": {"combined": {"loss": [2.5 - i * 0.03 for i in range(55)]
                                                                                + [None] * 5}},
                                             "validation": {"combined": {"loss": [None, "x", 2.4]}}})),
    ("training_statistics.json", json.dumps({"training": "x", "validation": 3})),
    ("train.log", "[INFO:swift] args: SftArguments(model='a, train_type=\"lora)\n"
                  + "".join(f"{{'loss': {2.5 - i * 0.03:.4f}, 'epoch': {i / 10:.2f}}}\n" for i in range(40))),
    ("train.log", "".join(f"Training epoch 0, iteration {i}/10 | global_step: inf | reduced_train_loss: 2.{i}\n"
                          for i in range(20))),
    ("train.log", "".join(f"{{ Epoch:[  1/  0], step:[ {i}/    0], loss: 2.{i}, global_norm: [inf]\n"
                          for i in range(1, 20))),
])
def test_odd_files_of_the_new_formats_give_no_traceback(tmp_path, name, text):
    """Damaged or odd Ludwig statistics, ms-swift printed args, NeMo 2.0 and MindFormers lines: a judgement or a
    NotARunDirectory, never a traceback."""
    _write(tmp_path, name, text)
    try:
        _analyze(tmp_path)
    except forensics.errors.NotARunDirectory:
        pass
