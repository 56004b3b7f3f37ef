"""Tests of the notebook code reader (ingest/notebook_code): code under an `if` that a literal switch turned off is not
read for the run profile; a switch the code cannot decide keeps both branches read.

dominodatalab_aihub_llama3_1_sft (tests/realworld): `use_4_bit = False` / `use_8_bit = True`, the 4-bit
BitsAndBytesConfig under `if use_4_bit:` (never ran), the 8-bit one under `if use_8_bit:`; the tool read the 4-bit
config and said qlora."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import forensics
from forensics.ingest.notebook_code import code_values
from forensics.ingest.notebook_code.cells import _NAMES_AT_LINE_START, cells_and_trees_that_ran
from forensics.ingest.notebook_code.char_corpus import char_vocabulary
from forensics.ingest.notebook_code.subword_corpus import subword_corpus

_CASE = Path(__file__).parent / "realworld" / "dominodatalab_aihub_llama3_1_sft"


def _cells(*sources):
    return [{"cell_type": "code", "execution_count": i + 1, "metadata": {}, "source": s, "outputs": []}
            for i, s in enumerate(sources)]


_FOUR_BIT = "    bnb_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4')\n"
_EIGHT_BIT = "    bnb_config = BitsAndBytesConfig(load_in_8bit=True)\n"
_LOAD = "model = AutoModelForCausalLM.from_pretrained('m', quantization_config=bnb_config)\n"


# (the switch's cell, the cell that tests it): each switched off, so the 4-bit config never ran
_SWITCHED_OFF = {
    "a_name_false": ("use_4_bit = False\nuse_8_bit = True\n",
                     "if use_4_bit:\n" + _FOUR_BIT + "if use_8_bit:\n" + _EIGHT_BIT + _LOAD),
    "not_a_name_true": ("full_precision = True\n", "if not full_precision:\n" + _FOUR_BIT + _LOAD),
    "a_name_equal_to_another_literal": ("bits = 8\n", "if bits == 4:\n" + _FOUR_BIT + "else:\n" + _EIGHT_BIT + _LOAD),
    "a_name_is_false": ("quantize = False\n", "if quantize is True:\n" + _FOUR_BIT + _LOAD),
    "an_elif_taken": ("mode = 'int8'\n",
                      "if mode == 'nf4':\n" + _FOUR_BIT + "elif mode == 'int8':\n" + _EIGHT_BIT + _LOAD),
    "a_keyword_chosen_by_the_switch": ("use_4_bit = False\n",
                                       "model = AutoModelForCausalLM.from_pretrained('m', quantization_config="
                                       "BitsAndBytesConfig(load_in_4bit=True) if use_4_bit else None)\n"),
}


@pytest.mark.parametrize("case", sorted(_SWITCHED_OFF))
def test_a_4bit_config_under_a_literal_switch_turned_off_is_not_read(case):
    values = code_values(_cells(*_SWITCHED_OFF[case]), "")
    assert "quant.load_in_4bit" not in values, values


# the same shapes with the switch on: the 4-bit config ran
_SWITCHED_ON = {
    "a_name_true": ("use_4_bit = True\nuse_8_bit = False\n",
                    "if use_4_bit:\n" + _FOUR_BIT + "if use_8_bit:\n" + _EIGHT_BIT + _LOAD),
    "not_a_name_false": ("full_precision = False\n", "if not full_precision:\n" + _FOUR_BIT + _LOAD),
    "a_name_equal_to_the_literal": ("bits = 4\n", "if bits == 4:\n" + _FOUR_BIT + "else:\n" + _EIGHT_BIT + _LOAD),
    "a_name_is_true": ("quantize = True\n", "if quantize is True:\n" + _FOUR_BIT + _LOAD),
    "an_else_taken": ("use_8_bit = False\n", "if use_8_bit:\n" + _EIGHT_BIT + "else:\n" + _FOUR_BIT + _LOAD),
    "a_keyword_chosen_by_the_switch": ("use_4_bit = True\n",
                                       "model = AutoModelForCausalLM.from_pretrained('m', quantization_config="
                                       "BitsAndBytesConfig(load_in_4bit=True) if use_4_bit else None)\n"),
}


@pytest.mark.parametrize("case", sorted(_SWITCHED_ON))
def test_a_4bit_config_under_a_literal_switch_turned_on_is_read(case):
    assert code_values(_cells(*_SWITCHED_ON[case]), "").get("quant.load_in_4bit") is True


# tests the code cannot decide without running it: both branches are read, as before
_UNDECIDED = {
    "a_name_from_a_call": ("use_4_bit = get_flag()\n", "if use_4_bit:\n" + _FOUR_BIT + _LOAD),
    "a_name_from_input": ("use_4_bit = input('4-bit? ') == 'y'\n", "if use_4_bit:\n" + _FOUR_BIT + _LOAD),
    "a_literal_rebound_from_a_call": ("use_4_bit = False\n", "use_4_bit = args.use_4_bit\n",
                                      "if use_4_bit:\n" + _FOUR_BIT + _LOAD),
    "two_literals_in_two_cells": ("use_4_bit = False\n", "if use_4_bit:\n" + _FOUR_BIT + _LOAD, "use_4_bit = True\n"),
    "a_parameter_of_the_same_name": ("use_4_bit = False\n",
                                     "def load(use_4_bit):\n    if use_4_bit:\n" + "    " + _FOUR_BIT
                                     + "    return bnb_config\n"),
    "a_machine_test_the_outputs_do_not_answer": ("", "if torch.cuda.is_bf16_supported():\n" + _FOUR_BIT + _LOAD),
    "a_name_never_bound": ("", "if use_4_bit:\n" + _FOUR_BIT + _LOAD),
}


@pytest.mark.parametrize("case", sorted(_UNDECIDED))
def test_a_4bit_config_under_a_switch_the_code_cannot_decide_is_read_as_before(case):
    assert code_values(_cells(*_UNDECIDED[case]), "").get("quant.load_in_4bit") is True


def _counted(*cells):
    """Code cells of (execution count, source)."""
    return [{"cell_type": "code", "execution_count": n, "metadata": {}, "source": s, "outputs": []} for n, s in cells]


_TESTED = "if use_4_bit:\n" + _FOUR_BIT + _LOAD


# a switch turned off that the test did not see: bound after the test ran, or bound again out of the code's sight
_SWITCH_NOT_SEEN = {
    "bound_in_a_cell_run_after_the_test": _counted((7, "use_4_bit = False\n"), (3, _TESTED)),
    "bound_later_in_the_test_cell": _counted((1, _TESTED + "use_4_bit = False\n")),
    "bound_in_a_function_of_the_test_cell": _counted((1, "def off():\n    global use_4_bit\n    use_4_bit = False\n"
                                                         + _TESTED + "off()\n")),
    "globals_written": _counted((1, "use_4_bit = False\nglobals()['use_4_bit'] = True\n"),
                                (2, _TESTED)),
    "globals_updated": _counted((1, "use_4_bit = False\nglobals().update(cfg)\n"),
                                (2, _TESTED)),
    "exec_run": _counted((1, "use_4_bit = False\nexec('use_4_bit = True')\n"), (2, _TESTED)),
    "setattr_on_the_module": _counted((1, "import sys\nuse_4_bit = False\n"
                                          "setattr(sys.modules[__name__], 'use_4_bit', True)\n"),
                                      (2, _TESTED)),
    "vars_written": _counted((1, "use_4_bit = False\nvars()['use_4_bit'] = True\n"),
                             (2, _TESTED)),
    "bound_in_a_cell_that_ran_but_does_not_parse": _counted((1, "pip install bitsandbytes\nuse_4_bit = True\n"),
                                                            (2, "use_4_bit = False\n"),
                                                            (3, _TESTED)),
    "bound_beside_a_shell_capture": _counted((1, "files = !ls\nuse_4_bit = True\n"), (2, "use_4_bit = False\n"),
                                             (3, _TESTED)),
}


@pytest.mark.parametrize("case", sorted(_SWITCH_NOT_SEEN))
def test_a_switch_the_test_may_not_have_seen_keeps_the_4bit_branch_read(case):
    assert code_values(_SWITCH_NOT_SEEN[case], "").get("quant.load_in_4bit") is True


# the switch bound before the test ran: decided, whatever the file order
_SWITCH_SEEN = {
    "bound_in_a_cell_run_before_the_test_though_below_it": _counted((3, _TESTED),
                                                                   (2, "use_4_bit = False\n")),
    "bound_above_the_test_in_its_cell": _counted((1, "use_4_bit = False\nif use_4_bit:\n" + _FOUR_BIT + _LOAD)),
    # an object's attributes set or read through a builtin bind no global (second review of session 28)
    "beside_a_setattr_on_the_model": _counted((1, "use_4_bit = False\nsetattr(model, 'model_parallel', True)\n"),
                                              (2, _TESTED)),
    "beside_vars_of_the_args": _counted((1, "use_4_bit = False\nprint(vars(args))\n"), (2, _TESTED)),
    "uncounted_cells_in_file_order": _counted((None, "use_4_bit = False\n"),
                                              (None, _TESTED)),
}


@pytest.mark.parametrize("case", sorted(_SWITCH_SEEN))
def test_a_switch_bound_before_the_test_ran_turns_the_4bit_branch_off(case):
    cells = _SWITCH_SEEN[case]
    cells[-1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "done\n"}]
    assert "quant.load_in_4bit" not in code_values(cells, ""), case


def test_a_precision_flag_chosen_by_a_name_bound_to_two_literals_is_not_read():
    """`use_bf16 = True` (counted 5) and `use_bf16 = False` (counted 3): the last in file order is not the last run."""
    cells = _counted((5, "use_bf16 = True\n"), (3, "use_bf16 = False\n"),
                     (6, "args = TrainingArguments(output_dir='o', bf16=True if use_bf16 else False)\n"
                         "trainer = Trainer(model=model, args=args)\ntrainer.train()\n"))
    values = code_values(cells, "")
    assert "bf16" not in values, values


def test_a_precision_flag_chosen_by_a_literal_switch_is_read():
    cells = _counted((1, "use_bf16 = False\n"),
                     (2, "args = TrainingArguments(output_dir='o', bf16=True if use_bf16 else False)\n"
                         "trainer = Trainer(model=model, args=args)\ntrainer.train()\n"))
    assert code_values(cells, "").get("bf16") is False


def _too_deep_to_walk(terms: int) -> str:
    """A cell summing names: it parses, but walking its tree recursively overflows Python's stack."""
    return "total = " + "+".join(["x"] * terms) + "\n"


@pytest.mark.parametrize("terms", [800, 1500])
def test_a_cell_too_deep_to_walk_is_read_as_not_parsed_and_the_other_cells_switched(terms):
    cells = _counted((1, _too_deep_to_walk(terms)), (2, "use_4_bit = False\n" + _TESTED))
    trees = [tree for _, _, tree in cells_and_trees_that_ran(cells)]
    assert len(trees) == 1  # the deep cell is refused as one that does not parse (tests/test_notebook_code_too_deep)
    assert "BitsAndBytesConfig" not in ast.unparse(trees[0])


@pytest.mark.parametrize("terms", [800, 1500])
def test_a_cell_too_deep_to_write_back_names_no_tokenizer_and_stops_no_corpus_reader(terms):
    """(subword_corpus and char_corpus look for a tokenizer's name in each cell's code written back)"""
    cells = _counted((1, _too_deep_to_walk(terms)), (2, "tokenizer = AutoTokenizer.from_pretrained('gpt2')\n"))
    assert subword_corpus(cells) == {}
    assert char_vocabulary([tree for _, _, tree in cells_and_trees_that_ran(cells)]) is None


def test_a_real_switch_read_from_a_config_keeps_its_4bit_branch_read():
    """readytensor_rt-llm-eng-cert-week3 (tests/realworld): `load_in_4bit = use_4bit if use_4bit is not None else
    cfg.get(...)`, then `if load_in_4bit:` builds the 4-bit config; the code cannot decide it: QLoRA as before."""
    profile = forensics.analyze(_CASE.parent / "readytensor_rt-llm-eng-cert-week3").run_profile
    assert profile.method == "qlora", profile.evidence


def test_dominodatalab_llama3_1_sft_trains_lora_on_its_8bit_base_not_qlora():
    """The real notebook: `use_4_bit = False`, the 4-bit config under `if use_4_bit:`; LoRA on an 8-bit base."""
    profile = forensics.analyze(_CASE).run_profile
    assert profile.method == "lora", profile.evidence


# ---- the precision of a half-precision load that an 8-bit base's preparation cast to float32 ------------------------

_EIGHT_BIT_SFT = ("bnb_config = BitsAndBytesConfig(load_in_8bit=True)\n"
                  "model = AutoModelForCausalLM.from_pretrained('m', quantization_config=bnb_config, "
                  "torch_dtype=torch.bfloat16)\n",
                  "from trl import SFTTrainer\n"
                  "args = TrainingArguments(output_dir='o', per_device_train_batch_size=4)\n"
                  "trainer = SFTTrainer(model=model, args=args, peft_config=LoraConfig(r=8), train_dataset=ds)\n"
                  "trainer.train()\n")
_INT8_WARNING = ("bitsandbytes/autograd/_functions.py:316: UserWarning: MatMul8bitLt: inputs will be cast from "
                 "torch.{} to float16 during quantization\n")


def test_a_bfloat16_load_whose_int8_layers_got_float32_inputs_no_longer_says_the_training_dtype():
    """TRL's SFTTrainer ran peft's prepare_model_for_kbit_training out of the code's sight (dominodatalab): the
    warning's float32 says the bfloat16 weights were cast; the Trainer's default, fp32, is left to say."""
    values = code_values(_cells(*_EIGHT_BIT_SFT), _INT8_WARNING.format("float32"))
    assert "model.load_dtype" not in values, values
    assert values.get("precision.trainer_fp32") == "TrainingArguments"


@pytest.mark.parametrize("outputs", ["", _INT8_WARNING.format("bfloat16"),
                                     _INT8_WARNING.format("float32") + _INT8_WARNING.format("bfloat16")])
def test_a_bfloat16_load_stands_where_no_int8_warning_says_float32_alone(outputs):
    assert code_values(_cells(*_EIGHT_BIT_SFT), outputs).get("model.load_dtype") == "bfloat16"


def test_dominodatalab_llama3_1_sft_trains_in_fp32():
    """The real notebook: bitsandbytes warns 'inputs will be cast from torch.float32', no fp16 / bf16 flag."""
    profile = forensics.analyze(_CASE).run_profile
    assert profile.precision == "fp32", profile.evidence


def test_the_names_a_cell_that_does_not_parse_binds_are_read_line_by_line():
    """`^\\s*(\\w+)` in multiline mode ran across blank lines and backtracked over them (20k blank lines: 6.6 s; second
    review of session 28): the pattern's leading space may not hold a newline."""
    assert "\\s" not in _NAMES_AT_LINE_START.pattern
    assert _NAMES_AT_LINE_START.findall("pip install x\n\n  use_4_bit = True\nx == 1\n") == ["use_4_bit"]
