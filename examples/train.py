"""A small data-parallel PyTorch training run with Horovod, to try a rolled-out cluster:

    horovod-cluster run --copy examples/train.py -- python train.py --epochs 5

Every rank fits the same linear model to its own shard of one synthetic regression problem; Horovod
averages the gradients, so all ranks keep identical weights. Rank 0 prints the mean loss of each
epoch over all ranks; at the end every rank prints its host and a digest of its weights (all agree).
"""
import argparse
import hashlib
import socket

import torch
import horovod.torch as hvd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--samples", type=int, default=4096, help="samples of the whole problem")
    args = parser.parse_args()

    hvd.init()
    torch.manual_seed(1234)  # the same problem on every rank
    true_w = torch.randn(16, 1)
    x = torch.randn(args.samples, 16)
    y = x @ true_w + 0.01 * torch.randn(args.samples, 1)
    shard = slice(hvd.rank(), None, hvd.size())  # each rank trains on its own part
    data = torch.utils.data.TensorDataset(x[shard], y[shard])
    loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True,
                                         generator=torch.Generator().manual_seed(hvd.rank()))

    torch.manual_seed(hvd.rank())  # different initial weights: the broadcast below must fix that
    model = torch.nn.Linear(16, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    hvd.broadcast_optimizer_state(optimizer, root_rank=0)

    for epoch in range(args.epochs):
        total = torch.zeros(1)
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.detach() * len(xb)
        mean = hvd.allreduce(total / len(data), name="epoch_loss").item()
        if hvd.rank() == 0:
            print(f"epoch {epoch} loss {mean:.6f}", flush=True)

    weights = torch.cat([p.detach().flatten() for p in model.parameters()])
    digest = hashlib.sha256(weights.numpy().tobytes()).hexdigest()[:16]
    print(f"rank {hvd.rank()} of {hvd.size()} on {socket.gethostname()} weights {digest}", flush=True)


if __name__ == "__main__":
    main()
