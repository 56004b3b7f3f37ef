"""Profile fields a run's own console states plainly: torchtune's printed config (`dtype: bf16`) and a script's
`N total params` line, the Trainer's trainable count of a model trained whole, a QDoRA / Q-LoRA adapter named in the
run's text, a GradScaler's `scaler.pt` in a Trainer checkpoint. Each snippet is shaped like the real run's (the case
named in the test's docstring); each test also checks a run of the same shape where the sign must not fire.

Folder names here avoid the words the profile reads in a run's names (lora, sft, full, ...): the test's own folder
path would otherwise say the method.
"""
from __future__ import annotations

from pathlib import Path

import forensics

# torchtune's recipe start as `tune run` prints it (torchtune/config/_utils.py log_config), then its tqdm bar
_TORCHTUNE_START = """INFO:torchtune.utils.logging:Running LoRAFinetuneRecipeDistributed with resolved config:

batch_size: 2
checkpointer:
  _component_: torchtune.utils.FullModelHFCheckpointer
  checkpoint_dir: /tmp/Llama-2-7b-hf
  model_type: LLAMA2
dataset:
  _component_: torchtune.datasets.alpaca_dataset
device: cuda
dtype: bf16
epochs: 10
model:
  _component_: torchtune.models.llama2.lora_llama2_7b
  lora_rank: 32
optimizer:
  _component_: torch.optim.AdamW
  lr: 0.0003

DEBUG:torchtune.utils.logging:Setting manual seed to local seed 2672818458.
INFO:torchtune.utils.logging:Model instantiation took 10.71 secs
"""
_TORCHTUNE_BAR = "".join(f"1|{k}|Loss: {1.6 - k / 250:.4f}:  {k // 2}%|#| {k}/203 [0:{k:02d}:00<16:05, 87.76s/it]\r"
                         for k in range(1, 193)) + "\n"
# torchtune's tutorial's count of a LoRA model: the whole model, then the adapter's share
_TOTAL_PARAMS = """
  6771970048 total params,
  33554432 trainable params,
  0.50% of all params are trainable.
"""


def _console(folder: Path, text: str, name: str = "train.log"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return forensics.analyze(folder).run_profile


def test_torchtunes_printed_config_dtype_says_the_precision(tmp_path):
    """IbrahimOued_torchtune-finetuning: `tune run` prints the resolved config with its top-level `dtype: bf16`."""
    assert _console(tmp_path / "a", _TORCHTUNE_START + _TORCHTUNE_BAR).precision == "bf16"
    assert _console(tmp_path / "b", _TORCHTUNE_START.replace("dtype: bf16", "dtype: fp32") + _TORCHTUNE_BAR).precision \
        == "fp32"


def test_a_dtype_outside_torchtunes_top_level_config_says_no_precision(tmp_path):
    """A component's own indented `dtype:`, or a `dtype:` line after the config's end, is not the recipe's dtype."""
    indented = _TORCHTUNE_START.replace("dtype: bf16\n", "").replace("  model_type: LLAMA2\n",
                                                                      "  model_type: LLAMA2\n  dtype: bf16\n")
    assert _console(tmp_path / "a", indented + _TORCHTUNE_BAR).precision == "unknown"
    after = _TORCHTUNE_START.replace("dtype: bf16\n", "") + "dtype: bf16\n"
    assert _console(tmp_path / "b", after + _TORCHTUNE_BAR).precision == "unknown"


def test_a_printed_total_params_count_is_the_model_size(tmp_path):
    """IbrahimOued_torchtune-finetuning: the notebook prints `6771970048 total params,` before training."""
    p = _console(tmp_path / "a", _TOTAL_PARAMS + _TORCHTUNE_START + _TORCHTUNE_BAR)
    assert p.model_params == 6771970048


def test_a_trainable_params_count_alone_is_no_model_size(tmp_path):
    """The adapter's `33554432 trainable params,` with no total beside it says nothing of the model's size."""
    alone = _TOTAL_PARAMS.replace("  6771970048 total params,\n", "")
    assert _console(tmp_path / "a", alone + _TORCHTUNE_START + _TORCHTUNE_BAR).model_params is None


def _trainer_notebook(folder: Path, trainable: str, adapter: bool = False, model: str = "gpt2-large",
                      name: str = "finetune_gpt2.ipynb") -> Path:
    """A Colab notebook of a transformers.Trainer fine-tune shaped like SRM47's: the model loaded by name, the
    Trainer's `***** Running training *****` header on stderr, its HTML progress table; with `adapter`, a PEFT LoRA
    wraps the model first (and PEFT's own banner is not printed)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    rows = "".join(f"<tr><td>{s}</td><td>{1.45 - s / 20000:.6f}</td></tr>" for s in range(500, 4001, 500))
    table = ("<div><progress value='4286' max='4286'></progress> [4286/4286 57:51, Epoch 1/1]</div>"
             "<table border=\"1\" class=\"dataframe\"><thead><tr><th>Step</th><th>Training Loss</th></tr></thead>"
             f"<tbody>{rows}</tbody></table><p>")
    header = ("***** Running training *****\n  Num examples = 34285\n  Num Epochs = 1\n"
              "  Instantaneous batch size per device = 8\n  Total optimization steps = 4286\n"
              f"  Number of trainable parameters = {trainable}\n")
    wrap = ("from peft import LoraConfig, get_peft_model\n"
            "model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, task_type='CAUSAL_LM'))\n") if adapter else ""
    cells = [new_code_cell("from transformers import AutoModelWithLMHead, Trainer, TrainingArguments\n"
                           f"model = AutoModelWithLMHead.from_pretrained('{model}')\n" + wrap),
             new_code_cell("training_args = TrainingArguments(output_dir='paraphraser', per_device_train_batch_size=8,"
                           " num_train_epochs=1)\ntrainer = Trainer(model=model, args=training_args, "
                           "train_dataset=dataset)\ntrainer.train()",
                           outputs=[new_output("stream", name="stderr", text=header),
                                    new_output("display_data", data={"text/html": table, "text/plain": "<IPython>"})])]
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=cells), folder / name)
    return folder


def test_the_trainers_trainable_count_of_a_model_trained_whole_is_its_size(tmp_path):
    """SRM47_gpt2-paraphraser-comparisons: a Trainer fine-tune of gpt2-large, no adapter anywhere, whose header says
    `Number of trainable parameters = 774030080`: every weight is trained, so that is the model's size."""
    p = forensics.analyze(_trainer_notebook(tmp_path / "a", "774030080")).run_profile
    assert (p.method, p.model_params) == ("full", 774030080)


def test_an_adapters_trainable_count_is_no_model_size(tmp_path):
    """The same notebook with a LoRA wrapped around the model: the Trainer's count (2,949,120) is the adapter's."""
    p = forensics.analyze(_trainer_notebook(tmp_path / "a", "2,949,120", adapter=True)).run_profile
    assert p.method == "lora" and p.model_params is None


def test_a_trainable_count_well_under_the_size_the_name_gives_is_a_frozen_part(tmp_path):
    """A run trained whole by its code whose Trainer counts 1,200,000,000 trainable weights of a model named 7B has
    frozen most of it: the count is not the model's size, the name's size stands."""
    p = forensics.analyze(_trainer_notebook(tmp_path / "a", "1,200,000,000", model="Qwen/Qwen2-7B")).run_profile
    assert (p.method, p.model_params) == ("full", 7_000_000_000)
    p = forensics.analyze(_trainer_notebook(tmp_path / "b", "7,615,616,512", model="Qwen/Qwen2-7B")).run_profile
    assert (p.method, p.model_params) == ("full", 7_615_616_512)


def test_a_trainable_count_too_small_for_any_language_model_is_no_size(tmp_path):
    """A head of 1,538 weights trained over a frozen body, read as a full run: no language model is that small."""
    p = forensics.analyze(_trainer_notebook(tmp_path / "a", "1,538")).run_profile
    assert p.model_params is None


# A script's console as VietAnh's notebook captured it: its step lines, PEFT's banner, the Trainer's log dicts
_LOG_DICTS = "".join(f"{{'loss': {2.4 + 1.2 / k:.4f}, 'grad_norm': 1.2, 'learning_rate': 0.0002, 'epoch': {k / 7.5:.2f}}}\n"
                     for k in range(1, 76))
_BANNER = "trainable params: 940,032 || all params: 226,891,008 || trainable%: 0.4143\n"


def test_a_qdora_or_q_lora_adapter_named_in_the_console_is_qlora(tmp_path):
    """VietAnh-AI2-UET_ViT5_Base_QLoRa_VNDS: `Step 3: Setting up QDoRa VietAI/vit5-base completed` (a DoRA adapter on
    a 4-bit base), then PEFT's banner: QLoRA, whose adapter the banner counts."""
    said = "Step 3: Setting up QDoRa VietAI/vit5-base completed\n"
    assert _console(tmp_path / "a", said + _BANNER + _LOG_DICTS).method == "qlora"
    assert _console(tmp_path / "b", "Fine-tuning with Q-LoRA on VietAI/vit5-base\n" + _BANNER + _LOG_DICTS).method == "qlora"


def test_qdora_in_a_web_address_or_inside_another_name_is_no_sign(tmp_path):
    """A link to a QDoRA write-up, or DeepSeek's `q_lora_rank` in a printed model config, says nothing of this run's
    base: PEFT's banner alone says LoRA."""
    link = ("See https://github.com/AnswerDotAI/fsdp_qlora/blob/main/QDoRA.md and "
            "https://huggingface.co/papers/QLoRA-2305.14314 for the method\n")
    assert _console(tmp_path / "a", link + _BANNER + _LOG_DICTS).method == "lora"
    config = "  q_lora_rank: 1536\n  kv_lora_rank: 512\nMyQDoRAStep finished\n"
    assert _console(tmp_path / "b", config + _BANNER + _LOG_DICTS).method == "lora"


def test_a_run_named_for_qdora_is_qlora(tmp_path):
    """A run folder the owner named for QDoRA (or Q-LoRA), with nothing else saying the method: QLoRA."""
    assert _console(tmp_path / "vit5-qdora-news", _LOG_DICTS).method == "qlora"
    assert _console(tmp_path / "vit5_q-lora_news", _LOG_DICTS).method == "qlora"
    assert _console(tmp_path / "vit5-qdoramix-news", _LOG_DICTS).method == "unknown"  # (no word of its own)


# REICHIYAN's three scripts, each a Trainer run of 3 steps with logging_steps 10: train()'s closing summary is all
_SUMMARY = ("/content/lab/training_utils.py:109: FutureWarning: `tokenizer` is deprecated and will be removed in version "
            "5.0.0 for `Trainer.__init__`. Use `processing_class` instead.\n  trainer = Trainer(\n"
            "{'train_runtime': 2.3508, 'train_samples_per_second': 2.127, 'train_steps_per_second': 1.276, "
            "'train_loss': 11.154792785644531, 'epoch': 1.0}\n100%|##########| 3/3 [00:02<00:00,  1.28it/s]\n")


def _script_notebook(folder: Path, printed: str):
    """A Colab notebook that runs a training script (`!python train.py`) and keeps what it printed."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    folder.mkdir(parents=True, exist_ok=True)
    cell = new_code_cell("!python train.py", outputs=[new_output("stream", name="stdout", text=printed)])
    nbformat.write(new_notebook(cells=[cell]), folder / "lab.ipynb")
    return forensics.analyze(folder).run_profile


def test_the_trainers_closing_summary_dict_says_the_hf_trainer(tmp_path):
    """REICHIYAN_llm_ft_tinyllama: `{'train_runtime': ..., 'train_samples_per_second': ..., 'train_steps_per_second':
    ..., 'train_loss': ..., 'epoch': 1.0}`, the speed metrics Trainer.train() logs as it ends."""
    text = _BANNER + _SUMMARY + "Saved TinyLlama LoRA adapter to models/ft_adapter\n"
    assert _script_notebook(tmp_path / "a", text).framework == "hf_trainer"


def test_a_hand_written_loops_summary_dict_says_no_trainer(tmp_path):
    """A loop's own `{'epoch': ..., 'train_loss': ...}` without the Trainer's speed metrics names no framework."""
    text = _BANNER + "".join(f"{{'epoch': {e}, 'train_loss': {3.0 - e / 5:.3f}}}\n" for e in range(1, 6)) + \
        "100%|##########| 5/5 [00:02<00:00,  1.28it/s]\nSaved the adapter to models/ft_adapter\n"
    assert _script_notebook(tmp_path / "a", text).framework == "unknown"


def _trainer_checkpoint(folder: Path, scaler: bool, release: str | None) -> Path:
    """A Trainer output folder with checkpoint-500/: the model's config.json (with the transformers release that
    wrote it), trainer_state.json and, with `scaler`, the GradScaler state torch.save wrote as scaler.pt."""
    import json

    import torch

    checkpoint = folder / "checkpoint-500"
    checkpoint.mkdir(parents=True)
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
              "vocab_size": 50257, "n_positions": 1024, "torch_dtype": "float32"}
    if release:
        config["transformers_version"] = release
    (checkpoint / "config.json").write_text(json.dumps(config))
    history = [{"loss": round(3.5 - s / 400, 4), "learning_rate": 5e-5, "epoch": s / 500, "step": s}
               for s in range(10, 501, 10)]
    (checkpoint / "trainer_state.json").write_text(json.dumps({"global_step": 500, "log_history": history}))
    if scaler:
        torch.save({"scale": 32768.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                    "_growth_tracker": 12}, checkpoint / "scaler.pt")
    return folder


def test_a_grad_scalers_state_in_a_trainer_checkpoint_says_fp16(tmp_path):
    """REICHIYAN_llm_ft_tinyllama's checkpoints (transformers 4.57.1) hold scaler.pt: the Trainer keeps a GradScaler,
    and so saves one, for fp16 alone."""
    run = _trainer_checkpoint(tmp_path / "a", scaler=True, release="4.57.1")
    assert forensics.analyze(run).run_profile.precision == "fp16"


def test_a_checkpoint_without_scaler_pt_or_from_a_bf16_scaler_release_says_no_precision(tmp_path):
    """No scaler.pt says nothing (bf16, fp32, or a release that saved none); a scaler.pt of transformers 4.18, whose
    Trainer kept a GradScaler for bf16 as well, or of an unknown release, says nothing either."""
    assert forensics.analyze(_trainer_checkpoint(tmp_path / "a", False, "4.57.1")).run_profile.precision == "unknown"
    assert forensics.analyze(_trainer_checkpoint(tmp_path / "b", True, "4.18.0")).run_profile.precision == "unknown"
    assert forensics.analyze(_trainer_checkpoint(tmp_path / "c", True, None)).run_profile.precision == "unknown"


_SEQ2SEQ_WARNING = ("/content/repo/scripts/train.py:153: FutureWarning: `tokenizer` is deprecated and will be removed in "
                    "version 5.0.0 for `Seq2SeqTrainer.__init__`. Use `processing_class` instead.\n"
                    "  trainer = Seq2SeqTrainer(\n")


def test_the_seq2seq_trainer_built_in_the_console_says_supervised_fine_tuning(tmp_path):
    """VietAnh-AI2-UET_ViT5_Base_QLoRa_VNDS: the script's Seq2SeqTrainer named in transformers' own warning as it is
    built, then its log dicts: an encoder-decoder trained on its targets, supervised fine-tuning."""
    assert _console(tmp_path / "a", _BANNER + _SEQ2SEQ_WARNING + _LOG_DICTS).objective == "sft"


def test_a_plain_trainer_or_a_seq2seq_trainer_in_prose_says_no_objective(tmp_path):
    """The same warning for `Trainer.__init__`, or the class named in a sentence, says nothing of the objective."""
    plain = _SEQ2SEQ_WARNING.replace("Seq2SeqTrainer", "Trainer")
    assert _console(tmp_path / "a", _BANNER + plain + _LOG_DICTS).objective == "unknown"
    prose = "Note: this script uses Trainer, not Seq2SeqTrainer(...) as the docs suggest\n"
    assert _console(tmp_path / "b", _BANNER + prose + _LOG_DICTS).objective == "unknown"


def test_a_notebook_named_for_fine_tuning_says_supervised_fine_tuning(tmp_path):
    """LevOssadtchi-NLP_rating-to-review-generator: gpt2_finetuning.ipynb, a Trainer fine-tune of gpt2-large on its
    task's text, named by its owner with the -ing form of the verb."""
    p = forensics.analyze(_trainer_notebook(tmp_path / "a", "774030080", name="gpt2_finetuning.ipynb")).run_profile
    assert p.objective == "sft"


def test_a_folder_named_for_fine_tuning_says_no_objective(tmp_path):
    """A folder called `llm-finetuning` names a project (a repository of notebooks), not what the run in it trains."""
    p = forensics.analyze(_trainer_notebook(tmp_path / "llm-finetuning", "774030080", name="gpt2.ipynb")).run_profile
    assert p.objective == "unknown"
