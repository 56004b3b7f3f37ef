"""The run profile's objective "classification" (a sequence / token classification head) and the learning-rate advice
a classifier gets: the classification rows, never a language model's."""
import json
import math
from pathlib import Path

import forensics
from forensics.causes.lr_ranges import lr_range, range_scope

REALWORLD = Path(__file__).parent / "realworld"


def _run(folder: Path, losses, architectures, lr=2e-5, extra=None, config_extra=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    history = [{"step": 10 * (i + 1), "epoch": (i + 1) / len(losses), "loss": loss, "learning_rate": lr,
                "grad_norm": 1.0, **(extra or {})} for i, loss in enumerate(losses)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 10 * len(losses), "log_history": history}))
    config = {"architectures": architectures, "model_type": "bert", **(config_extra or {})}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_token_classification_config_is_a_classifier(tmp_path):
    run = _run(tmp_path / "ner_finetune", [2.2, 1.1, 0.6, 0.4, 0.3], ["BertForTokenClassification"],
               config_extra={"id2label": {str(i): f"L{i}" for i in range(9)}})
    profile = forensics.analyze(run).run_profile
    assert profile.objective == "classification"
    assert "BertForTokenClassification" in profile.evidence["objective"]
    assert "config.json" in profile.evidence["objective"]


def test_script_building_a_sequence_classifier_is_a_classifier():
    # ARUNRG3005's train_model.py loads AutoModelForSequenceClassification(roberta-base, num_labels=...) and writes
    # the training_log.csv analyzed
    profile = forensics.analyze(REALWORLD / "ARUNRG3005_Context-Aware-Hashtag-Generation").run_profile
    assert profile.objective == "classification"
    assert "AutoModelForSequenceClassification" in profile.evidence["objective"]
    assert "script" in profile.evidence["objective"]


def test_causal_lm_logging_eval_accuracy_is_no_classifier(tmp_path):
    # a language model's token accuracy is no classification head: metric names alone do not make a classifier
    run = _run(tmp_path / "llama_sft", [1.9, 1.5, 1.3, 1.2, 1.1], ["LlamaForCausalLM"], extra={"eval_accuracy": 0.6},
               config_extra={"model_type": "llama"})
    assert forensics.analyze(run).run_profile.objective != "classification"


def test_one_label_reward_head_stays_a_reward_model(tmp_path):
    # AutoModelForSequenceClassification with num_labels=1 trained on pairs (its loss starts at ln 2): a reward model
    losses = [math.log(2) - 0.01, 0.6, 0.5, 0.45, 0.4]
    run = _run(tmp_path / "reward_model", losses, ["LlamaForSequenceClassification"],
               config_extra={"model_type": "llama", "id2label": {"0": "LABEL_0"}})
    assert forensics.analyze(run).run_profile.objective == "reward"


def test_classifier_lr_advice_names_the_classification_rows(tmp_path):
    # a full fine-tune of a BERT tagger at 1e-3 that blows up: judged against BERT's fine-tuning rates
    losses = [2.2, 1.0, 0.8, 5.0, 40.0, float("nan"), float("nan")]
    run = _run(tmp_path / "ner", losses, ["BertForTokenClassification"], lr=1e-3,
               config_extra={"id2label": {str(i): f"L{i}" for i in range(9)}})
    analysis = forensics.analyze(run)
    words = json.dumps([c.to_dict() if hasattr(c, "to_dict") else vars(c) for c in analysis.causes], default=str)
    assert "BERT paper" in words
    assert "classification" in words
    # not the 7B-class supervised fine-tuning row, nor pre-training's
    assert "1e-05 to 2e-05" not in words and "7B-class" not in words and "pre-training" not in words


def test_classifier_is_not_told_the_language_model_ranges():
    full = lr_range("full", "classification", None)
    assert full.describe() == "1e-05 to 5e-05" and "BERT" in full.source
    assert lr_range("full", "classification", 7_000_000_000) != lr_range("full", "sft", 7_000_000_000)
    scope = range_scope("classification", None, "unknown")
    assert "pre-training from scratch" not in scope and "7B-class" not in scope
    # a run whose objective is not known keeps today's wording
    assert "pre-training from scratch runs higher" in range_scope("unknown", None)


def test_html_and_text_reports_render_the_classification_objective_escaped(tmp_path):
    from forensics.report.html import render_html
    from forensics.report.text import profile_line
    head = "<b>Evil</b>ForSequenceClassification"  # a config's own text: shown, never as markup
    run = _run(tmp_path / "cls", [1.6, 1.2, 0.9, 0.7, 0.6], [head],
               config_extra={"id2label": {str(i): f"L{i}" for i in range(5)}})
    analysis = forensics.analyze(run)
    assert "objective classification" in profile_line(analysis.run_profile)
    page = render_html(analysis)
    assert "objective classification" in page
    assert "&lt;b&gt;Evil&lt;/b&gt;ForSequenceClassification" in page and "<b>Evil</b>" not in page


def test_a_classification_head_beats_an_sft_word_in_the_run_name(tmp_path):
    # the folder's "sft" is a weak guess from a name; the model's config names the head the run trains
    run = _run(tmp_path / "sft_intent_classifier", [1.6, 1.2, 0.9, 0.7, 0.6], ["RobertaForSequenceClassification"],
               config_extra={"model_type": "roberta", "id2label": {str(i): f"L{i}" for i in range(7)}})
    assert forensics.analyze(run).run_profile.objective == "classification"


def test_preference_metrics_win_over_a_classification_head(tmp_path):
    # a trainer's own metrics name the objective outright: a head in a config beside them does not overrule them
    run = _run(tmp_path / "run", [0.69, 0.6, 0.5, 0.45, 0.4], ["LlamaForSequenceClassification"],
               extra={"rewards/chosen": 0.1, "rewards/margins": 0.2, "logps/chosen": -50.0},
               config_extra={"model_type": "llama", "id2label": {"0": "A", "1": "B"}})
    assert forensics.analyze(run).run_profile.objective == "preference"


def test_an_image_classifier_is_not_given_the_text_classifier_objective(tmp_path):
    # the classification rows are BERT's and RoBERTa's: a ViT's head keeps today's unknown objective and wording
    run = _run(tmp_path / "vit", [2.2, 1.5, 1.0, 0.8, 0.7], ["ViTForImageClassification"],
               config_extra={"model_type": "vit", "id2label": {str(i): f"L{i}" for i in range(10)}})
    assert forensics.analyze(run).run_profile.objective != "classification"


def _filter_then_lm_notebook(folder: Path, trained: str) -> Path:
    """A hand-written loop (no Trainer) that loads a toxicity classifier to filter its lines, then trains `trained`
    from gpt2 (review 32a's probe)."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = [
        "import torch\nfrom transformers import AutoModelForSequenceClassification, AutoTokenizer, "
        "AutoModelForCausalLM\nclf_tok = AutoTokenizer.from_pretrained('unitary/toxic-bert')\n"
        "clf = AutoModelForSequenceClassification.from_pretrained('unitary/toxic-bert')\n"
        "lines = open('forum.txt').read().splitlines()\nwith torch.no_grad():\n"
        "    keep = [l for l in lines if clf(**clf_tok(l, return_tensors='pt')).logits.sigmoid().max() < 0.5]\n",
        f"tok = AutoTokenizer.from_pretrained('gpt2')\nmodel = {trained}.from_pretrained('gpt2')\n"
        "opt = torch.optim.AdamW(model.parameters(), lr=5e-5)\n"
        "batches = [tok(l, return_tensors='pt')['input_ids'] for l in keep]\n",
        "for epoch in range(20):\n    for x in batches:\n        loss = model(x, labels=x).loss\n"
        "        loss.backward()\n        opt.step()\n        opt.zero_grad()\n"
        "    print(f'epoch {epoch} loss {loss.item():.4f}')\n"]
    printed = "".join(f"epoch {i} loss {3.0 - 0.1 * i:.4f}\n" for i in range(20))
    outputs = [[], [], [{"output_type": "stream", "name": "stdout", "text": printed.splitlines(keepends=True)}]]
    nb = {"cells": [{"cell_type": "code", "execution_count": n, "metadata": {}, "source": src, "outputs": out}
                    for n, (src, out) in enumerate(zip(cells, outputs), 1)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "train.ipynb").write_text(json.dumps(nb))
    return folder


def test_a_classifier_loaded_only_to_filter_the_data_is_not_the_trained_model(tmp_path):
    """No trainer says which model trains, and the loads name two heads: the classifier's is not taken as the
    trained model's (a GPT-2 language model was judged against BERT's classification rates)."""
    profile = forensics.analyze(_filter_then_lm_notebook(tmp_path / "lm", "AutoModelForCausalLM")).run_profile
    assert profile.objective != "classification", profile.evidence.get("objective")


def test_a_notebook_that_loads_only_a_classifier_and_trains_it_is_still_one(tmp_path):
    folder = _filter_then_lm_notebook(tmp_path / "cls", "AutoModelForSequenceClassification")
    assert forensics.analyze(folder).run_profile.objective == "classification"


def test_a_one_label_head_loaded_in_code_is_no_classifier(tmp_path):
    """num_labels=1 in the loading call (a score or regression head, a reward model in a notebook) reads as config.json's
    one label does (review 32a item 11: only config.json's was seen); the same call with three labels is a classifier."""
    def run(labels: int) -> str:
        folder = _filter_then_lm_notebook(tmp_path / f"labels{labels}", "AutoModelForSequenceClassification")
        nb = json.loads((folder / "train.ipynb").read_text())
        nb["cells"][1]["source"] = nb["cells"][1]["source"].replace(
            ".from_pretrained('gpt2')\nopt", f".from_pretrained('gpt2', num_labels={labels})\nopt")
        nb["cells"][0]["source"] = nb["cells"][0]["source"].replace(
            "AutoModelForSequenceClassification.from_pretrained('unitary/toxic-bert')",
            f"AutoModelForSequenceClassification.from_pretrained('unitary/toxic-bert', num_labels={labels})")
        (folder / "train.ipynb").write_text(json.dumps(nb))
        return forensics.analyze(folder).run_profile.objective

    assert run(1) != "classification" and run(3) == "classification"


def test_the_filtering_classifiers_name_is_not_the_trained_models(tmp_path):
    """The loads name two heads and no trainer says which trains: the classifier's name (86M) is not read as the size
    of the model the loop trains (Qwen2.5-7B), nor its one label as the trained model's head."""
    folder = _filter_then_lm_notebook(tmp_path / "lm", "AutoModelForCausalLM")
    notebook = folder / "train.ipynb"
    notebook.write_text(notebook.read_text()
                        .replace("Classification.from_pretrained('unitary/toxic-bert')",
                                 "Classification.from_pretrained('meta-llama/Llama-Prompt-Guard-2-86M', num_labels=1)")
                        .replace("from_pretrained('gpt2')", "from_pretrained('Qwen/Qwen2.5-7B')"))
    profile = forensics.analyze(folder).run_profile
    assert profile.model_params != 86_000_000, profile.evidence.get("model_params")
