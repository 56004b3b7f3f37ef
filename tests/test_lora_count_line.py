"""A script's own count line after get_peft_model that names the adapter says the method and the model's size.

`LoRA model initialized. Trainable parameters: 11796480, All parameters: 4034264576, trainable ratio: 0.29%` (a
fine-tuning script's print beside the HF Trainer's log dicts) is read as PEFT's `trainable params: X || all params:
Y` banner is: LoRA, and the whole PEFT model's count as its size. The same counts with no adapter named on the line
(`Trainable parameters: X, All parameters: Y`) are a count, not a method.
"""
from __future__ import annotations

import forensics
from forensics.ingest.banners import find_banners

_TRAINER_DICTS = "".join(
    f"{{'loss': {loss}, 'grad_norm': {grad}, 'learning_rate': {lr}, 'epoch': {epoch}}}\n"
    for loss, grad, lr, epoch in ((2.0811, 1.2345, 3.06e-05, 0.02), (1.59, 0.3409, 6.29e-05, 0.05),
                                  (1.3234, 0.4714, 9.52e-05, 0.07), (1.1319, 0.301, 9.995e-05, 0.1),
                                  (1.0853, 0.323, 9.975e-05, 0.12)))


def _console(count_line: str) -> str:
    return ("Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.60s/it]\n" + count_line + "\n"
            + "Training samples: 13125, Evaluation samples: 3282\n" + _TRAINER_DICTS
            + "{'train_runtime': 1402.1, 'train_samples_per_second': 9.36, 'train_loss': 1.44, 'epoch': 0.12}\n")


def test_lora_count_line_gives_lora_and_the_model_size(tmp_path):
    line = "LoRA model initialized. Trainable parameters: 11796480, All parameters: 4034264576, trainable ratio: 0.29%"
    (tmp_path / "output.log").write_text(_console(line))
    profile = forensics.analyze(tmp_path).run_profile.to_dict()
    assert (profile["method"], profile["model_params"]) == ("lora", 4034264576)


def test_peft_or_adapter_named_on_the_count_line_is_read():
    banner = find_banners(["PEFT adapter ready. Trainable params: 1,024, Total params: 2,048"])[0]
    assert (banner.trainable_params, banner.all_params) == (1024, 2048)


def test_count_line_without_an_adapter_named_is_no_method(tmp_path):
    line = "Model ready. Trainable parameters: 11796480, All parameters: 4034264576, trainable ratio: 0.29%"
    assert not any(b.trainable_params == 11796480 for b in find_banners([line]))
    (tmp_path / "output.log").write_text(_console(line))
    assert forensics.analyze(tmp_path).run_profile.to_dict()["method"] == "unknown"
