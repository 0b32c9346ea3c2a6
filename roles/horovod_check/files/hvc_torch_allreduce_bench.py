"""torch.distributed's allreduce, measured as roles/horovod_check/files/hvc_allreduce_bench.py measures Horovod's.

The same sizes, warm-up, iteration counts and bus-bandwidth formula, so the two tables can be set side by side
in one run (the same hosts, the same launcher's ranks). Run under torchrun (it sets RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR/PORT); rank 0 prints one line `HVC_RESULT <json>` like the Horovod script.
  torchrun --standalone --nproc_per_node 1 hvc_torch_allreduce_bench.py --backend nccl 4096 16777216
Or under horovodrun's Gloo launcher (the check's bandwidth table, benchmarks/allreduce_vs_torch.py), which sets
Horovod's variables instead.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist

DEFAULT_SIZES = [2**k for k in range(12, 25, 2)]  # 4 KiB .. 16 MiB, as hvc_allreduce_bench.py


def measure(size_bytes: int, device: torch.device, warmup: int, iters: int) -> float:
    tensor = torch.ones(size_bytes // 4, dtype=torch.float32, device=device)
    for _ in range(warmup):
        dist.all_reduce(tensor)
    dist.barrier()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(tensor)
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) / iters
    slowest = torch.tensor([elapsed], dtype=torch.float64, device=device)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # the slowest rank's time is the collective's
    return float(slowest.item())


def from_horovodrun(env: dict) -> None:
    """Under horovodrun's Gloo launcher (as benchmarks/allreduce_vs_torch.py starts it, on the same hosts and slots
    as Horovod's bench): torch.distributed's variables from Horovod's, the rendezvous host as the master."""
    if "RANK" not in env and "HOROVOD_RANK" in env:
        env.update(RANK=env["HOROVOD_RANK"], WORLD_SIZE=env["HOROVOD_SIZE"], LOCAL_RANK=env["HOROVOD_LOCAL_RANK"],
                   MASTER_ADDR=env["HOROVOD_GLOO_RENDEZVOUS_ADDR"], MASTER_PORT=env.get("MASTER_PORT", "29511"))


def main() -> int:
    from_horovodrun(os.environ)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["nccl", "gloo"], default="nccl" if torch.cuda.is_available() else "gloo")
    parser.add_argument("sizes", nargs="*", type=int, help="message sizes in bytes (float32 elements = size / 4)")
    args = parser.parse_args()
    sizes = args.sizes or DEFAULT_SIZES
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank) if args.backend == "nccl" else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(args.backend)
    n = dist.get_world_size()
    rows = []
    for size in sizes:
        seconds = measure(size, device, warmup=2, iters=20 if size <= 1 << 20 else 5)
        algbw = size / seconds
        rows.append({"bytes": size, "seconds": seconds, "algbw_GBps": algbw / 1e9,
                     "busbw_GBps": algbw * 2 * (n - 1) / n / 1e9})
    if dist.get_rank() == 0:
        print("HVC_RESULT " + json.dumps({"size": n, "algorithm": "torch.distributed/" + args.backend,
                                          "rows": rows}), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
