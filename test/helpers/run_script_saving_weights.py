"""Run a training script as a user runs it, then save every trained model's weights.

    python run_script_saving_weights.py WEIGHTS.npz SCRIPT.py [script flags...]

The script runs unchanged (`runpy`, as `__main__`); the only addition is that, when
`BaseTrainer.fit` returns, the weights of every model it trained, as they were when `fit`
started and when it ended, are written to WEIGHTS.npz (keys ``initial|final/<model>/<index>``).
A non-chief worker keeps no checkpoint, so this is how a test reads what it ended with.
"""

import runpy
import sys

import numpy as np

from tensorflow_tts.trainers.base_trainer import BaseTrainer


def main():
    weights_out, script, *script_args = sys.argv[1:]
    plain_fit = BaseTrainer.fit

    def weights(trainer, stage):
        # This replica's copy of each variable: reading a sync-on-read variable (batch norm's
        # moving statistics) as a whole would start a collective that the other worker,
        # already gone, cannot join.
        local = trainer.strategy.experimental_local_results
        return {
            f"{stage}/{name}/{index}": local(variable)[0].numpy()
            for name, model in trainer.models.items()
            for index, variable in enumerate(model.weights)
        }

    def fit_then_save_weights(trainer, *args, **kwargs):
        initial = weights(trainer, "initial")
        plain_fit(trainer, *args, **kwargs)
        np.savez(weights_out, **initial, **weights(trainer, "final"))

    BaseTrainer.fit = fit_then_save_weights
    sys.argv = [script, *script_args]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
