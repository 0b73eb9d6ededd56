"""`jit_compile: true` (XLA) computes what the plain step computes: same losses, gradients and updates."""

import tensorflow_tts  # noqa: F401

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml

from helpers.tiny import build_seq2seq_trainer, make_dataset, trainer_config
from tensorflow_tts.configs.vocoder import split_vocoder_yaml
from tensorflow_tts.datasets.synthetic import write_synthetic_dump
from tensorflow_tts.optimizers import create_optimizer
from tensorflow_tts.recipes import acoustic as acoustic_recipe
from tensorflow_tts.recipes import tacotron2 as tacotron2_recipe
from tensorflow_tts.recipes.fastspeech2 import FastSpeech2Trainer, build_fastspeech2
from tensorflow_tts.recipes.vocoder import VocoderGanTrainer, build_vocoder_models

REPO = Path(__file__).resolve().parents[1]

FASTSPEECH2_TINY = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"
TACOTRON2_TINY = REPO / "examples" / "tacotron2" / "conf" / "tacotron2.tiny.yaml"
MB_MELGAN_TINY = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml"


def test_xla_training_updates_the_weights_as_the_plain_step_does(tmp_path):
    plain = build_seq2seq_trainer(trainer_config(tmp_path / "plain", train_max_steps=3))
    plain.fit(make_dataset(8))
    compiled = build_seq2seq_trainer(trainer_config(tmp_path / "xla", train_max_steps=3, jit_compile=True))
    compiled.fit(make_dataset(8))
    assert compiled._jit_functions, "the XLA path was not taken"
    for a, b in zip(plain.model.get_weights(), compiled.model.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def compare_forward_backward(trainer, batch, group_name, state=None):
    """Losses and gradients of one group through the plain and the XLA-compiled pass."""
    (group,) = [group for group in trainer._groups if group.name == group_name]
    state = {"active_groups": (group_name,), **(state or {})}
    numeric = {key: value for key, value in batch.items() if value.dtype != tf.string}
    plain = tf.function(lambda batch: trainer._forward_backward(group, batch, dict(state)))(numeric)
    compiled = trainer._jit_forward_backward(group)(numeric, state)
    (plain_total, plain_named, plain_grads), (xla_total, xla_named, xla_grads) = plain, compiled
    np.testing.assert_allclose(xla_total.numpy(), plain_total.numpy(), rtol=1e-4)
    assert set(xla_named) == set(plain_named)
    for name in plain_named:
        np.testing.assert_allclose(xla_named[name].numpy(), plain_named[name].numpy(), rtol=1e-4, atol=1e-6, err_msg=name)
    assert len(xla_grads) == len(plain_grads) == len(group.variables)
    largest = max(float(tf.reduce_max(tf.abs(a))) for a in plain_grads)
    for variable, a, b in zip(group.variables, plain_grads, xla_grads):
        # Relative to the gradient's own scale (sums of thousands of terms reorder under XLA),
        # plus rounding noise of the largest gradient for those that are zero in exact arithmetic
        # (an attention key's bias cancels in the softmax).
        scale = float(tf.reduce_max(tf.abs(a)))
        assert float(tf.reduce_max(tf.abs(a - b))) <= 2e-3 * scale + 1e-6 * largest, variable.name


def test_fastspeech2_losses_and_gradients_match_under_xla(tmp_path):
    recipe = acoustic_recipe.load_recipe(FASTSPEECH2_TINY, "fastspeech2")
    config = recipe.model_config
    # Dropout draws differ between the two compilations; switch it off to compare the arithmetic.
    for name in ("hidden_dropout_prob", "attention_probs_dropout_prob", "variant_predictor_dropout_rate",
                 "variant_dropout_rate", "variance_embedding_dropout_rate", "postnet_dropout_rate"):
        assert hasattr(config, name), name
        setattr(config, name, 0.0)
    write_synthetic_dump(tmp_path / "dump", num_utterances=4, frames_range=(60, 90), tokens_range=(12, 20),
                         num_speakers=1, vocab_size=config.vocab_size, with_waves=False)
    data_config = recipe.data_config
    data_config.batch_size, data_config.batching = 4, "padded"
    batches, _ = acoustic_recipe.build_dataset(
        tmp_path / "dump" / "train", data_config, use_norm=True, with_durations=True, n_speakers=1,
        vocab_size=config.vocab_size, num_replicas=1, training=True,
    )
    trainer = FastSpeech2Trainer(config={"outdir": str(tmp_path / "exp")}, f0_stats=[180.0, 50.0],
                                 energy_stats=[25.0, 14.0])
    model, _ = build_fastspeech2(config)
    trainer.compile(model, create_optimizer(recipe.optimizer_params, train_max_steps=10))
    compare_forward_backward(trainer, next(iter(batches)), "model")


@pytest.mark.parametrize("attention_type", ["lsa", "sma"])
def test_tacotron2_losses_and_gradients_match_under_xla(tmp_path, attention_type):
    # The teacher-forced decoder loop (tf.while_loop with tensor arrays, either attention)
    # differentiated inside one XLA program.
    recipe = tacotron2_recipe.load_recipe(TACOTRON2_TINY)
    config = recipe.model_config
    config.attention_type = attention_type
    for name in ("embedding_dropout_prob", "encoder_conv_dropout_rate", "prenet_dropout_rate", "postnet_dropout_rate",
                 "attention_noise_std"):
        setattr(config, name, 0.0)
    write_synthetic_dump(tmp_path / "dump", num_utterances=2, frames_range=(30, 41), tokens_range=(6, 10),
                         num_speakers=1, vocab_size=config.vocab_size, with_durations=False, with_waves=False)
    recipe.data_config.batch_size, recipe.data_config.batching = 2, "padded"
    recipe.data_config.mel_length_threshold = 0
    recipe.data_config.use_fixed_shapes = True  # one XLA program for every batch
    batches, _, dataset = tacotron2_recipe.build_datasets(recipe, tmp_path / "dump" / "train", None, True, 1)
    assert batches.element_spec["mel_gts"].shape[1] == dataset.longest_lengths()["mel_gts"]
    trainer = tacotron2_recipe.Tacotron2Trainer(config={"outdir": str(tmp_path / "exp")},
                                                training_config=recipe.training_config)
    trainer.compile(tacotron2_recipe.build_tacotron2(config), create_optimizer(recipe.optimizer_params, 10))
    compare_forward_backward(trainer, next(iter(batches)), "model")


@pytest.mark.parametrize("adversarial", [False, True])
def test_mb_melgan_generator_and_discriminator_match_under_xla(tmp_path, adversarial):
    values = yaml.safe_load(MB_MELGAN_TINY.read_text())
    model_values, trainer_config, vocoder_config = split_vocoder_yaml(values)
    trainer_config.outdir = str(tmp_path)
    trainer = VocoderGanTrainer(trainer_config, vocoder_config)
    generator, discriminator = build_vocoder_models(model_values, 80, 4096)
    trainer.compile(generator, discriminator, tf.keras.optimizers.Adam(), tf.keras.optimizers.Adam())
    rng = np.random.default_rng(0)
    batch = {
        "mels": tf.constant(rng.normal(size=(2, 16, 80)).astype(np.float32)),
        "audios": tf.constant(0.3 * np.sin(np.arange(4096) * 0.05)[None].repeat(2, 0).astype(np.float32)),
    }
    active = ("generator", "discriminator") if adversarial else ("generator",)
    for group in active:
        compare_forward_backward(trainer, batch, group, state={"active_groups": active})
