"""Rules the lead mended from the day-6 corpus batches, each with the real case it came from (tests/realworld)."""
from __future__ import annotations

import json

import forensics


def _trainer_run(folder, losses, vocab_size):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": vocab_size}))
    history = [{"step": i + 1, "loss": v, "learning_rate": 1e-4, "grad_norm": 1.0} for i, v in enumerate(losses)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": len(losses), "log_history": history}))
    return folder


def test_a_start_far_above_the_guess_that_settles_at_it_is_a_start_above_the_guess_not_a_sum(tmp_path):
    """FPT-VVU's ViVidBot stage 1: 39.5 at the start, four times ln 20486 = 9.93, then 9.7-10.1 to the end. A sum
    over a step's tokens or samples would stay a multiple of the per-token level; this loss is a per-token mean
    whose model started confidently wrong. It was named impossible_loss, 'the logged loss is a sum'."""
    losses = [39.5, 36.0, 30.0, 22.0, 14.0, 11.0] + [9.93 + 0.15 * ((-1) ** i) for i in range(30)]
    a = forensics.analyze(_trainer_run(tmp_path / "run", losses, 20486))
    assert (a.first_incident.kind, a.first_incident.step) == ("start_above_uniform_guess", 1), a.findings
    assert "sum" not in a.first_incident.message


def test_a_summed_loss_that_stays_a_multiple_of_the_guess_is_still_impossible_for_a_mean(tmp_path):
    losses = [80.0 - i for i in range(36)]  # eight times a per-token loss, falling as the run learns
    a = forensics.analyze(_trainer_run(tmp_path / "run", losses, 32000))
    assert any(f.kind == "impossible_loss" and f.step == 1 for f in a.findings), a.findings



def _state_only(folder, losses):
    folder.mkdir(parents=True)
    history = [{"step": i + 1, "loss": v, "learning_rate": 1e-4} for i, v in enumerate(losses)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": len(losses), "log_history": history}))
    return folder


def test_words_in_the_folders_above_the_run_say_nothing_of_it(tmp_path):
    """A copy of a run under a checkout or share named for something else (`.../llm-sft-dpo-lora/runs/exp1`): the
    run's method and objective come from its files and its own folder's name, not from the folders above it (a
    helper's worktree `/work/wt/fix-al-sft` made every case without better evidence an SFT)."""
    run = _state_only(tmp_path / "llm-sft-dpo-lora" / "runs" / "exp1", [2.5 - 0.02 * i for i in range(40)])
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("unknown", "unknown"), profile.evidence


def test_a_checkpoint_folder_is_named_by_the_run_folder_that_holds_it(tmp_path):
    run = _state_only(tmp_path / "qwen-7b-lora-sft" / "checkpoint-40", [2.5 - 0.02 * i for i in range(40)])
    profile = forensics.analyze(run).run_profile
    assert (profile.method, profile.objective) == ("lora", "sft"), profile.evidence


def test_four_evals_whose_later_best_is_followed_by_a_climb_are_overfitting(tmp_path):
    """haomingdouranggouqil's Qwen2-7B LoRA: eval 0.538, 0.416 (the best, second), 0.478, 0.526 while the training
    loss fell to 0.07. A four-eval log was judged only by its first eval as the best."""
    run = tmp_path / "run"
    run.mkdir()
    history = [{"step": s, "loss": round(1.2 * 0.93 ** (s / 50), 4), "learning_rate": 1e-4} for s in range(50, 2001, 50)]
    history += [{"step": s, "eval_loss": v} for s, v in zip((500, 1000, 1500, 2000), (0.538, 0.416, 0.478, 0.526))]
    history.sort(key=lambda r: r["step"])
    (run / "trainer_state.json").write_text(json.dumps({"global_step": 2000, "log_history": history}))
    a = forensics.analyze(run)
    assert (a.first_incident.kind, a.first_incident.step) == ("overfitting", 1500), a.findings


def test_a_lora_on_a_gptq_int4_base_is_a_quantized_base_lora(tmp_path):
    run = _state_only(tmp_path / "run", [2.5 - 0.02 * i for i in range(40)])
    (run / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "task_type": "CAUSAL_LM",
                                                         "base_model_name_or_path": "Qwen/Qwen2-7B-Instruct-GPTQ-Int4"}))
    assert forensics.analyze(run).run_profile.method == "qlora"


def test_a_console_saved_with_no_suffix_under_any_name_is_read(tmp_path):
    """JunyiJ's `dpo_train_20260105_1`: a captured console named by its date, no suffix; only a few bare names
    (nohup, stdout, train_log) were sniffed, so the folder held 'no training logs'."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "dpo_train_20260105_1").write_text("".join(f"[step {s}] loss={0.69 - s / 1000:.4f}\n" for s in range(1, 61)))
    (run / "Makefile").write_text("all:\n\tpython train.py\n")
    a = forensics.analyze(run)
    assert len(a.timeline.series("loss")) == 60


def _verl_console(folder, steps, score, advantage):
    folder.mkdir()
    lines = [f"step:{s} - actor/entropy:{0.5 + s / 2:.3f} - actor/pg_loss:{0.0 if advantage(s) == 0 else 0.05} - "
             f"actor/grad_norm:{0.01 if advantage(s) == 0 else 0.8} - actor/lr:3e-05 - critic/score/mean:{score(s)} - "
             f"critic/advantages/max:{advantage(s)} - critic/advantages/min:{-advantage(s)} - "
             f"response_length/mean:{300 + s}" for s in steps]
    (folder / "train.out").write_text("\n".join(lines) + "\n")
    return folder


def test_verl_advantages_at_zero_on_every_step_are_no_learning_signal(tmp_path):
    """Foo1szz's verl GRPO: critic/score/mean 0 on 20 of 21 steps, so every group's completions scored alike and
    verl's batch advantages are 0 at both ends; the policy had nothing to learn from (its entropy then ran to near
    ln(vocabulary)). The tool named the one real update's grad_norm a spike."""
    run = _verl_console(tmp_path / "run", range(1, 22), lambda s: 0.25 if s == 2 else 0.0,
                        lambda s: 1.1 if s == 2 else 0.0)
    a = forensics.analyze(run)
    assert (a.status, a.first_incident.kind, a.first_incident.step) == ("broken", "no_learning_signal", 1), a.findings
    # the cause is the rewards' want of spread, not masked labels (the advice 'check labels and masks' is an SFT's)
    assert [c.cause for c in a.causes][:1] == ["no_reward_spread"], [c.title for c in a.causes]


def test_verl_advantages_that_spread_are_a_learning_signal(tmp_path):
    run = _verl_console(tmp_path / "run", range(1, 22), lambda s: round(0.2 + s / 50, 3), lambda s: 1.3)
    assert not any(f.kind == "no_learning_signal" for f in forensics.analyze(run).findings)


def _orpo_state(folder, odds):
    folder.mkdir()
    history = [{"step": 10 * (i + 1), "loss": round(2.06 - 0.0006 * i, 4), "nll_loss": round(1.99 - 0.0006 * i, 4),
                "log_odds_ratio": o, "rewards/margins": 0.0002, "rewards/accuracies": 0.6 + 0.4 * i / len(odds),
                "rewards/chosen": -0.2, "rewards/rejected": -0.2002, "learning_rate": 5e-7}
               for i, o in enumerate(odds)]
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": 10 * len(odds), "log_history": history}))
    return folder


def test_an_orpo_odds_ratio_that_never_leaves_ln_2_is_no_evidence_of_preference_learning(tmp_path):
    """chtmp223's Mistral-7B ORPO at LR 5e-7: log_odds_ratio -0.6935 -> -0.6912 over 2,307 steps with margins of
    1e-4 (accuracies 0.8-1.0: the sign of tiny margins); only the NLL part fell. It was called healthy."""
    a = forensics.analyze(_orpo_state(tmp_path / "run", [round(-0.6935 + 0.00001 * i, 5) for i in range(230)]))
    assert a.status == "warning" and a.first_incident.kind == "no_learning_evidence", a.findings
    assert "odds-ratio term stayed at -ln 2" in a.first_incident.message


def test_an_orpo_odds_ratio_that_rises_off_ln_2_is_learning(tmp_path):
    a = forensics.analyze(_orpo_state(tmp_path / "run", [round(-0.6935 + 0.0015 * i, 4) for i in range(230)]))
    assert not any(f.kind == "no_learning_evidence" for f in a.findings), a.findings


def test_a_store_report_tells_notes_from_files_read_in_part():
    """`forensics analyze STORE` (several W&B / MLflow runs): a note on how a file was read is not a file left out."""
    from types import SimpleNamespace

    from forensics.findings import Skipped
    from forensics.report.store_text import store_text

    run = SimpleNamespace(run_id="abc123", name="abc123", kind="wandb", status="finished")
    store = SimpleNamespace(runs=[SimpleNamespace(run=run, analysis=None, reason="no history")], path="wandb",
                            skipped=(Skipped("wandb/run-1/files/output.log", "two writers, de-duplicated", note=True),))
    text = store_text(store)
    assert "could not be read in full" not in text and "1 note on how the records were taken" in text, text
