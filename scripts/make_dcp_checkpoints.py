"""Write torch.distributed.checkpoint (DCP) saves of an FSDP2-sharded tiny model: gloo, 2 CPU ranks.

    python scripts/make_dcp_checkpoints.py OUT

Two layouts of the same run (3 AdamW steps, each parameter sharded on dim 0 over the 2 ranks):
- torchtitan's: `OUT/titan/checkpoint/step-2/`, `step-3/` with states `model`, `optimizer`
  (flattened FQN keys from get_state_dict) and `train_state` (torchtitan/components/checkpoint.py);
- accelerate's SHARDED_STATE_DICT inside HF Trainer folders: `OUT/accel/checkpoint-2/`,
  `checkpoint-3/`, each with `pytorch_model_fsdp_0/` ({"model": sd}) and `optimizer_0/`
  ({"optimizer": osd}) (accelerate/utils/fsdp_utils.py save_fsdp_model / save_fsdp_optimizer).
Before the step-3 save rank 1 sets element NAN_AT of its local shard of `layers.1.weight` to NaN.
`OUT/facts.json` says so; the tests take their expected values from it and from `OUT/*.full.pt`,
the full state dicts gathered by torch itself (get_model_state_dict with full_state_dict).
"""
from __future__ import annotations

import json
import os
import sys

import torch
from tiny_model import Tiny  # scripts/ is on sys.path when a script here runs
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp

NAN_PARAM = "layers.1.weight"
NAN_AT = 3  # of rank 1's local shard (rows 4..7 of the 8x8 weight): element 35 of the full tensor
WORLD = 2


def _save(rank: int, out: str, step: int, model, optimizer) -> None:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_state_dict

    model_sd, optim_sd = get_state_dict(model, optimizer)
    titan = os.path.join(out, "titan", "checkpoint", f"step-{step}")
    dcp.save({"model": model_sd, "optimizer": optim_sd,
              "train_state": {"step": torch.tensor(step, dtype=torch.int32)}}, checkpoint_id=titan)
    accel = os.path.join(out, "accel", f"checkpoint-{step}")
    dcp.save({"model": model_sd}, checkpoint_id=os.path.join(accel, "pytorch_model_fsdp_0"))
    dcp.save({"optimizer": optim_sd}, checkpoint_id=os.path.join(accel, "optimizer_0"))
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    if rank == 0:
        torch.save({k: v.detach().clone() for k, v in full.items()}, os.path.join(out, f"step-{step}.full.pt"))


def worker(rank: int, out: str) -> None:
    from torch.distributed.fsdp import fully_shard

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("DCP_PORT", "29531"))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    model = Tiny()
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for step in (1, 2, 3):
        torch.manual_seed(100 + step)
        loss = model(torch.randn(4, 6)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step == 3 and rank == 1:
            param = dict(model.named_parameters())[NAN_PARAM]
            with torch.no_grad():
                param.to_local().view(-1)[NAN_AT] = float("nan")
        if step >= 2:
            _save(rank, out, step, model, optimizer)
    if rank == 0:
        facts = {"world_size": WORLD, "clean_step": 2, "damaged_step": 3, "nan_param": NAN_PARAM,
                 "nan_rank": 1, "nan_index_full": 4 * 8 + NAN_AT}
        with open(os.path.join(out, "facts.json"), "w") as fh:
            json.dump(facts, fh)
    dist.barrier()  # both ranks done writing before either tears down
    dist.destroy_process_group()
    # Gloo's threads sometimes abort at interpreter teardown ("terminate called without an active
    # exception") although every file is written: leave without running that teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    mp.spawn(worker, args=(sys.argv[1],), nprocs=WORLD, join=True)
