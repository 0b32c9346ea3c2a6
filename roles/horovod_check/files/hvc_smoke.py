"""Horovod smoke test, run under horovodrun on every slot of the cluster.

Each rank checks allreduce, allgather and broadcast results it can predict exactly; rank 0 writes
one JSON document with every rank's outcome (host, rank, checks, error) to the path in argv[1].
"""
import json
import socket
import sys
import time
import traceback

import horovod.torch as hvd
import torch


def run_checks(device: torch.device) -> dict:
    rank, size = hvd.rank(), hvd.size()
    checks = {}
    # Sum of rank+1 over all ranks is size*(size+1)/2 on every rank.
    reduced = hvd.allreduce(torch.full((1024,), float(rank + 1), device=device), op=hvd.Sum,
                            name="hvc.smoke.allreduce")
    checks["allreduce"] = bool(torch.all(reduced == size * (size + 1) / 2).item())
    gathered = hvd.allgather(torch.tensor([[rank]], device=device), name="hvc.smoke.allgather")
    checks["allgather"] = gathered.flatten().tolist() == list(range(size))
    value = torch.tensor([float(rank * 10 + 7)], device=device)
    checks["broadcast"] = hvd.broadcast(value, root_rank=0, name="hvc.smoke.broadcast").item() == 7.0
    return checks


def main() -> int:
    out_path = sys.argv[1]
    start = time.monotonic()
    hvd.init()
    use_gpu = torch.cuda.is_available() and hvd.nccl_built()
    device = torch.device("cuda", hvd.local_rank()) if use_gpu else torch.device("cpu")
    record = {"rank": hvd.rank(), "host": socket.gethostname(), "device": str(device)}
    try:
        record["checks"] = run_checks(device)
        record["ok"] = all(record["checks"].values())
    except Exception:  # a failed collective is a result to report, not a crash to hide
        record["ok"] = False
        record["error"] = traceback.format_exc(limit=3)
    records = hvd.allgather_object(record)
    if hvd.rank() == 0:
        with open(out_path, "w", encoding="utf-8") as handle:
            json.dump({"size": hvd.size(), "ranks": records,
                       "controller": "mpi" if hvd.mpi_enabled() else "gloo",
                       "seconds": round(time.monotonic() - start, 3),
                       "ok": all(r["ok"] for r in records)}, handle)
    return 0 if all(r["ok"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
