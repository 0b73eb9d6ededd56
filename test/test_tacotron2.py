"""Tacotron 2: shapes, padding, stopping, windowed attention, dropout control, guided attention loss."""

import numpy as np
import pytest
import yaml

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import ConfigError, Tacotron2Config  # noqa: E402
from tensorflow_tts.layers import bilstm  # noqa: E402
from tensorflow_tts.layers.zoneout_lstm import ZoneoutLSTMCell  # noqa: E402
from tensorflow_tts.losses.guided_attention import (  # noqa: E402
    GuidedAttentionLoss,
    guided_attention_loss,
    guided_attention_weights,
)
from tensorflow_tts.models import TFTacotron2  # noqa: E402
from tensorflow_tts.utils.precision import weights_stored_as  # noqa: E402
from helpers.tiny import TACOTRON2_V1_SHAPE  # noqa: E402

N_MELS = 10


def tiny_config(**overrides):
    values = dict(
        vocab_size=20, embedding_hidden_size=16, n_conv_encoder=2, encoder_conv_filters=16,
        encoder_lstm_units=8, prenet_units=16, decoder_lstm_units=16, attention_dim=8,
        attention_filters=4, attention_kernel=5, n_mels=N_MELS, n_conv_postnet=2,
        postnet_conv_filters=16, **TACOTRON2_V1_SHAPE,
    )
    values.update(overrides)
    return Tacotron2Config.from_dict(values)


def padded_batch(input_lengths=(7, 4), mel_lengths=(9, 5), seed=0):
    """Token ids, lengths, speakers, mels and mel lengths for a zero-padded batch."""
    rng = np.random.default_rng(seed)
    input_ids = np.zeros([len(input_lengths), max(input_lengths)], np.int32)
    for row, length in enumerate(input_lengths):
        input_ids[row, :length] = rng.integers(1, 20, length)
    mels = rng.normal(size=[len(mel_lengths), max(mel_lengths), N_MELS]).astype(np.float32)
    for row, length in enumerate(mel_lengths):
        mels[row, length:] = 0.0
    return (tf.constant(input_ids), tf.constant(input_lengths, tf.int32), tf.zeros([len(input_lengths)], tf.int32),
            tf.constant(mels), tf.constant(mel_lengths, tf.int32))


@pytest.mark.parametrize("attention_type", ["lsa", "sma"])
@pytest.mark.parametrize("reduction_factor, frames, steps", [(1, 9, 9), (2, 9, 5), (2, 8, 4)])
def test_training_call_shapes(reduction_factor, frames, steps, attention_type):
    model = TFTacotron2(tiny_config(reduction_factor=reduction_factor, attention_type=attention_type))
    batch = padded_batch(mel_lengths=(frames, 5))
    decoder_output, mel_outputs, stop_tokens, alignments = model(*batch, training=True)
    assert decoder_output.shape == mel_outputs.shape == (2, steps * reduction_factor, N_MELS)
    assert stop_tokens.shape == (2, steps * reduction_factor)
    assert alignments.shape == (2, 7, steps)
    np.testing.assert_allclose(tf.reduce_sum(alignments, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(alignments[1, 4:], 0.0)  # padded tokens get no attention


def test_padding_does_not_change_a_sequence():
    model = TFTacotron2(tiny_config(reduction_factor=2, n_speakers=3, prenet_dropout_at_inference=False))
    input_ids, input_lengths, speaker_ids, mels, mel_lengths = padded_batch(mel_lengths=(9, 6))
    speaker_ids = tf.constant([2, 1])
    batched = model(input_ids, input_lengths, speaker_ids, mels, mel_lengths, training=False)
    alone = model(input_ids[1:, :4], input_lengths[1:], speaker_ids[1:], mels[1:, :6], mel_lengths[1:], training=False)
    for together, single in zip(batched[:2], alone[:2]):  # decoder_output, mel_outputs
        np.testing.assert_allclose(together[1, :6], single[0], atol=1e-5)
    np.testing.assert_allclose(batched[2][1, :6], alone[2][0], atol=1e-5)
    np.testing.assert_allclose(batched[3][1, :4, :3], alone[3][0], atol=1e-6)


def test_call_teacher_forces_on_mel_gts():
    model = TFTacotron2(tiny_config(prenet_dropout_at_inference=False))
    input_ids, input_lengths, speaker_ids, mels, mel_lengths = padded_batch()
    first = model(input_ids, input_lengths, speaker_ids, mels, mel_lengths)[0]
    changed = tf.concat([mels[:, :4], mels[:, 4:] + 1.0], axis=1)
    second = model(input_ids, input_lengths, speaker_ids, changed, mel_lengths)[0]
    # Frame t depends on ground-truth frames < t only.
    np.testing.assert_allclose(first[:, :5], second[:, :5], atol=1e-6)
    assert not np.allclose(first[:, 5:], second[:, 5:])


def set_stop_bias(model, value):
    model.decoder_cell.stop_projection.kernel.assign(tf.zeros_like(model.decoder_cell.stop_projection.kernel))
    model.decoder_cell.stop_projection.bias.assign(tf.fill(model.decoder_cell.stop_projection.bias.shape, value))


def test_inference_runs_to_maximum_iterations_without_a_stop():
    model = TFTacotron2(tiny_config(reduction_factor=2))
    model.build_once()
    set_stop_bias(model, -10.0)
    model.setup_maximum_iterations(6)
    decoder_output, mel_outputs, stop_tokens, alignments = model.inference(*padded_batch()[:3])
    assert decoder_output.shape == mel_outputs.shape == (2, 12, N_MELS)
    assert stop_tokens.shape == (2, 12) and alignments.shape == (2, 7, 6)


def test_inference_stops_at_the_stop_token():
    model = TFTacotron2(tiny_config(reduction_factor=2))
    model.build_once()
    set_stop_bias(model, 10.0)
    decoder_output, _, stop_tokens, alignments = model.inference(*padded_batch()[:3])
    assert decoder_output.shape == (2, 2, N_MELS) and alignments.shape == (2, 7, 1)
    assert np.all(tf.sigmoid(stop_tokens) > 0.5)


def deterministic_decoder(steps, **overrides):
    """A tiny Tacotron2 (r = 2) that decodes ``steps`` steps without stopping, prenet dropout off."""
    model = TFTacotron2(tiny_config(reduction_factor=2, **overrides))
    model.build_once()
    set_stop_bias(model, -10.0)
    model.setup_maximum_iterations(steps)
    model.setup_prenet_dropout(enabled=False)
    return model


@pytest.mark.parametrize("attention_type, n_lstm_decoder", [("lsa", 1), ("sma", 1), ("lsa", 2)])
def test_inference_moves_the_context_products_out_of_the_loop_where_that_reads_less(attention_type, n_lstm_decoder):
    """B * T < E (the memory's channels): the steps multiply the alignments by the values already
    multiplied by the context's weight rows; otherwise the context by the rows, as in training.
    The same sums in another order: equal to float rounding, and not bit for bit."""
    model = deterministic_decoder(6, attention_type=attention_type, n_lstm_decoder=n_lstm_decoder)
    short, long = padded_batch()[:3], padded_batch(input_lengths=(9, 5))[:3]
    assert 2 * 7 < model.config.encoder_output_size <= 2 * 9
    projected = {name: model.inference(*inputs) for name, inputs in (("short", short), ("long", long))}
    model.setup_memory_projection(False)
    for name, inputs in (("short", short), ("long", long)):
        for ours, in_loop in zip(projected[name], model.inference(*inputs)):
            np.testing.assert_allclose(ours, in_loop, rtol=1e-5, atol=1e-6)
    assert not np.array_equal(projected["short"][0], model.inference(*short)[0])
    np.testing.assert_array_equal(projected["long"][0], model.inference(*long)[0])


def test_a_batch_of_one_projects_the_memory_at_any_length():
    """The TFLite form (a static batch of one) holds one loop, the projected one, whatever T is."""
    model = deterministic_decoder(5)
    inputs = padded_batch(input_lengths=(18,))[:3]
    assert 18 >= model.config.encoder_output_size
    projected = model.inference_tflite(*inputs)
    model.setup_memory_projection(False)
    in_loop = model.inference_tflite(*inputs)
    for ours, theirs in zip(projected, in_loop):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert not np.array_equal(projected[0], in_loop[0])


def test_a_trace_for_int8_weights_keeps_the_context_products_in_the_loop():
    """An int8 file stores the context's rows in a quarter of the float projected memory's bytes."""
    model = deterministic_decoder(5)
    inputs = padded_batch(input_lengths=(5,))[:3]
    traced = {}
    for quantize in ("float32", "int8"):
        with weights_stored_as(quantize):
            traced[quantize] = tf.function(model._inference_tflite)(*inputs)[0]
    model.setup_memory_projection(False)
    in_loop = tf.function(model._inference_tflite)(*inputs)[0]
    np.testing.assert_array_equal(traced["int8"], in_loop)
    assert not np.array_equal(traced["float32"], in_loop)


def test_stepwise_monotonic_inference_attends_one_token_at_a_time_and_never_back():
    model = TFTacotron2(tiny_config(reduction_factor=2, attention_type="sma"))
    model.setup_maximum_iterations(12)
    *_, alignments = model.inference(*padded_batch()[:3])
    alignments = alignments.numpy()  # (B, T, S)
    assert np.all(np.isin(alignments, [0.0, 1.0])) and np.all(alignments.sum(axis=1) == 1.0)
    assert np.all(np.isin(np.diff(alignments.argmax(axis=1), axis=1), [0, 1]))
    assert not np.any(alignments[1, 4:])  # never onto the padding of the shorter text


def test_window_limits_attention_to_the_previous_peak():
    model = TFTacotron2(tiny_config())
    model.setup_maximum_iterations(8)
    model.setup_window(win_front=1, win_back=2)
    alignments = model.inference(*padded_batch(input_lengths=(7, 7))[:3])[3].numpy()
    for sequence in alignments:
        peak = 0
        for step in range(sequence.shape[1]):
            outside = np.ones(7, bool)
            outside[max(peak - 1, 0) : peak + 3] = False
            np.testing.assert_array_equal(sequence[outside, step], 0.0)
            peak = int(np.argmax(sequence[:, step]))


def test_prenet_dropout_is_on_at_inference_and_seedable():
    model = TFTacotron2(tiny_config())
    model.build_once()
    set_stop_bias(model, -10.0)  # always 4 steps, so outputs can be compared
    model.setup_maximum_iterations(4)
    inputs = padded_batch()[:3]
    model.setup_prenet_dropout(seed=7)
    first, again = model.inference(*inputs)[0], model.inference(*inputs)[0]
    np.testing.assert_array_equal(first, again)
    model.setup_prenet_dropout(seed=8)
    assert not np.allclose(first, model.inference(*inputs)[0])
    model.setup_prenet_dropout(enabled=False)
    np.testing.assert_array_equal(model.inference(*inputs)[0], model.inference(*inputs)[0])


@pytest.mark.parametrize("attention_type", ["lsa", "sma"])
def test_training_call_has_gradients_for_every_weight(attention_type):
    model = TFTacotron2(tiny_config(reduction_factor=2, n_speakers=2, decoder_zoneout_rate=0.1,
                                    attention_type=attention_type))
    batch = padded_batch()
    with tf.GradientTape() as tape:
        decoder_output, mel_outputs, stop_tokens, alignments = model(*batch, training=True)
        loss = tf.reduce_mean(mel_outputs**2) + tf.reduce_mean(stop_tokens**2)
    gradients = tape.gradient(loss, model.trainable_weights)
    assert all(gradient is not None for gradient in gradients)


def test_zoneout_cell_without_zoneout_is_a_keras_lstm_cell():
    inputs = tf.random.normal([3, 5])
    states = [tf.random.normal([3, 4]), tf.random.normal([3, 4])]
    keras_cell, our_cell = tf.keras.layers.LSTMCell(4), ZoneoutLSTMCell(4)
    keras_cell(inputs, states), our_cell(inputs, states)
    for ours, theirs in zip(our_cell.weights, keras_cell.weights):
        ours.assign(theirs)
    np.testing.assert_allclose(our_cell(inputs, states)[0], keras_cell(inputs, states)[0], atol=1e-6)
    zoneout_cell = ZoneoutLSTMCell(4, zoneout_rate=0.25)
    zoneout_cell(inputs, states)
    for ours, theirs in zip(zoneout_cell.weights, keras_cell.weights):
        ours.assign(theirs)
    expected = 0.25 * states[0] + 0.75 * keras_cell(inputs, states)[0]
    np.testing.assert_allclose(zoneout_cell(inputs, states, training=False)[0], expected, atol=1e-6)



@pytest.mark.parametrize("lengths", [(11, 7, 1), (11, 11, 11), None])
def test_one_loop_bilstm_is_keras_bidirectional_lstm(lengths):
    """Both directions in one loop, input products before it: Keras' values, masked steps included
    (zeros out, states kept, the backward direction starting at each sequence's last valid step)."""
    layer = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(6, return_sequences=True))
    inputs = tf.random.stateless_normal([3, 11, 5], seed=[4, 2])
    mask = None if lengths is None else tf.sequence_mask(lengths, 11)
    expected = layer(inputs, mask=mask, training=False)
    assert bilstm.loop_form(layer)
    ours = tf.function(bilstm.bidirectional_lstm)(layer, inputs, mask)
    np.testing.assert_allclose(ours, expected, atol=1e-6)
    if lengths == (11, 7, 1):
        np.testing.assert_array_equal(ours[2, 1:], 0.0)


def test_the_loop_form_takes_only_what_it_computes():
    def bidirectional(**lstm):
        layer = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4, **lstm), merge_mode="concat")
        layer(tf.zeros([1, 3, 2]))
        return layer

    assert bilstm.loop_form(bidirectional(return_sequences=True))
    assert not bilstm.loop_form(tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4, return_sequences=True)))  # not built
    assert not bilstm.loop_form(bidirectional(return_sequences=False))
    assert not bilstm.loop_form(bidirectional(return_sequences=True, activation="relu"))
    assert not bilstm.loop_form(bidirectional(return_sequences=True, use_bias=False))


def test_the_encoder_runs_its_bilstm_in_one_loop_outside_training(monkeypatch):
    model = TFTacotron2(tiny_config(reduction_factor=2, prenet_dropout_at_inference=False))
    input_ids, input_lengths, speaker_ids = padded_batch()[:3]
    mask = tf.sequence_mask(input_lengths, input_ids.shape[1])
    model(*padded_batch(), training=False)
    calls = []
    loop = bilstm.bidirectional_lstm
    monkeypatch.setattr(bilstm, "bidirectional_lstm", lambda *args: calls.append(1) or loop(*args))
    ours = model.encoder(input_ids, speaker_ids, mask, training=False)
    monkeypatch.setattr(bilstm, "loop_form", lambda layer: False)
    keras = model.encoder(input_ids, speaker_ids, mask, training=False)
    assert calls == [1]
    np.testing.assert_allclose(ours, keras, atol=1e-6)

def test_guided_attention_loss_prefers_the_diagonal():
    loss = GuidedAttentionLoss(sigma=0.2)
    diagonal = tf.eye(6)[tf.newaxis]
    anti_diagonal = tf.reverse(diagonal, axis=[2])
    lengths = tf.constant([6])
    assert float(loss(diagonal, lengths, lengths)[0]) < 1e-6
    assert float(loss(anti_diagonal, lengths, lengths)[0]) > 0.1
    # A padded copy of the same alignment costs the same.
    padded = tf.pad(anti_diagonal, [[0, 0], [0, 2], [0, 3]])
    np.testing.assert_allclose(loss(padded, lengths, lengths), loss(anti_diagonal, lengths, lengths), rtol=1e-6)


def test_guided_attention_sigma_sets_the_band_width():
    almost_diagonal = tf.roll(tf.eye(8), shift=1, axis=0)[tf.newaxis]
    lengths = tf.constant([8])
    narrow = GuidedAttentionLoss(sigma=0.05)(almost_diagonal, lengths, lengths)
    wide = GuidedAttentionLoss(sigma=0.4)(almost_diagonal, lengths, lengths)
    assert float(narrow[0]) > float(wide[0]) > 0.0


def test_guided_attention_per_step_is_the_mean_penalty_of_a_decoder_step():
    # 5 tokens, 4 steps (padded to 7 x 6); every step attends to token 4.
    alignments = np.zeros([1, 7, 6], np.float32)
    alignments[0, 4, :4] = 1.0
    input_lengths, steps = tf.constant([5]), tf.constant([4])
    weights = guided_attention_weights(input_lengths, steps, 7, 6, sigma=0.2).numpy()[0]
    per_step = guided_attention_loss(alignments, input_lengths, steps, per_step=True)
    np.testing.assert_allclose(per_step, [weights[4, :4].mean()], rtol=1e-6)
    # 1.8's average over steps x tokens is that divided by the tokens.
    per_cell = guided_attention_loss(alignments, input_lengths, steps)
    np.testing.assert_allclose(per_cell * 5, per_step, rtol=1e-6)


def test_old_yaml_loads_and_keys_it_leaves_out_take_1_8s_class_defaults(tmp_path):
    old_yaml = """
model_type: tacotron2
tacotron2_params:
    dataset: ljspeech
    n_speakers: 1
    reduction_factor: 1
    attention_type: "lsa"
"""
    config = Tacotron2Config.from_dict(yaml.safe_load(old_yaml)["tacotron2_params"])
    assert (config.n_speakers, config.reduction_factor) == (1, 1)
    assert (config.embedding_hidden_size, config.n_conv_encoder, config.encoder_lstm_units) == (512, 3, 256)
    assert (config.encoder_conv_activation, config.prenet_activation) == ("mish", "mish")
    assert (config.prenet_units, config.decoder_lstm_units, config.attention_dim) == (256, 1024, 128)
    assert config.prenet_dropout_at_inference and config.decoder_zoneout_rate == 0.0
    with pytest.raises(ConfigError, match="unknown key.*zoneout"):
        Tacotron2Config.from_dict({"zoneout": 0.1})


@pytest.mark.parametrize(
    "dataset, vocab_size", [("baker", 219), ("kss", 81), ("libritts", 86), ("ljspeechu", 96), ("synpaflex", 84)]
)
def test_a_1_8_dataset_name_sets_1_8_vocabulary_size(dataset, vocab_size):
    # A 1.8 YAML names its corpus instead of giving vocab_size; its checkpoint has that many rows.
    assert Tacotron2Config(dataset=dataset, vocab_size=149).vocab_size == vocab_size


def test_config_round_trip_rebuilds_the_same_model():
    model = TFTacotron2(tiny_config(reduction_factor=2))
    clone = TFTacotron2.from_config(model.get_config())
    assert clone.config == model.config and clone.name == model.name


def test_first_token_initial_alignment_starts_the_attention_history_on_token_0():
    zeros = TFTacotron2(tiny_config(prenet_dropout_at_inference=False))
    first = TFTacotron2(tiny_config(prenet_dropout_at_inference=False, initial_alignment="first_token"))
    batch = padded_batch()
    zeros(*batch, training=False)
    first(*batch, training=False)
    first.set_weights(zeros.get_weights())
    state = first.decoder_cell.get_initial_state(2, 7)
    np.testing.assert_array_equal(state.cumulative_alignments, np.eye(7, dtype=np.float32)[[0, 0]])
    assert not np.any(zeros.decoder_cell.get_initial_state(2, 7).cumulative_alignments)
    # Same weights: only the location features of the first step differ, so step 0 differs.
    first_alignments = first(*batch, training=False)[3].numpy()
    zeros_alignments = zeros(*batch, training=False)[3].numpy()
    assert not np.allclose(first_alignments[:, :, 0], zeros_alignments[:, :, 0])
    # And padding is still never attended.
    assert np.all(first_alignments[1, 4:] == 0.0)
    with pytest.raises(ConfigError, match="initial_alignment"):
        tiny_config(initial_alignment="last_token")
