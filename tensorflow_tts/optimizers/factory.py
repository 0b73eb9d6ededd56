"""Build an optimizer from the `optimizer_params` section of an example YAML (or its `optimizer: {type, args}`)."""

import dataclasses
import numbers
import typing

import tensorflow as tf

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
from tensorflow_tts.optimizers.adamweightdecay import AdamWeightDecay, WarmUp


@dataclasses.dataclass
class OptimizerConfig(BaseConfig):
    """`optimizer_params` (or `generator_optimizer_params`, `discriminator_optimizer_params`).

    Two ways to give the learning rate:
    * the default WarmUp + PolynomialDecay: `initial_learning_rate` -> `end_learning_rate` over
      `decay_steps`, after `warmup_proportion * train_max_steps` warm-up steps;
    * `lr_fn` naming a `tf.keras.optimizers.schedules` class with its `lr_params`
      (e.g. PiecewiseConstantDecay with boundaries and values), as the vocoder configs do.
    `weight_decay > 0` gives AdamWeightDecay (decoupled, not applied to variables matching
    `exclude_from_weight_decay`); 0 gives plain Adam.

    Read from YAML, `lr` (or `learning_rate`) is a third way: a constant learning rate, as
    1.8's MelGAN files and the multi-GPU guide write it; `weight_decay_rate` (the argument
    name of 1.8's AdamWeightDecay) is read as `weight_decay`.
    """

    key_aliases = {"weight_decay_rate": "weight_decay"}

    initial_learning_rate: float = 1e-3  # peak learning rate, reached at the end of warm-up
    end_learning_rate: float = 1e-5  # learning rate after decay_steps of decay
    decay_steps: int = 100000  # length of the polynomial decay
    warmup_proportion: float = 0.0  # warm-up length as a fraction of train_max_steps
    power: float = 1.0  # polynomial power of both warm-up and decay (1 = linear)
    weight_decay: float = 0.0  # decoupled weight decay rate; 0 = plain Adam
    exclude_from_weight_decay: typing.List[str] = dataclasses.field(
        default_factory=lambda: ["LayerNorm", "layer_norm", "bias"]
    )  # regexes of variable names never decayed
    beta_1: float = 0.9
    beta_2: float = 0.98
    epsilon: float = 1e-6
    amsgrad: bool = False
    lr_fn: typing.Optional[str] = None  # a tf.keras.optimizers.schedules class name, replaces the default
    lr_params: typing.Optional[dict] = None  # keyword arguments of lr_fn

    def __post_init__(self):
        if self.warmup_proportion < 0 or self.warmup_proportion > 1:
            raise ValueError(f"warmup_proportion={self.warmup_proportion}: expected a value in [0, 1]")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay={self.weight_decay}: expected >= 0")

    @classmethod
    def from_dict(cls, values, source="optimizer_params"):
        if not isinstance(values, dict) or not {"lr", "learning_rate"} & set(values):
            return super().from_dict(values, source=source)
        values = dict(values)
        names = [name for name in ("lr", "learning_rate") if name in values]
        rates = [values.pop(name) for name in names]
        if len(set(rates)) > 1:
            raise ConfigError(f"{source}: lr ({rates[0]!r}) and learning_rate ({rates[1]!r}) disagree; keep one")
        rate = rates[0]
        if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or rate <= 0:
            raise ConfigError(f"{source}: {names[0]}: expected a learning rate > 0, got {rate!r}")
        schedule_keys = sorted({"initial_learning_rate", "end_learning_rate", "lr_fn", "lr_params"} & set(values))
        if schedule_keys:
            raise ConfigError(
                f"{source}: {names[0]} (a constant learning rate) and the schedule keys {', '.join(schedule_keys)} "
                "both given; keep one"
            )
        values.update(initial_learning_rate=float(rate), end_learning_rate=float(rate))
        return super().from_dict(values, source=source)


# `optimizer: {type: ..., args: {...}}` types -> whether they take a weight decay.
OPTIMIZER_TYPES = {"AdamWeightDecay": True, "Adam": False}


def params_from_type_and_args(spec, source="optimizer"):
    """`optimizer: {type, args}` (the multi-GPU guide's spelling) -> `optimizer_params` keys.

    `args` are OptimizerConfig keys (1.8's `lr`, `weight_decay`, `beta_1`, `beta_2`,
    `epsilon`, ...). An unknown type or argument is a ConfigError that names it.
    """
    if not isinstance(spec, dict) or set(spec) - {"type", "args"}:
        raise ConfigError(f"{source}: expected a mapping with type (e.g. AdamWeightDecay) and args")
    type_name = spec.get("type", "AdamWeightDecay")
    if type_name not in OPTIMIZER_TYPES:
        raise ConfigError(f"{source}: type {type_name!r} is unknown; use one of {', '.join(OPTIMIZER_TYPES)}")
    args = spec.get("args") or {}
    config = OptimizerConfig.from_dict(args, source=f"{source}: args")
    if config.weight_decay > 0 and not OPTIMIZER_TYPES[type_name]:
        raise ConfigError(f"{source}: {type_name} has no weight decay; use type: AdamWeightDecay or drop weight_decay")
    return dict(args)


def pop_optimizer_params(values, params_keys=("optimizer_params",), source="config"):
    """Remove the optimizer sections from a training YAML mapping; returns {params key: params}.

    `optimizer: {type, args}` stands for every one of `params_keys` (the generator's and the
    discriminator's for a GAN); given together with any of them it is a ConfigError.
    """
    spec = values.pop("optimizer", None)
    params = {key: values.pop(key, None) or {} for key in params_keys}
    if spec is None:
        return params
    given = [key for key in params_keys if params[key]]
    if given:
        raise ConfigError(f"{source}: optimizer and {', '.join(given)} both set the optimizer; keep one")
    spec_params = params_from_type_and_args(spec, source=f"{source}: optimizer")
    return {key: dict(spec_params) for key in params_keys}


def build_learning_rate(config, train_max_steps=None):
    """The learning-rate schedule described by an OptimizerConfig."""
    if config.lr_fn:
        schedule_cls = getattr(tf.keras.optimizers.schedules, config.lr_fn, None)
        if schedule_cls is None or config.lr_fn.startswith("_"):
            raise ConfigError(
                f"optimizer lr_fn={config.lr_fn!r}: not a tf.keras.optimizers.schedules class "
                "(e.g. PiecewiseConstantDecay, ExponentialDecay, PolynomialDecay, CosineDecay)"
            )
        try:
            return schedule_cls(**(config.lr_params or {}))
        except (TypeError, ValueError) as error:
            raise ConfigError(f"optimizer lr_params for {config.lr_fn}: {error}") from error
    decay = tf.keras.optimizers.schedules.PolynomialDecay(
        initial_learning_rate=config.initial_learning_rate,
        decay_steps=config.decay_steps,
        end_learning_rate=config.end_learning_rate,
        power=config.power,
    )
    total_steps = train_max_steps if train_max_steps is not None else config.decay_steps
    warmup_steps = int(total_steps * config.warmup_proportion)
    if warmup_steps <= 0:
        return decay
    return WarmUp(
        initial_learning_rate=config.initial_learning_rate,
        decay_schedule_fn=decay,
        warmup_steps=warmup_steps,
        power=config.power,
    )


def create_optimizer(optimizer_params=None, train_max_steps=None, **kwargs):
    """Build AdamWeightDecay or Adam from `optimizer_params` (a dict or an OptimizerConfig).

    Args:
        optimizer_params: the YAML section; see OptimizerConfig for the keys.
        train_max_steps: the run's length, from which warmup_proportion is measured
            (defaults to decay_steps).
        **kwargs: passed to the Keras optimizer (e.g. name).
    Create it inside `strategy.scope()`.
    """
    config = optimizer_params
    if not isinstance(config, OptimizerConfig):
        config = OptimizerConfig.from_dict(optimizer_params, source="optimizer_params")
    learning_rate = build_learning_rate(config, train_max_steps)
    common = dict(
        learning_rate=learning_rate,
        beta_1=config.beta_1,
        beta_2=config.beta_2,
        epsilon=config.epsilon,
        amsgrad=config.amsgrad,
    )
    common.update(kwargs)
    if config.weight_decay > 0:
        return AdamWeightDecay(
            weight_decay_rate=config.weight_decay,
            exclude_from_weight_decay=config.exclude_from_weight_decay,
            **common,
        )
    return tf.keras.optimizers.Adam(**common)
