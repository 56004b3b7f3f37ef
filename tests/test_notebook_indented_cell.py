"""A notebook cell indented as a whole is read (ingest.notebook_code): IPython strips the indent every line of a cell
shares and runs it, so Abeshith_FineTuning_LanguageModels' ' training_args = TrainingArguments(..., fp16 = True)'
(one space on every line) set the run's arguments; `ast.parse` alone rejects it ('unexpected indent')."""
from __future__ import annotations

from forensics.ingest.notebook_code import code_values


def _cell(source: str) -> dict:
    return {"cell_type": "code", "source": source, "execution_count": 1, "outputs": []}


def test_a_cell_indented_as_a_whole_gives_its_training_arguments():
    source = (" from transformers import TrainingArguments\n"
              " args = TrainingArguments(output_dir='o', fp16=True,\n"
              "                          learning_rate=2e-4)\n")
    said = code_values([_cell(source)], "")
    assert (said.get("fp16"), said.get("learning_rate")) == (True, 2e-4)


def test_a_magic_line_above_an_indented_cell_stays_blanked():
    source = "%%time\n  args = TrainingArguments(output_dir='o', bf16=True)\n  !nvidia-smi\n"
    assert code_values([_cell(source)], "").get("bf16") is True


def test_a_cell_whose_lines_share_no_indent_still_does_not_parse():
    # a stray indent on one line is an error IPython raises too: nothing read from that cell
    source = "args = TrainingArguments(output_dir='o', fp16=True)\n  x = 1\n"
    assert "fp16" not in code_values([_cell(source)], "")
