"""Tests that copies of a run with CRLF, colour codes, rank prefixes, a BOM, a renamed or live log keep its answer.

Metamorphic failures found by bench/metamorphic.py: a real case's files in a shape a user's copy of the same run
could plausibly have (a Windows copy, a coloured or rank-prefixed console, a BOM, a log still being written, a
renamed log), where the tool's answer changes though the run did not. Each builds the transformed copy in tmp_path
from a real case file and asserts the answer the tool gives on the untouched case. Each failed on the code it was
found on; bench/metamorphic.py runs the transforms over the whole corpus."""
from __future__ import annotations

import re

import forensics
from support.metamorphic_cases import answer, case_copy, each_line, rewrite


# --- 1. CRLF (a Windows copy): OLMo's `[step=N/M]` block ends at the empty piece between \r and \n --------------

def test_crlf_olmo_console_still_read(tmp_path):
    """stdout._scan splits on [\\r\\n] one char at a time, so each CRLF gives an empty piece that OlmoBlock.feed
    takes as the end of the `[step=N]` block before its `    train/CrossEntropyLoss=...` lines: nothing is read
    (NotARunDirectory 'nothing readable'); with LF the run is healthy."""
    run = case_copy(tmp_path, "AntonioLopardo_OLMo")
    rewrite(run / "train_20251211_002555.log", lambda t: t.replace("\n", "\r\n"))
    a = forensics.analyze(run)
    assert answer(run) == ("healthy", None, None)
    assert a.run_profile.framework == "olmo"


# --- 2. console decorations: the layout's sniff (run._LOG_HINT) runs on raw bytes, ^-anchored, ANSI not removed --

def test_rank_prefixed_build_nanogpt_console_is_found(tmp_path):
    """torchrun's `[rank0]: ` before each line: run._LOG_HINT's `(?m:^\\d+ train ...)` no longer matches, so the log
    is not taken as a training log (NotARunDirectory 'no training logs')."""
    run = case_copy(tmp_path, "AGNDM_build-nanogpt")
    rewrite(run / "log.txt", each_line(lambda l: "[rank0]: " + l))
    assert answer(run) == ("healthy", None, None)


def test_ansi_coloured_lines_build_nanogpt_console_is_found(tmp_path):
    """`\\x1b[32m...\\x1b[0m` around each line: the reader (stdout.read) strips ANSI, but run._hinted sniffs the raw
    bytes, so the file is never handed to the reader."""
    run = case_copy(tmp_path, "AGNDM_build-nanogpt")
    rewrite(run / "log.txt", each_line(lambda l: "\x1b[32m" + l + "\x1b[0m"))
    assert answer(run) == ("healthy", None, None)


def test_ansi_coloured_numbers_modded_nanogpt_console_is_found(tmp_path):
    """rich-style colour around each number (`train_loss:\\x1b[1;36m3.28\\x1b[0m`): run._LOG_HINT wants the digit
    right after the key, on raw bytes."""
    run = case_copy(tmp_path, "KellerJordan_modded-nanogpt")
    for log in [p for p in run.iterdir() if p.suffix in (".txt", ".log", ".out")]:
        rewrite(log, each_line(lambda l: re.sub(r"(?<![\w.])(-?\d+\.\d+)", "\x1b[1;36m\\1\x1b[0m", l)))
    assert answer(run) == ("warning", "loss_spike", 1120)


def test_rank_prefixed_olmo_console_still_read(tmp_path):
    """`[rank0]: ` before every line (torchrun --tee): OlmoBlock's `^\\s+name=value` block lines
    (pretrain_lines._OLMO_BLOCK_LINE) no longer match, so the `[step=N]` blocks hold no metric."""
    run = case_copy(tmp_path, "AntonioLopardo_OLMo")
    rewrite(run / "train_20251211_002555.log", each_line(lambda l: "[rank0]: " + l))
    assert answer(run) == ("healthy", None, None)


def test_rank_prefixed_xtuner_console_keeps_verdict(tmp_path):
    """`[rank0]: ` before each line of an xtuner console turns warning memorization@680 into healthy and loses
    method / objective / precision."""
    run = case_copy(tmp_path, "HandSomeGuy001_InternLM-813-dadapt")
    for log in [p for p in run.iterdir() if p.suffix in (".txt", ".log", ".out")]:
        rewrite(log, each_line(lambda l: "[rank0]: " + l))
    assert answer(run) == ("warning", "memorization", 680)


# --- 1b. a UTF-8 BOM on JSON files (PowerShell / Notepad) ------------------------------------------------------

def test_bom_json_history_is_found_and_read(tmp_path):
    """run._DUMPED_HISTORY is `^\\s*[...` on raw bytes and _jsonfile.read_json_value decodes 'utf-8' (not
    'utf-8-sig'): a dumped history with a BOM is not found (NotARunDirectory)."""
    run = case_copy(tmp_path, "F-Bafti_llama-qlora")
    rewrite(run / "training_metrics.json", lambda t: "\ufeff" + t)
    assert answer(run) == ("healthy", None, None)  # (the case's answer without the BOM, since fx-nolearn2)


def test_bom_loss_history_json_is_read(tmp_path):
    """A loss_history.json (found by its name) with a BOM: 'invalid JSON at line 1 column 1 (Unexpected UTF-8 BOM)'
    from _jsonfile.read_json_value, so NotARunDirectory 'nothing readable'."""
    run = case_copy(tmp_path, "CollinPhipps_llm")
    rewrite(run / "loss_history.json", lambda t: "\ufeff" + t)
    assert answer(run) == ("warning", "overfitting", 3200)


def test_bom_adapter_config_keeps_method(tmp_path):
    """adapter_config.json with a BOM is not read (ingest config readers decode without utf-8-sig): the LoRA method
    (and the objective / parameter count where it came from there) become unknown in 34 of 72 cases."""
    run = case_copy(tmp_path, "AndrisWillow_self-rewarding-models_M2")
    for cfg in run.rglob("adapter_config.json"):
        rewrite(cfg, lambda t: "\ufeff" + t)
    assert forensics.analyze(run).run_profile.method == "lora"


# --- 3/4. a renamed log, a log still being written --------------------------------------------------------------

def test_step_loss_table_renamed_nohup_out_is_found(tmp_path):
    """A `step\\tloss` table printed to stdout and captured as nohup.out: run._TABLE_SUFFIXES holds .log and .txt
    but not .out, so the same file read fine as train.log is not found (NotARunDirectory)."""
    run = case_copy(tmp_path, "Jayant-Guru-Shrivastava_ERAV4-Session11-shakespeare-gpt2-124M")
    (run / "train.log").rename(run / "nohup.out")
    assert answer(run) == ("warning", "memorization", 4170)


def test_live_log_before_its_final_eval_line_is_found(tmp_path):
    """The same console without its last line (the run still in its final evaluation): run._looks_like_training_log
    sniffs only the first and last 64 KiB, where the `loss: X, orth_loss: ...` lines give no hint, so the 9,598-line
    log is not found at all (NotARunDirectory) though the original is read as healthy."""
    run = case_copy(tmp_path, "OddFunction0205_clora-")
    rewrite(run / "train.log", lambda t: t.rstrip("\n").rsplit("\n", 1)[0] + "\n")
    assert forensics.analyze(run).status == "healthy"


def test_prefix_checkpoints_beside_trainer_state_keep_verdict(tmp_path):
    """checkpoint-<k>/trainer_state.json holding prefixes of the same log_history (what save_steps leaves) beside
    the top-level one: healthy becomes warning no_learning_evidence@5002 (the copies are read as other histories)."""
    import json
    run = case_copy(tmp_path, "mnenadoeloo_t5-base-chatbot")
    state = json.loads((run / "trainer_state.json").read_text())
    hist, final = state["log_history"], state["global_step"]
    for k in (final // 3, 2 * final // 3):
        part = dict(state, global_step=k, log_history=[e for e in hist if e.get("step", 0) <= k])
        (run / f"checkpoint-{k}").mkdir()
        (run / f"checkpoint-{k}" / "trainer_state.json").write_text(json.dumps(part, indent=2))
    assert answer(run) == ("healthy", None, None)
