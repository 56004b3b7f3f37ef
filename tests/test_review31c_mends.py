"""Review 31c's findings, each mended: a long metric table keeps the order its rows were logged in (two runs or a
resume without a time column), stages of one plan with a train and an eval record at one step or counted from 0,
a script that trains through a trainer it did not build in its own code, and README sentences that state a fact
with "use" in them or hedge after the phrase."""
from __future__ import annotations

import ast
import json

import forensics
from forensics.ingest import jsonl
from forensics.ingest.notebook_code.trainer_runs import code_trains
from forensics.ingest.readme_precision import precision_stated
from forensics.ingest.readme_scratch import trained_from_scratch
from forensics.timeline import build_timeline


def _long_table(folder, rows, header="name,value,step"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.csv").write_text(header + "\n" + "\n".join(rows) + "\n")
    return forensics.analyze(folder, check_checkpoints=False)


def test_a_long_table_of_two_runs_without_a_run_column_keeps_the_nan_of_the_second(tmp_path):
    rows = [f"loss,{2 - 0.01 * s},{s}" for s in range(0, 101, 10)]
    rows += [f"loss,{'nan' if s >= 60 else 2 - 0.005 * s},{s}" for s in range(0, 101, 10)]
    a = _long_table(tmp_path / "run", rows)
    assert a.status == "broken" and a.first_incident.step == 60


def test_a_long_table_resumed_without_a_time_column_is_judged_at_the_resumed_nan(tmp_path):
    rows = [f"train_loss,{2 - 0.01 * s},{s}" for s in range(0, 101, 10)]
    rows += [f"train_loss,{'nan' if s >= 80 else 1.5 - 0.005 * s},{s}" for s in range(50, 201, 10)]
    a = _long_table(tmp_path / "run", rows)
    assert a.status == "broken" and a.first_incident.step == 80


def _stage_losses(tmp_path, records):
    path = tmp_path / "training_metrics.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return build_timeline([jsonl.read(path)]).series("loss")


def test_stages_with_a_train_and_an_eval_record_at_one_step_are_put_end_to_end(tmp_path):
    records = []
    for phase in ("phase0", "phase1"):
        for step in (200, 400, 600):
            records.append({"phase": phase, "step": step, "train_loss": 3.0 - step / 1000 - (phase == "phase1")})
            records.append({"phase": phase, "step": step, "val_loss": 3.1 - step / 1000})
    assert len(_stage_losses(tmp_path, records)) == 6  # phase0's three and phase1's three, none filed away


def test_a_stage_counted_from_zero_starts_after_the_last_step_not_on_it(tmp_path):
    records = [{"phase": phase, "step": step, "loss": 9.0 if (phase, step) == ("phase1", 0) else 1.0}
               for phase in ("phase0", "phase1") for step in (0, 1, 2)]
    losses = _stage_losses(tmp_path, records)
    assert len(losses) == 6 and 9.0 in losses.tolist()  # phase1's opening spike kept


def _trains(code: str) -> bool:
    return code_trains([ast.parse(code)])


def test_a_trainer_built_elsewhere_or_annotated_still_trains():
    assert _trains("from transformers import Trainer\ntrainer: Trainer = Trainer(model=m)\ntrainer.train()\n")
    assert _trains("from mylib import make_trainer\ntrainer = make_trainer(cfg)\ntrainer.train()\n")
    assert _trains("def run(trainer):\n    trainer.train()\n")


def test_an_evaluation_or_eval_mode_is_no_training():
    assert not _trains("from transformers import Trainer\nTrainer(model=m).evaluate()\n")
    assert not _trains("model.train(False)\nwith torch.no_grad():\n    out = model(x)\n")


def test_readme_facts_said_with_use_are_read_and_hedges_after_the_phrase_are_not():
    assert precision_stated("We trained all models using bf16 mixed precision on 8 GPUs.\n")
    assert trained_from_scratch("Using 8 GPUs, the model was trained from scratch on our corpus.\n")
    assert not precision_stated("Use bf16 mixed precision if your GPU has it.\n")
    assert not precision_stated("bf16 mixed precision is optional.\n")
    assert not trained_from_scratch("Training from scratch is also possible.\n")
