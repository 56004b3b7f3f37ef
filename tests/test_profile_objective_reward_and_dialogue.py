"""The run profile's objective (forensics/profile/objective.py) of reward-model notebooks and of a causal LM trained on
dialogue pairs.

From AS68's misses: shambhavikris_Reward_Alignment's four reward models, one a cell, and a causal LM trained under
DataCollatorForLanguageModeling(mlm=False) on a file of prepared dialogue pairs (vadam5_task-aware-pruning), which is
fine-tuning on dialogue, not next-token training on raw text."""
from __future__ import annotations

import json
from pathlib import Path

import forensics


_BAR = "██████████"


def _cell(count: int | None, source: str, *texts: tuple[str, str]) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {}, "source": source,
            "outputs": [{"output_type": "stream", "name": name, "text": text} for name, text in texts]}


_RUNS = (("Part1", 0.702, 0.6830803751945496, 0.5399999618530273), ("Part3", 0.516, 0.5748032331466675, 0.69),
         ("Part4", 0.168, 0.19620180130004883, 0.75), ("Part2_CHECK", 0.731, 0.6713375449180603, 0.5771812200546265))


def _reward_notebook(folder: Path, name: str) -> Path:
    """Four reward models trained one a cell (shambhavikris_Reward_Alignment's outputs), the last run at chance."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = [_cell(1, "from train3_rm import training_rm")]
    for count, (part, batch_loss, test_loss, accuracy) in enumerate(_RUNS, 2):
        cells.append(_cell(count, f"training_rm('sft.pt', 'FRFT_Iter1_{part}_RM', 'train.pkl', 'test.pkl')",
                           ("stdout", "Loaded training and testing datasets\n"),
                           ("stderr", f"batch loss {batch_loss}: 100%|{_BAR}| 2000/2000 [04:17<00:00,  7.77it/s]\n"),
                           ("stdout", f"Epoch: 1, Test Loss: {test_loss}, Acc: {accuracy}\n"
                                      f"Training complete. Model saved as FRFT_Iter1_{part}_RM\n")))
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / name).write_text(json.dumps(notebook, indent=1))
    return folder


def test_four_reward_models_in_four_cells_judge_the_last_whose_one_bar_shows_no_learning(tmp_path):
    a = forensics.analyze(_reward_notebook(tmp_path, "reward_model_training.ipynb"))
    assert a.status == "warning"
    assert [f.kind for f in a.findings] == ["no_learning_evidence"]
    assert a.run_profile.objective == "reward"


def test_a_notebook_not_named_for_a_reward_model_gets_no_reward_objective(tmp_path):
    a = forensics.analyze(_reward_notebook(tmp_path, "training.ipynb"))
    assert a.status == "warning" and a.run_profile.objective != "reward"


_LOAD = ("import pickle as pkl\nfrom transformers import AutoTokenizer, BloomForCausalLM, Trainer, TrainingArguments\n"
         "from transformers import DataCollatorForLanguageModeling\n"
         "tok = AutoTokenizer.from_pretrained('bigscience/bloom-560m')\n"
         "model = BloomForCausalLM.from_pretrained('bigscience/bloom-560m')\n"
         "data = pkl.load(open({path!r}, 'rb'))\ntrain_dataset = [tok(text)['input_ids'] for text in data]\n")
_TRAIN = ("collator = DataCollatorForLanguageModeling(tokenizer=tok, mlm=False)\n"
          "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'), train_dataset=train_dataset, "
          "data_collator=collator)\ntrainer.train()\n")
_LOGGED = "".join(f"{{'loss': {3.5 - 0.05 * i:.3f}, 'learning_rate': 2e-05, 'epoch': {i / 40:.3f}}}\n"
                  for i in range(1, 41))


def _collator_notebook(folder: Path, path: str) -> Path:
    """`finetune_bloom.ipynb`: bloom-560m trained on the texts of a pickle under the causal-LM collator."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = [_cell(1, _LOAD.format(path=path)), _cell(2, _TRAIN, ("stdout", _LOGGED))]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "finetune_bloom.ipynb").write_text(json.dumps(notebook, indent=1))
    return folder


def test_a_file_of_dialogue_pairs_under_the_causal_lm_collator_is_fine_tuning_not_raw_text(tmp_path):
    folder = _collator_notebook(tmp_path, "conv_dicts/530_human_filtered_conv_pairs.pkl")
    assert forensics.analyze(folder).run_profile.objective == "sft"


def test_a_file_of_plain_texts_under_the_causal_lm_collator_stays_raw_text(tmp_path):
    folder = _collator_notebook(tmp_path, "corpus/wiki_paragraphs.pkl")
    assert forensics.analyze(folder).run_profile.objective == "pretrain"
