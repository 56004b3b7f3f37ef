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


def write_torch_dist_run(root: Path, iterations=(100, 200), nan_from: int = 200) -> Path:
    """Megatron `--ckpt-format torch_dist` folders: real DCP files (torch.distributed.checkpoint.save,
    one process) under Megatron's key names (dist_checkpointing/optimizer.py
    `make_sharded_optimizer_tensor`: `optimizer.state.{exp_avg,exp_avg_sq,fp32_param}.<model key>`),
    plus `common.pt` (strategies/common.py COMMON_STATE_FNAME) and `metadata.json` (core.py CONFIG_FNAME)."""
    import json

    import torch.distributed.checkpoint as dcp

    args = argparse.Namespace(lr=3e-4, clip_grad=1.0, bf16=True, ckpt_format="torch_dist")
    for it in iterations:
        model = {k: v.float() for k, v in _model(0, it).items() if v is not None}
        state = dict(model)
        for key, value in model.items():
            state[f"optimizer.state.exp_avg.{key}"] = value * 0.1
            state[f"optimizer.state.exp_avg_sq.{key}"] = value * value
            state[f"optimizer.state.fp32_param.{key}"] = value.clone()
        if it >= nan_from:
            state[NAN_TENSOR][0, 1] = float("inf")
            state[f"optimizer.state.exp_avg.{NAN_TENSOR}"][2, 2] = float("nan")
        folder = root / f"iter_{it:07d}"
        dcp.save(state, checkpoint_id=folder, no_dist=True)
        torch.save({"args": args, "iteration": it, "checkpoint_version": 3.0}, folder / "common.pt")
        (folder / "metadata.json").write_text(json.dumps({"sharded_backend": "torch_dist",
                                                          "sharded_backend_version": 1}))
    (root / "latest_checkpointed_iteration.txt").write_text(str(iterations[-1]))
    return root


@pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
def test_torch_dist_names_moments_per_parameter(tmp_path):
    run = write_torch_dist_run(tmp_path / "run")
    ref = open_checkpoint(run / "iter_0000200")
    assert ref.kind == "dcp" and ref.step == 200
    stats = scan_checkpoint(ref, workers=1)
    bad = stats[stats["n_nan"] + stats["n_inf"] > 0].set_index("name")
    assert sorted(bad.index) == sorted([NAN_TENSOR, NAN_TENSOR + ".exp_avg"])
    assert int(bad.loc[NAN_TENSOR, "n_inf"]) == 1 and int(bad.loc[NAN_TENSOR + ".exp_avg", "n_nan"]) == 1
    assert set(bad["block"]) == {"decoder.layers.1"}
    assert {NAN_TENSOR + ".fp32", NAN_TENSOR + ".exp_avg_sq"} <= set(stats["name"])


@pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
def test_analyze_a_torch_dist_run(tmp_path):
    run = write_torch_dist_run(tmp_path / "run", iterations=(100, 200, 300), nan_from=300)
    result = analyze(run)
    assert result.status == "broken"
    assert (result.last_good_checkpoint.name, result.first_bad_checkpoint.name) == ("iter_0000200", "iter_0000300")
    assert result.first_bad_checkpoint.nonfinite_blocks == ["decoder.layers.1"]


@pytest.mark.parametrize("writer", ["legacy", "torch_dist"])
@pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
def test_args_namespace_is_the_run_config(tmp_path, writer):
    run = (write_megatron_run if writer == "legacy" else write_torch_dist_run)(tmp_path / "run")
    config = analyze(run).config
    assert config.get("learning_rate") == 3e-4 and config.get("max_grad_norm") == 1.0
    assert config.get("bf16") is True
    if writer == "legacy":  # the Namespace's lr_warmup_iters, with no warm-up fraction beside it
        assert config.get("warmup_steps") == 50
