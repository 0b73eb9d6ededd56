"""BaseTrainer: the one training loop (distribution, accumulation, mixed precision, checkpoints, summaries).

Subclasses (Seq2SeqBasedTrainer, GanBasedTrainer, and the model trainers built on them) say
only how a batch turns into per-example losses; everything about steps, devices, skipping
bad updates, checkpoints and TensorBoard lives here.

Loss scaling. Every loss is reduced per example (shape [B]) and the update follows the
gradient of ``sum(per-example losses over the global batch) / global number of examples``:
each replica differentiates its local sum, the gradients are all-reduced, and the sum is
divided by the example count summed over replicas (and over accumulated micro-batches). So
2 replicas x B, 1 replica x 2B and 2 accumulated batches of B give the same update.

Exact resume. A checkpoint holds, besides weights and optimizer slots, where the input stands
(epochs finished, batches taken from the current epoch) and the run's random seed. A resumed
run replays the input up to that position (`EpochBatches`) and runs step n under a seed made
from the run's seed and n (`tensorflow_tts.utils.step_random`), so it draws the same batches,
crops and dropout masks as the uninterrupted run and ends with the same weights.
"""

import dataclasses
import functools
import logging
import os
import re
import tempfile
import time

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from tensorflow_tts.configs.trainer import TrainerConfig
from tensorflow_tts.optimizers.gradient_accumulator import GradientAccumulator
from tensorflow_tts.trainers.epochs import EpochBatches
from tensorflow_tts.utils.strategy import is_chief
from tensorflow_tts.utils.checkpoints import CHECKPOINTS_FOLDER, checkpoint_location, restore_weights
from tensorflow_tts.utils.precision import cpu_has_native_bfloat16, to_float32
from tensorflow_tts.utils.step_random import step_seed

logger = logging.getLogger(__name__)

SUM = tf.distribute.ReduceOp.SUM

# (lengths key, padded tensor key) pairs used to measure padding when the batch has them.
_PADDING_KEYS = (
    ("mel_lengths", "mel_gts"),
    ("mel_lengths", "mels"),
    ("audio_lengths", "audios"),
    ("input_lengths", "input_ids"),
)


class NonFiniteTrainingError(RuntimeError):
    """Raised when `max_consecutive_nonfinite_steps` updates in a row had a NaN/Inf loss or gradient.

    Every such update was skipped, so the weights and checkpoints stay finite; the usual
    causes are a learning rate that is too high, an empty or corrupt utterance in the data,
    or mixed float16 without loss scaling.
    """


@dataclasses.dataclass
class OptimizationGroup:
    """Models updated together by one optimizer (the seq2seq model; a GAN's generator)."""

    name: str  # used in checkpoints, summaries and compute_group_losses
    models: dict  # checkpoint name -> tf.keras.Model
    optimizer: object
    start_step: int = 0  # first step (0-based) at which this group is updated
    total_loss_name: str = "total_loss"  # summary tag of the group's summed loss
    variables: list = dataclasses.field(default_factory=list)  # filled by var_train_expr
    accumulator: object = None  # GradientAccumulator when gradient_accumulation_steps > 1

    @property
    def uses_loss_scale(self):
        return isinstance(self.optimizer, tf.keras.mixed_precision.LossScaleOptimizer)


def _learning_rate(optimizer):
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    schedule = getattr(inner, "_learning_rate", None)
    if isinstance(schedule, tf.keras.optimizers.schedules.LearningRateSchedule):
        return float(schedule(inner.iterations))
    return float(tf.keras.backend.get_value(inner.learning_rate))


class BaseTrainer:
    """The training loop shared by every trainer.

    Args:
        config: a TrainerConfig, or a whole training YAML as a dict (TensorFlowTTS 1.8's way):
            its trainer keys are checked, the others are logged once and readable as
            ``self.config["key"]`` (`TrainerConfig.from_training_yaml`).
        strategy: from `tensorflow_tts.utils.return_strategy()`; defaults to the current one.
        steps, epochs: starting counters (overwritten by `resume`).
        is_mixed_precision: train in mixed precision: `mixed_float16` with a dynamic loss scale
            on GPU, `mixed_bfloat16` on CPU. Sets the global Keras policy, so construct the
            trainer before the models.

    1.8's positional order ``(steps, epochs, config, strategy, ...)`` is recognised by its
    integer first argument.

    Subclasses call `_register_group` from their `compile` and implement
    `compute_group_losses`; see Seq2SeqBasedTrainer and GanBasedTrainer.
    """

    def __init__(self, config, strategy=None, steps=0, epochs=0, is_mixed_precision=False):
        if isinstance(config, int) and not isinstance(config, bool):
            config, strategy, steps, epochs = steps, epochs, config, strategy
        self.config = config
        self.strategy = strategy or tf.distribute.get_strategy()
        self.steps = int(steps)
        self.epochs = int(epochs)
        self.is_mixed_precision = bool(is_mixed_precision)
        self.mixed_precision_policy = None
        if self.is_mixed_precision:
            on_gpu = bool(tf.config.list_physical_devices("GPU"))
            policy = self.config.mixed_precision_policy or ("mixed_float16" if on_gpu else "mixed_bfloat16")
            tf.keras.mixed_precision.set_global_policy(policy)
            self.mixed_precision_policy = policy
            logger.info("mixed precision: %s", policy)
            if policy == "mixed_bfloat16" and not on_gpu and not cpu_has_native_bfloat16():
                logger.warning("mixed_bfloat16 on a CPU without bfloat16 instructions (AVX512_BF16/AMX): "
                               "emulated, expect it to be slower than float32 (--mixed_precision 0)")
        self.is_chief = is_chief(self.strategy)
        self._groups = []
        self._step_functions = {}
        self._eval_function = None
        self._predict_function = None
        self._checkpoint = None
        self._manager = None
        self._saved_path = None
        self._consecutive_nonfinite = 0
        self._input_position = (0, 0)  # (epochs, batches) to replay on the next fit; set by a resume
        self.nonfinite_steps = 0
        self.overflow_steps = 0
        self._train_writer = None
        self._eval_writer = None
        self._profiling = False

    @property
    def config(self):
        """The TrainerConfig; 1.8 subclasses that assign their YAML dict here get it converted."""
        return self._config

    @config.setter
    def config(self, config):
        if not isinstance(config, TrainerConfig):
            if config is getattr(self, "_yaml", None):
                return  # a 1.8 subclass assigning the YAML it passed to the constructor
            self._yaml = config
            config = TrainerConfig.from_training_yaml(dict(config), source=f"{type(self).__name__} config")
        self._config = config

    # TensorFlowTTS 1.8 trainers called these from their constructors; the loop keeps its
    # own running means, so they have nothing to do (deprecated).
    def init_train_eval_metrics(self, list_metrics_name):
        """Deprecated no-op (1.8): losses are averaged and logged under the names they are returned with."""

    def reset_states_train(self):
        """Deprecated no-op (1.8)."""

    def reset_states_eval(self):
        """Deprecated no-op (1.8)."""

    # ------------------------------------------------------------------ subclass surface

    def compute_group_losses(self, group_name, batch, state, training):
        """Per-example losses of one optimization group for one (per-replica) batch.

        Args:
            group_name: the OptimizationGroup's name.
            batch: dict of tensors, this replica's share of the batch.
            state: dict shared by the groups within one step (a GAN generator leaves its
                outputs here for the discriminator); ``state["active_groups"]`` names the
                groups updated at this step.
            training: False during evaluation.
        Returns:
            a dict ``{loss_name: [B] float32}`` whose sum is optimised, or a pair
            ``(total [B], {loss_name: [B]})`` when the total is weighted differently.
        """
        raise NotImplementedError

    def predict_for_summaries(self, batch):
        """Model outputs for `intermediate_results` (called on validation batches)."""
        return {}

    def intermediate_results(self, batch, outputs):
        """Images and audio for TensorBoard from one validation batch (numpy arrays).

        Returns ``{"images": {tag: matplotlib figure or [H, W, C] uint8}, "audios": {tag:
        (waveform [T], sample_rate)}}``. Override in a model trainer; the default shows nothing.
        """
        return {}

    def padding_counts(self, batch):
        """(non-padded elements, all elements) of a batch for the padding-ratio scalar, or None.

        Uses a ``padding_ratio`` entry of the batch when the dataset provides one, else the
        first known (lengths, padded tensor) pair such as (mel_lengths, mel_gts).
        """
        if "padding_ratio" in batch:
            ratio = tf.reshape(tf.cast(batch["padding_ratio"], tf.float32), [-1])
            count = tf.cast(tf.size(ratio), tf.float32)
            return tf.reduce_sum(1.0 - ratio), count
        for lengths_key, padded_key in _PADDING_KEYS:
            if lengths_key in batch and padded_key in batch:
                lengths = tf.cast(batch[lengths_key], tf.float32)
                padded = tf.shape(batch[padded_key])
                total = tf.cast(padded[0] * padded[1], tf.float32)
                return tf.reduce_sum(lengths), total
        return None

    # ------------------------------------------------------------------ set-up

    def _register_group(self, name, models, optimizer, start_step=0, total_loss_name="total_loss"):
        """Add models trained by one optimizer; call from the subclass's `compile`."""
        if any(group.name == name for group in self._groups):
            raise ValueError(f"optimization group {name!r} registered twice; call compile() once")
        with self.strategy.scope():
            if self.mixed_precision_policy == "mixed_float16" and not isinstance(
                optimizer, tf.keras.mixed_precision.LossScaleOptimizer
            ):
                # Dynamic loss scale: overflowing steps are skipped and the scale halved.
                optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
        group = OptimizationGroup(name, dict(models), optimizer, start_step, total_loss_name)
        for model_name, model in group.models.items():
            if not model.variables:
                raise ValueError(
                    f"{type(self).__name__}.compile: model {model_name!r} has no variables yet; build it "
                    "(call it once on a dummy batch) before compile()"
                )
        group.variables = self._filter_variables(group)
        if self.config.gradient_checkpointing:
            _switch_on_gradient_checkpointing(group.models)
        self._groups.append(group)
        return group

    def _filter_variables(self, group):
        variables = [variable for model in group.models.values() for variable in model.trainable_variables]
        expression = self.config.var_train_expr
        if expression:
            pattern = re.compile(expression)
            variables = [variable for variable in variables if pattern.search(variable.name)]
            if not variables:
                logger.warning("var_train_expr=%r matches no variable of %s: it is frozen", expression, group.name)
            else:
                logger.info("var_train_expr=%r: training %d variables of %s", expression, len(variables), group.name)
        return variables

    @property
    def _trainable_variables(self):
        """The variables the optimizers update (after `var_train_expr`)."""
        return [variable for group in self._groups for variable in group.variables]

    @property
    def models(self):
        return {name: model for group in self._groups for name, model in group.models.items()}

    def _checkpoint_objects(self):
        objects = dict(self.models)
        for group in self._groups:
            objects[f"{group.name}_optimizer"] = group.optimizer
        return objects

    def _build_state(self, saved_path):
        if not self._groups:
            raise RuntimeError(f"{type(self).__name__}: call compile(...) before fit()")
        accumulate = self.config.gradient_accumulation_steps > 1
        with self.strategy.scope():
            if self._checkpoint is None:
                self._steps_variable = tf.Variable(self.steps, dtype=tf.int64, trainable=False, name="steps")
                self._epochs_variable = tf.Variable(self.epochs, dtype=tf.int64, trainable=False, name="epochs")
                self._epoch_batches_variable = tf.Variable(0, dtype=tf.int64, trainable=False, name="epoch_batches")
                # The seed of every training step's random draws (dropout, noise), drawn once
                # per run (repeatable under a global seed) and kept in the checkpoint.
                self._random_seed_variable = tf.Variable(
                    tf.random.uniform([], maxval=tf.int64.max, dtype=tf.int64), trainable=False, name="random_seed"
                )
                for group in self._groups:
                    # Build slots now so they can be restored and are not created inside tf.cond.
                    group.optimizer.build(group.variables)
                    if accumulate:
                        group.accumulator = GradientAccumulator(
                            group.variables, scalar_names=("count", "loss"), name=f"{group.name}_accumulator"
                        )
                self._checkpoint_contents = dict(
                    steps=self._steps_variable,
                    epochs=self._epochs_variable,
                    epoch_batches=self._epoch_batches_variable,
                    random_seed=self._random_seed_variable,
                    **self._checkpoint_objects(),
                )
                self._checkpoint = tf.train.Checkpoint(**self._checkpoint_contents)
        if saved_path != self._saved_path:
            self._saved_path = saved_path
            directory = saved_path if self.is_chief else tempfile.mkdtemp(prefix="tts_worker_ckpt_")
            # CheckpointManager writes ckpt-N.index/.data first and only then atomically rewrites
            # the `checkpoint` index file, so a crash mid-save leaves the index on the previous
            # complete checkpoint.
            self._manager = tf.train.CheckpointManager(
                self._checkpoint, directory, max_to_keep=self.config.max_checkpoints_to_keep
            )

    # ------------------------------------------------------------------ the compiled step

    def _active_groups(self, step):
        return tuple(group.name for group in self._groups if step >= group.start_step and group.variables)

    def _forward_backward(self, group, batch, state, seed=None, training=True):
        """Per-example losses and gradients of this replica's local loss sum; the random ops of
        the forward pass draw from ``seed`` ((2,) int; None: from process state)."""
        with tf.GradientTape() as tape, step_seed(seed):
            total, named = self._losses(group.name, batch, state, training)
            local_sum = tf.reduce_sum(total)
            target = group.optimizer.get_scaled_loss(local_sum) if group.uses_loss_scale else local_sum
        gradients = tape.gradient(target, group.variables)
        if group.uses_loss_scale:
            gradients = group.optimizer.get_unscaled_gradients(gradients)
        gradients = [
            tf.zeros_like(variable) if gradient is None else tf.convert_to_tensor(gradient)
            for gradient, variable in zip(gradients, group.variables)
        ]
        return total, named, gradients

    def _losses(self, group_name, batch, state, training):
        result = self.compute_group_losses(group_name, batch, state, training)
        if isinstance(result, dict):
            named = result
            total = tf.add_n([tf.cast(value, tf.float32) for value in named.values()])
        else:
            total, named = result
        named = {name: tf.cast(value, tf.float32) for name, value in named.items()}
        return tf.cast(total, tf.float32), named

    def _apply_or_skip(self, optimizer, gradients, variables, should_apply):
        """apply_gradients when `should_apply` (identical on every replica), else count the step."""

        def apply_fn():
            optimizer.apply_gradients(zip(gradients, variables), skip_gradients_aggregation=True)

        def skip_fn():
            # Keep optimizer.iterations (and so the learning-rate schedule) in step with the loop.
            optimizer.iterations.assign_add(1, read_value=False)

        if tf.__internal__.distribute.strategy_supports_no_merge_call():
            tf.__internal__.smart_cond.smart_cond(should_apply, apply_fn, skip_fn)
            return

        def cross_replica(distribution, gradients, should_apply):
            # A cond whose branch calls merge_call (apply_gradients does) must sit in a
            # cross-replica context; the same trick as Keras' LossScaleOptimizer.
            flag = distribution.experimental_local_results(should_apply)[0]

            def apply_all():
                distribution.extended.call_for_each_replica(
                    lambda grads: optimizer.apply_gradients(zip(grads, variables), skip_gradients_aggregation=True),
                    args=(gradients,),
                )

            tf.__internal__.smart_cond.smart_cond(flag, apply_all, skip_fn)

        tf.distribute.get_replica_context().merge_call(cross_replica, args=(gradients, should_apply))

    def _replica_train_step(self, batch, seed, active_groups, apply_update):
        context = tf.distribute.get_replica_context()
        seed = tf.random.experimental.stateless_fold_in(seed, context.replica_id_in_sync_group)
        state = {"active_groups": active_groups}
        results = {}
        padding = self.padding_counts(batch)
        if padding is not None:
            results["padding_valid"], results["padding_total"] = padding
        for index, group in enumerate(self._groups):
            if group.name not in active_groups:
                continue
            group_seed = tf.random.experimental.stateless_fold_in(seed, index)
            if self.config.jit_compile:
                # XLA compiles numbers only; utterance ids (strings) stay outside the compiled part.
                numeric = {key: value for key, value in batch.items() if value.dtype != tf.string}
                total, named, gradients = self._jit_forward_backward(group)(numeric, state, group_seed)
            else:
                total, named, gradients = self._forward_backward(group, batch, state, group_seed)
            count = tf.cast(tf.shape(total)[0], tf.float32)
            local_sum = tf.reduce_sum(total)
            results[f"{group.name}/count"] = count
            results[f"{group.name}/{group.total_loss_name}"] = local_sum
            for name, value in named.items():
                results[f"{group.name}/{name}"] = tf.reduce_sum(value)
            if group.accumulator is not None:
                group.accumulator.add(gradients, count=count, loss=local_sum)
                if not apply_update:
                    continue
                gradients, sums = group.accumulator.values()
                group.accumulator.reset()
                count, local_sum = sums["count"], sums["loss"]
            global_count = context.all_reduce(SUM, count)
            gradients = [gradient / tf.maximum(global_count, 1.0) for gradient in gradients]
            gradients = context.all_reduce(SUM, gradients)
            loss_finite = tf.math.is_finite(context.all_reduce(SUM, local_sum))
            grad_norm = tf.linalg.global_norm(gradients)
            grads_finite = tf.math.is_finite(grad_norm)
            if self.config.grad_norm > 0:
                gradients, _ = tf.clip_by_global_norm(gradients, self.config.grad_norm, use_norm=grad_norm)
            if group.uses_loss_scale:
                # The LossScaleOptimizer skips non-finite gradients itself and lowers its scale;
                # only a non-finite loss counts as a bad step.
                group.optimizer.apply_gradients(zip(gradients, group.variables), skip_gradients_aggregation=True)
                nonfinite = tf.logical_not(loss_finite)
                results[f"{group.name}/overflow"] = tf.cast(tf.logical_and(loss_finite, tf.logical_not(grads_finite)), tf.float32)
                results[f"{group.name}/loss_scale"] = tf.cast(group.optimizer.loss_scale, tf.float32)
            else:
                should_apply = tf.logical_and(loss_finite, grads_finite)
                self._apply_or_skip(group.optimizer, gradients, group.variables, should_apply)
                nonfinite = tf.logical_not(should_apply)
            results[f"{group.name}/grad_norm"] = grad_norm
            results[f"{group.name}/nonfinite"] = tf.cast(nonfinite, tf.float32)
        return results

    # Values that are already identical on every replica (all-reduced inside the step).
    _SYNCED_SUFFIXES = ("/grad_norm", "/nonfinite", "/overflow", "/loss_scale")

    def _reduce_results(self, per_replica):
        reduced = {}
        for key, value in per_replica.items():
            if key.endswith(self._SYNCED_SUFFIXES):
                reduced[key] = self.strategy.experimental_local_results(value)[0]
            else:
                reduced[key] = self.strategy.reduce(SUM, value, axis=None)
        return reduced

    def _jit_forward_backward(self, group):
        cache = self.__dict__.setdefault("_jit_functions", {})
        if group.name not in cache:

            def run(batch, state, seed=None):
                return self._forward_backward(group, batch, dict(state), seed)

            cache[group.name] = tf.function(run, jit_compile=True, reduce_retracing=True)
        return cache[group.name]

    def _train_function(self, active_groups, apply_update):
        key = (active_groups, apply_update)
        if key not in self._step_functions:

            def step(batch, seed):
                per_replica = self.strategy.run(
                    self._replica_train_step,
                    args=(batch, seed),
                    kwargs={"active_groups": active_groups, "apply_update": apply_update},
                )
                return self._reduce_results(per_replica)

            seed_spec = tf.TensorSpec([2], tf.int64)
            self._step_functions[key] = tf.function(step, input_signature=[self._train_spec, seed_spec])
        return self._step_functions[key]

    def _replica_eval_step(self, batch, active_groups):
        state = {"active_groups": active_groups}
        results = {}
        for group in self._groups:
            total, named = self._losses(group.name, batch, state, training=False)
            results[f"{group.name}/count"] = tf.cast(tf.shape(total)[0], tf.float32)
            results[f"{group.name}/{group.total_loss_name}"] = tf.reduce_sum(total)
            for name, value in named.items():
                results[f"{group.name}/{name}"] = tf.reduce_sum(value)
        return results

    def _build_eval_functions(self, valid_spec):
        def eval_step(batch, active_groups):
            per_replica = self.strategy.run(self._replica_eval_step, args=(batch,), kwargs={"active_groups": active_groups})
            return self._reduce_results(per_replica)

        def predict_step(batch):
            outputs = self.strategy.run(lambda b: to_float32(self.predict_for_summaries(b)), args=(batch,))
            return self.strategy.experimental_local_results(outputs)[0], self.strategy.experimental_local_results(batch)[0]

        self._eval_functions = {}

        def eval_function(active_groups):
            if active_groups not in self._eval_functions:
                self._eval_functions[active_groups] = tf.function(
                    functools.partial(eval_step, active_groups=active_groups), input_signature=[valid_spec]
                )
            return self._eval_functions[active_groups]

        self._eval_function = eval_function
        self._predict_function = tf.function(predict_step, input_signature=[valid_spec])

    # ------------------------------------------------------------------ datasets

    def _distribute(self, dataset):
        if _single_cpu(self.strategy):
            return dataset
        options = tf.data.Options()
        if dataset.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.AUTO:
            # Shard examples, not files, across workers: works for any source and keeps shards even.
            options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
            dataset = dataset.with_options(options)
        return self.strategy.experimental_distribute_dataset(dataset)

    def _next_train_batch(self):
        batch = next(self._train_batches)
        self.epochs = self._first_epoch + self._train_batches.epochs_finished
        self._epoch_batches = self._train_batches.epoch_batches
        return batch

    # ------------------------------------------------------------------ the loop

    def fit(self, train_dataset, valid_dataset=None, saved_path=None, resume=None, pretrained=None):
        """Train until `train_max_steps`.

        Args:
            train_dataset: tf.data.Dataset of dict batches, batched with the *global* batch size
                (`batch_size * strategy.num_replicas_in_sync`); the trainer distributes it.
            valid_dataset: same, for evaluation every `eval_interval_steps` (optional).
            saved_path: checkpoint directory (default `<outdir>/checkpoints`).
            resume: a checkpoint (`.../ckpt-N`) or a directory (its latest readable checkpoint):
                continue with its steps, epochs, weights, optimizer state, learning rate, input
                position and random seed.
            pretrained: a checkpoint or a single model's `.h5`: load model weights only.
        N steps + resume + M steps equals N + M straight, also mid-epoch with shuffling and
        dropout on, provided `train_dataset` is the same pipeline (same data, batching and
        seeds) and its randomness is seeded: the epochs and batches before the checkpoint's
        position are replayed (read and dropped) so each epoch gets its own shuffle again.
        """
        saved_path = saved_path or os.path.join(self.config.outdir, CHECKPOINTS_FOLDER)
        self._build_state(saved_path)
        if pretrained:
            self.load_pretrained(pretrained)
        if resume:
            self.load_checkpoint(resume)
        self._train_dataset = self._distribute(train_dataset)
        self._train_spec = self._train_dataset.element_spec
        self._valid_dataset = None
        if valid_dataset is not None:
            self._valid_dataset = self._distribute(valid_dataset)
            self._build_eval_functions(self._valid_dataset.element_spec)
        self._step_functions = {}
        self._open_writers()
        start_epoch, start_batch = self._input_position
        self._input_position = (0, 0)
        if start_epoch or start_batch:
            logger.info(
                "resuming the input at epoch %d, batch %d: replaying the epochs before and skipping "
                "the batches already trained on", start_epoch, start_batch,
            )
        self._train_batches = EpochBatches(self._train_dataset, start_epoch, start_batch)
        self._first_epoch = self.epochs - start_epoch
        self._epoch_batches = self._train_batches.epoch_batches
        random_seed = int(self._random_seed_variable.numpy())
        config = self.config
        progress = tqdm(
            initial=self.steps, total=config.train_max_steps, desc="[train]", disable=not self.is_chief, dynamic_ncols=True
        )
        window = _Window()
        last_saved_step = self.steps
        try:
            while self.steps < config.train_max_steps:
                self._maybe_start_profiler()
                active_groups = self._active_groups(self.steps)
                micro_results = []
                for micro_step in range(config.gradient_accumulation_steps):
                    apply_update = micro_step == config.gradient_accumulation_steps - 1
                    waited = time.perf_counter()
                    batch = self._next_train_batch()
                    window.input_wait += time.perf_counter() - waited
                    seed = tf.constant([random_seed, self.steps * config.gradient_accumulation_steps + micro_step], tf.int64)
                    micro_results.append(self._train_function(active_groups, apply_update)(batch, seed))
                self.steps += 1
                self._after_train_step(micro_results, window)
                progress.update(1)
                self._maybe_stop_profiler()
                if self.steps % config.log_interval_steps == 0:
                    self._write_train_summaries(window)
                    window = _Window()
                if self._valid_dataset is not None and self.steps % config.eval_interval_steps == 0:
                    self.evaluate()
                    window.pause_clock()
                if self.steps % config.save_interval_steps == 0:
                    self.save_checkpoint()
                    last_saved_step = self.steps
                    window.pause_clock()
            if last_saved_step != self.steps:
                self.save_checkpoint()
        finally:
            progress.close()
            self._train_batches.close()
            if self._profiling:
                tf.profiler.experimental.stop()
                self._profiling = False
            for writer in (self._train_writer, self._eval_writer):
                if writer is not None:
                    writer.flush()

    def _after_train_step(self, micro_results, window):
        values = [{key: float(value) for key, value in result.items()} for result in micro_results]
        final = values[-1]
        bad_groups = [key.split("/")[0] for key, value in final.items() if key.endswith("/nonfinite") and value > 0]
        if bad_groups:
            self.nonfinite_steps += 1
            self._consecutive_nonfinite += 1
            logger.warning(
                "step %d: non-finite loss or gradient in %s; update skipped (%d in a row)",
                self.steps, ", ".join(bad_groups), self._consecutive_nonfinite,
            )
            if self._consecutive_nonfinite >= self.config.max_consecutive_nonfinite_steps:
                raise NonFiniteTrainingError(
                    f"training stopped at step {self.steps}: {self._consecutive_nonfinite} consecutive steps had a "
                    f"non-finite loss or gradient ({', '.join(bad_groups)}). All of them were skipped, so the last "
                    f"checkpoint in {self._saved_path} is finite. Lower the learning rate, check the data for empty "
                    "or corrupt utterances, or raise max_consecutive_nonfinite_steps."
                )
        else:
            self._consecutive_nonfinite = 0
        if any(key.endswith("/overflow") and value > 0 for key, value in final.items()):
            self.overflow_steps += 1
        window.add(values, bad_groups)

    # ------------------------------------------------------------------ summaries

    def _open_writers(self):
        if self._train_writer is not None:
            return
        if self.is_chief:
            self._train_writer = tf.summary.create_file_writer(os.path.join(self.config.outdir, "train"))
            self._eval_writer = tf.summary.create_file_writer(os.path.join(self.config.outdir, "eval"))
        else:
            self._train_writer = self._eval_writer = tf.summary.create_noop_writer()

    def _scalar_tag(self, group, name):
        return name if len(self._groups) == 1 else f"{group.name}_{name}"

    def _write_train_summaries(self, window):
        scalars = window.loss_means()
        for group in self._groups:
            scalars[self._scalar_tag(group, "learning_rate")] = _learning_rate(group.optimizer)
            if f"{group.name}/grad_norm" in window.last:
                scalars[self._scalar_tag(group, "grad_norm")] = window.last_mean(f"{group.name}/grad_norm")
            if group.uses_loss_scale and f"{group.name}/loss_scale" in window.last:
                scalars[self._scalar_tag(group, "loss_scale")] = window.last[f"{group.name}/loss_scale"]
        elapsed = max(window.elapsed(), 1e-9)
        scalars["steps_per_second"] = window.timed_steps / elapsed
        scalars["examples_per_second"] = window.timed_examples / elapsed
        # Seconds the loop waited for tf.data, per second of training: near 0 when the input keeps up.
        scalars["input_wait_fraction"] = window.input_wait / elapsed
        if window.padding_total > 0:
            scalars["padding_ratio"] = 1.0 - window.padding_valid / window.padding_total
        scalars["nonfinite_steps"] = float(self.nonfinite_steps)
        if any(group.uses_loss_scale for group in self._groups):
            scalars["overflow_steps"] = float(self.overflow_steps)
        with self._train_writer.as_default(step=self.steps):
            for tag, value in scalars.items():
                tf.summary.scalar(tag, value)
        if self.is_chief:
            logger.info("step %d: %s", self.steps, ", ".join(f"{tag}={value:.4g}" for tag, value in sorted(scalars.items())))

    def evaluate(self):
        """Mean per-example losses over the whole valid set, written under eval/; returns them."""
        if self._valid_dataset is None:
            raise RuntimeError("evaluate() needs a valid_dataset passed to fit()")
        active_groups = tuple(group.name for group in self._groups)
        eval_function = self._eval_function(active_groups)
        sums = {}
        for batch in tqdm(self._valid_dataset, desc="[eval]", disable=not self.is_chief, leave=False):
            for key, value in eval_function(batch).items():
                sums[key] = sums.get(key, 0.0) + float(value)
        means = _means_by_loss(sums)
        with self._eval_writer.as_default(step=self.steps):
            for tag, value in means.items():
                tf.summary.scalar(tag, value)
        if self.is_chief:
            logger.info("eval at step %d: %s", self.steps, ", ".join(f"{tag}={value:.4g}" for tag, value in sorted(means.items())))
        self._write_intermediate_results()
        return means

    def _write_intermediate_results(self):
        count = self.config.num_save_intermediate_results
        if count <= 0:
            return
        for index, batch in enumerate(self._valid_dataset):
            if index >= count:
                break
            outputs, local_batch = self._predict_function(batch)
            if not self.is_chief:
                continue
            to_numpy = functools.partial(tf.nest.map_structure, lambda value: value.numpy() if hasattr(value, "numpy") else value)
            results = self.intermediate_results(to_numpy(local_batch), to_numpy(outputs)) or {}
            self._write_media(results, index)

    def _write_media(self, results, batch_index):
        from tensorflow_tts.utils.plotting import figure_to_array

        directory = os.path.join(self.config.outdir, "predictions", f"{self.steps}steps")
        os.makedirs(directory, exist_ok=True)
        with self._eval_writer.as_default(step=self.steps):
            for tag, image in results.get("images", {}).items():
                if not isinstance(image, np.ndarray):
                    image = figure_to_array(image)
                tf.summary.image(f"{tag}/{batch_index}", image[None])
                tf.io.write_file(os.path.join(directory, f"{tag.replace('/', '_')}_{batch_index}.png"), tf.io.encode_png(image))
            for tag, (waveform, sample_rate) in results.get("audios", {}).items():
                audio = np.clip(np.asarray(waveform, dtype=np.float32).reshape(1, -1, 1), -1.0, 1.0)
                tf.summary.audio(f"{tag}/{batch_index}", audio, sample_rate=int(sample_rate))
                tf.io.write_file(
                    os.path.join(directory, f"{tag.replace('/', '_')}_{batch_index}.wav"),
                    tf.audio.encode_wav(audio[0], int(sample_rate)),
                )

    # ------------------------------------------------------------------ profiler

    def _maybe_start_profiler(self):
        steps = self.config.profile_steps
        # Steps are numbered from 1 as in the logs: trace updates first..last inclusive.
        if steps and self.is_chief and not self._profiling and self.steps + 1 == steps[0]:
            tf.profiler.experimental.start(self.config.outdir)
            self._profiling = True

    def _maybe_stop_profiler(self):
        steps = self.config.profile_steps
        if self._profiling and self.steps >= steps[1]:
            tf.profiler.experimental.stop()
            self._profiling = False

    # ------------------------------------------------------------------ checkpoints

    def _assert_finite_weights(self):
        for name, model in self.models.items():
            for variable in model.variables:
                if not np.all(np.isfinite(variable.numpy())):
                    raise NonFiniteTrainingError(
                        f"refusing to save a checkpoint at step {self.steps}: {name} variable {variable.name} "
                        "holds NaN/Inf"
                    )

    def save_checkpoint(self):
        """Write ckpt-<steps> (models, optimizers, steps, epochs); never a non-finite one."""
        self._assert_finite_weights()
        self._steps_variable.assign(self.steps)
        self._epochs_variable.assign(self.epochs)
        self._epoch_batches_variable.assign(getattr(self, "_epoch_batches", 0))
        path = self._manager.save(checkpoint_number=self.steps)
        if self.config.save_weights_h5:
            # On every worker too: reading sync-on-read variables (batch norm's moving
            # statistics) is a collective, which would wait forever for absent workers.
            self._save_h5_weights()
        if not self.is_chief:
            # Every worker takes part in saving; only the chief keeps the files.
            for filename in os.listdir(self._manager.directory):
                os.remove(os.path.join(self._manager.directory, filename))
            return None
        logger.info("saved checkpoint %s", path)
        return path

    def _save_h5_weights(self):
        directory = self._manager.directory
        kept_steps = {int(path.rsplit("-", 1)[1]) for path in self._manager.checkpoints}
        for name, model in self.models.items():
            target = os.path.join(directory, f"{name}-{self.steps}.h5")
            partial = target + ".partial"
            model.save_weights(partial, save_format="h5")
            os.replace(partial, target)
            for filename in os.listdir(directory):
                match = re.fullmatch(re.escape(name) + r"-(\d+)\.h5", filename)
                if match and int(match.group(1)) not in kept_steps:
                    os.remove(os.path.join(directory, filename))

    def load_checkpoint(self, path):
        """Restore everything from a checkpoint, or from the newest readable one in a directory
        (also named as `utils.checkpoints.checkpoint_location` accepts, e.g. `<outdir>/checkpoint/`)."""
        if self._checkpoint is None:
            self._build_state(self._saved_path or os.path.join(self.config.outdir, CHECKPOINTS_FOLDER))
        path = checkpoint_location(path)
        if os.path.isdir(path):
            state = tf.train.get_checkpoint_state(path)
            candidates = list(reversed(state.all_model_checkpoint_paths)) if state else []
            if not candidates:
                raise FileNotFoundError(f"resume={path}: no checkpoint index in this directory")
        else:
            candidates = [path]
        errors = []
        for candidate in candidates:
            try:
                self._restorable(candidate).restore(candidate).assert_existing_objects_matched()
            except Exception as error:  # noqa: BLE001  (a torn file can fail in many ways; try the next)
                logger.warning("cannot restore %s (%s); trying an older checkpoint", candidate, error)
                errors.append(f"{candidate}: {error}")
                continue
            self.steps = int(self._steps_variable.numpy())
            self.epochs = int(self._epochs_variable.numpy())
            self._input_position = (self.epochs, int(self._epoch_batches_variable.numpy()))
            logger.info("resumed from %s at step %d, epoch %d", candidate, self.steps, self.epochs)
            return candidate
        raise FileNotFoundError(f"resume={path}: no readable checkpoint ({'; '.join(errors)})")

    def _restorable(self, path):
        """The checkpoint object to restore `path` with: without the random seed when the
        checkpoint predates it (that run's dropout cannot be repeated; a new seed goes on)."""
        if any(name.startswith("random_seed/") for name, _ in tf.train.list_variables(path)):
            return self._checkpoint
        logger.warning("%s has no random seed (written by an older version): dropout after the resume is not the "
                       "uninterrupted run's", path)
        return tf.train.Checkpoint(**{name: value for name, value in self._checkpoint_contents.items() if name != "random_seed"})

    def load_pretrained(self, path):
        """Load model weights only (not optimizer, steps or learning rate)."""
        restore_weights(self.models, path, label="pretrained=", strict=False)  # logs what it read


def _means_by_loss(sums):
    """{group/loss: sum} + {group/count: n} -> {loss: sum / n}."""
    means = {}
    for key, value in sums.items():
        group, name = key.split("/", 1)
        if name == "count":
            continue
        count = sums.get(f"{group}/count", 0.0)
        means[name] = value / count if count else float("nan")
    return means


def _single_cpu(strategy):
    """True for a OneDeviceStrategy on a CPU, whose batches need no distributed dataset.

    Its iterators (one per epoch, see EpochBatches) took ~1.2 s to tear down at every second
    or third epoch boundary (the tiny vocoder recipe trained 6 % more steps in 20 minutes
    without them); a plain tf.data iterator feeds `strategy.run` on the CPU as well. On a GPU
    the distributed dataset stays: it prefetches the batches to the device.
    """
    if not isinstance(strategy, tf.distribute.OneDeviceStrategy):
        return False
    devices = strategy.extended.worker_devices
    return len(devices) == 1 and "CPU" in devices[0].upper()


class _Window:
    """Running sums of the step results between two log writes."""

    def __init__(self):
        self.sums = {}
        self.last = {}
        self._last_sums = {}
        self._last_counts = {}
        self.steps = 0
        self.examples = 0.0
        self.padding_valid = 0.0
        self.padding_total = 0.0
        self.timed_steps = 0
        self.timed_examples = 0.0
        self.input_wait = 0.0  # seconds spent fetching the next batch from the input pipeline
        self._start = time.perf_counter()

    def add(self, micro_results, bad_groups):
        self.steps += 1
        self.timed_steps += 1
        for result in micro_results:
            counted_examples = False
            for key, value in result.items():
                group, name = key.split("/", 1) if "/" in key else ("", key)
                if key == "padding_valid":
                    self.padding_valid += value
                elif key == "padding_total":
                    self.padding_total += value
                elif name == "count":
                    if not counted_examples:
                        self.examples += value
                        self.timed_examples += value
                        counted_examples = True
                    if group not in bad_groups:
                        self.sums[key] = self.sums.get(key, 0.0) + value
                elif key.endswith(BaseTrainer._SYNCED_SUFFIXES):
                    pass
                elif group not in bad_groups:
                    self.sums[key] = self.sums.get(key, 0.0) + value
        for key, value in micro_results[-1].items():
            if key.endswith(BaseTrainer._SYNCED_SUFFIXES) and np.isfinite(value):
                self.last[key] = value
                self._last_sums[key] = self._last_sums.get(key, 0.0) + value
                self._last_counts[key] = self._last_counts.get(key, 0) + 1

    def last_mean(self, key):
        return self._last_sums[key] / self._last_counts[key]

    def loss_means(self):
        return _means_by_loss(self.sums)

    def pause_clock(self):
        """Restart the clock after evaluation or saving so speed only measures training."""
        self._start = time.perf_counter()
        self.timed_steps = 0
        self.timed_examples = 0.0
        self.input_wait = 0.0

    def elapsed(self):
        return time.perf_counter() - self._start


def _switch_on_gradient_checkpointing(models):
    """Set ``gradient_checkpointing`` on every layer of ``models`` ({name: model}) that has it.

    The trainer imports no model: the layers that can recompute their blocks
    (tensorflow_tts.layers.checkpointing) are found by that attribute.
    """
    for name, model in models.items():
        layers = [layer for layer in (model, *model.submodules) if hasattr(layer, "gradient_checkpointing")]
        for layer in layers:
            layer.gradient_checkpointing = True
        logger.info("gradient_checkpointing: %s recomputes the activations of %d layer(s)", name, len(layers))
