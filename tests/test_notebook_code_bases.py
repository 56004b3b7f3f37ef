"""What a notebook's code says of its model (ingest.notebook_code): a network is a class built on torch's nn.Module,
not on any class named Module (langwatch_cookbooks' `class QueryRewriter(dspy.Module)`); a model class held in a
name loads a model like the class itself (SolipsisAI_research's `model_cls = AutoModelForCausalLM`); a dict that
turns LoRA on (`train_kwargs = {..., "lora": True}`) says an adapter is trained."""
from __future__ import annotations

from forensics.ingest.notebook_code import code_values


def _cells(*sources: str) -> list[dict]:
    return [{"cell_type": "code", "source": s, "execution_count": i, "outputs": []} for i, s in enumerate(sources, 1)]


def test_a_dspy_module_is_no_network_built_from_random_weights():
    cells = _cells("import dspy", "class QueryRewriter(dspy.Module):\n    def forward(self, q):\n        return q",
                   "program = QueryRewriter()\nprogram('x')")
    assert "model.built_here" not in code_values(cells, "")


def test_a_class_on_torchs_module_is_a_network_built_here():
    for base, imports in (("nn.Module", "import torch.nn as nn"), ("torch.nn.Module", "import torch"),
                          ("Module", "from torch.nn import Module")):
        cells = _cells(imports, f"class Net({base}):\n    pass", "net = Net()\nopt = torch.optim.AdamW(net.parameters())")
        assert code_values(cells, "").get("model.built_here") == "Net", base


def test_a_model_class_held_in_a_name_loads_the_model_a_trainer_trains_whole():
    cells = _cells("from transformers import AutoModelForCausalLM, Trainer, TrainingArguments",
                   "model_cls = AutoModelForCausalLM",
                   "model = model_cls.from_pretrained('microsoft/DialoGPT-small')",
                   "trainer = Trainer(model=model, args=TrainingArguments(output_dir='out'))\ntrainer.train()")
    said = code_values(cells, "")
    assert (said.get("model.name_or_path"), said.get("method")) == ("microsoft/DialoGPT-small", "full")


def test_a_tokenizer_class_or_a_name_bound_twice_is_not_followed():
    cells = _cells("from transformers import AutoTokenizer, AutoModelForCausalLM, AutoModelForSeq2SeqLM",
                   "tok_cls = AutoTokenizer\ntok = tok_cls.from_pretrained('gpt2')",
                   "cls = AutoModelForCausalLM\ncls = AutoModelForSeq2SeqLM\nm = cls.from_pretrained('t5-small')")
    assert "model.name_or_path" not in code_values(cells, "")


def test_a_dict_that_turns_lora_on_says_lora_and_one_that_turns_it_off_says_nothing():
    on = _cells("train_kwargs = {'learning_rate': 2e-5, 'bf16': False, 'lora': True}")
    off = _cells("train_kwargs = {'learning_rate': 2e-5, 'lora': False}")
    assert code_values(on, "").get("adapter.peft_type") == "LORA"
    assert "adapter.peft_type" not in code_values(off, "")
