"""Lines of hand-written training loops met in the real notebooks of corpus batches AI1 to AI4: a step line whose
loss is named with an underscore (`train_loss`), and the model sizes such loops print in millions."""
from __future__ import annotations

import pytest

import forensics
from forensics.ingest.stdout import console_facts
from forensics.run import discover


def _dpo_loop_lines(n: int = 12) -> str:
    """AnandaRimal/PocketCoder's DPO loop: `step N: train_loss T | val_loss V | val_acc A% | val_margin M`."""
    return "".join(f"step {50 * k}: train_loss {0.69 - 0.03 * k:.4f} | val_loss {0.52 - 0.02 * k:.4f} | "
                   f"val_acc {79.7 + k / 2:.1f}% | val_margin {0.5 + k / 5:.4f}\n" for k in range(1, n + 1))


def test_a_step_line_naming_its_loss_train_loss_makes_the_file_a_log(tmp_path):
    (tmp_path / "train.log").write_text(_dpo_loop_lines())
    assert [p.name for p in discover(tmp_path).text_logs] == ["train.log"]
    result = forensics.analyze(tmp_path)
    assert result.status == "healthy"
    assert len(result.timeline.series("eval_loss")) == 12


def test_one_such_line_in_prose_is_still_no_log(tmp_path):
    """The hint needs three lines of a loop: a note quoting one is not a training log."""
    (tmp_path / "notes.txt").write_text("We saw step 50: train_loss 0.6760 and then moved on to the next idea.\n")
    assert discover(tmp_path).text_logs == []


@pytest.mark.parametrize("line, params", [
    ("0.209729 M parameters", 209_729),  # Karpathy's gpt-dev: print(sum(p.numel() ...)/1e6, 'M parameters')
    ("The model has a total of 2.11 M parameters.", 2_110_000),
    ("Loaded SFT model from Ananda100/100m-sftd-python - 95.87M params (policy trainable, reference frozen)",
     95_870_000),
    ("1.5B parameters", 1_500_000_000),
])
def test_a_model_size_printed_in_millions_or_billions_is_the_models_size(line, params):
    assert console_facts(line + "\n")["console_params_said"] == params


@pytest.mark.parametrize("line", ["Trainable: 4.19M params", "4.19M trainable params (LoRA)",
                                  "LoRA adapters: 4.19M params", "I trained 5 m params on my laptop"])
def test_a_count_that_names_a_part_of_the_model_or_is_prose_is_not_its_size(line):
    assert "console_params_said" not in console_facts(line + "\n")
