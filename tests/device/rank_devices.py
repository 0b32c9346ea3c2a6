"""One allreduce with each rank's tensor on the device named for it, under horovodrun.

  horovodrun -np 2 -H localhost:2 --gloo python tests/device/rank_devices.py cuda,cpu    # a GPU rank and a CPU rank
  horovodrun -np 2 -H localhost:2 --gloo python tests/device/rank_devices.py cuda,cuda   # two ranks on GPU 0

The first is refused by Horovod's coordinator (horovod/common/controller.cc, "Mismatched ... CPU/GPU device
selection"): the rule that a job's ranks are all GPU ranks or all CPU ranks. The second shows what NCCL says of
two ranks sharing one GPU. `cuda` is GPU 0 when the host has a GPU, else the CPU (so the script runs anywhere).
Each rank prints one line `HVC_ALLREDUCE <json>`: its device and the allreduce's result, or the error it got.
"""
import json
import sys

import horovod.torch as hvd
import torch


def main() -> int:
    wanted = sys.argv[1].split(",")
    hvd.init()
    name = wanted[hvd.rank() % len(wanted)]
    gpu = name == "cuda" and torch.cuda.is_available()
    device = torch.device("cuda", 0) if gpu else torch.device("cpu")
    record = {"rank": hvd.rank(), "size": hvd.size(), "device": str(device), "nccl_built": bool(hvd.nccl_built())}
    try:
        result = hvd.allreduce(torch.ones(4, device=device), op=hvd.Sum, name="hvc.rank_devices")
        record["result"] = result.cpu().tolist()
    except Exception as error:  # a refusal is the result this script exists to show
        record["error_type"] = type(error).__name__
        record["error"] = str(error)
    print("HVC_ALLREDUCE " + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
