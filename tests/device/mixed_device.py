"""One allreduce whose ranks mix device types: rank 0 a GPU tensor, every other rank a CPU tensor.

Run under horovodrun (two processes are enough, on one machine with one GPU). Horovod's coordinator
refuses such a collective (horovod/common/controller.cc, "Mismatched ... CPU/GPU device selection"):
each rank prints one line `HVC_MIXED <json>` with its device and the error it got (or its result).
This pins the rule that a job's ranks must all be GPU ranks or all CPU ranks to a real run.
"""
import json
import sys

import horovod.torch as hvd
import torch


def main() -> int:
    hvd.init()
    gpu = hvd.rank() == 0 and torch.cuda.is_available()
    device = torch.device("cuda", 0) if gpu else torch.device("cpu")
    record = {"rank": hvd.rank(), "size": hvd.size(), "device": str(device), "nccl_built": bool(hvd.nccl_built())}
    try:
        result = hvd.allreduce(torch.ones(4, device=device), op=hvd.Sum, name="hvc.mixed")
        record["result"] = result.cpu().tolist()
    except Exception as error:  # the refusal is the result this script exists to show
        record["error_type"] = type(error).__name__
        record["error"] = str(error)
    print("HVC_MIXED " + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
