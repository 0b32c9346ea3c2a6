"""One rank of P7 (issue 50): training throughput of Horovod's DistributedOptimizer or of torch's
DistributedDataParallel (gloo), the same model, data, batch and steps, so the two can be set side by side.

Started by horovodrun (benchmarks/training_vs_ddp.py runs it with `--framework horovod` and `--framework ddp` on
the same hosts and slots); for ddp, torch.distributed's variables come from Horovod's as in
hvc_torch_allreduce_bench.py. The model is an MLP (784 -> width x depth -> 10, 4.0 M parameters by default: 16 MB of
gradients a step) on a fixed synthetic batch; after the warm-up steps, the timed steps' samples per second per
rank, taken over the slowest rank, and rank 0's mean milliseconds in forward, backward and the optimizer's step.
Rank 0 prints one line `HVC_RESULT <json>`.
"""
import argparse
import json
import os
import sys
import time

import torch

from hvc_torch_allreduce_bench import from_horovodrun


def make_model(width: int, depth: int) -> torch.nn.Module:
    layers, inputs = [], 784
    for _ in range(depth):
        layers += [torch.nn.Linear(inputs, width), torch.nn.ReLU()]
        inputs = width
    return torch.nn.Sequential(*layers, torch.nn.Linear(inputs, 10))


def distributed(framework: str, model: torch.nn.Module, lr: float, bucket_cap_mb: float, groups: int | None):
    """(model, optimizer, rank, size, slowest(seconds) -> the largest over the ranks) for the framework."""
    if framework == "horovod":
        import horovod.torch as hvd
        hvd.init()
        optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=lr),
                                             named_parameters=model.named_parameters(), groups=groups)
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        return model, optimizer, hvd.rank(), hvd.size(), lambda s: float(hvd.allgather(torch.tensor([s])).max())
    import torch.distributed as dist
    from_horovodrun(os.environ)
    dist.init_process_group("gloo")
    # broadcasts rank 0's parameters
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb)

    def slowest(seconds: float) -> float:
        value = torch.tensor([seconds], dtype=torch.float64)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return float(value.item())
    return ddp, torch.optim.SGD(ddp.parameters(), lr=lr), dist.get_rank(), dist.get_world_size(), slowest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["horovod", "ddp"], required=True)
    parser.add_argument("--batch", type=int, default=64, help="samples per rank and step")
    parser.add_argument("--steps", type=int, default=100, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP's gradient bucket size (its default)")
    parser.add_argument("--groups", type=int, help="Horovod's DistributedOptimizer groups (default: none, its own)")
    args = parser.parse_args()
    torch.manual_seed(0)
    model, optimizer, rank, size, slowest = distributed(args.framework, make_model(args.width, args.depth), 0.01,
                                                    args.bucket_cap_mb, args.groups)
    x, y = torch.randn(args.batch, 784), torch.randint(0, 10, (args.batch,))

    phases = [0.0, 0.0, 0.0]  # this rank's seconds in forward, backward and the optimizer's step

    def step() -> None:
        marks = [time.perf_counter()]
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        marks.append(time.perf_counter())
        loss.backward()
        marks.append(time.perf_counter())
        optimizer.step()
        marks.append(time.perf_counter())
        for n in range(3):
            phases[n] += marks[n + 1] - marks[n]

    for _ in range(args.warmup):
        step()
    phases[:] = [0.0, 0.0, 0.0]
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    seconds = slowest(time.perf_counter() - start)
    if rank == 0:
        params = sum(p.numel() for p in model.parameters())
        print("HVC_RESULT " + json.dumps({
            "framework": args.framework, "size": size, "params": params, "batch": args.batch, "steps": args.steps,
            "threads": torch.get_num_threads(),
            "step_s": seconds / args.steps, "samples_per_s_per_rank": args.batch * args.steps / seconds,
            # where rank 0's step goes: Horovod reduces in the background and waits in step; DDP within backward
            "forward_ms": 1000 * phases[0] / args.steps, "backward_ms": 1000 * phases[1] / args.steps,
            "optimizer_step_ms": 1000 * phases[2] / args.steps}), flush=True)
    if args.framework == "ddp":
        # Every rank is done with the group, then leaves without tearing it down: its teardown aborted now and then
        # after the figures were taken (a rank exited 255, and once 134, "terminate called without an active
        # exception"), losing a whole run.
        torch.distributed.barrier()
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
