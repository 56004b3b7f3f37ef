"""A project's own subclass of a TRL config, printed as TRL prints its configs (`CoDPOConfig(` then one
`name=value,` line a field): read as the trainer's arguments (its bf16 flag, TRL's DPO trainer), where its fields are
TrainingArguments' ones; some other `*Config(` printed over lines (a LoRA config) is not the trainer's."""
from __future__ import annotations

from forensics.ingest.printed_configs import training_arguments

CODPO = """CoDPOConfig(
_n_gpu=1,
beta=0.1,
bf16=True,
fp16=False,
learning_rate=5e-07,
output_dir=checkpoints/Qwen2.5-3B-Instruct-CODPO,
per_device_train_batch_size=2,
)
"""

LORA = """LoraConfig(
r=16,
lora_alpha=32,
learning_rate=0.1,
)
"""


def test_a_subclass_of_dpo_config_printed_over_lines_is_the_trainers_arguments():
    fields = training_arguments("some start-up line\n" + CODPO)
    assert fields["bf16"] is True and fields["fp16"] is False
    assert fields["__class__"] == "trl.DPOConfig"
    assert fields["learning_rate"] == 5e-07


def test_another_config_printed_over_lines_is_not_the_trainers():
    assert training_arguments(LORA) == {}
