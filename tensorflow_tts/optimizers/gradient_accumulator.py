"""GradientAccumulator: per-replica sums of gradients over several micro-batches."""

import tensorflow as tf


class GradientAccumulator(tf.Module):
    """Sums gradients (and any scalars) over micro-batches, separately on every replica.

    The sums live in ON_READ variables: each replica adds to its own copy, so nothing crosses
    devices until the trainer all-reduces the final sum once per update. Create it inside
    `strategy.scope()`; `add`, `values` and `reset` run in a replica context (inside
    `strategy.run`), or anywhere with the default strategy.
    """

    def __init__(self, variables, scalar_names=(), name="gradient_accumulator"):
        super().__init__(name=name)
        self._gradients = [
            tf.Variable(
                tf.zeros(variable.shape, dtype=variable.dtype),
                trainable=False,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.SUM,
                name=f"accumulated_gradient_{index}",
            )
            for index, variable in enumerate(variables)
        ]
        self._scalars = {
            scalar_name: tf.Variable(
                0.0,
                trainable=False,
                synchronization=tf.VariableSynchronization.ON_READ,
                aggregation=tf.VariableAggregation.SUM,
                name=f"accumulated_{scalar_name}",
            )
            for scalar_name in scalar_names
        }

    def add(self, gradients, **scalars):
        """Add one micro-batch's gradients (a list aligned with the variables) and scalars."""
        for accumulator, gradient in zip(self._gradients, gradients):
            accumulator.assign_add(tf.convert_to_tensor(gradient), read_value=False)
        for scalar_name, value in scalars.items():
            self._scalars[scalar_name].assign_add(tf.cast(value, tf.float32), read_value=False)

    def values(self):
        """This replica's sums: (list of gradients, dict of scalars)."""
        gradients = [tf.identity(accumulator) for accumulator in self._gradients]
        scalars = {scalar_name: tf.identity(variable) for scalar_name, variable in self._scalars.items()}
        return gradients, scalars

    def reset(self):
        for accumulator in self._gradients:
            accumulator.assign(tf.zeros_like(accumulator), read_value=False)
        for variable in self._scalars.values():
            variable.assign(0.0, read_value=False)
