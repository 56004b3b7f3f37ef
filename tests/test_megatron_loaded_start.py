"""A Megatron console's checkpoint-loading lines say where its weights start (ingest.megatron_start): trained weights
loaded at iteration 0 are a fine-tune's or continued pre-training's start, never random weights, and a first loss at
the uniform guess logged while the learning rate was still tiny says the weights as loaded read the text at chance
(analyzers.loaded_at_chance). Real case: inkcherry_Megatron-DeepSpeed (tests/realworld), a LLaMA-7B converted from HF
weights, Alpaca prompts, first lm loss 10.12 over iterations 1-50 at lr <= 5e-7, stopped with ^C at 1600 of 3500."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

import forensics
from forensics.analyzers.loaded_at_chance import detect_loaded_weights_at_chance
from forensics.ingest.console_facts import console_facts
from forensics.ingest.megatron_end import stopped_by_hand
from forensics.ingest.megatron_start import weights_start

CASE = Path(__file__).parent / "realworld" / "inkcherry_Megatron-DeepSpeed"
LOG = CASE / "result1209.log"
_LOADED = "  successfully loaded checkpoint from /ssd/mingzhil/mega/llama-7b-mega-ds-T2P2D2-from_hf at iteration 0"
_RANDOM = ("WARNING: could not find the metadata file /ckpt/latest_checkpointed_iteration.txt \n"
           "    will not load any checkpoints and will start from random")
_LOADED_LINE = ("successfully loaded checkpoint from /ssd/mingzhil/mega/llama-7b-mega-ds-T2P2D2-from_hf at "
                "iteration 0")


def _copy(tmp_path: Path, old: str, new: str) -> Path:
    """The real case's files, one line of its console replaced."""
    text = LOG.read_text(errors="replace")
    assert old in text
    (tmp_path / LOG.name).write_text(text.replace(old, new))
    (tmp_path / "ds_config.json").write_text((CASE / "ds_config.json").read_text())
    return tmp_path


def test_a_converted_checkpoint_loaded_at_iteration_0_that_reads_its_data_at_chance_is_the_first_incident():
    a = forensics.analyze(CASE)
    p = a.run_profile
    assert (p.method, p.objective, p.from_random_weights) == ("full", "sft", False)
    assert a.status == "warning" and (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 50)
    assert "loaded from trained weights" in a.first_incident.message


def test_a_console_stopped_with_ctrl_c_says_its_owner_stopped_it():
    cut = next(f for f in forensics.analyze(CASE).findings if f.kind == "run_cut_short")
    assert "stopped by hand" in cut.message and "no line saying why" not in cut.message
    assert "sigkill_handler" in cut.evidence["stopped_by_hand"]


def test_a_console_cut_without_an_interrupt_is_not_said_to_be_stopped_by_hand():
    text = LOG.read_text(errors="replace")
    last = text.rfind(" iteration ")
    assert stopped_by_hand(text[:text.find("\n", last) + 1]) is None  # the file up to its last iteration line
    # (an interrupt before the last iteration line is an earlier launch's, not this end's)
    assert stopped_by_hand("Traceback (most recent call last):\nKeyboardInterrupt\n iteration 5/ 10 | lm loss: 2\n") \
        is None


def test_a_ctrl_c_after_a_rank_crashed_is_not_said_to_be_stopped_by_hand():
    """Guard: a rank's error after the last iteration line, then ^C (the other ranks hung in a collective, their
    tracebacks KeyboardInterrupt): the run had failed before its owner stopped it, no 'not by a fault' to say."""
    text = LOG.read_text(errors="replace")
    last = text.rfind(" iteration ")
    head = text[:text.find("\n", last) + 1]
    crash = ("Traceback (most recent call last):\n  File \"megatron/training.py\", line 1200, in train_step\n"
             "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    interrupt = ("Traceback (most recent call last):\n  File \"torch/distributed/distributed_c10d.py\", line 1800\n"
                 "KeyboardInterrupt\n^C[2023-12-09 17:06:20,763] [INFO] [launch.py:315:sigkill_handler] Killing "
                 "subprocess 2197611\n")
    assert stopped_by_hand(head + crash + interrupt) is None
    assert stopped_by_hand(head + interrupt) is not None  # the same ^C with no error before it


def test_the_load_lines_say_where_the_weights_start():
    assert weights_start(_LOADED) == {"loaded": True, "iteration": 0, "line": _LOADED.strip()}
    resumed = weights_start("  successfully loaded checkpoint from /ck [ t 0, p 0 ] at iteration 5000")
    assert (resumed["loaded"], resumed["iteration"]) == (True, 5000)
    assert weights_start(" loading release checkpoint from /gpt2/ckpt\n")["iteration"] == 0
    assert weights_start(_RANDOM)["loaded"] is False
    assert weights_start(" iteration 10/ 100 | lm loss: 9.1 |") is None


def test_the_same_run_from_random_weights_stays_pretraining_and_silent_at_its_start(tmp_path):
    """Guard: Megatron's 'will start from random' in place of the load line: ln V at the start is a fresh model's."""
    a = forensics.analyze(_copy(tmp_path, _LOADED, _RANDOM))
    assert a.run_profile.objective == "pretrain" and a.run_profile.from_random_weights
    assert not [f for f in a.findings if f.kind == "start_above_uniform_guess"]


def test_a_resume_at_a_later_iteration_is_no_trained_start(tmp_path):
    """Guard: a load at iteration N > 0 is the same run taken up again, not weights trained elsewhere."""
    a = forensics.analyze(_copy(tmp_path, "at iteration 0\n", "at iteration 5000\n"))
    assert not [f for f in a.findings if f.kind == "start_above_uniform_guess"]


def _metrics(first_rate: float, first_loss: float = 10.12):
    steps = [50, 100, 150, 200, 250, 300]
    return {"loss": pd.Series([first_loss, 5.9, 2.76, 2.47, 2.2, 1.96], index=steps, dtype="float64"),
            "learning_rate": pd.Series([first_rate, 1e-6, 1.5e-6, 2e-6, 1e-5, 2e-5], index=steps, dtype="float64")}


def test_the_detector_fires_only_for_loaded_weights_at_chance_while_the_rate_was_tiny():
    loaded = ("result1209.log", _LOADED_LINE)
    assert [f.kind for f in detect_loaded_weights_at_chance(_metrics(5e-7), loaded, "full", None)] == [
        "start_above_uniform_guess"]
    assert detect_loaded_weights_at_chance(_metrics(5e-7), None, "full", None) == []  # no load line
    assert detect_loaded_weights_at_chance(_metrics(2e-5), loaded, "full", None) == []  # first window at full rate
    assert detect_loaded_weights_at_chance(_metrics(5e-7, 2.1), loaded, "full", None) == []  # a trained start
    assert detect_loaded_weights_at_chance(_metrics(5e-7), loaded, "lora", None) == []  # fine_tune_start's
    assert detect_loaded_weights_at_chance(_metrics(5e-7, 7.5), loaded, "full", 32000) == []  # 72% of ln 32000
    assert len(detect_loaded_weights_at_chance(_metrics(5e-7, 8.5), loaded, "full", 32000)) == 1  # 82%


def test_alpacas_supervised_dataset_lines_are_instruction_data():
    text = "WARNING:root:Formatting inputs...\nWARNING:root:Tokenizing inputs... This may take some time...\n"
    assert console_facts(text)["console_instruction_data"] == "WARNING:root:Formatting inputs..."
    assert "console_instruction_data" not in console_facts("Formatting inputs...Skip in lazy mode\n")


def test_a_megatron_log_that_crashed_is_not_also_said_to_end_with_no_line_saying_why(tmp_path):
    """The crash finding names the error; a cut-short finding beside it saying "no ... exit line or error" denies it
    (review 32c). The same log with no error after its last iteration still gets the cut-short finding."""
    import shutil

    import forensics

    text = LOG.read_text(errors="replace")
    head = text[:text.find("\n", text.rfind(" iteration ")) + 1]
    crash = ("Traceback (most recent call last):\n  File \"megatron/training.py\", line 1200, in train_step\n"
             "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    for name, tail in (("crashed", crash), ("cut", "")):
        run = tmp_path / name
        shutil.copytree(LOG.parent, run)
        (run / LOG.name).write_text(head + tail)
        kinds = {f.kind for f in forensics.analyze(run).findings}
        assert ("run_cut_short" in kinds) == (name == "cut") and ("run_crashed" in kinds) == (name == "crashed"), kinds
