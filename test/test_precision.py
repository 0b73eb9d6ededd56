"""Mixed precision: our models compute in bfloat16 and hand back float32, so a float32 loss written
for the float32 models (1.8's examples, the side-by-side harness) trains them unchanged; and the
CPU check that decides whether bfloat16 is worth it."""

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.inference import TFAutoModel
from tensorflow_tts.models import registry
from tensorflow_tts.models.serving import ServableModel
from tensorflow_tts.utils.precision import cpu_has_native_bfloat16, to_float32

from helpers.tiny import build_seq2seq_trainer, trainer_config
from test_registry import serving_inputs, tiny_model

SERVABLE = [pytest.param(entry, id=entry.name) for entry in registry.MODEL_TYPES
            if issubclass(entry.model_class, ServableModel)]


@pytest.fixture
def mixed_bfloat16():
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    yield
    tf.keras.mixed_precision.set_global_policy("float32")


def floating(structure):
    return [value for value in tf.nest.flatten(structure) if value.dtype.is_floating]


def relative_error(values, expected):
    values, expected = np.asarray(values, np.float64), np.asarray(expected, np.float64)
    return np.sqrt(np.mean((values - expected) ** 2) / np.mean(expected**2))


@pytest.mark.parametrize("entry", SERVABLE)
def test_servable_models_compute_in_bfloat16_and_return_float32(entry, mixed_bfloat16):
    model = tiny_model(entry)
    assert model.compute_dtype == "bfloat16"
    assert all(variable.dtype == tf.float32 for variable in model.variables)
    outputs = model.serve(serving_inputs(model))
    assert floating(outputs) and all(value.dtype == tf.float32 for value in floating(outputs))
    assert all(np.all(np.isfinite(value.numpy())) for value in floating(outputs))
    if entry.role != "vocoder":  # bfloat16 may round a duration the other way: lengths differ
        return
    # Computed in bfloat16: rebuilt in float32 with the same weights, the audio differs by
    # bfloat16's rounding, a little. Relative to the audio's own size: a tiny random model's
    # audio is quiet, so a bound in absolute terms would pass any audio of the same loudness.
    tf.keras.mixed_precision.set_global_policy("float32")
    reference = tiny_model(entry)
    reference.set_weights(model.get_weights())
    expected = reference.serve(serving_inputs(reference))["audio"].numpy()
    assert not np.array_equal(outputs["audio"].numpy(), expected)  # it did compute in bfloat16
    assert relative_error(outputs["audio"].numpy(), expected) < 0.05


PUBLISHED_SIGNAL_MODELS = [pytest.param(entry, id=entry.name) for entry in registry.MODEL_TYPES
                           if entry.role == "vocoder" or entry.name.endswith("discriminator")]


@pytest.mark.parametrize("entry", PUBLISHED_SIGNAL_MODELS)
def test_published_signal_models_train_in_bfloat16_as_in_float32(entry):
    """Every vocoder and discriminator at its published size (a short signal): its outputs and the
    gradient to its input under mixed_bfloat16 are float32's to bfloat16's rounding. The sizes
    matter: TensorFlow's oneDNN bfloat16 conv fails only on some shapes (PQMF's 62 taps)."""
    config = entry.config_class()
    discriminator = entry.name.endswith("discriminator")
    signal = (tf.random.stateless_uniform([1, 4096, 1], seed=(1, 2), minval=-0.5, maxval=0.5) if discriminator
              else tf.random.stateless_normal([1, 16, 80], seed=(1, 2)))
    noise = {} if discriminator or entry.name != "parallel_wavegan_generator" else {
        "noise": tf.random.stateless_normal([1, 16 * config.hop_size, 1], seed=(3, 4))}

    def outputs_and_gradient(model):
        with tf.GradientTape() as tape:
            tape.watch(signal)
            outputs = [tf.cast(value, tf.float32) for value in tf.nest.flatten(model(signal, training=True, **noise))]
            loss = sum(tf.reduce_sum(value * tf.random.stateless_normal(tf.shape(value), seed=(5, index)))
                       for index, value in enumerate(outputs))
        return [value.numpy() for value in outputs], tape.gradient(loss, signal).numpy()

    def build():
        model = entry.model_class(config=config) if discriminator else TFAutoModel.from_pretrained(config=config, num_mels=80)
        model(signal, training=True, **noise)
        return model

    reference = build()
    expected, expected_gradient = outputs_and_gradient(reference)
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = build()
        model.set_weights(reference.get_weights())
        outputs, gradient = outputs_and_gradient(model)
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    errors = [relative_error(value, wanted) for value, wanted in zip(outputs, expected)]
    assert len(errors) == len(expected) and 0 < max(errors) < 0.1, errors
    # The gradient crosses every layer back to the input: bfloat16's rounding adds up to 0.1-0.25
    # for the generators, the same with oneDNN off.
    assert relative_error(gradient, expected_gradient) < 0.5


def test_a_float32_training_step_trains_mixed_precision_models(mixed_bfloat16):
    """The side-by-side harness's step: our outputs minus float32 targets, Adam on every variable."""
    fastspeech2 = tiny_model(registry.model_type("fastspeech2"))
    vocoder = tiny_model(registry.model_type("multiband_melgan_generator"))
    ids = tf.constant([[3, 5, 7, 2, 9], [4, 4, 1, 8, 0]], tf.int32)
    durations = tf.constant([[2, 1, 3, 1, 2], [1, 2, 2, 3, 0]], tf.int32)
    mels = tf.random.stateless_normal([2, 9, 6], seed=(5, 6))
    f0_gts, energy_gts = tf.random.stateless_normal([2, 2, 5], seed=(9, 10))
    audio = tf.random.stateless_uniform([2, 9 * vocoder.config.hop_size, 1], seed=(7, 8), minval=-0.5, maxval=0.5)

    def fastspeech2_loss(training=True):
        mel_before, mel_after, log_durations, f0, energy = fastspeech2(
            input_ids=ids, speaker_ids=tf.zeros([2], tf.int32), duration_gts=durations,
            f0_gts=f0_gts, energy_gts=energy_gts, training=training)[:5]
        target = tf.math.log(tf.cast(durations, tf.float32) + 1.0)
        return (tf.reduce_mean(tf.abs(mels - mel_before)) + tf.reduce_mean(tf.abs(mels - mel_after))
                + tf.reduce_mean(tf.square(target - log_durations)) + tf.reduce_mean(tf.square(f0_gts - f0))
                + tf.reduce_mean(tf.square(energy_gts - energy)))

    def vocoder_loss(training=True):
        return tf.reduce_mean(tf.abs(audio - vocoder(mels, training=training)))

    for model, loss_of in ((fastspeech2, fastspeech2_loss), (vocoder, vocoder_loss)):
        optimizer = tf.keras.optimizers.Adam(1e-3)
        before = [variable.numpy() for variable in model.trainable_variables]
        first = float(loss_of(training=False))  # without dropout: a loss that only the weights change
        for _ in range(5):
            with tf.GradientTape() as tape:
                loss = loss_of()
            assert loss.dtype == tf.float32 and np.isfinite(loss.numpy())
            gradients = tape.gradient(loss, model.trainable_variables)
            assert all(g.dtype == tf.float32 for g in gradients if g is not None)
            optimizer.apply_gradients([(g, v) for g, v in zip(gradients, model.trainable_variables) if g is not None])
        assert float(loss_of(training=False)) < first, model.name
        trained = [g is not None for g in gradients]
        changed = [not np.array_equal(old, variable.numpy()) for old, variable in zip(before, model.trainable_variables)]
        assert changed == trained and sum(trained) > 0.9 * len(trained), (model.name, sum(trained), len(trained))


def test_to_float32_casts_only_low_precision_floats():
    half, single, ids = tf.ones([2], tf.bfloat16), tf.ones([2], tf.float32), tf.ones([2], tf.int32)
    cast = to_float32({"mel": half, "same": single, "ids": ids, "nested": [half]})
    assert cast["mel"].dtype == tf.float32 and cast["nested"][0].dtype == tf.float32
    assert cast["same"] is single and cast["ids"] is ids  # nothing added to a float32 graph


@pytest.mark.parametrize(
    "flags_line, native",
    [
        ("flags\t\t: fpu sse2 avx2 avx512f avx512_vnni avx512_bf16 amx_tile", True),
        ("flags\t\t: fpu sse2 avx2 fma avx512f avx512_vnni", False),
        ("flags\t\t: fpu sse2 amx_bf16 amx_tile", True),
        ("Features\t: fp asimd sve bf16 i8mm", True),
        ("Features\t: fp asimd evtstrm aes", False),
    ],
)
def test_native_bfloat16_is_read_from_the_cpu_flags(tmp_path, flags_line, native):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: test\n{flags_line}\n\n")
    assert cpu_has_native_bfloat16(str(cpuinfo)) is native
    assert cpu_has_native_bfloat16(str(tmp_path / "missing")) is False


@pytest.mark.parametrize("native", [True, False])
def test_the_trainer_warns_where_bfloat16_is_emulated(tmp_path, monkeypatch, caplog, mixed_bfloat16, native):
    from tensorflow_tts.trainers import base_trainer

    monkeypatch.setattr(base_trainer, "cpu_has_native_bfloat16", lambda: native)
    with caplog.at_level("WARNING", logger=base_trainer.__name__):
        trainer = build_seq2seq_trainer(trainer_config(tmp_path, mixed_precision_policy="mixed_bfloat16"),
                                        is_mixed_precision=True)
    assert trainer.mixed_precision_policy == "mixed_bfloat16"
    assert ("slower than float32" in caplog.text) is (not native and not tf.config.list_physical_devices("GPU"))
