"""DeepSpeed-Chat's console lines (ingest.deepspeed_chat), on the reference logs the DeepSpeedExamples repository
keeps for its four training steps (tests/realworld/microsoft_DeepSpeedExamples-*), and line by line."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import forensics
from forensics.ingest import stdout
from forensics.ingest.deepspeed_chat import DeepSpeedChat

CORPUS = Path(__file__).parent / "realworld"


def _fed(lines: list[str]):
    chat = DeepSpeedChat()
    return [r for r in (chat.feed(line) for line in lines) if r is not None]


def test_an_evaluation_is_put_at_the_step_deepspeed_printed_last():
    records = _fed(["***** Evaluating perplexity, Epoch 0/16 *****", "ppl: 4998.29638671875",
                    "[2023-04-18 01:46:59,142] [INFO] [logging.py:96:log_dist] [Rank 0] step=460, skipped=6, lr=[9.6e-06]",
                    "***** Evaluating perplexity, Epoch 1/16 *****", "ppl: 2.0179834365844727"])
    assert [(r.kind, r.step) for r in records] == [("dschat_sft", 0), ("dschat_sft", 460)]
    assert dict(records[1].metrics)["eval_loss"] == pytest.approx(math.log(2.0179834365844727))


@pytest.mark.parametrize("lines, metrics", [
    (["Epoch 1/1 with loss 0.5754789632299672"], {"loss": 0.5754789632299672}),
    (["***** Evaluating reward, Epoch 1/1 *****",
      "chosen_last_scores (higher is better) : 2.243525981903076, acc (higher is better) : 0.6994950175285339"],
     {"eval_chosen_score": 2.243525981903076, "eval_accuracy": 0.6994950175285339}),
    (["***** Evaluating rewards, Epoch 1/1 *****", "chosen: -31.9375, rejected: -33.96875, loss: 0.6650807857513428"],
     {"eval_rewards/chosen": -31.9375, "eval_rewards/rejected": -33.96875, "eval_loss": 0.6650807857513428}),
    (["epoch: 0|step: 0|ppo_ep: 1|act_loss: 0.2099609375|cri_loss: 0.12042236328125|unsuper_loss: 0.0",
      "average reward score: -0.67919921875"],
     {"actor_loss": 0.2099609375, "critic_loss": 0.12042236328125, "unsuper_loss": 0.0, "reward": -0.67919921875}),
])
def test_each_steps_lines_give_their_metrics(lines, metrics):
    got = {}
    for record in _fed(lines):
        got.update(dict(record.metrics))
    assert got == metrics


def test_a_value_line_without_its_evaluation_header_is_not_read():
    assert _fed(["ppl: 2.0", "chosen: 1.0, rejected: 0.5, loss: 0.4"]) == []


@pytest.mark.parametrize("step, objective", [("sft", "sft"), ("rm", "reward"), ("ppo", "rl"), ("dpo", "preference")])
def test_the_reference_logs_are_profiled_and_their_overflows_are_skipped_updates(step, objective):
    a = forensics.analyze(CORPUS / f"microsoft_DeepSpeedExamples-{step}")
    p = a.run_profile
    assert (p.method, p.objective, p.framework, p.precision) == ("full", objective, "deepspeed", "fp16")
    assert a.status == "warning" and a.first_incident.kind == "skipped_steps" and a.first_incident.step <= 10


def test_the_reward_models_accuracy_rising_is_its_evidence_of_learning():
    """Step 2's log holds one epoch-mean loss, and its eval accuracy 0.49 -> 0.70: no 'too few points' warning."""
    frame = stdout.read(CORPUS / "microsoft_DeepSpeedExamples-rm" / "opt-350m_globalBatchSize-64.log").frame
    assert frame[frame["metric"] == "eval_accuracy"]["value"].round(2).tolist() == [0.49, 0.70]
    a = forensics.analyze(CORPUS / "microsoft_DeepSpeedExamples-rm")
    assert not [f for f in a.findings if f.kind == "no_learning_evidence"]


def test_a_hand_written_loops_epoch_loss_line_is_not_deepspeed_chat(tmp_path):
    """Review: `Epoch 3/10 with loss 1.23` alone (a common print) was read as a DeepSpeed-Chat reward model."""
    (tmp_path / "train.log").write_text("".join(f"Epoch {e}/10 with loss {2.0 - e / 10:.2f}\n" for e in range(1, 11)))
    try:
        profile = forensics.analyze(tmp_path).run_profile
    except forensics.NotARunDirectory:
        return
    assert profile.framework != "deepspeed" and profile.objective != "reward"


def test_a_ppo_line_with_a_value_that_is_no_number_is_passed_over():
    assert _fed(["epoch: 0|step: 0|ppo_ep: 1|act_loss: None|cri_loss: 0.1|unsuper_loss: 0.0"]) == []
