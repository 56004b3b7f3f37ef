"""Checkpoints of tiny transformers models as the HF Trainer saves them, with its optimizer after one real step.

    folder, truth, optimizer = trainer_checkpoint(tmp_path, model, poison="model.norm.weight")
    builds = count_model_builds(monkeypatch)   # calls of the model-definition lookup, to assert on

Needs torch and transformers (the tests that use it importorskip them first).
"""
from __future__ import annotations

from forensics.checkpoints import optimizer_names


def trainer_checkpoint(tmp_path, model, poison: str | None = None):
    """checkpoint-1 of `model` (model.safetensors, config.json, optimizer.pt) after one step of the optimizer
    `Trainer.create_optimizer` builds (two param groups); `poison`: a parameter whose exp_avg_sq gets a NaN.
    Returns the folder, the true name of each optimizer index, and the optimizer."""
    import torch
    import transformers

    torch.manual_seed(0)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), report_to=[], use_cpu=True)
    optimizer = transformers.Trainer(model=model, args=args).create_optimizer()
    vocab = model.config.vocab_size
    model(input_ids=torch.randint(0, vocab, (2, 8)), labels=torch.randint(0, vocab, (2, 8))).loss.backward()
    optimizer.step()
    name_of = {id(p): n for n, p in model.named_parameters()}
    truth = [name_of[id(p)] for group in optimizer.param_groups for p in group["params"]]
    state = optimizer.state_dict()
    if poison is not None:
        state["state"][truth.index(poison)]["exp_avg_sq"].view(-1)[0] = float("nan")
    folder = tmp_path / "checkpoint-1"
    model.save_pretrained(folder)
    torch.save(state, folder / "optimizer.pt")
    return folder, truth, optimizer


def count_model_builds(monkeypatch) -> list:
    """A list that gets one entry each time the model is built from config.json for exact names."""
    calls = []
    real = optimizer_names._defined_order

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(optimizer_names, "_defined_order", counted)
    return calls
