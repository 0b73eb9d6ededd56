"""The built-in aligner, monotonic alignment search, alignment losses, duration repair and TextGrids."""

import tensorflow_tts  # noqa: F401

import itertools

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.configs.aligner import AlignerConfig
from tensorflow_tts.layers.aligner import Aligner, log_beta_binomial_prior
from tensorflow_tts.losses.alignment import binarization_loss, forward_sum_loss
from tensorflow_tts.losses.spectrogram import log_duration_loss, masked_mel_mae
from tensorflow_tts.alignment.search import batch_monotonic_alignment_search, monotonic_alignment_search
from tensorflow_tts.alignment.durations import average_by_durations, average_by_durations_numpy, fix_batch_durations, fix_durations
from tensorflow_tts.dump.screening import DumpCheckError, screen_utterances
from tensorflow_tts.alignment.textgrid import TextGridError, parse_textgrid, read_textgrid, textgrid_to_durations


def soft_alignment_along(durations, sharpness=4.0, seed=0):
    """A noisy soft alignment (F, T) whose per-frame argmax follows ``durations``."""
    rng = np.random.RandomState(seed)
    num_frames, num_tokens = int(sum(durations)), len(durations)
    scores = rng.uniform(-1.0, 0.0, size=(num_frames, num_tokens))
    path = np.repeat(np.arange(num_tokens), durations)
    scores[np.arange(num_frames), path] = sharpness
    return np.log(np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)).astype(np.float32)


# ------------------------------------------------------------------ monotonic alignment search


def test_search_follows_the_argmax_path_of_a_soft_alignment():
    durations = np.array([3, 1, 5, 2, 1, 4], np.int32)
    log_probs = soft_alignment_along(durations)
    np.testing.assert_array_equal(monotonic_alignment_search(log_probs), durations)


def test_search_finds_the_best_monotonic_path():
    rng = np.random.RandomState(3)
    for _ in range(10):
        log_probs = rng.normal(size=(7, 3))
        best = max(
            (sum(log_probs[np.arange(7), np.repeat(np.arange(3), split)]), split)
            for split in itertools.product(range(1, 8), repeat=3)
            if sum(split) == 7
        )
        np.testing.assert_array_equal(monotonic_alignment_search(log_probs), best[1])


def test_batched_search_matches_the_reference_and_sums_to_mel_lengths():
    rng = np.random.RandomState(0)
    log_probs = rng.normal(size=(4, 40, 12)).astype(np.float32)
    input_lengths = np.array([12, 5, 10, 9], np.int32)
    mel_lengths = np.array([40, 30, 7, 9], np.int32)  # item 2: fewer frames than tokens
    durations, path = batch_monotonic_alignment_search(log_probs, input_lengths, mel_lengths)
    durations, path = durations.numpy(), path.numpy()
    for item in range(4):
        tokens, frames = input_lengths[item], mel_lengths[item]
        expected = monotonic_alignment_search(log_probs[item, :frames, :tokens])
        np.testing.assert_array_equal(durations[item, :tokens], expected)
        assert durations[item].sum() == frames
        assert (durations[item] >= 0).all() and (durations[item, tokens:] == 0).all()
        np.testing.assert_array_equal(np.bincount(path[item, :frames], minlength=12)[:12], durations[item])
        if frames >= tokens:
            assert (durations[item, :tokens] >= 1).all()


def test_aligner_hard_durations_follow_its_soft_alignment():
    aligner = Aligner(AlignerConfig(embedding_size=16, attention_channels=8), vocab_size=20, num_mels=10).build_once()
    input_ids = tf.constant([[1, 2, 3, 4, 0], [5, 6, 7, 8, 9]])
    input_lengths, mel_lengths = tf.constant([4, 5]), tf.constant([11, 17])
    outputs = aligner(input_ids, tf.random.normal([2, 17, 10], seed=1), input_lengths, mel_lengths)
    assert outputs["log_probs"].shape == (2, 17, 5) and outputs["durations"].shape == (2, 5)
    np.testing.assert_array_equal(outputs["durations"].numpy().sum(axis=1), [11, 17])
    np.testing.assert_allclose(outputs["soft"].numpy()[0, :11].sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(outputs["soft"].numpy()[0, 11:] == 0.0)
    expected = monotonic_alignment_search(outputs["log_probs"].numpy()[1])
    np.testing.assert_array_equal(outputs["durations"].numpy()[1], expected)


def test_beta_binomial_prior_is_a_distribution_over_real_tokens():
    prior = np.exp(log_beta_binomial_prior(tf.constant([4]), tf.constant([6]), 5, 7).numpy()[0])
    np.testing.assert_allclose(prior[:6, :4].sum(axis=1), 1.0, rtol=1e-5)
    assert prior[0, 0] > prior[0, 3] and prior[5, 3] > prior[5, 0]  # favours the diagonal


# ------------------------------------------------------------------ losses


def test_forward_sum_loss_equals_a_hand_computed_case():
    # One token, two frames; per frame softmax over [blank (score -1), token].
    scores = np.array([0.3, -0.5])
    token = np.exp(scores) / (np.exp(scores) + np.exp(-1.0))
    blank = 1.0 - token
    # Paths that emit exactly the token: (t, t), (blank, t), (t, blank).
    expected = -np.log(token[0] * token[1] + blank[0] * token[1] + token[0] * blank[1])
    loss = forward_sum_loss(tf.constant(scores.reshape(1, 2, 1), tf.float32), tf.constant([1]), tf.constant([2]))
    np.testing.assert_allclose(loss.numpy(), [expected], rtol=1e-5)


def test_forward_sum_loss_is_lower_for_a_better_alignment():
    durations = np.array([2, 3, 1, 4])
    good = soft_alignment_along(durations, sharpness=6.0)
    reversed_path = soft_alignment_along(durations[::-1], sharpness=6.0)[:, ::-1]  # anti-diagonal
    lengths = dict(input_lengths=tf.constant([4]), mel_lengths=tf.constant([10]))
    good_loss = forward_sum_loss(tf.constant(good[None]), **lengths).numpy()[0]
    bad_loss = forward_sum_loss(tf.constant(np.ascontiguousarray(reversed_path)[None]), **lengths).numpy()[0]
    assert np.isfinite(good_loss) and good_loss < bad_loss


def test_forward_sum_loss_ignores_padding_and_stays_finite_with_few_frames():
    rng = np.random.RandomState(0)
    scores = rng.normal(size=(2, 6, 4)).astype(np.float32)
    alone = forward_sum_loss(tf.constant(scores[:1, :5, :3]), tf.constant([3]), tf.constant([5]))
    padded = forward_sum_loss(tf.constant(scores), tf.constant([3, 4]), tf.constant([5, 2]))
    np.testing.assert_allclose(padded.numpy()[0], alone.numpy()[0], rtol=1e-5)
    assert np.all(np.isfinite(padded.numpy()))  # item 1: 2 frames for 4 tokens


def test_binarization_loss_is_zero_for_a_hard_soft_alignment():
    hard = np.eye(3, dtype=np.float32)[None]
    assert binarization_loss(hard, hard, tf.constant([3])).numpy()[0] == pytest.approx(0.0, abs=1e-6)
    soft = np.full([1, 3, 3], 1.0 / 3.0, np.float32)
    assert binarization_loss(hard, soft, tf.constant([3])).numpy()[0] == pytest.approx(np.log(3.0), rel=1e-5)


def test_spectrogram_losses_ignore_padded_frames():
    target = np.zeros([2, 4, 3], np.float32)
    prediction = np.ones([2, 4, 3], np.float32)
    prediction[0, 2:] = 100.0  # padding of item 0
    np.testing.assert_allclose(masked_mel_mae(target, prediction, tf.constant([2, 4])).numpy(), [1.0, 1.0])
    loss = log_duration_loss(tf.constant([[1, 3, 0]]), tf.math.log1p(tf.constant([[1.0, 3.0, 9.0]])), tf.constant([2]))
    assert loss.numpy()[0] == pytest.approx(0.0, abs=1e-6)


# ------------------------------------------------------------------ durations


@pytest.mark.parametrize("durations, mel_length, expected", [
    ([2, 3, 4], 9, [2, 3, 4]),
    ([2, 3, 4], 11, [2, 3, 6]),  # too short: the last token grows
    ([2, 3, 4], 6, [2, 3, 1]),  # too long: the last tokens shrink
    ([2, 3, 4], 4, [2, 2, 0]),
    ([5], 3, [3]),
])
def test_fix_durations_sums_to_the_mel_length(durations, mel_length, expected):
    np.testing.assert_array_equal(fix_durations(durations, mel_length), expected)
    batched = fix_batch_durations(tf.constant([durations + [7]]), tf.constant([len(durations)]), tf.constant([mel_length]))
    np.testing.assert_array_equal(batched.numpy()[0], expected + [0])


def test_average_by_durations_skips_unvoiced_frames():
    values = np.array([[100.0, 0.0, 200.0, 50.0, 0.0, 0.0, 9.0]], np.float32)  # last frame: padding
    durations = np.array([[3, 1, 2, 0]], np.int32)
    averages = average_by_durations(values, durations).numpy()[0]
    np.testing.assert_allclose(averages, [150.0, 50.0, 0.0, 0.0])
    np.testing.assert_allclose(average_by_durations_numpy(values[0], durations[0]), averages)


def write_small_dump(root, items, speaker_ids=None):
    """items: {utt_id: (num_tokens, num_frames, durations or None)}."""
    split = root / "train"
    for folder in ("ids", "norm-feats", "durations", "speaker-ids"):
        (split / folder).mkdir(parents=True, exist_ok=True)
    for index, (utt_id, (tokens, frames, durations)) in enumerate(items.items()):
        np.save(split / "ids" / f"{utt_id}-ids.npy", np.arange(1, tokens + 1, dtype=np.int32))
        np.save(split / "norm-feats" / f"{utt_id}-norm-feats.npy", np.zeros([frames, 4], np.float32))
        np.save(split / "speaker-ids" / f"{utt_id}-speaker-ids.npy", np.int32((speaker_ids or {}).get(utt_id, 0)))
        if durations is not None:
            np.save(split / "durations" / f"{utt_id}-durations.npy", np.asarray(durations, np.int32))
    np.save(root / "train_utt_ids.npy", np.array(list(items)))
    return root


def test_screening_repairs_sums_and_skips_what_cannot_be_trained(tmp_path):
    dump = write_small_dump(tmp_path, {
        "ok": (3, 9, [2, 3, 4]),
        "off_by_two": (3, 11, [2, 3, 4]),
        "empty": (0, 10, []),
        "wrong_count": (3, 9, [4, 5]),
    })
    report = screen_utterances(dump, "train", with_durations=True)
    assert report.kept == ["ok", "off_by_two"]
    assert report.fixed == {"off_by_two": (9, 11)}
    assert set(report.skipped) == {"empty", "wrong_count"}
    strict = screen_utterances(dump, "train", with_durations=True, max_fix_frames=1)
    assert strict.kept == ["ok"] and "off_by_two" in strict.skipped


def test_screening_rejects_unknown_speaker_ids_and_fewer_frames_than_tokens(tmp_path):
    dump = write_small_dump(tmp_path, {"a": (3, 9, None), "b": (8, 5, None)}, speaker_ids={"a": 3})
    with pytest.raises(DumpCheckError, match="speaker id 3 is outside \\[0, 2\\).*n_speakers"):
        screen_utterances(dump, "train", n_speakers=2)
    report = screen_utterances(dump, "train", n_speakers=4, need_frames_per_token=True)
    assert report.kept == ["a"] and "fewer frames than tokens" in report.skipped["b"]


# ------------------------------------------------------------------ TextGrid

LONG_TEXTGRID = '''File type = "ooTextFile"
Object class = "TextGrid"

xmin = 0
xmax = 0.5
tiers? <exists>
size = 2
item []:
    item [1]:
        class = "IntervalTier"
        name = "words"
        xmin = 0
        xmax = 0.5
        intervals: size = 1
        intervals [1]:
            xmin = 0
            xmax = 0.5
            text = "say ""hi"""
    item [2]:
        class = "IntervalTier"
        name = "phones"
        xmin = 0
        xmax = 0.5
        intervals: size = 3
        intervals [1]:
            xmin = 0
            xmax = 0.1
            text = ""
        intervals [2]:
            xmin = 0.1
            xmax = 0.33
            text = "HH"
        intervals [3]:
            xmin = 0.33
            xmax = 0.5
            text = "AY1"
'''

SHORT_TEXTGRID = '''File type = "ooTextFile"
Object class = "TextGrid"

0
0.5
<exists>
1
"IntervalTier"
"phones"
0
0.5
3
0
0.1
""
0.1
0.33
"HH"
0.33
0.5
"AY1"
'''


def test_textgrid_long_and_short_formats_read_the_same():
    long_grid = parse_textgrid(LONG_TEXTGRID)
    short_grid = parse_textgrid(SHORT_TEXTGRID)
    assert long_grid.tier("words").intervals[0].text == 'say "hi"'
    assert [i.text for i in long_grid.tier("phones").intervals] == ["", "HH", "AY1"]
    assert long_grid.tier("phones") == short_grid.tier("phones")


def test_textgrid_to_durations_rounds_interval_ends(tmp_path):
    path = tmp_path / "utt.TextGrid"
    path.write_text(LONG_TEXTGRID, encoding="utf-16")  # Praat writes UTF-16 for non-ASCII text
    assert read_textgrid(path).xmax == 0.5
    # 100 frames per second: ends at 10, 33, 50 frames.
    labels, durations = textgrid_to_durations(path, 25600, 256, num_frames=None)
    assert labels == ["", "HH", "AY1"]
    np.testing.assert_array_equal(durations, [10, 23, 17])
    _, durations = textgrid_to_durations(path, 25600, 256, num_frames=52, num_tokens=4)  # + EOS
    np.testing.assert_array_equal(durations, [10, 23, 19, 0])
    with pytest.raises(TextGridError, match="3 intervals but the utterance has 7"):
        textgrid_to_durations(path, 25600, 256, num_tokens=7)


def test_textgrid_cli_writes_durations_into_the_dump(tmp_path):
    from tensorflow_tts.bin import textgrid_to_durations as cli

    dump = write_small_dump(tmp_path / "dump", {"utt": (4, 52, None), "other": (2, 10, None)})
    (dump / "train" / "raw-feats").mkdir()
    np.save(dump / "train" / "raw-feats" / "utt-raw-feats.npy", np.zeros([52, 4], np.float32))
    grids = tmp_path / "grids" / "speaker"
    grids.mkdir(parents=True)
    (grids / "utt.TextGrid").write_text(SHORT_TEXTGRID)
    status = cli.main(["--textgrid-dir", str(tmp_path / "grids"), "--dump-dir", str(dump), "--sampling-rate", "25600",
                       "--hop-size", "256", "--splits", "train"])
    assert status == 0
    np.testing.assert_array_equal(np.load(dump / "train" / "durations" / "utt-durations.npy"), [10, 23, 19, 0])
    assert not (dump / "train" / "durations" / "other-durations.npy").exists()
