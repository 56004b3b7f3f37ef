"""Labels that count padding, read from a notebook's own code (ingest/notebook_code/pad_labels.py, label_flow.py)
and judged (analyzers/padded_labels.py): padded input_ids copied into a plain Trainer's labels with nothing that masks
the pad ids to -100 train and score every pad position, so the loss's level and much of its fall say little about
the task. A warning with no incident of its own; silent where anything masks (-100, a masking collator, TRL's
SFTTrainer), where the padding is not plain (a per-example map with padding=True pads nothing), and on a
hand-written loop. Real cases: Ngwaru_auto_surgical_report and mitchgauthier_nlp_6120_abs_summarization (judged
warning, called healthy before), AkshayPethe_PEFT_in_inference (pads, masks to -100: healthy),
sahabajalam_doctors-scribe-qlora (pads to max_length, trains with TRL's SFTTrainer)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers import first_incident_of
from forensics.analyzers.padded_labels import KIND, detect_labels_include_padding, with_padding_caveat
from forensics.causes import infer_causes
from forensics.causes.roles import cause_role, leading_cause
from forensics.config import RunConfig, Thresholds
from forensics.findings import Finding
from forensics.ingest.notebook_code.pad_labels import labels_with_padding
from forensics.report.story import build_story
from forensics.timeline import Timeline
from support.review_runs import ran_notebook

REALWORLD = Path(__file__).parent / "realworld"

_LOAD = ("from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments\n"
         "tokenizer = AutoTokenizer.from_pretrained('gpt2')\ntokenizer.pad_token = tokenizer.eos_token\n"
         "model = AutoModelForCausalLM.from_pretrained('gpt2')\n")
_TOKENIZE = ("def tokenize(example):\n"
             "    tokenized = tokenizer(example['text'], truncation=True, max_length=128, padding='max_length')\n"
             "    tokenized['labels'] = tokenized['input_ids'].copy()\n"
             "    return tokenized\n"
             "data = dataset.map(tokenize)\n")
_TRAIN = ("args = TrainingArguments(output_dir='out', num_train_epochs=3, logging_steps=10)\n"
          "trainer = Trainer(model=model, args=args, train_dataset=data)\ntrainer.train()\n")
_TABLE = "\n".join(str({"loss": round(2.4 * 0.9 ** (s / 10) + 0.2, 4), "epoch": s / 100}) for s in range(10, 310, 10))


def _cells(*sources: str) -> list[dict]:
    return [{"cell_type": "code", "execution_count": i, "source": s, "outputs": [], "metadata": {}}
            for i, s in enumerate(sources, 1)]


def test_padded_ids_copied_into_the_labels_of_a_plain_trainer_are_stated_with_their_cells():
    said = labels_with_padding(_cells(_LOAD, _TOKENIZE, _TRAIN))
    assert said is not None
    assert "In [2] line 3" in said and "tokenized['labels'] = tokenized['input_ids'].copy()" in said
    assert "In [2] line 2" in said and "padding='max_length'" in said


def test_the_hf_docs_dataset_class_over_a_padded_list_of_targets_is_followed():
    dataset = ("train_enc = tokenizer(texts, truncation=True, padding=True)\n"
               "train_labels = tokenizer(targets, truncation=True, padding=True)\n"
               "class SummaryData(torch.utils.data.Dataset):\n"
               "    def __init__(self, encodings, labels):\n        self.encodings = encodings\n"
               "        self.labels = labels\n"
               "    def __getitem__(self, idx):\n"
               "        item = {key: torch.tensor(val[idx]) for key, val in self.encodings.items()}\n"
               "        item['labels'] = torch.tensor(self.labels['input_ids'][idx])\n        return item\n"
               "data = SummaryData(train_enc, train_labels)\n")
    said = labels_with_padding(_cells(_LOAD, dataset, _TRAIN))
    assert said is not None and "self.labels['input_ids'][idx]" in said and "padding=True" in said


def test_labels_masked_to_minus_100_anywhere_say_nothing():
    masked = _TOKENIZE.replace("    return tokenized\n", "    tokenized['labels'] = [[t if t != tokenizer.pad_token_id "
                               "else -100 for t in l] for l in tokenized['labels']]\n    return tokenized\n")
    assert labels_with_padding(_cells(_LOAD, masked, _TRAIN)) is None


def test_a_masking_collator_or_trainer_says_nothing():
    collator = ("from transformers import DataCollatorForLanguageModeling\n"
                "collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)\n")
    assert labels_with_padding(_cells(_LOAD, _TOKENIZE, collator, _TRAIN.replace(
        "train_dataset=data)", "train_dataset=data, data_collator=collator)"))) is None
    sft = _TRAIN.replace("Trainer(", "SFTTrainer(").replace("TrainingArguments(", "SFTConfig(")
    assert labels_with_padding(_cells(_LOAD + "from trl import SFTTrainer, SFTConfig\n", _TOKENIZE, sft)) is None


def test_a_collator_of_the_notebooks_own_says_nothing():
    own = "def collate(batch):\n    return rebuild(batch)\n"
    assert labels_with_padding(_cells(_LOAD, _TOKENIZE, own, _TRAIN.replace(
        "train_dataset=data)", "train_dataset=data, data_collator=collate)"))) is None


def test_padding_to_the_longest_of_one_example_pads_nothing():
    longest = _TOKENIZE.replace("padding='max_length'", "padding='longest'")
    assert labels_with_padding(_cells(_LOAD, longest, _TRAIN)) is None
    batched = longest.replace("dataset.map(tokenize)", "dataset.map(tokenize, batched=True)")
    assert labels_with_padding(_cells(_LOAD, batched, _TRAIN)) is not None


def test_labels_from_an_unpadded_tokenization_say_nothing_though_a_generation_cell_pads():
    unpadded = _TOKENIZE.replace(", padding='max_length'", "")
    generate = "inputs = tokenizer(prompts, return_tensors='pt', padding=True)\nout = model.generate(**inputs)\n"
    assert labels_with_padding(_cells(_LOAD, unpadded, _TRAIN, generate)) is None


_S2S = ("def preprocess(batch):\n    enc = tokenizer(batch['src'], truncation=True, max_length=128)\n"
        "    lab = tokenizer(text_target=batch['tgt'], truncation=True, max_length=64)\n"
        "    enc['labels'] = lab['input_ids']\n    return enc\ndata = ds.map(preprocess, batched=True)\n")
_WITH_COLLATOR = _TRAIN.replace("train_dataset=data)", "train_dataset=data, data_collator=collator)")
_MASKED_OR_UNPADDED = {
    "a helper maps the pads to a constant holding -100": (
        _LOAD, _TOKENIZE, "IGNORE = -100\ndef mask(b):\n"
        "    b['labels'] = [[IGNORE if t == tokenizer.pad_token_id else t "
        "for t in l] for l in b['labels']]\n    return b\ndata = data.map(mask, batched=True)\n", _TRAIN),
    "labels[labels == pad_id] = ignore, both variables": (
        _LOAD, _TOKENIZE, "pad_id = tokenizer.pad_token_id\nignore = -100\ndef fix(ex):\n"
        "    labels = torch.tensor(ex['labels'])\n    labels[labels == pad_id] = ignore\n    ex['labels'] = labels\n"
        "    return ex\ndata = data.map(fix)\n", _TRAIN),
    "torch.where(ids == pad, -100, ids)": (
        _LOAD, _TOKENIZE.replace("    return tokenized\n", "    ids = torch.tensor(tokenized['input_ids'])\n"
                                 "    tokenized['labels'] = torch.where(ids == tokenizer.pad_token_id, -100, ids)\n"
                                 "    return tokenized\n"), _TRAIN),
    "DataCollatorForSeq2Seq pads at collate time, the tokenize function does not": (
        _LOAD, _S2S, "collator = DataCollatorForSeq2Seq(tokenizer, model=model)\n", _WITH_COLLATOR),
    "text_target= without padding, the inputs padded": (
        _LOAD, _S2S.replace("max_length=128)", "max_length=128, padding='max_length')"), _TRAIN),
    "DataCollatorForLanguageModeling(mlm=False) built in another cell": (
        _LOAD, _TOKENIZE, "from transformers import DataCollatorForLanguageModeling\n"
        "collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)\n", _WITH_COLLATOR),
    "padding='max_length' in an inference cell only": (
        _LOAD, _TOKENIZE.replace(", padding='max_length'", ""), _TRAIN,
        "enc = tokenizer(['hi'], padding='max_length', max_length=32, return_tensors='pt')\nmodel.generate(**enc)\n"),
}


def test_labels_masked_in_a_helper_or_padded_only_at_collate_or_inference_time_say_nothing():
    said = {name: labels_with_padding(_cells(*sources)) for name, sources in _MASKED_OR_UNPADDED.items()}
    assert said == {name: None for name in _MASKED_OR_UNPADDED}


def test_a_global_that_a_later_inference_cell_pads_is_not_what_a_training_dataset_read():
    dataset = ("enc = tokenizer(texts, truncation=True, max_length=128)\n"
               "class LMData(torch.utils.data.Dataset):\n    def __len__(self):\n        return len(enc['input_ids'])\n"
               "    def __getitem__(self, i):\n"
               "        return {'input_ids': enc['input_ids'][i], 'labels': enc['input_ids'][i]}\ndata = LMData()\n")
    generate = ("enc = tokenizer(['hi there'], padding='max_length', max_length=32, return_tensors='pt')\n"
                "model.generate(**enc)\n")
    assert labels_with_padding(_cells(_LOAD, dataset, _TRAIN, generate)) is None
    padded = dataset.replace("max_length=128)", "max_length=128, padding='max_length')")
    assert labels_with_padding(_cells(_LOAD, padded, _TRAIN)) is not None


def test_a_padded_tokenize_function_redefined_or_left_unused_says_nothing():
    unpadded = _TOKENIZE.replace(", padding='max_length'", "")
    assert labels_with_padding(_cells(_LOAD, _TOKENIZE, unpadded, _TRAIN)) is None
    old = _TOKENIZE.replace("def tokenize", "def tokenize_old").replace("data = dataset.map(tokenize)\n", "")
    new = unpadded.replace("def tokenize", "def tokenize_new").replace("map(tokenize)", "map(tokenize_new)")
    assert labels_with_padding(_cells(_LOAD, old, new, _TRAIN)) is None
    assert labels_with_padding(_cells(_LOAD, unpadded, _TOKENIZE, _TRAIN)) is not None


# galang006_medichat_llm's shape: prompts and answers tokenized in two calls of one batched function, the labels
# taken from the SECOND call's padded input_ids (a plain Trainer here; the notebook itself trains with SFTTrainer)
_TWO_CALLS = ("def preprocess_batch(examples):\n"
              "    prompts = [f'{a}\\n{b}' for a, b in zip(examples['instruction'], examples['input'])]\n"
              "    tokenized_inputs = tokenizer(prompts, truncation=True, padding='max_length', max_length=512)\n"
              "    tokenized_outputs = tokenizer(examples['output'], truncation=True, padding='max_length', "
              "max_length=512)\n"
              "    tokenized_inputs['labels'] = tokenized_outputs['input_ids']\n"
              "    return tokenized_inputs\n"
              "data = dataset.map(preprocess_batch, batched=True, batch_size=512)\n")


def test_labels_from_the_second_of_two_padded_tokenizer_calls_are_stated_with_that_call():
    said = labels_with_padding(_cells(_LOAD, _TWO_CALLS, _TRAIN))
    assert said is not None
    assert "tokenized_inputs['labels'] = tokenized_outputs['input_ids']" in said
    assert "In [2] line 4" in said and "tokenized_outputs = tokenizer(" in said


def test_labels_from_a_second_call_say_nothing_where_masked_or_not_padded_to_max_length():
    masked = _TWO_CALLS.replace("    return tokenized_inputs\n", "    tokenized_inputs['labels'] = [[-100 if t == "
                                "tokenizer.pad_token_id else t for t in row] for row in tokenized_inputs['labels']]\n"
                                "    return tokenized_inputs\n")
    longest = _TWO_CALLS.replace("padding='max_length', max_length=512", "padding='longest'")
    collator = "collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)\n"
    unpadded = _TWO_CALLS.replace("truncation=True, padding='max_length', max_length=512)\n    tokenized_inputs[",
                                  "truncation=True, max_length=512)\n    tokenized_inputs[")
    assert "padding" not in unpadded.split("tokenized_outputs = ")[1].split("\n")[0]  # only the prompts are padded
    assert labels_with_padding(_cells(_LOAD, masked, _TRAIN)) is None
    assert labels_with_padding(_cells(_LOAD, longest, collator, _WITH_COLLATOR)) is None
    assert labels_with_padding(_cells(_LOAD, unpadded, _TRAIN)) is None


def test_a_hand_written_loop_says_nothing():
    loop = ("batch = tokenizer(texts, padding='max_length', max_length=150, return_tensors='pt')\n"
            "for step in range(100):\n    out = model(**batch, labels=batch['input_ids'])\n    out.loss.backward()\n")
    assert labels_with_padding(_cells(_LOAD, loop)) is None


def _loss(values, start=10):
    return {"loss": pd.Series(values, index=range(start, start + 10 * len(values), 10), dtype="float64")}


def test_the_fact_is_a_warning_that_does_not_call_the_run_failed():
    found = detect_labels_include_padding(_loss([2.4, 1.1, 0.5, 0.3, 0.25]), "In [2] line 3: `...`")
    assert [(f.kind, f.severity) for f in found] == [(KIND, "warning")]
    message = found[0].message
    assert "-100" in message and "pad" in message and "does not say the run failed" in message
    assert found[0].evidence["code"] == "In [2] line 3: `...`"


def test_no_fact_or_no_loss_no_finding():
    assert detect_labels_include_padding(_loss([2.4, 1.1, 0.5]), None) == []
    assert detect_labels_include_padding({}, "In [2] line 3: `...`") == []


def test_an_event_of_the_log_stays_the_first_incident_beside_it():
    padded = detect_labels_include_padding(_loss([2.4, 1.1, 0.5, 0.3, 0.25]), "In [2] line 3: `...`")[0]
    later = Finding("overfitting", "warning", 40, "eval loss rose")
    summary = Finding("no_learning_evidence", "warning", 50, "no evidence")
    assert first_incident_of([padded, later]).kind == "overfitting"
    assert first_incident_of([padded, summary]).kind == "no_learning_evidence"
    assert first_incident_of([padded]).kind == KIND


def test_the_cause_names_the_masking_and_leads_only_where_the_fact_is_the_first_incident():
    padded = detect_labels_include_padding(_loss([2.4, 1.1, 0.5, 0.3, 0.25]), "In [2] line 3: `...`")[0]
    causes = infer_causes(RunConfig(), Timeline.empty(), [padded], [], Thresholds())
    assert [c.cause for c in causes] == ["labels_count_padding"]
    assert "-100" in causes[0].suggestion and causes[0].evidence == ["In [2] line 3: `...`"]
    assert leading_cause(causes, padded) is causes[0]
    overfit = Finding("overfitting", "warning", 40, "eval loss rose")
    assert cause_role(overfit, causes[0], leading_cause(causes, overfit)) == "about_the_log"
    assert infer_causes(RunConfig(), Timeline.empty(), [overfit], [], Thresholds()) == []


def test_a_trainer_notebook_whose_labels_count_padding_is_a_warning(tmp_path):
    run = ran_notebook(tmp_path / "run", "train.ipynb", [(_LOAD, ""), (_TOKENIZE, ""), (_TRAIN, _TABLE)])
    analysis = forensics.analyze(run)
    assert analysis.status == "warning"
    assert analysis.first_incident is not None and analysis.first_incident.kind == KIND
    assert "In [2] line 3" in analysis.first_incident.message
    story = build_story(analysis)  # a fact of the whole run, not a step where something went wrong
    assert story.headline.startswith("The log does not show that the run learned: the labels count the padding")
    assert "went wrong" not in story.answers[0].paragraphs[0]


def test_the_same_notebook_masking_its_pads_stays_healthy(tmp_path):
    masked = _TOKENIZE.replace("    return tokenized\n", "    labels = torch.tensor(tokenized['labels'])\n"
                               "    tokenized['labels'] = labels.masked_fill(labels == tokenizer.pad_token_id, -100)\n"
                               "    return tokenized\n")
    run = ran_notebook(tmp_path / "run", "train.ipynb", [(_LOAD, ""), (masked, ""), (_TRAIN, _TABLE)])
    analysis = forensics.analyze(run)
    assert analysis.status == "healthy", [f.message for f in analysis.findings]


def test_real_notebooks_that_train_on_padding_say_so_and_one_that_masks_does_not():
    for case in ("Ngwaru_auto_surgical_report", "mitchgauthier_nlp_6120_abs_summarization"):
        analysis = forensics.analyze(REALWORLD / case)
        assert analysis.status == "warning" and analysis.first_incident.kind == KIND, case
    # -100; an SFTTrainer (left out: which TRL release ran is not in the code - this one, 0.27.1, does count its pads)
    for case in ("AkshayPethe_PEFT_in_inference", "sahabajalam_doctors-scribe-qlora"):
        assert KIND not in {f.kind for f in forensics.analyze(REALWORLD / case).findings}, case


def test_the_advice_for_an_encoder_decoder_is_its_own_collator_not_the_causal_lm_one():
    # DataCollatorForLanguageModeling(mlm=False) makes the labels a copy of the input_ids: for a T5 / BART summariser
    # that is the article, not the summary. Its labels are masked by DataCollatorForSeq2Seq given unpadded targets.
    said, losses = "In [2] line 3: `...`", _loss([2.4, 1.1, 0.5, 0.3, 0.25])
    seq2seq = detect_labels_include_padding(losses, said, encoder_decoder=True)[0]
    causal = detect_labels_include_padding(losses, said, encoder_decoder=False)[0]
    assert "DataCollatorForLanguageModeling" not in seq2seq.message and "DataCollatorForSeq2Seq" in seq2seq.message
    assert "DataCollatorForLanguageModeling(mlm=False)" in causal.message
    seq2seq_cause, causal_cause = (infer_causes(RunConfig(), Timeline.empty(), [found], [], Thresholds())[0]
                                   for found in (seq2seq, causal))
    assert "-100" in seq2seq_cause.suggestion and "DataCollatorForLanguageModeling" not in seq2seq_cause.suggestion
    assert "DataCollatorForLanguageModeling(mlm=False)" in causal_cause.suggestion


def test_real_encoder_decoders_are_not_told_to_copy_their_inputs_into_the_labels():
    advice = {}
    for case in ("mitchgauthier_nlp_6120_abs_summarization", "Ngwaru_auto_surgical_report"):  # BART, Llama 3.2
        analysis = forensics.analyze(REALWORLD / case)
        cause = next(c for c in analysis.causes if c.cause == "labels_count_padding")
        advice[case] = analysis.first_incident.message + cause.suggestion
    assert "DataCollatorForLanguageModeling" not in advice["mitchgauthier_nlp_6120_abs_summarization"]
    assert "DataCollatorForSeq2Seq" in advice["mitchgauthier_nlp_6120_abs_summarization"]
    assert "DataCollatorForLanguageModeling(mlm=False)" in advice["Ngwaru_auto_surgical_report"]


def test_a_memorization_read_from_a_loss_that_counts_padding_says_the_level_is_partly_padding():
    # EhsaasN_LLM-learning: five sentences of ~15 tokens padded to 256, 7.50 -> 0.16; the memorization rule reads the
    # level 0.16 as the text learned by heart, but most of the positions it averages are pads predicted for free
    padded = detect_labels_include_padding(_loss([2.4, 1.1, 0.5, 0.3, 0.25]), "In [2] line 3: `...`")[0]
    memorized = Finding("memorization", "warning", 40, "the training data learned by heart (memorization).")
    noted = with_padding_caveat([padded, memorized])
    assert noted[0] is padded and noted[1].kind == "memorization" and noted[1].step == 40
    assert noted[1].message.startswith(memorized.message)
    assert "pad positions" in noted[1].message and "overstates" in noted[1].message
    assert with_padding_caveat([memorized]) == [memorized]
    overfit = Finding("overfitting", "warning", 40, "eval loss rose")
    assert with_padding_caveat([padded, overfit]) == [padded, overfit]


def test_the_real_memorization_beside_padded_labels_carries_the_note():
    analysis = forensics.analyze(REALWORLD / "EhsaasN_LLM-learning")
    assert analysis.first_incident.kind == "memorization" and "overstates" in analysis.first_incident.message
