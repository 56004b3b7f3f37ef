"""Tests of the torchtune console reader and the profile it gives.

From the day-9 reading fixes, each from a real paste the corpus holds (tests/realworld/PROVENANCE.md, batches AQ1 /
AQ3).

* torchtune's bar `1|N|Loss: X: ... | n/M [...]`, redrawn once the step is done (its n then one ahead), is read once per
  step at the description's N (shanshanwangcsc/torchtune-gpu-benchmark: 512 points, not 1023 over steps 1-513); its
  resolved config's instruction dataset (`torchtune.datasets.alpaca_cleaned_dataset`) says sft."""
from __future__ import annotations

import forensics
from forensics.ingest import stdout


def _metric(frame, name: str) -> list[tuple[int, float]]:
    rows = frame[frame["metric"] == name]
    return list(zip(rows["step"].astype(int).tolist(), rows["value"].round(4).tolist()))


# ---- torchtune's bar ------------------------------------------------------------------------------------------------

def _torchtune_console(steps: int = 40, dataset: str = "torchtune.datasets.alpaca_cleaned_dataset") -> str:
    head = ("INFO:torchtune.utils._logging:Running LoRAFinetuneRecipeSingleDevice with resolved config:\n\n"
            f"batch_size: 6\ndataset:\n  _component_: {dataset}\n  packed: true\ndtype: bf16\n"
            "model:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n  lora_rank: 64\n\n"
            "INFO:torchtune.utils._logging:Model is initialized with precision torch.bfloat16.\n")
    bar, shown = [], "  0%|          | 0/{M} [00:00<?, ?it/s]".format(M=steps)
    for n in range(1, steps + 1):
        loss = 1.0 + 1.0 * 0.9 ** n + 0.02 * (n % 3)
        done = f"{n * 100 // steps:3d}%|#         | {n}/{steps} [00:{n:02d}<00:10,  1.30it/s]"
        desc = f"1|{n}|Loss: {loss!r}:"
        bar.append(desc + f"{(n - 1) * 100 // steps:3d}%|#         | {n - 1}/{steps} [00:{n:02d}<00:10,  1.30it/s]")
        bar.append(desc + done)
    return head + shown + "\r" + "\r".join(bar) + "\n"


def test_torchtune_bar_losses_are_read_once_at_their_own_step(tmp_path):
    path = tmp_path / "job.out"
    path.write_text(_torchtune_console(), encoding="utf-8")
    losses = _metric(stdout.read(path).frame, "loss")
    assert [step for step, _ in losses] == list(range(1, 41))
    assert losses[0][1] == round(1.0 + 0.9 + 0.02, 4)


def test_torchtune_instruction_dataset_says_sft(tmp_path):
    (tmp_path / "job.out").write_text(_torchtune_console(), encoding="utf-8")
    profile = forensics.analyze(tmp_path).run_profile.to_dict()
    assert (profile["objective"], profile["framework"], profile["method"]) == ("sft", "torchtune", "lora")


def test_torchtune_text_completion_dataset_says_no_sft(tmp_path):
    (tmp_path / "job.out").write_text(_torchtune_console(dataset="torchtune.datasets.text_completion_dataset"),
                                      encoding="utf-8")
    assert forensics.analyze(tmp_path).run_profile.to_dict()["objective"] != "sft"
