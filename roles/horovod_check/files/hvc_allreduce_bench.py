"""Allreduce bandwidth across the cluster, in the manner of nccl-tests' all_reduce_perf.

For each message size: average time of `iters` allreduces after `warmup`, algorithm bandwidth
(bytes / time) and bus bandwidth (algbw * 2(n-1)/n, the ring's traffic per link). Rank 0 prints
the table as one line `HVC_RESULT <json>` (to the launcher, through horovodrun's output).
argv[1:] are sizes in bytes (float32 elements = size / 4).
"""
import json
import sys
import time

import horovod.torch as hvd
import torch

DEFAULT_SIZES = [2**k for k in range(12, 25, 2)]  # 4 KiB .. 16 MiB


def measure(size_bytes: int, device: torch.device, warmup: int, iters: int) -> float:
    tensor = torch.ones(size_bytes // 4, dtype=torch.float32, device=device)
    # In place and one name per size, as a training step's gradients: a new name per call would miss Horovod's
    # response cache (its negotiation every call), and a new output tensor per call costs an allocation.
    name = f"hvc.bench.{size_bytes}"
    for _ in range(warmup):
        hvd.allreduce_(tensor, op=hvd.Sum, name=name)
    hvd.barrier()
    start = time.perf_counter()
    for _ in range(iters):
        hvd.allreduce_(tensor, op=hvd.Sum, name=name)
    if device.type == "cuda":
        torch.cuda.synchronize()
    elapsed = (time.perf_counter() - start) / iters
    # The slowest rank's time is the collective's time.
    slowest = hvd.allreduce(torch.tensor([elapsed], dtype=torch.float64), op=hvd.Max, name=f"hvc.bench.t.{size_bytes}")
    return float(slowest.item())


def main() -> int:
    sizes = [int(s) for s in sys.argv[1:]] or DEFAULT_SIZES
    hvd.init()
    use_gpu = torch.cuda.is_available() and hvd.nccl_built()
    device = torch.device("cuda", hvd.local_rank()) if use_gpu else torch.device("cpu")
    n = hvd.size()
    rows = []
    for size in sizes:
        iters = 20 if size <= 1 << 20 else 5
        seconds = measure(size, device, warmup=2, iters=iters)
        algbw = size / seconds
        rows.append({"bytes": size, "seconds": seconds, "algbw_GBps": algbw / 1e9,
                     "busbw_GBps": algbw * 2 * (n - 1) / n / 1e9})
    if hvd.rank() == 0:
        algorithm = "nccl" if use_gpu else ("mpi" if hvd.mpi_enabled() else "gloo")
        print("HVC_RESULT " + json.dumps({"size": n, "algorithm": algorithm, "rows": rows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
