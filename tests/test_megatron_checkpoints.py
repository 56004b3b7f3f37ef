"""Megatron-LM legacy checkpoints built from the documented layout (megatron-core is not installed here).

megatron/training/checkpointing.py: `get_checkpoint_name` -> `iter_{:07d}/mp_rank_{tp:02d}[_{pp:03d}]/
model_optim_rng.pt`; `generate_state_dict` -> `args` (argparse.Namespace), `checkpoint_version`,
`iteration`, `model`, `optimizer`, `opt_param_scheduler`, `rng_state` (numpy state inside), and
`latest_checkpointed_iteration.txt` beside (`get_checkpoint_tracker_filename`). Tensor names follow
megatron.core GPTModel (`decoder.layers.{i}.mlp.linear_fc1.weight`); each TP rank holds half of a
column-parallel weight.
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np
import pytest

from forensics.analysis import analyze
from forensics.checkpoints import open_checkpoint, scan_checkpoint
from forensics.checkpoints.megatron import MegatronFile, parallel_rank

torch = pytest.importorskip("torch")
NAN_TENSOR = "decoder.layers.1.mlp.linear_fc1.weight"


def _model(tp: int, seed: int) -> dict:
    g = torch.Generator().manual_seed(seed * 10 + tp)
    sd = {"embedding.word_embeddings.weight": torch.randn(16, 8, generator=g).bfloat16()}
    for i in range(3):
        sd[f"decoder.layers.{i}.self_attention.linear_qkv.weight"] = torch.randn(12, 8, generator=g).bfloat16()
        sd[f"decoder.layers.{i}.mlp.linear_fc1.weight"] = torch.randn(16, 8, generator=g).bfloat16()
        sd[f"decoder.layers.{i}.mlp.linear_fc1._extra_state"] = None  # TE keeps a BytesIO or None here
    sd["decoder.final_layernorm.weight"] = torch.ones(8).bfloat16()
    return sd


def write_megatron_run(root: Path, iterations=(100, 200), nan_from: int = 200, nan_tp: int = 1) -> Path:
    args = argparse.Namespace(lr=3e-4, min_lr=3e-5, clip_grad=1.0, bf16=True, fp16=False,
                              tensor_model_parallel_size=2, pipeline_model_parallel_size=1, lr_warmup_iters=50)
    for it in iterations:
        for tp in (0, 1):
            model = _model(tp, it)
            if it >= nan_from and tp == nan_tp:
                model[NAN_TENSOR][3, 2] = float("nan")
            state = {"args": args, "checkpoint_version": 3.0, "iteration": it, "model": model,
                     "optimizer": {"optimizer": {"state": {}, "param_groups": []}, "grad_scaler": None},
                     "opt_param_scheduler": {"max_lr": 3e-4, "num_steps": it},
                     "rng_state": [{"random_rng_state": random.getstate(), "np_rng_state": np.random.get_state(),
                                    "torch_rng_state": torch.get_rng_state()}],
                     "num_floating_point_operations_so_far": 1.0e15}
            folder = root / f"iter_{it:07d}" / f"mp_rank_{tp:02d}"
            folder.mkdir(parents=True)
            torch.save(state, folder / "model_optim_rng.pt")
    (root / "latest_checkpointed_iteration.txt").write_text(str(iterations[-1]))
    return root


def test_rank_file_reads_the_model_and_the_args(tmp_path):
    run = write_megatron_run(tmp_path / "run")
    wf = MegatronFile(run / "iter_0000200" / "mp_rank_01" / "model_optim_rng.pt")
    assert NAN_TENSOR in [e.name for e in wf.entries]
    assert not [e for e in wf.entries if "_extra_state" in e.name]
    assert wf.metadata["tp"] == 1 and wf.metadata["iteration"] == 200
    assert wf.metadata["args"]["lr"] == 3e-4 and wf.metadata["args"]["tensor_model_parallel_size"] == 2
    assert parallel_rank("x/mp_rank_03_001/model_optim_rng.pt") == {"tp": 3, "pp": 1}


def test_scan_names_the_tensor_its_block_and_its_rank(tmp_path):
    run = write_megatron_run(tmp_path / "run")
    ref = open_checkpoint(run / "iter_0000200")
    assert ref.step == 200 and len(ref.files) == 2
    stats = scan_checkpoint(ref, workers=1)
    bad = stats[stats["n_nan"] > 0]
    assert list(bad["name"]) == [NAN_TENSOR] and list(bad["block"]) == ["decoder.layers.1"]
    assert [parallel_rank(f) for f in bad["file"]] == [{"tp": 1}]


def test_analyze_tells_the_story(tmp_path):
    run = write_megatron_run(tmp_path / "run", iterations=(100, 200, 300), nan_from=300)
    result = analyze(run)
    assert result.status == "broken"
    assert result.first_bad_checkpoint.name == "iter_0000300"
    assert result.last_good_checkpoint.name == "iter_0000200"
    assert result.first_bad_checkpoint.nonfinite_blocks == ["decoder.layers.1"]
    assert not result.skipped
