"""Tiny real Keras models, seeded data and model trainers used by the trainer tests.

Imported by the tests and by run_tiny_training.py (the subprocess entry point).
"""

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import tensorflow as tf

from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.optimizers import create_optimizer
from tensorflow_tts.trainers import GanBasedTrainer, Seq2SeqBasedTrainer

NUM_FEATURES = 4
NUM_MELS = 2
FRAMES = 12
# The tiny Tacotron2s keep the v1 recipe's shape; Tacotron2Config() itself has 1.8's class
# defaults (5 speakers, mish, 5 frames per decoder step).
TACOTRON2_V1_SHAPE = dict(n_speakers=1, reduction_factor=1, encoder_conv_activation="relu", prenet_activation="relu")


def make_arrays(num_examples=16, seed=0, nan_examples=()):
    """features [N, T, 4], mel_gts [N, T, 2] (a fixed function of the features), mel_lengths [N]."""
    rng = np.random.RandomState(seed)
    features = rng.normal(size=(num_examples, FRAMES, NUM_FEATURES)).astype(np.float32)
    projection = rng.normal(size=(NUM_FEATURES, NUM_MELS)).astype(np.float32)
    mel_gts = np.tanh(features @ projection).astype(np.float32)
    mel_lengths = rng.randint(FRAMES // 2, FRAMES + 1, size=num_examples).astype(np.int32)
    for index in nan_examples:
        features[index] = np.nan
    return {"features": features, "mel_gts": mel_gts, "mel_lengths": mel_lengths}


def make_dataset(global_batch_size, num_examples=16, seed=0, nan_examples=(), shuffle=False):
    """Batches of `make_arrays`; with ``shuffle``, in a seeded order that changes every epoch."""
    examples = tf.data.Dataset.from_tensor_slices(make_arrays(num_examples, seed, nan_examples))
    if shuffle:
        examples = examples.shuffle(num_examples, seed=seed, reshuffle_each_iteration=True)
    return examples.batch(global_batch_size)


def set_seeded_weights(model, seed):
    """Same initial weights in every process and under every strategy."""
    rng = np.random.RandomState(seed)
    model.set_weights([rng.normal(scale=0.3, size=weight.shape).astype(np.float32) for weight in model.get_weights()])


def build_regressor(seed=1, dropout_rate=0.0):
    layers = [tf.keras.layers.Conv1D(8, 3, padding="same", activation="tanh", name="conv")]
    if dropout_rate:
        layers.append(Dropout(dropout_rate))
    model = tf.keras.Sequential([*layers, tf.keras.layers.Dense(NUM_MELS, name="proj")], name="tiny_regressor")
    model.build((None, None, NUM_FEATURES))
    set_seeded_weights(model, seed)
    return model


class TinyTrainer(Seq2SeqBasedTrainer):
    """What a model trainer looks like: how to call the model, and per-example losses."""

    def call_model(self, batch, training):
        return {"mel_outputs": self.model(batch["features"], training=training)}

    def compute_per_example_losses(self, batch, outputs):
        mask = tf.sequence_mask(batch["mel_lengths"], tf.shape(batch["mel_gts"])[1], dtype=tf.float32)[..., None]
        squared_error = tf.square(outputs["mel_outputs"] - batch["mel_gts"]) * mask
        frames = tf.reduce_sum(mask, axis=[1, 2]) * NUM_MELS
        absolute_error = tf.abs(outputs["mel_outputs"] - batch["mel_gts"]) * mask
        return {
            "mel_loss": tf.reduce_sum(squared_error, axis=[1, 2]) / frames,
            "l1_loss": 0.1 * tf.reduce_sum(absolute_error, axis=[1, 2]) / frames,
        }


OPTIMIZER_PARAMS = {
    "initial_learning_rate": 0.01,
    "end_learning_rate": 0.001,
    "decay_steps": 20,
    "warmup_proportion": 0.25,
    "weight_decay": 0.01,
}


def build_seq2seq_trainer(
    config, strategy=None, is_mixed_precision=False, trainer_cls=TinyTrainer, optimizer_params=None, dropout_rate=0.0
):
    strategy = strategy or tf.distribute.get_strategy()
    trainer = trainer_cls(config=config, strategy=strategy, is_mixed_precision=is_mixed_precision)
    with strategy.scope():
        model = build_regressor(dropout_rate=dropout_rate)
        optimizer = create_optimizer(optimizer_params or OPTIMIZER_PARAMS, train_max_steps=8)
        trainer.compile(model, optimizer)
    return trainer


def trainer_config(outdir, **overrides):
    config = {
        "train_max_steps": 4,
        "log_interval_steps": 1,
        "eval_interval_steps": 1000,
        "save_interval_steps": 1000,
        "num_save_intermediate_results": 1,
        "outdir": str(outdir),
    }
    config.update(overrides)
    return config


# ---------------------------------------------------------------- a tiny GAN "vocoder"


CROP_FRAMES = 8


def make_gan_dataset(global_batch_size, num_examples=8, seed=0, shuffle=False):
    """Batches of (mels, audios); with ``shuffle``, as a vocoder's: a seeded order that changes
    every epoch and a random `CROP_FRAMES` segment of each example, drawn anew every epoch."""
    rng = np.random.RandomState(seed)
    mels = rng.normal(size=(num_examples, FRAMES, NUM_FEATURES)).astype(np.float32)
    audios = np.tanh(mels.sum(axis=-1, keepdims=True)).astype(np.float32) * 0.5
    examples = tf.data.Dataset.from_tensor_slices({"mels": mels, "audios": audios})
    if shuffle:
        examples = examples.shuffle(num_examples, seed=seed, reshuffle_each_iteration=True)
        seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)

        def crop(example, pair_seed):
            start = tf.random.stateless_uniform([], pair_seed, maxval=FRAMES - CROP_FRAMES + 1, dtype=tf.int32)
            return {key: value[start : start + CROP_FRAMES] for key, value in example.items()}

        examples = tf.data.Dataset.zip((examples, seeds)).map(crop)
    return examples.batch(global_batch_size)


def build_gan_models(seed=3):
    generator = tf.keras.Sequential(
        [tf.keras.layers.Conv1D(4, 3, padding="same", activation="tanh"), tf.keras.layers.Dense(1, activation="tanh")],
        name="generator",
    )
    generator.build((None, None, NUM_FEATURES))
    discriminator = tf.keras.Sequential(
        [tf.keras.layers.Conv1D(4, 3, padding="same", activation="tanh"), tf.keras.layers.Dense(1)],
        name="discriminator",
    )
    discriminator.build((None, None, 1))
    set_seeded_weights(generator, seed)
    set_seeded_weights(discriminator, seed + 1)
    return generator, discriminator


class TinyGanTrainer(GanBasedTrainer):
    sampling_rate = 8000

    def compute_per_example_generator_losses(self, batch, outputs, adversarial):
        losses = {"audio_l1_loss": tf.reduce_mean(tf.abs(outputs - batch["audios"]), axis=[1, 2])}
        if adversarial:
            fake_scores = self._discriminator(outputs)
            losses["adversarial_loss"] = 0.5 * tf.reduce_mean(tf.square(fake_scores - 1.0), axis=[1, 2])
        return losses

    def compute_per_example_discriminator_losses(self, batch, outputs):
        real_scores = self._discriminator(batch["audios"])
        fake_scores = self._discriminator(outputs)
        return {
            "real_loss": tf.reduce_mean(tf.square(real_scores - 1.0), axis=[1, 2]),
            "fake_loss": tf.reduce_mean(tf.square(fake_scores), axis=[1, 2]),
        }


def build_gan_trainer(config, strategy=None):
    strategy = strategy or tf.distribute.get_strategy()
    trainer = TinyGanTrainer(config=config, strategy=strategy)
    with strategy.scope():
        generator, discriminator = build_gan_models()
        trainer.compile(
            generator,
            discriminator,
            tf.keras.optimizers.Adam(1e-2, jit_compile=False),
            tf.keras.optimizers.Adam(1e-2, jit_compile=False),
        )
    return trainer


def about_three_frames_per_token(model):
    """Random weights predict 0 or hundreds of frames per token; make a FastSpeech(2) predict about 3."""
    projection = model.duration_predictor.projection
    projection.kernel.assign(0.1 * projection.kernel)
    projection.bias.assign([np.log(4.0)])
