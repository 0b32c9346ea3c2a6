"""A small data-parallel Keras training run with Horovod, to try a cluster built with TensorFlow:

    horovod-cluster run --copy examples/train_keras.py -- python train_keras.py --epochs 5

The Keras twin of train.py: every rank fits the same linear model to its own shard of one synthetic
regression problem. Horovod's DistributedOptimizer averages the gradients, its broadcast callback gives
every rank rank 0's initial weights, and its metric callback averages the epoch's loss over the ranks.
Rank 0 prints that loss each epoch; at the end every rank prints its host and a digest of its weights
(all agree). Needs Horovod built with TensorFlow (horovod_frameworks: [tensorflow]) and Keras 2: TensorFlow < 2.16,
or 2.16 to 2.18 with tf-keras, which the role makes tf.keras (horovod/horovod#4290; docs/using.md).
"""
import argparse
import hashlib
import os
import socket

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up notices on every rank hide the output
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import horovod.tensorflow.keras as hvd  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--samples", type=int, default=4096, help="samples of the whole problem")
    args = parser.parse_args()

    hvd.init()
    tf.config.threading.set_inter_op_parallelism_threads(1)  # ranks share the host's cores
    problem = np.random.default_rng(1234)  # the same problem on every rank
    true_w = problem.standard_normal((16, 1)).astype("float32")
    x = problem.standard_normal((args.samples, 16)).astype("float32")
    y = x @ true_w + 0.01 * problem.standard_normal((args.samples, 1)).astype("float32")
    x, y = x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()]  # each rank trains on its own part

    tf.keras.utils.set_random_seed(hvd.rank())  # different initial weights: the broadcast must fix that
    model = tf.keras.Sequential([tf.keras.Input(shape=(16,)), tf.keras.layers.Dense(1)])
    optimizer = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(learning_rate=args.lr * hvd.size(), momentum=0.9))
    model.compile(optimizer=optimizer, loss="mse")

    class PrintLoss(tf.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if hvd.rank() == 0:  # logs["loss"] is already the mean over the ranks (MetricAverageCallback)
                print(f"epoch {epoch} loss {logs['loss']:.6f}", flush=True)

    model.fit(x, y, batch_size=64, epochs=args.epochs, shuffle=True, verbose=0,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0), hvd.callbacks.MetricAverageCallback(),
                         PrintLoss()])

    weights = np.concatenate([w.flatten() for w in model.get_weights()])
    digest = hashlib.sha256(weights.astype("float32").tobytes()).hexdigest()[:16]
    print(f"rank {hvd.rank()} of {hvd.size()} on {socket.gethostname()} weights {digest}", flush=True)


if __name__ == "__main__":
    main()
