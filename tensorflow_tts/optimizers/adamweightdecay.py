"""AdamWeightDecay (Adam with decoupled weight decay) and the WarmUp learning-rate schedule."""

import re

import tensorflow as tf


class WarmUp(tf.keras.optimizers.schedules.LearningRateSchedule):
    """Warm up linearly (or with `power`) to `initial_learning_rate`, then follow `decay_schedule_fn`.

    For ``step < warmup_steps`` the rate is ``initial_learning_rate * (step / warmup_steps) ** power``;
    afterwards it is ``decay_schedule_fn(step - warmup_steps)``, so the decay starts where the
    warm-up ends.
    """

    def __init__(self, initial_learning_rate, decay_schedule_fn, warmup_steps, power=1.0, name=None):
        super().__init__()
        self.initial_learning_rate = initial_learning_rate
        self.decay_schedule_fn = decay_schedule_fn
        self.warmup_steps = warmup_steps
        self.power = power
        self.name = name

    def __call__(self, step):
        with tf.name_scope(self.name or "WarmUp"):
            step = tf.cast(step, tf.float32)
            warmup_steps = tf.cast(self.warmup_steps, tf.float32)
            warmup_rate = self.initial_learning_rate * tf.math.pow(
                step / tf.maximum(warmup_steps, 1.0), self.power
            )
            return tf.cond(
                step < warmup_steps,
                lambda: tf.cast(warmup_rate, tf.float32),
                lambda: tf.cast(self.decay_schedule_fn(step - warmup_steps), tf.float32),
            )

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_schedule_fn": tf.keras.optimizers.schedules.serialize(self.decay_schedule_fn),
            "warmup_steps": self.warmup_steps,
            "power": self.power,
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["decay_schedule_fn"] = tf.keras.optimizers.schedules.deserialize(config["decay_schedule_fn"])
        return cls(**config)


class AdamWeightDecay(tf.keras.optimizers.Adam):
    """Adam with weight decay decoupled from the gradient (Loshchilov & Hutter, AdamW).

    Each update also does ``var -= learning_rate * weight_decay_rate * var`` for the variables
    whose name matches a regex in `include_in_weight_decay` (when given) and no regex in
    `exclude_from_weight_decay` (typically ``["LayerNorm", "layer_norm", "bias"]``).
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        weight_decay_rate=0.0,
        include_in_weight_decay=None,
        exclude_from_weight_decay=None,
        name="AdamWeightDecay",
        **kwargs,
    ):
        kwargs.pop("weight_decay", None)
        super().__init__(
            learning_rate=learning_rate,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            amsgrad=amsgrad,
            weight_decay=weight_decay_rate if weight_decay_rate else None,
            name=name,
            **kwargs,
        )
        self.weight_decay_rate = weight_decay_rate
        self.include_in_weight_decay = list(include_in_weight_decay or [])
        self.exclude_from_weight_decay_patterns = list(exclude_from_weight_decay or [])

    def _use_weight_decay(self, variable):
        name = variable.name
        if self.include_in_weight_decay:
            return any(re.search(pattern, name) for pattern in self.include_in_weight_decay)
        return not any(re.search(pattern, name) for pattern in self.exclude_from_weight_decay_patterns)

    def get_config(self):
        config = super().get_config()
        config.pop("weight_decay", None)
        config.update(
            {
                "weight_decay_rate": self.weight_decay_rate,
                "include_in_weight_decay": self.include_in_weight_decay,
                "exclude_from_weight_decay": self.exclude_from_weight_decay_patterns,
            }
        )
        return config
