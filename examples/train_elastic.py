"""Elastic data-parallel PyTorch training with Horovod: the job goes on when a host leaves and grows back
when it returns.

    horovod-cluster run --elastic --copy examples/train_elastic.py -- python train_elastic.py --epochs 20

The model, optimizer and data position live in an hvd.elastic.TorchState committed every --commit-every
batches. When a host goes away, the ranks left roll back to the last commit and go on among themselves;
when it answers again, new ranks start there and receive the state from rank 0. The ElasticSampler
hands each epoch's samples not yet trained on to the ranks of the moment. Rank 0 prints a line per
commit (`elastic {...}`: time, size, epoch, batch) and the mean loss of each epoch; at the end every rank
prints its host and a digest of its weights (all agree).
"""
import argparse
import hashlib
import json
import socket
import time

import torch
import horovod.torch as hvd
from horovod.common.exceptions import HostsUpdatedInterrupt


class TrainState(hvd.elastic.TorchState):
    """TorchState that syncs after every change of hosts. Horovod skips the sync when hosts were only removed,
    but a rank that joins in the same reset syncs, and the job hangs (horovod#3494, open)."""

    def check_host_updates(self) -> None:
        try:
            super().check_host_updates()
        except HostsUpdatedInterrupt:
            raise HostsUpdatedInterrupt(skip_sync=False) from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.01, help="per rank; scaled by the number of ranks")
    parser.add_argument("--samples", type=int, default=4096, help="samples of the whole problem")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--commit-every", type=int, default=5, help="batches between two commits of the state")
    parser.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                        help="make each batch last at least this long: a stand-in for a bigger model's compute, "
                             "to watch hosts leave and join on a small lab")
    args = parser.parse_args()

    hvd.init()
    torch.manual_seed(1234)  # the same problem on every rank, also on ranks that join later
    true_w = torch.randn(16, 1)
    x = torch.randn(args.samples, 16)
    y = x @ true_w + 0.01 * torch.randn(args.samples, 1)
    data = torch.utils.data.TensorDataset(x, y)
    sampler = hvd.elastic.ElasticSampler(data, shuffle=True, seed=1234)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, sampler=sampler)

    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())

    def on_reset() -> None:
        """After the ranks changed: the learning rate follows the number of ranks."""
        for group in optimizer.param_groups:
            group["lr"] = args.lr * hvd.size()

    def report(state, **extra) -> None:
        if hvd.rank() == 0:
            line = {"time": round(time.time(), 3), "size": hvd.size(), "epoch": state.epoch, "batch": state.batch}
            print("elastic " + json.dumps({**line, **extra}), flush=True)

    @hvd.elastic.run
    def train(state) -> None:
        report(state, event="start")  # the first start and every start after the ranks changed
        while state.epoch < args.epochs:
            total, seen = torch.zeros(1), torch.zeros(1)
            for xb, yb in loader:  # the samples of this epoch not yet trained on, this rank's share
                began = time.monotonic()
                optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(model(xb), yb)
                loss.backward()
                optimizer.step()
                total += loss.detach() * len(xb)
                seen += len(xb)
                state.train_sampler.record_batch(state.batch, args.batch_size)
                state.batch += 1  # batches of this epoch done
                time.sleep(max(0.0, args.pace - (time.monotonic() - began)))
                if state.batch % args.commit_every == 0:
                    state.commit()  # also where the ranks learn that hosts came or went
                    report(state, event="commit")
            mean = (hvd.allreduce(total, op=hvd.Sum, name="loss") / hvd.allreduce(seen, op=hvd.Sum, name="seen"))
            if hvd.rank() == 0:
                print(f"epoch {state.epoch} loss {mean.item():.6f}", flush=True)
            state.epoch, state.batch = state.epoch + 1, 0
            state.train_sampler.set_epoch(state.epoch)
            state.commit()
            report(state, event="commit")

    state = TrainState(model, optimizer, train_sampler=sampler, epoch=0, batch=0)
    state.register_reset_callbacks([on_reset])
    train(state)

    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
    digest = hashlib.sha256(weights.numpy().tobytes()).hexdigest()[:16]
    print(f"rank {hvd.rank()} of {hvd.size()} on {socket.gethostname()} weights {digest}", flush=True)


if __name__ == "__main__":
    main()
