"""Review day 9 (judge, second pass): what real cases of batches AQ4 and AQ5 showed the judgement getting wrong. Each
test builds a run shaped like the real one, asserts what its name says, and fails on the code before its change; each
change also has a test where its rule must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, sft, full, dpo, ...)."""
from __future__ import annotations

import json

import forensics
from forensics.ingest.banners import find_banners
from forensics.ingest.results_table import trainer_tables


# ---- change 1: Unsloth's early-2025 training banner prints the model's count after a '/' ----------------------------


def _unsloth_training_banner(counts: str) -> list[str]:
    return ["==((====))==  Unsloth - 2x faster free finetuning | Num GPUs used = 1",
            "   \\\\   /|    Num examples = 7,473 | Num Epochs = 1 | Total steps = 50",
            "O^O/ \\_/ \\    Batch size per device = 4 | Gradient accumulation steps = 1",
            "\\        /    Data Parallel GPUs = 1 | Total batch size (4 x 1 x 1) = 4",
            f' "-____-"     Trainable parameters = {counts}']


def test_unsloth_banner_trainable_slash_total_reads_the_total_as_the_model_size():
    (banner,) = find_banners(_unsloth_training_banner("6,522,880/1,006,408,832 (0.65% trained)"))
    assert banner.kind == "unsloth"
    assert (banner.trainable_params, banner.all_params) == (6_522_880, 1_006_408_832)


def test_unsloth_banner_with_the_trainable_count_alone_has_no_total():
    (banner,) = find_banners(_unsloth_training_banner("6,522,880 (0.65% trained)"))
    assert (banner.trainable_params, banner.all_params) == (6_522_880, None)
    (newer,) = find_banners(_unsloth_training_banner("6,522,880 of 1,006,408,832 (0.65% trained)"))
    assert (newer.trainable_params, newer.all_params) == (6_522_880, 1_006_408_832)


def _unsloth_notebook(folder, four_bit: bool, counts: str):
    """An executed Unsloth notebook: the model loaded by FastLanguageModel (4-bit or not), LoRA, SFTTrainer, the
    training banner and the printed Step / Training Loss table."""
    def code(source: str, outputs=()):
        return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source,
                "outputs": list(outputs)}

    def stream(text: str):
        return {"output_type": "stream", "name": "stdout", "text": text}

    rows = "\n".join(f"{i}\t{2.1 - 0.02 * i:.6f}" for i in range(1, 41))
    cells = [code('from unsloth import FastLanguageModel\nmodel, tokenizer = FastLanguageModel.from_pretrained(\n'
                  f'    model_name = "unsloth/Llama-3.2-3B-Instruct", max_seq_length = 2048, '
                  f'load_in_4bit = {four_bit},\n)'),
             code("model = FastLanguageModel.get_peft_model(model, r = 16, lora_alpha = 16)"),
             code("from trl import SFTTrainer\nfrom transformers import TrainingArguments\n"
                  "trainer = SFTTrainer(model = model, tokenizer = tokenizer, train_dataset = dataset,\n"
                  "    args = TrainingArguments(max_steps = 40, learning_rate = 2e-4, fp16 = True, "
                  "logging_steps = 1, output_dir = 'outputs'))"),
             code("trainer_stats = trainer.train()",
                  [stream("\n".join(_unsloth_training_banner(counts)) + "\n"),
                   stream(" [40/40 02:10, Epoch 0/1]\nStep\tTraining Loss\n" + rows + "\n")])]
    folder.mkdir(parents=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                                    "nbformat_minor": 5}))
    return folder


def test_unsloth_slash_banner_of_a_16_bit_base_gives_the_model_size(tmp_path):
    run = _unsloth_notebook(tmp_path / "run", False, "24,313,856/3,237,063,680 (0.75% trained)")
    profile = forensics.analyze(run).run_profile
    assert (profile.framework, profile.method, profile.model_params) == ("unsloth", "lora", 3_237_063_680)


def test_unsloth_slash_banner_of_a_4_bit_base_counts_packed_weights_not_the_model_size(tmp_path):
    run = _unsloth_notebook(tmp_path / "run", True, "24,313,856/1,827,777,536 (1.33% trained)")
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.model_params) == ("qlora", 3_000_000_000)


# ---- change 2: a pairwise preference loss at exactly 0 after several epochs is the pairs memorized ------------------


def _trainer_notebook(folder, config_class: str, trainer_class: str, losses: list[float], epochs: float):
    """An executed notebook of a TRL trainer logging every step: its arguments cell, the notebook callback's HTML
    table (Step / Training Loss, no rewards/* columns) and the closing TrainOutput."""
    n = len(losses)
    rows = "".join(f"    <tr>\n      <td>{i}</td>\n      <td>{v:.6f}</td>\n    </tr>\n"
                   for i, v in enumerate(losses, 1))
    html = (f"\n    <div>\n      \n      <progress value='{n}' max='{n}' style='width:300px; height:20px; "
            f"vertical-align: middle;'></progress>\n      [{n}/{n} 53:55, Epoch {int(epochs)}/{int(epochs) + 6}]\n"
            "    </div>\n    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n"
            "      <th>Step</th>\n      <th>Training Loss</th>\n    </tr>\n  </thead>\n  <tbody>\n" + rows
            + "  </tbody>\n</table><p>")
    mean = sum(losses) / n
    result = (f"TrainOutput(global_step={n}, training_loss={mean}, metrics={{'train_runtime': 3257.7, "
              f"'train_samples_per_second': 0.982, 'train_steps_per_second': 0.061, 'total_flos': 0.0, "
              f"'train_loss': {mean}, 'epoch': {epochs}}})")
    source = (f"from trl import {trainer_class}, {config_class}\n"
              f"training_args = {config_class}(per_device_train_batch_size=4, gradient_accumulation_steps=4, "
              f"learning_rate=5e-5, max_steps={n}, logging_steps=1, output_dir='out', bf16=True)\n"
              f"trainer = {trainer_class}(model, args=training_args, train_dataset=dataset, tokenizer=tokenizer)\n"
              "trainer.train()")
    cell = {"cell_type": "code", "execution_count": 6, "metadata": {}, "source": source, "outputs": [
        {"output_type": "display_data", "metadata": {},
         "data": {"text/plain": "<IPython.core.display.HTML object>", "text/html": html}},
        {"output_type": "execute_result", "execution_count": 6, "metadata": {}, "data": {"text/plain": result}}]}
    folder.mkdir(parents=True)
    (folder / "train.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                    "nbformat_minor": 5}))
    return folder


def _down_to_zero(n: int = 200, rate: float = 0.12) -> list[float]:
    """A pairwise loss from ln 2 down smoothly, printed with 6 decimals: 0.000000 over the last two thirds."""
    return [round(0.6931 * 2.718281828 ** (-rate * i), 6) for i in range(n)]


def test_pairwise_loss_at_zero_after_many_epochs_is_memorization(tmp_path):
    run = _trainer_notebook(tmp_path / "run", "DPOConfig", "DPOTrainer", _down_to_zero(), 28.64)
    analysis = forensics.analyze(run)
    assert analysis.run_profile.objective == "preference"
    assert analysis.status == "warning"
    assert analysis.first_incident.kind == "memorization"
    assert 40 <= analysis.first_incident.step <= 80
    assert not any(f.kind == "zero_loss_unexplained" for f in analysis.findings)


def test_pairwise_loss_at_zero_within_the_first_epochs_stays_unexplained(tmp_path):
    run = _trainer_notebook(tmp_path / "run", "DPOConfig", "DPOTrainer", _down_to_zero(), 2.5)
    analysis = forensics.analyze(run)
    assert analysis.first_incident.kind == "zero_loss_unexplained"


def test_supervised_loss_at_zero_after_many_epochs_stays_unexplained(tmp_path):
    run = _trainer_notebook(tmp_path / "run", "SFTConfig", "SFTTrainer", _down_to_zero(), 28.64)
    analysis = forensics.analyze(run)
    assert analysis.run_profile.objective == "sft"
    assert analysis.first_incident.kind == "zero_loss_unexplained"


# ---- change 3: an eval loss climbing eval after eval past its best is overfitting even with no training loss logged --


def _eval_only_state(folder, evals: list[float]):
    """A Trainer checkpoint whose logging_steps exceed the run's length: trainer_state.json holds the per-epoch
    evaluations and no training loss (one step an epoch)."""
    history = [{"epoch": float(i), "eval_loss": v, "eval_runtime": 0.3412, "eval_samples_per_second": 2.931,
                "eval_steps_per_second": 2.931, "step": i} for i, v in enumerate(evals, 1)]
    n = len(evals) + 1
    state = {"best_metric": None, "best_model_checkpoint": None, "epoch": float(n), "eval_steps": 500,
             "global_step": n, "is_hyper_param_search": False, "is_local_process_zero": True,
             "is_world_process_zero": True, "log_history": history, "logging_steps": 500, "max_steps": n,
             "num_input_tokens_seen": 0, "num_train_epochs": n, "save_steps": 500, "total_flos": 5418319134720.0,
             "train_batch_size": 8, "trial_name": None, "trial_params": None}
    checkpoint = folder / f"checkpoint-{n}"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text(json.dumps(state, indent=2))
    return folder


def test_eval_loss_climbing_after_its_best_without_a_training_loss_is_overfitting(tmp_path):
    run = _eval_only_state(tmp_path / "run", [0.4163, 0.368, 0.2971, 0.2606, 0.2587, 0.2703, 0.2911, 0.3075, 0.3164])
    analysis = forensics.analyze(run)
    assert analysis.status == "warning"
    over = analysis.first_incident
    assert (over.kind, over.step) == ("overfitting", 6)
    assert "training loss is not logged" in over.message


def test_eval_loss_wandering_or_climbing_briefly_without_a_training_loss_is_no_overfitting(tmp_path):
    wandering = [2.42, 2.30, 2.21, 2.15, 2.11, 2.13, 2.12, 2.14, 2.13, 2.15]  # above its best, not climbing each eval
    three = [0.4163, 0.368, 0.2971, 0.2606, 0.2587, 0.2451, 0.2503, 0.2611, 0.2720]  # three evals climbing only
    for name, evals in (("wandering", wandering), ("three", three)):
        analysis = forensics.analyze(_eval_only_state(tmp_path / name, evals))
        assert not any(f.kind == "overfitting" for f in analysis.findings), name


# ---- change 4: a notebook's per-epoch table whose rows count from 0 is dated at the ends of the epochs ---------------


def _epoch_table_html(labels: list[int], bar: str) -> str:
    """transformers' NotebookProgressCallback table with eval_strategy 'epoch': `int(state.epoch)` in the first
    column, the training and validation losses beside it, the progress bar over it."""
    train = [2.0016, 1.4298, 1.2293, 1.0703, 0.9171]
    valid = [1.534434, 1.494818, 1.501496, 1.545876, 1.620981]
    rows = "".join(f"    <tr>\n      <td>{e}</td>\n      <td>{t:.6f}</td>\n      <td>{v:.6f}</td>\n    </tr>\n"
                   for e, t, v in zip(labels, train, valid))
    return (f"\n    <div>\n      \n      <progress value='1410' max='1410' style='width:300px; height:20px; "
            f"vertical-align: middle;'></progress>\n      {bar}\n    </div>\n"
            "    <table border=\"1\" class=\"dataframe\">\n  <thead>\n <tr style=\"text-align: left;\">\n"
            "      <th>Epoch</th>\n      <th>Training Loss</th>\n      <th>Validation Loss</th>\n    </tr>\n"
            "  </thead>\n  <tbody>\n" + rows + "  </tbody>\n</table><p>")


def test_epoch_table_counted_from_zero_dates_each_row_at_the_end_of_its_epoch():
    lines = trainer_tables(_epoch_table_html([0, 1, 2, 3, 4], "[1410/1410 3:10:09, Epoch 4/5]")).splitlines()
    assert [line.split("\t")[:2] for line in lines[2:]] == [["282", "1"], ["564", "2"], ["846", "3"],
                                                            ["1128", "4"], ["1410", "5"]]


def test_epoch_table_counted_from_one_keeps_its_labels():
    lines = trainer_tables(_epoch_table_html([1, 2, 3, 4, 5], "[1410/1410 3:10:09, Epoch 5/5]")).splitlines()
    assert [line.split("\t")[:2] for line in lines[2:]] == [["282", "1"], ["564", "2"], ["846", "3"],
                                                            ["1128", "4"], ["1410", "5"]]


def test_overfitting_in_an_epoch_table_counted_from_zero_is_dated_at_the_first_rise(tmp_path):
    cell = {"cell_type": "code", "execution_count": 9, "metadata": {}, "source": "trainer.train()", "outputs": [
        {"output_type": "display_data", "metadata": {}, "data": {
            "text/plain": "<IPython.core.display.HTML object>",
            "text/html": _epoch_table_html([0, 1, 2, 3, 4], "[1410/1410 3:10:09, Epoch 4/5]")}}]}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "train.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                              "nbformat_minor": 5}))
    analysis = forensics.analyze(tmp_path / "run")
    assert analysis.timeline.series("eval_loss").index.tolist() == [282, 564, 846, 1128, 1410]
    assert (analysis.first_incident.kind, analysis.first_incident.step) == ("overfitting", 846)
