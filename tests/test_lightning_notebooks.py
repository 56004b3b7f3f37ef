"""PyTorch Lightning notebooks (forensics/ingest/console_lines/lightning_results.py, console_scan.py,
notebook_code/lightning.py): the LoggingCallback's results read, the printed arguments no record, the profile.

Readings of joaorafaelm_notebooks (corpus batch AS72): a notebook's printed arguments dict is its configuration,
not a logged record, and the validation results a PyTorch Lightning `LoggingCallback` logs (transformers' legacy
lightning_base.py, Suraj Patil's T5 notebook) are the run's held-out and training losses. The notebooks are written
in nbformat 4's shape with their outputs as the libraries print them."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

import forensics
from forensics.ingest import console_scan, notebook, notebook_code, stdout

CORPUS = Path(__file__).parent / "realworld"

ARGS_DICT = ("{'data_dir': 'swag_data', 'output_dir': 't5_swag', 'model_name_or_path': 't5-base', "
             "'max_seq_length': 512, 'learning_rate': 0.0003, 'weight_decay': 0.0, 'adam_epsilon': 1e-08, "
             "'warmup_steps': 0, 'train_batch_size': 8, 'eval_batch_size': 8, 'num_train_epochs': 3, "
             "'gradient_accumulation_steps': 16, 'n_gpu': 1, 'fp_16': False, 'max_grad_norm': 1.0, 'seed': 42}\n")


def _validation(val: float, train: float, average: float | None = None, prefix: str = "INFO:__main__:") -> str:
    rows = {"avg_val_loss": val, "loss": train, "train_loss": train, "val_loss": val}
    if average is not None:
        rows["avg_train_loss"] = average
    lines = [f"{prefix}***** Validation results *****\n"]
    lines += [f"{prefix}{key} = tensor({value:.4f}, device='cuda:0')\n\n" for key, value in sorted(rows.items())]
    return "".join(lines)


def _notebook(folder: Path, cells: list[tuple[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.ipynb"
    nbformat.write(new_notebook(cells=[
        new_code_cell(source, execution_count=i + 1,
                      outputs=[new_output("stream", name="stderr", text=text)] if text else [])
        for i, (source, text) in enumerate(cells)]), path)
    return path


# --- a printed arguments dict ---------------------------------------------------------------------------------------

def test_a_printed_dict_of_hyper_parameters_is_no_metric_record():
    assert [e for e in console_scan.scan(ARGS_DICT) if e[0] == "dict"] == []


def test_a_trainer_log_dict_with_its_learning_rate_is_still_a_record():
    line = "{'loss': 2.31, 'grad_norm': 1.2, 'learning_rate': 0.0003, 'epoch': 0.5}\n"
    events = [e for e in console_scan.scan(line) if e[0] == "dict"]
    assert events == [("dict", None, {"loss": 2.31, "grad_norm": 1.2, "learning_rate": 0.0003, "epoch": 0.5})]


def test_a_dict_of_hyper_parameters_beside_a_loss_is_still_a_record():
    line = "{'loss': 2.31, 'learning_rate': 0.0003, 'weight_decay': 0.0, 'warmup_steps': 0}\n"
    assert [e[2]["loss"] for e in console_scan.scan(line) if e[0] == "dict"] == [2.31]


# --- Lightning's LoggingCallback ------------------------------------------------------------------------------------

def test_lightning_validation_results_are_read_once_a_validation():
    text = _validation(0.3535, 0.3080) + "some other line\n" + _validation(0.3268, 0.5484, average=0.5107)
    frame = stdout.read_console(text, Path("run.log"), []).frame
    wide = frame.pivot(index="step", columns="metric", values="value")
    assert wide["eval_loss"].to_dict() == {1: 0.3535, 2: 0.3268}
    assert wide["loss"].to_dict() == {1: 0.3080, 2: 0.5484}
    assert wide["avg_train_loss"].dropna().to_dict() == {2: 0.5107}


def test_lightning_results_after_a_dated_logging_prefix_and_as_plain_numbers_are_read():
    prefix = "06/01/2020 10:00:00 - INFO - lightning_base -   "
    text = "".join(f"{prefix}***** Validation results *****\n{prefix}val_loss = {v}\n" for v in (2.5, 2.25, 2.0))
    frame = stdout.read_console(text, Path("run.log"), []).frame
    assert frame[frame["metric"] == "eval_loss"]["value"].tolist() == [2.5, 2.25, 2.0]


def test_lightning_test_results_are_not_read_as_a_validation():
    # the test block prints the trainer's callback_metrics, the last validation's and batch's losses among them: read
    # as a validation, it would make a record at validation 2
    test = ("INFO:__main__:***** Test results *****\nINFO:__main__:avg_test_loss = tensor(0.4)\n"
            "INFO:__main__:loss = tensor(0.6)\nINFO:__main__:val_loss = tensor(0.5)\n")
    text = _validation(0.5, 0.6) + test
    frame = stdout.read_console(text, Path("run.log"), []).frame
    assert sorted(frame["step"].unique()) == [1]
    assert "avg_test_loss" not in set(frame["metric"])


def test_a_key_equals_value_line_without_the_callback_head_is_not_read():
    frame = stdout.read_console("val_loss = tensor(0.3268, device='cuda:0')\n", Path("run.log"), []).frame
    assert frame.empty


def test_a_notebook_of_lightning_trainings_after_printed_arguments_judges_the_last_training(tmp_path):
    path = _notebook(tmp_path / "run", [
        ("print(args_dict)", ARGS_DICT.replace("'swag_data'", "'imdb'")),
        ("trainer.fit(model)", _validation(0.0839, 0.0199) + _validation(0.0874, 0.0066, 0.2954)),
        ("print(args_dict)", ARGS_DICT),
        ("trainer.fit(model)", _validation(0.3535, 0.3080) + _validation(0.3268, 0.5484, 0.5107))])
    frame = notebook.read(path).frame
    assert frame[frame["metric"] == "eval_loss"]["value"].tolist() == [0.3535, 0.3268]
    assert "weight_decay" not in set(frame["metric"])


def test_the_t5_notebook_reads_the_swag_runs_two_validations():
    frame = notebook.read(CORPUS / "joaorafaelm_notebooks" / "t5-fine-tuning.ipynb").frame
    held_out = frame[frame["metric"] == "eval_loss"]
    assert held_out["value"].tolist() == [0.3535, 0.3268]


# --- the profile of a Lightning notebook ----------------------------------------------------------------------------

_ARGS_CELL = "args_dict = dict(model_name_or_path='t5-base', learning_rate=3e-4, fp_16=False, opt_level='O1')\n" \
             "args = argparse.Namespace(**args_dict)"
_TRAIN_CELL = ("import pytorch_lightning as pl\n"
               "train_params = dict(max_epochs=2, precision= 16 if args.fp_16 else 32, amp_level=args.opt_level)\n"
               "trainer = pl.Trainer(**train_params)\n"
               "trainer.fit(model)")


def _code_values(*sources: str) -> dict:
    cells = [new_code_cell(source, execution_count=i + 1) for i, source in enumerate(sources)]
    return notebook_code.code_values(cells, "")


def test_a_lightning_trainer_built_in_the_code_names_the_framework_and_its_precision_choice():
    values = _code_values(_ARGS_CELL, _TRAIN_CELL)
    assert (values["_framework"], values["precision.lightning"]) == ("lightning", "fp32")


def test_a_lightning_precision_choice_on_a_flag_set_true_is_fp16():
    values = _code_values(_ARGS_CELL.replace("fp_16=False", "fp_16=True"), _TRAIN_CELL)
    assert values["precision.lightning"] == "fp16"


def test_a_lightning_precision_given_by_name_is_read():
    values = _code_values("import lightning as L\ntrainer = L.Trainer(precision='bf16-mixed')\ntrainer.fit(m)")
    assert values["precision.lightning"] == "bf16"


def test_a_lightning_precision_choice_on_a_flag_the_code_does_not_show_says_nothing():
    values = _code_values(_TRAIN_CELL)
    assert values["_framework"] == "lightning" and "precision.lightning" not in values


def test_a_transformers_trainer_is_no_lightning_trainer():
    values = _code_values("from transformers import Trainer\ntrainer = Trainer(model=m, args=a)\ntrainer.train()")
    assert "_framework" not in values and "precision.lightning" not in values


def test_the_t5_notebook_profile_is_lightning_in_fp32():
    profile = forensics.analyze(CORPUS / "joaorafaelm_notebooks").run_profile
    assert (profile.framework, profile.precision) == ("lightning", "fp32")
