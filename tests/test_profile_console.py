"""The run profile from what a run's own text says about it: a console's printed config, launch line and logger names,
W&B's record of the command line, a model card's tags. Each snippet is shaped like a real run's (the case named in the
test's docstring); each test also checks what must NOT be read that way.

Folder names here avoid the words the profile reads in a run's names (lora, sft, full, ...): the test's own folder
path would otherwise say the method.
"""
from __future__ import annotations

import json
from pathlib import Path

import forensics
from forensics.ingest import command_line, stdout

_ITERS = "".join(f"2024/08/27 06:{33 + k // 6:02d}:{k % 6 * 10:02d} - mmengine - INFO - Iter(train) [{10 * k:4d}/2000]  "
                 f"lr: 1.5255e-06  eta: 2:04:46  time: 3.7622  data_time: 0.0285  memory: 39252  loss: {5.6 - k / 10:.4f}\n"
                 for k in range(1, 21))
_XTUNER_CONFIG = """2024/08/27 06:32:10 - mmengine - INFO - Config:
batch_size = 8
llava_dataset = dict(
    max_length=8192,
    template='xtuner.utils.PROMPT_TEMPLATE.internlm2_chat',
    type='xtuner.dataset.InternVL_V1_5_Dataset')
model = dict(
    freeze_llm=True,
    freeze_visual_encoder=True,
    llm_lora=dict(
        lora_alpha=256,
        r=128,
        task_type='CAUSAL_LM',
        type='peft.LoraConfig'),
    quantization_llm=True,
    quantization_vit=False,
    type='xtuner.model.InternVL_V1_5')
strategy = dict(
    config=dict(
        bf16=dict(enabled=True),
        fp16=dict(enabled=False, initial_scale_power=16),
        zero_optimization=dict(overlap_comm=True, stage=1)),
    type='xtuner.engine.DeepSpeedStrategy')
train_cfg = dict(max_epochs=8, type='xtuner.engine.runner.TrainLoop')

"""


def _console(folder: Path, text: str, name: str = "train.log"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return forensics.analyze(folder).run_profile


def test_xtuners_printed_config_says_method_objective_precision_and_framework(tmp_path):
    """HandSomeGuy001/InternLM-813: XTuner's mmengine runner prints its python config before its Iter(train) lines."""
    p = _console(tmp_path / "a", _XTUNER_CONFIG + _ITERS)
    assert (p.method, p.objective, p.precision, p.framework) == ("qlora", "sft", "bf16", "xtuner")
    # no 4-bit base: LoRA; LLaVA's pre-training stage (LLM frozen, no adapter, templated too) is no fine-tune
    assert _console(tmp_path / "b", _XTUNER_CONFIG.replace("quantization_llm=True", "quantization_llm=False")
                    + _ITERS).method == "lora"
    frozen = _XTUNER_CONFIG.replace("    llm_lora=dict(\n        lora_alpha=256,\n        r=128,\n        task_type='CAUSAL_LM',"
                                    "\n        type='peft.LoraConfig'),\n", "").replace("quantization_llm=True", "")
    p = _console(tmp_path / "c", frozen + _ITERS)
    assert (p.method, p.objective, p.precision) == ("unknown", "unknown", "bf16")
    # another mmengine project's config (no XTuner component): its keys are not read
    other = _console(tmp_path / "d", _XTUNER_CONFIG.replace("type='xtuner.", "type='mmdet.") + _ITERS)
    assert (other.method, other.objective, other.precision, other.framework) == ("unknown",) * 4


def test_llamafactorys_logger_names_say_the_framework(tmp_path):
    """hiyouga/LlamaFactory issue 2810: llmtuner's callback logs each point beside the Trainer's own dict."""
    lines = "".join(f"03/12/2024 11:24:{30 + k} - INFO - llmtuner.extras.callbacks - {{'loss': {2 - k / 10:.4f}, "
                    f"'learning_rate': 4.9999e-02, 'epoch': {k / 100}}}\n{{'loss': {2 - k / 10}, 'learning_rate': 0.05, "
                    f"'epoch': {k / 100}}}\n" for k in range(1, 9))
    p = _console(tmp_path / "a", lines)
    assert p.framework == "llamafactory" and "llmtuner.extras.callbacks" in p.evidence["framework"]
    # the same shape of line from another package is the Trainer's console, not LLaMA-Factory's
    assert _console(tmp_path / "b", lines.replace("llmtuner.", "mytuner.")).framework == "hf_trainer"


def _trainer_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    history = [{"step": s, "loss": 2.0 - s / 100, "learning_rate": 5e-5, "epoch": s / 100} for s in range(10, 110, 10)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 100, "log_history": history}))
    return folder


def test_wandbs_record_of_llamafactorys_command_line(tmp_path):
    """Joe-2002/LinChance-Fine-tuning-System: wandb-metadata.json's args are LLaMA-Factory's train_bash.py arguments."""
    args = ["--stage", "sft", "--model_name_or_path", "/models/Mistral-7B-v0.1", "--do_train", "--finetuning_type",
            "lora", "--lora_target", "q_proj,v_proj", "--fp16"]
    run = _trainer_run(tmp_path / "a")
    (run / "files").mkdir()
    (run / "files" / "wandb-metadata.json").write_text(json.dumps({"program": "src/train_bash.py", "args": args}))
    p = forensics.analyze(run).run_profile
    assert (p.method, p.objective, p.precision, p.framework) == ("lora", "sft", "fp16", "llamafactory")
    assert "wandb-metadata.json" in p.evidence["method"]
    # `--stage` alone is some other script's argument: neither the stage nor the framework is taken from it
    assert command_line.config_values(command_line.arguments(["--stage", "sft", "--fp16", "False"])) == {}
    assert command_line.config_values(command_line.arguments(["--stage=dpo", "--finetuning_type=full",
                                                              "--quantization_bit=4"]))["stage"] == "dpo"


def test_deepspeeds_launch_line_gives_the_scripts_lora_switch_and_precision(tmp_path):
    """yunsaijc/Eso-LLaVA: DeepSpeed's runner prints the command, LLaVA's train_mem.py with --lora_enable and --bf16."""
    cmd = ("[2024-08-12 10:31:46,416] [INFO] [runner.py:571:main] cmd = /env/bin/python -u -m deepspeed.launcher.launch "
           "--world_info=eyJsb2NhbGhvc3QiOiBbMF19 --master_port=29500 /home/u/LLaVA/llava/train/train_mem.py "
           "--lora_enable True --lora_r 128 --deepspeed ./scripts/zero3.json --bf16 True --output_dir ./checkpoints/e1\n")
    dicts = "".join(str({"loss": 1.0 - k / 20, "learning_rate": 2e-4, "epoch": k / 100}) + "\n" for k in range(1, 11))
    p = _console(tmp_path / "a", cmd + "Adding LoRA adapters...\n" + dicts)
    assert (p.method, p.precision) == ("lora", "bf16") and "cmd = line" in p.evidence["method"]
    p = _console(tmp_path / "b", cmd.replace("--lora_enable True", "--lora_enable False").replace("--bf16 True",
                                                                                                  "--bf16 False") + dicts)
    assert (p.method, p.precision) == ("unknown", "unknown")


def test_a_model_card_tagged_by_llamafactory(tmp_path):
    """eus-lwq/leximind: LLaMA-Factory tags the card it writes `llama-factory` and the finetuning type."""
    card = ("---\nlibrary_name: peft\nlicense: other\nbase_model: meta-llama/Meta-Llama-3-8B\ntags:\n- llama-factory\n"
            "- generated_from_trainer\nmodel-index:\n- name: output\n  results: []\n---\n\n# output\n")
    run = _trainer_run(tmp_path / "a")
    (run / "README.md").write_text(card)
    p = forensics.analyze(run).run_profile
    assert p.framework == "llamafactory" and "README.md" in p.evidence["framework"]
    # the name in the card's text (not a tag of its header) says nothing of who wrote it
    run = _trainer_run(tmp_path / "b")
    (run / "README.md").write_text(card.replace("- llama-factory\n", "") + "Trained like:\n- llama-factory\n")
    assert forensics.analyze(run).run_profile.framework == "hf_trainer"


def test_the_deepspeed_engines_own_lines_say_precision_and_framework(tmp_path):
    """linskybing/LLM: a hand-written loop under DeepSpeed 0.17, whose config print reads `float16_config ...
    enabled=True` (older releases: `fp16_enabled ..... True`)."""
    head = ("[2025-08-25 15:14:42,018] [INFO] [config.py:954:print] DeepSpeedEngine configuration:\n"
            "[2025-08-25 15:14:42,019] [INFO] [config.py:958:print]   bfloat16_config .............. enabled=False "
            "immediate_grad_update=False\n"
            "[2025-08-25 15:14:42,020] [INFO] [config.py:958:print]   float16_config ............... enabled=True "
            "auto_cast=False loss_scale=0.0 initial_scale_power=16\n")
    steps = "".join(f"[Step {s}/100] Loss: {5.3 - s / 50:.4f} | Global Tokens/s: 870.33\n" for s in range(1, 21))
    p = _console(tmp_path / "a", head + steps)
    assert (p.precision, p.framework) == ("fp16", "deepspeed") and "DeepSpeedEngine" in p.evidence["framework"]
    p = _console(tmp_path / "b", head.replace("float16_config ............... enabled=True",
                                              "float16_config ............... enabled=False") + steps)
    assert p.precision == "unknown"


def test_the_deepspeed_engines_progress_report_says_deepspeed(tmp_path):
    """Ourboros-Alignment-Team_RWKV-RM-Copilot: a hand-written loop driving the DeepSpeed engine, whose console keeps
    no configuration print but the engine's own progress report every 10 steps (deepspeed/runtime/engine.py
    `_report_progress`); a loop's own `step=` words without the engine's report name no framework."""
    steps = "".join(f"Epoch 0, Loss: {1.0 - s / 50:.4f}, Positive Score: 0.5, Negative Score: 0.4\n"
                    + (f"[2025-04-09 20:17:04,762] [INFO] [logging.py:96:log_dist] [Rank 0] step={s}, skipped=0, "
                       "lr=[1e-06, 1e-06], mom=[(0.9, 0.99), (0.9, 0.99)]\n" if s % 10 == 0 else "")
                    for s in range(1, 41))
    p = _console(tmp_path / "a", steps)
    assert p.framework == "deepspeed" and "progress report" in p.evidence["framework"]
    own = "".join(f"step={s}, loss={1.0 - s / 50:.4f}\n" for s in range(1, 41))
    assert _console(tmp_path / "b", own).framework == "unknown"


def test_console_lines_that_state_precision_or_size():
    """torchtune's recipes (meta-pytorch/torchtune PR 1358) and a script's `Model params :` line
    (Pratic2001/Qwen3-Non-MOE)."""
    facts = stdout.console_facts("INFO:torchtune.utils.logging:Model is initialized with precision torch.bfloat16.\n")
    assert facts["console_precision"] == "bf16"
    assert stdout.console_facts("Model params : 299,392,704  (0.299B)\n")["console_n_params"] == 299392704
    # a count of part of the model, or a count the line goes on to qualify, is no model size
    assert "console_n_params" not in stdout.console_facts("Model params : 4,194,304 trainable\n")
    assert "console_n_params" not in stdout.console_facts("Trainable model params : 4,194,304\n")


def test_a_bare_parameters_line_is_the_models_size():
    """A notebook's `print("Parameters", model.num_parameters())` (eduseiti_ia368v_dd_class_05: `Parameters 125239296`)
    and its `Parameters: N` / `Number of parameters: N` forms, each a line of its own."""
    for line in ("Parameters 125239296\n", "Parameters: 125,239,296\n", "Number of parameters: 125239296\n"):
        facts = stdout.console_facts("Some weights of the model were loaded.\n" + line + "***** Running training *****\n")
        assert facts["console_n_params"] == 125239296, line
        assert facts["console_n_params_line"] == line.strip()


def test_a_trainable_count_or_a_table_of_parameters_is_not_the_models_size():
    """`Trainable parameters: N` counts a part; a table with a `Parameters` column lists parts, row by row."""
    assert "console_n_params" not in stdout.console_facts("Trainable parameters: 4194304\n")
    table = ("| Layer | Parameters |\n|-------|------------|\n| wte   | 38633472   |\n| h.0   | 7087872    |\n")
    assert "console_n_params" not in stdout.console_facts(table)
    assert "console_n_params" not in stdout.console_facts("Layer        Parameters\nwte          38633472\n")
    assert "console_n_params" not in stdout.console_facts("| Parameters | 124439808 |\n")


_HF_LINES = "".join(f"{{'loss': {2.4 - k / 20:.4f}, 'learning_rate': 2e-05, 'epoch': {k / 20:.2f}}}\n" for k in range(1, 21))


def test_instruction_tuning_data_the_console_shows_says_sft(tmp_path):
    """BREKOJI's console prints its Alpaca-template prompts; AnshDhalla1's logs an alpaca_data.json dataset path and
    the dataset's instruction/input/output columns. A console with neither leaves the objective unknown, and a
    pairwise run's own metrics still say preference."""
    template = ("PROMPT:\n'Below is an instruction that describes a task. Write a response that appropriately "
                "completes the request.\\n\\n### Instruction:\\nWhat do you enjoy?\\n\\n### Response:'\n")
    assert _console(tmp_path / "a", template + _HF_LINES).objective == "sft"
    columns = "INFO:root:Dataset columns: ['instruction', 'input', 'output']\n"
    assert _console(tmp_path / "b", columns + _HF_LINES).objective == "sft"
    path = "INFO:__main__:  dataset_path: /mnt/data/alpaca_data.json\n"
    assert _console(tmp_path / "c", path + _HF_LINES).objective == "sft"
    assert _console(tmp_path / "d", "INFO:root:Dataset columns: ['text']\n" + _HF_LINES).objective == "unknown"
    pairs = "".join(f"{{'loss': {0.69 - k / 100:.4f}, 'rewards/chosen': 0.1, 'rewards/rejected': -0.1, "
                    f"'rewards/margins': 0.2, 'epoch': {k / 20:.2f}}}\n" for k in range(1, 21))
    assert _console(tmp_path / "e", template + pairs).objective == "preference"


def test_an_alpaca_file_named_after_its_split_is_instruction_data(tmp_path):
    """kylefoxaustin_personal-ai-framework: 'Loading data from training/data/train_alpaca.json' - the data set's name
    joined to the split's by an underscore is still Alpaca's instruction data: sft. A word that only ends in alpaca,
    or AlpacaFarm's preference pairs under that naming, is not."""
    path = "Loading data from training/data/train_alpaca.json\n"
    assert _console(tmp_path / "a", path + _HF_LINES).objective == "sft"
    other = "Loading data from training/data/train_notalpaca.json\n"
    assert _console(tmp_path / "b", other + _HF_LINES).objective == "unknown"
    pairs = "Loading data from training/data/train_alpaca_human_preference.json\n"
    assert _console(tmp_path / "c", pairs + _HF_LINES).objective == "unknown"


def test_a_run_named_as_a_fine_tune_is_sft_unless_its_metrics_say_otherwise(tmp_path):
    """charles-wang888's console is finetune.log, its data data_finetune/finetune_dataset.json."""
    assert _console(tmp_path / "a", _HF_LINES, name="finetune.log").objective == "sft"
    assert _console(tmp_path / "b", _HF_LINES, name="run.log").objective == "unknown"
