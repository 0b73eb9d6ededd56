"""FastSpeech and FastSpeech2: configs, shapes, padding, speed, speakers, position tables."""

import numpy as np
import pytest
import yaml

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import ConfigError, FastSpeech2Config, FastSpeechConfig  # noqa: E402
from tensorflow_tts.layers.embeddings import PositionEmbedding, sinusoidal_table  # noqa: E402
from tensorflow_tts.layers.length_regulator import LengthRegulator  # noqa: E402
from tensorflow_tts.inference.batching import bucket  # noqa: E402
from tensorflow_tts.models import TFFastSpeech, TFFastSpeech2  # noqa: E402
from tensorflow_tts.models.fastspeech import bucketed_size  # noqa: E402
from helpers.tiny import about_three_frames_per_token

TINY = dict(
    encoder_hidden_size=16,
    encoder_num_hidden_layers=1,
    encoder_num_attention_heads=2,
    encoder_attention_head_size=8,
    encoder_intermediate_size=24,
    decoder_hidden_size=16,
    decoder_num_hidden_layers=1,
    decoder_num_attention_heads=2,
    decoder_attention_head_size=8,
    decoder_intermediate_size=24,
    duration_predictor_filters=16,
    postnet_conv_filters=16,
    num_mels=8,
    max_position_embeddings=64,
)
TINY2 = dict(TINY, variant_predictor_filter=16)

# Two utterances of 7 and 4 tokens; the second is padded with 0.
INPUT_IDS = np.array([[5, 6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 0, 0, 0]], np.int32)
DURATIONS = np.array([[1, 2, 3, 1, 2, 1, 2], [2, 1, 3, 2, 0, 0, 0]], np.int32)
SPEAKERS = np.array([0, 1], np.int32)


def tiny_fastspeech(**overrides):
    tf.keras.utils.set_random_seed(1)
    model = TFFastSpeech(FastSpeechConfig(**dict(TINY, **overrides)))
    model.build_once()
    # Predict about 3 frames per token (random weights predict ~0), as the compat fixtures do.
    about_three_frames_per_token(model)
    return model


def tiny_fastspeech2(**overrides):
    tf.keras.utils.set_random_seed(1)
    model = TFFastSpeech2(FastSpeech2Config(**dict(TINY2, **overrides)))
    model.build_once()
    about_three_frames_per_token(model)
    return model


def per_token_values(seed, pad_value=0.0):
    values = np.random.default_rng(seed).normal(size=INPUT_IDS.shape).astype(np.float32)
    return np.where(INPUT_IDS > 0, values, pad_value).astype(np.float32)


# ---------------------------------------------------------------------------- configs
def test_defaults_follow_the_published_ljspeech_yaml():
    config = FastSpeech2Config()
    assert (config.vocab_size, config.encoder_hidden_size, config.decoder_hidden_size) == (149, 384, 384)
    assert (config.encoder_num_hidden_layers, config.decoder_num_hidden_layers) == (4, 4)
    assert (config.encoder_num_attention_heads, config.encoder_attention_head_size) == (2, 192)
    assert (config.num_mels, config.max_position_embeddings, config.hidden_dropout_prob) == (80, 2048, 0.2)
    assert config.variance_level == "token" and not config.variance_embedding_dropout_at_inference
    assert FastSpeechConfig().hidden_dropout_prob == 0.1


def test_an_old_yaml_section_loads_and_unknown_keys_are_errors():
    old_yaml = """
    model_type: "fastspeech2"
    fastspeech2_params:
        n_speakers: 1
        encoder_hidden_size: 384
        encoder_hidden_act: "mish"
        variant_predictor_filter: 256
        variant_predictor_dropout_rate: 0.5
        hidden_dropout_prob: 0.2
        output_attentions: False
    """
    params = yaml.safe_load(old_yaml)["fastspeech2_params"]
    assert FastSpeech2Config.from_dict(params).variant_predictor_filter == 256
    with pytest.raises(ConfigError, match="variant_predictor_filters"):
        FastSpeech2Config.from_dict({"variant_predictor_filters": 256})
    with pytest.raises(ConfigError, match="variant_predictor_filter"):
        FastSpeechConfig.from_dict({"variant_predictor_filter": 256})  # a FastSpeech2-only key


def test_dataset_other_than_ljspeech_sets_the_vocabulary_as_before():
    assert FastSpeechConfig(dataset="baker", vocab_size=149).vocab_size == 219
    assert FastSpeech2Config(dataset="libritts").vocab_size == 86  # 1.8's LibriTTS table
    with pytest.raises(ConfigError, match="dataset 'klingon'"):
        FastSpeechConfig(dataset="klingon")


# ---------------------------------------------------------------------------- layers
def test_length_regulator_repeats_each_token_for_its_duration():
    hidden = tf.constant([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [0.0]]])
    frames, mask = LengthRegulator()(hidden, tf.constant([[2, 0, 1], [1, 3, 0]]))
    np.testing.assert_array_equal(frames[..., 0], [[1, 1, 3, 0], [4, 5, 5, 5]])
    np.testing.assert_array_equal(mask, [[True, True, True, False], [True, True, True, True]])


# ---------------------------------------------------------------------------- calls
@pytest.mark.parametrize("training", [False, True])
def test_fastspeech2_call_shapes(training):
    model = tiny_fastspeech2()
    outputs = model(INPUT_IDS, SPEAKERS, DURATIONS, per_token_values(0), per_token_values(1), training=training)
    mel_before, mel_after, durations, f0, energy = outputs
    assert mel_before.shape == mel_after.shape == (2, DURATIONS.sum(1).max(), 8)
    assert durations.shape == f0.shape == energy.shape == INPUT_IDS.shape
    # Predictions are zero at padded tokens.
    np.testing.assert_array_equal(np.asarray(f0)[1, 4:], 0.0)


def test_fastspeech_call_shapes():
    mel_before, mel_after, durations = tiny_fastspeech()(INPUT_IDS, SPEAKERS, DURATIONS, training=False)
    assert mel_before.shape == mel_after.shape == (2, 12, 8)
    assert durations.shape == INPUT_IDS.shape
    assert np.all((np.asarray(durations) >= 0) & (np.asarray(durations) <= 6))  # clipped as in 1.8


def assert_padding_changes_nothing(batched, alone, num_tokens, num_frames):
    mel_before, mel_after, durations = batched[:3]
    np.testing.assert_allclose(mel_before[1, :num_frames], alone[0][0], atol=1e-5)
    np.testing.assert_allclose(mel_after[1, :num_frames], alone[1][0], atol=1e-5)
    np.testing.assert_allclose(durations[1, :num_tokens], alone[2][0], atol=1e-5)
    for batched_values, alone_values in zip(batched[3:], alone[3:]):
        np.testing.assert_allclose(batched_values[1, :num_tokens], alone_values[0], atol=1e-5)


def test_fastspeech2_padding_does_not_change_valid_outputs():
    model = tiny_fastspeech2(n_speakers=2)
    # Values at padded tokens are garbage on purpose: they must be ignored.
    f0, energy = per_token_values(0, pad_value=9.0), per_token_values(1, pad_value=-9.0)
    batched = model(INPUT_IDS, SPEAKERS, DURATIONS, f0, energy)
    alone = model(INPUT_IDS[1:, :4], SPEAKERS[1:], DURATIONS[1:, :4], f0[1:, :4], energy[1:, :4])
    assert_padding_changes_nothing(batched, alone, num_tokens=4, num_frames=8)


def test_fastspeech_padding_does_not_change_valid_outputs():
    model = tiny_fastspeech(decoder_hidden_size=24, decoder_attention_head_size=12)
    batched = model(INPUT_IDS, SPEAKERS, DURATIONS)
    alone = model(INPUT_IDS[1:, :4], SPEAKERS[1:], DURATIONS[1:, :4])
    assert_padding_changes_nothing(batched, alone, num_tokens=4, num_frames=8)


def test_batched_inference_matches_one_at_a_time():
    model = tiny_fastspeech2()
    ones = np.ones([2], np.float32)
    batched = model.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)
    alone = model.inference(INPUT_IDS[1:, :4], SPEAKERS[1:], ones[:1], ones[:1], ones[:1])
    num_frames = int(np.sum(alone[2]))
    assert int(np.sum(batched[2][1])) == num_frames
    assert_padding_changes_nothing(batched, alone, num_tokens=4, num_frames=num_frames)


# ---------------------------------------------------------------------------- inference
def expected_durations(log_durations, speed_ratio):
    return np.round(np.maximum(np.exp(log_durations) - 1.0, 0.0) / speed_ratio).astype(np.int32)


@pytest.mark.parametrize("speed_ratio", [2.0, 0.5])
def test_fastspeech2_speed_ratio_scales_durations(speed_ratio):
    model = tiny_fastspeech2()
    log_durations = model(INPUT_IDS, SPEAKERS, DURATIONS, per_token_values(0), per_token_values(1))[2]
    ratios = np.full([2], speed_ratio, np.float32)
    ones = np.ones([2], np.float32)
    mel_before, mel_after, durations, _, _ = model.inference(INPUT_IDS, SPEAKERS, ratios, ones, ones)
    assert durations.dtype == tf.int32
    np.testing.assert_array_equal(durations, expected_durations(np.asarray(log_durations), speed_ratio))
    np.testing.assert_array_equal(np.asarray(durations)[1, 4:], 0)  # padded tokens get no frames
    assert mel_before.shape[1] == mel_after.shape[1] == np.asarray(durations).sum(1).max()


def test_fastspeech_speed_ratio_below_one_slows_down_speech():
    model = tiny_fastspeech()
    normal = model.inference(INPUT_IDS, SPEAKERS, np.ones([2], np.float32))
    slow = model.inference(INPUT_IDS, SPEAKERS, np.full([2], 0.5, np.float32))
    log_durations = np.asarray(model(INPUT_IDS, SPEAKERS, DURATIONS)[2])
    np.testing.assert_array_equal(slow[2], expected_durations(log_durations, 0.5))
    assert slow[0].shape[1] == np.asarray(slow[2]).sum(1).max()
    assert 1.7 < slow[0].shape[1] / normal[0].shape[1] < 2.3


def test_inference_refuses_a_non_positive_speed_ratio():
    model = tiny_fastspeech2()
    ones = np.ones([2], np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="speed_ratios must be > 0"):
        model.inference(INPUT_IDS, SPEAKERS, np.zeros([2], np.float32), ones, ones)


def test_f0_and_energy_ratios_scale_the_predictions():
    model = tiny_fastspeech2()
    ones = np.ones([2], np.float32)
    base = model.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)
    scaled = model.inference(INPUT_IDS, SPEAKERS, ones, 1.5 * ones, 0.5 * ones)
    np.testing.assert_allclose(scaled[3], 1.5 * np.asarray(base[3]), atol=1e-6)
    np.testing.assert_allclose(scaled[4], 0.5 * np.asarray(base[4]), atol=1e-6)
    assert not np.allclose(scaled[0], base[0])


def test_inference_is_deterministic_unless_the_old_dropout_quirk_is_on():
    ones = np.ones([2], np.float32)
    model = tiny_fastspeech2()
    first, second = (model.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)[0] for _ in range(2))
    np.testing.assert_array_equal(first, second)
    quirky = tiny_fastspeech2(variance_embedding_dropout_at_inference=True)
    first, second = (quirky.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)[0] for _ in range(2))
    assert not np.allclose(first, second)


def test_frame_level_variance_takes_and_predicts_one_value_per_frame():
    model = tiny_fastspeech2(variance_level="frame")
    num_frames = DURATIONS.sum(1).max()
    frame_values = np.random.default_rng(0).normal(size=[2, num_frames]).astype(np.float32)
    mel_before, _, durations, f0, energy = model(INPUT_IDS, SPEAKERS, DURATIONS, frame_values, frame_values)
    assert mel_before.shape == (2, num_frames, 8)
    assert durations.shape == INPUT_IDS.shape
    assert f0.shape == energy.shape == (2, num_frames)
    ones = np.ones([2], np.float32)
    mel_before, _, durations, f0, _ = model.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)
    assert f0.shape[1] == mel_before.shape[1] == np.asarray(durations).sum(1).max()


def test_bucketed_frame_counts_are_the_synthesizers_bucket_sizes():
    sizes = np.arange(1, 5000)
    graph = [int(bucketed_size(tf.constant(size, tf.int32), 4)) for size in sizes]
    assert graph == [bucket(int(size)) for size in sizes]


@pytest.mark.parametrize("variance_level", ["token", "frame"])
def test_decoding_a_bucketed_frame_count_gives_the_exact_mels(variance_level):
    model = tiny_fastspeech2(variance_level=variance_level)
    ones = np.ones([2], np.float32)
    exact = [np.asarray(value) for value in model.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)]
    model.frame_buckets_per_octave = 1  # few sizes, so the frames decoded are well past the durations
    bucketed = model.serving_function()(INPUT_IDS, SPEAKERS, ones, ones, ones)
    num_frames = int(exact[2].sum(1).max())
    assert bucket(num_frames, 1) > num_frames + 2
    for name, value in zip(model.serving_outputs, exact):
        assert bucketed[name].shape == value.shape, name
        np.testing.assert_allclose(bucketed[name], value, atol=1e-5, err_msg=name)


# ---------------------------------------------------------------------------- speakers
def test_speaker_embedding_is_used_with_several_speakers():
    model = tiny_fastspeech2(n_speakers=3)
    names = [w.name for w in model.weights]
    assert sum("speaker_embedding/embedding" in name for name in names) == 5  # encoder, decoder, 3 predictors
    ids, durations = INPUT_IDS[:1], DURATIONS[:1]
    f0, energy = per_token_values(0)[:1], per_token_values(1)[:1]
    speaker_0 = model(ids, np.array([0], np.int32), durations, f0, energy)
    speaker_2 = model(ids, np.array([2], np.int32), durations, f0, energy)
    for output_0, output_2 in zip(speaker_0, speaker_2):
        assert not np.allclose(output_0, output_2)


def test_a_single_speaker_model_ignores_speaker_ids():
    model = tiny_fastspeech()
    assert not any("speaker" in w.name for w in model.weights)
    first = model(INPUT_IDS, np.array([0, 0], np.int32), DURATIONS)[1]
    second = model(INPUT_IDS, np.array([5, 7], np.int32), DURATIONS)[1]
    np.testing.assert_array_equal(first, second)


# ---------------------------------------------------------------------------- positions
def test_positions_beyond_the_table_are_computed_at_inference():
    """A 12-token input through a table of 8 positions: the rows beyond are the same sinusoids."""
    model = tiny_fastspeech(max_position_embeddings=8)
    long_ids = np.arange(1, 13, dtype=np.int32)[np.newaxis]
    beyond = model.inference(long_ids, SPEAKERS[:1], np.ones([1], np.float32))
    assert beyond[0].shape[1] == int(beyond[2].numpy().sum()) > 12
    short = model.inference(INPUT_IDS[:1, :2], SPEAKERS[:1], np.ones([1], np.float32))
    weights_before = [w.numpy() for w in model.weights]

    model.resize_positional_embeddings(64)

    assert model.config.max_position_embeddings == 64
    for before, after in zip(weights_before, model.weights):
        np.testing.assert_array_equal(before, after.numpy())
    # Short inputs read the same table rows; long ones now read rows the table holds.
    np.testing.assert_array_equal(short[0], model.inference(INPUT_IDS[:1, :2], SPEAKERS[:1], np.ones([1], np.float32))[0])
    within = model.inference(long_ids, SPEAKERS[:1], np.ones([1], np.float32))
    np.testing.assert_allclose(within[0], beyond[0], atol=1e-4)


def test_position_rows_beyond_the_table_match_the_sinusoidal_formula():
    layer = PositionEmbedding(8, 6)
    positions = np.arange(0, 41, dtype=np.int32)[np.newaxis]
    np.testing.assert_allclose(layer(positions)[0], sinusoidal_table(40, 6), atol=1e-5)
    np.testing.assert_array_equal(layer(positions[:, :9])[0], sinusoidal_table(8, 6))  # the stored rows, exactly


def test_config_round_trip_through_keras():
    model = tiny_fastspeech2(n_speakers=2)
    clone = TFFastSpeech2.from_config(model.get_config())
    assert clone.config == model.config


def test_inference_takes_keyword_arguments_as_tensorflowtts_users_call_it():
    model = tiny_fastspeech2()
    ones = tf.ones([2], tf.float32)
    by_keyword = model.inference(input_ids=INPUT_IDS, speaker_ids=SPEAKERS, speed_ratios=ones,
                                 f0_ratios=ones, energy_ratios=ones)
    by_position = model.inference(INPUT_IDS, SPEAKERS, ones, ones, ones)
    np.testing.assert_array_equal(by_keyword[1], by_position[1])
