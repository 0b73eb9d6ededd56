"""Vocoder generators, discriminators, weight norm, configs and GAN losses on tiny models."""

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf

from tensorflow_tts.configs import (
    ConfigError,
    HifiGANDiscriminatorConfig,
    HifiGANGeneratorConfig,
    MelGANDiscriminatorConfig,
    MelGANGeneratorConfig,
    MultiBandMelGANDiscriminatorConfig,
    MultiBandMelGANGeneratorConfig,
)
from tensorflow_tts.layers.upsample import TFConvTranspose1d
from tensorflow_tts.layers.weight_norm import WeightNormConv1D
from tensorflow_tts.losses.adversarial import TFFeatureMatchLoss, TFMelGANAdversarialLoss
from tensorflow_tts.models import (
    TFHifiGANDiscriminator,
    TFHifiGANGenerator,
    TFHifiGANMultiPeriodDiscriminator,
    TFMBMelGANGenerator,
    TFMelGANGenerator,
    TFMelGANMultiScaleDiscriminator,
)

NUM_MELS = 20
TINY = dict(filters=16, upsample_scales=[2, 3], stacks=2, kernel_size=3)


def tiny_generators():
    return {
        "melgan": TFMelGANGenerator(MelGANGeneratorConfig(**TINY)),
        "multiband_melgan": TFMBMelGANGenerator(MultiBandMelGANGeneratorConfig(**TINY, out_channels=4, subbands=4, taps=14)),
        "hifigan": TFHifiGANGenerator(
            HifiGANGeneratorConfig(**TINY, stack_kernel_size=[3, 5], stack_dilation_rate=[[1, 3], [1, 2]], is_weight_norm=True)
        ),
    }


@pytest.fixture(scope="module")
def generators():
    return tiny_generators()


@pytest.mark.parametrize("name", ["melgan", "multiband_melgan", "hifigan"])
@pytest.mark.parametrize("frames", [7, 8])
def test_audio_length_is_frames_times_hop(generators, name, frames):
    generator = generators[name]
    mels = tf.random.normal([2, frames, NUM_MELS])
    audio = generator(mels)
    assert audio.shape == (2, frames * generator.hop_size, 1)
    assert generator.inference(mels).shape == audio.shape
    if name != "multiband_melgan":  # tanh output (MB-MelGAN: tanh is on the subbands, before the PQMF)
        assert np.all(np.abs(audio.numpy()) <= 1.0)


@pytest.mark.parametrize("name", ["melgan", "multiband_melgan", "hifigan"])
def test_inference_runs_rows_with_the_keras_layers_values(generators, name):
    generator = generators[name]
    mels = tf.random.stateless_normal([2, 9, NUM_MELS], seed=[4, 2])
    generator(mels)  # builds the weights
    keras = generator(mels, training=True)  # the convs as Keras layers; the generators have no dropout
    inference = tf.function(lambda m: generator(m, training=False))
    np.testing.assert_allclose(inference(mels).numpy(), keras.numpy(), rtol=1e-5, atol=1e-5)


def reshapes_in_inference(stacks):
    """Reshape-type ops in the traced inference graph of a tiny MB-MelGAN with `stacks` per stage."""
    generator = TFMBMelGANGenerator(MultiBandMelGANGeneratorConfig(**dict(TINY, stacks=stacks), subbands=4, taps=14))
    mels = tf.zeros([1, 9, NUM_MELS])
    generator(mels)
    graph = tf.function(lambda m: generator(m, training=False)).get_concrete_function(mels).graph
    return sorted(op.type for op in graph.get_operations() if op.type in {"ExpandDims", "Squeeze", "Reshape"})


def test_inference_reshapes_the_signal_once_per_generator_not_per_conv():
    # The generators run inference on rows (B, 1, T, C) from the first conv to the last: a
    # TFLite file copied the signal at the reshapes each 1-D conv needed around it.
    assert reshapes_in_inference(stacks=1) == reshapes_in_inference(stacks=3)


def test_hop_sizes(generators):
    assert generators["melgan"].hop_size == 6
    assert generators["multiband_melgan"].hop_size == 24
    assert MultiBandMelGANGeneratorConfig().hop_size == 256  # v1: [8, 4, 2] x 4 subbands


def test_multiband_exposes_subbands_and_synthesises_them(generators):
    generator = generators["multiband_melgan"]
    mels = tf.random.normal([1, 9, NUM_MELS])
    audio, subbands = generator(mels, return_subbands=True)
    assert subbands.shape == (1, 9 * 6, 4)
    np.testing.assert_allclose(generator.generate_subbands(mels), subbands)
    np.testing.assert_allclose(generator.pqmf.synthesis(subbands), audio, atol=1e-6)


def test_generator_config_round_trip(generators):
    generator = generators["hifigan"]
    clone = TFHifiGANGenerator.from_config(generator.get_config())
    assert clone.config == generator.config


def test_weight_norm_conv_starts_equal_to_plain_conv_and_normalises_per_channel():
    x = tf.random.normal([2, 11, 3])
    layer = WeightNormConv1D(5, 3, padding="same")
    y = layer(x)
    names = sorted(w.name.split("/")[-1] for w in layer.weights)
    assert names == ["bias:0", "g:0", "kernel:0"]
    plain = tf.nn.conv1d(x, layer.kernel, stride=1, padding="SAME") + layer.bias
    np.testing.assert_allclose(y, plain, atol=1e-5)  # g starts at ||v||
    layer.g.assign(tf.ones([5]))
    kernel = tf.nn.l2_normalize(layer.kernel, axis=[0, 1])
    np.testing.assert_allclose(layer(x), tf.nn.conv1d(x, kernel, 1, "SAME") + layer.bias, atol=1e-5)


def test_weight_norm_transposed_conv_uses_the_output_channel_axis():
    layer = TFConvTranspose1d(4, kernel_size=6, strides=3, is_weight_norm=True)
    x = tf.random.normal([1, 5, 2])
    before = layer(x)
    assert before.shape == (1, 15, 4)
    assert layer.g.shape == (4,)
    layer.kernel.assign(layer.kernel * 7.0)  # the direction's scale does not matter
    np.testing.assert_allclose(layer(x), before, atol=1e-5)


def test_melgan_multiscale_discriminator_outputs():
    config = MelGANDiscriminatorConfig(scales=2, filters=8, downsample_scales=[2, 2], max_downsample_filters=32)
    discriminator = TFMelGANMultiScaleDiscriminator(config)
    outputs = discriminator(tf.random.normal([2, 256, 1]))
    assert len(outputs) == 2
    # first conv, 2 downsampling convs, last conv, then the score map
    assert [len(features) for features in outputs] == [5, 5]
    assert outputs[0][-1].shape == (2, 64, 1)
    assert outputs[0][2].shape == (2, 64, 32)  # 8 -> 16 -> 32 channels, time / 4
    assert outputs[1][-1].shape[1] < 64  # the second scale sees pooled audio


def test_multiband_discriminator_v1_defaults():
    config = MultiBandMelGANDiscriminatorConfig()
    assert (config.max_downsample_filters, config.downsample_scales, config.is_weight_norm) == (512, [4, 4, 4], False)


def test_hifigan_discriminators_fold_audio_by_period():
    config = HifiGANDiscriminatorConfig(period_scales=[2, 3], n_layers=2, filters=4, is_weight_norm=True)
    multiperiod = TFHifiGANMultiPeriodDiscriminator(config)
    audio = tf.random.normal([1, 100, 1])
    outputs = multiperiod(audio)
    assert len(outputs) == 2 and len(outputs[0]) == 3
    assert outputs[0][-1].shape == (1, 6, 2, 1)  # 100 / 2 = 50 rows, strided by 3 twice
    assert outputs[1][0].shape == (1, 12, 3, 4)  # 100 padded to 102 = 34 x 3, strided by 3
    multiscale = TFMelGANMultiScaleDiscriminator(
        MelGANDiscriminatorConfig(scales=1, filters=4, downsample_scales=[2], is_weight_norm=False)
    )
    assert len(TFHifiGANDiscriminator(multiperiod, multiscale)(audio)) == 3


def test_config_errors_name_the_problem():
    with pytest.raises(ConfigError, match="unknown key.*'hop'"):
        MelGANGeneratorConfig.from_dict({"hop": 256})
    with pytest.raises(ConfigError, match="model_type 'hifigan_generator'"):
        MelGANGeneratorConfig.from_dict({"model_type": "hifigan_generator"})
    with pytest.raises(ConfigError, match="stacks"):
        HifiGANGeneratorConfig.from_dict({"stacks": 2})
    with pytest.raises(ConfigError, match="out_channels .* must equal subbands"):
        MultiBandMelGANGeneratorConfig.from_dict({"out_channels": 1})


def test_adversarial_losses():
    ones, zeros = tf.ones([2, 10, 1]), tf.zeros([2, 10, 1])
    mse = TFMelGANAdversarialLoss("mse")
    np.testing.assert_allclose(mse.generator_loss([[ones], [ones]]), [0.0, 0.0])
    np.testing.assert_allclose(mse.generator_loss([zeros]), [1.0, 1.0])
    real_loss, fake_loss = mse.discriminator_loss([[ones]], [[zeros]])
    np.testing.assert_allclose(real_loss + fake_loss, [0.0, 0.0])
    hinge = TFMelGANAdversarialLoss("hinge")
    real_loss, fake_loss = hinge.discriminator_loss([zeros], [zeros])
    np.testing.assert_allclose(real_loss + fake_loss, [2.0, 2.0])
    with pytest.raises(ValueError, match="loss_type"):
        TFMelGANAdversarialLoss("wasserstein")


def test_feature_matching_ignores_scores_and_averages_layers():
    feature = tf.ones([2, 4, 3])
    real = [[feature, feature * 2, tf.zeros([2, 4, 1])]]
    fake = [[feature, feature * 2 + 0.5, tf.ones([2, 4, 1])]]
    np.testing.assert_allclose(TFFeatureMatchLoss()(real, fake), [0.25, 0.25])


def test_own_h5_weights_are_not_mistaken_for_old_ones(generators, tmp_path):
    generator = generators["melgan"]
    mels = tf.random.normal([1, 6, NUM_MELS])
    expected = generator(mels)
    generator.save_weights(str(tmp_path / "melgan.h5"))
    clone = TFMelGANGenerator(generator.config)
    clone(mels)
    clone.load_weights(str(tmp_path / "melgan.h5"))
    np.testing.assert_allclose(clone(mels), expected)
