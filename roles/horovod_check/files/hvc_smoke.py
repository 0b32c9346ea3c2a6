"""Horovod smoke test, run under horovodrun on every slot of the cluster.

Each rank checks allreduce, allgather and broadcast results it can predict exactly; rank 0 prints
one line `HVC_RESULT <json>` with every rank's outcome (host, rank, ok; rank 0's own checks and
error in full). It goes through horovodrun's output to the launcher, which is not always rank 0's
host (in a play on part of the cluster). A rank whose collective failed reports ok=false; a rank
that died makes horovodrun fail, which the caller reports with its output.
"""
import json
import socket
import sys
import time
import traceback

import horovod.torch as hvd
import torch

HOST_BYTES = 64


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


def gather_records(record: dict) -> list:
    """Every rank's record on every rank, with tensors only (allgather_object needs numpy)."""
    name = record["host"].encode()[:HOST_BYTES].ljust(HOST_BYTES, b"\0")
    row = torch.tensor([record["rank"], int(record["ok"])] + list(name), dtype=torch.int64)
    records = []
    for values in hvd.allgather(row.unsqueeze(0), name="hvc.smoke.records").tolist():
        rank, ok, host = values[0], bool(values[1]), bytes(values[2:]).rstrip(b"\0").decode()
        mine = rank == hvd.rank()
        records.append({**(record if mine else {}), "rank": rank, "host": host, "ok": ok})
    return records


def main() -> int:
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
    records = gather_records(record)
    if hvd.rank() == 0:
        print("HVC_RESULT " + json.dumps({"size": hvd.size(), "ranks": records,
                                          "controller": "mpi" if hvd.mpi_enabled() else "gloo",
                                          "seconds": round(time.monotonic() - start, 3),
                                          "ok": all(r["ok"] for r in records)}), flush=True)
    return 0 if all(r["ok"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
