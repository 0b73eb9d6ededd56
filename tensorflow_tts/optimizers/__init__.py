"""Optimizers: AdamWeightDecay + WarmUp schedule, the YAML factory, gradient accumulation."""

from tensorflow_tts.optimizers.adamweightdecay import AdamWeightDecay, WarmUp
from tensorflow_tts.optimizers.factory import (
    OptimizerConfig,
    build_learning_rate,
    create_optimizer,
    pop_optimizer_params,
)
from tensorflow_tts.optimizers.gradient_accumulator import GradientAccumulator
