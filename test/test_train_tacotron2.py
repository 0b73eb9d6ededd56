"""Tacotron 2 recipe on the bundled corpus: training steps, durations for FastSpeech2, postnets, decoding."""

import tensorflow_tts  # noqa: F401

import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml

from helpers.events import read_events
from tensorflow_tts.alignment.attention import AlignmentError, alignment_quality, durations_from_alignment
from tensorflow_tts.losses.stop_token import stop_token_loss, stop_token_targets
from tensorflow_tts.recipes import tacotron2, tacotron2_extraction
from tensorflow_tts.recipes.tacotron2 import (
    Tacotron2TrainingConfig,
    attention_binarization_loss,
    load_recipe,
    teacher_forcing_ratio,
)

REPO = Path(__file__).resolve().parents[1]

CONF = REPO / "examples" / "tacotron2" / "conf"
TINY = CONF / "tacotron2.tiny.yaml"
FASTSPEECH2_TINY = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"
SHORT_RUN = dict(train_max_steps=3, save_interval_steps=3, eval_interval_steps=3, log_interval_steps=1, batch_size=4,
                 attention_binarization_weight=1.0, attention_binarization_start_steps=0,
                 attention_binarization_warmup_steps=1)


def write_config(path, source, model_overrides=None, **overrides):
    values = yaml.safe_load(Path(source).read_text())
    values.update(overrides)
    key = f"{values['model_type']}_params"
    values[key] = {**values[key], **(model_overrides or {})}
    path.write_text(yaml.safe_dump(values))
    return path


def mel_frames(dump, split, utt_id):
    return np.load(dump / split / "norm-feats" / f"{utt_id}-norm-feats.npy", mmap_mode="r").shape[0]


def split_ids(dump, split):
    return [str(utt_id) for utt_id in np.load(dump / f"{split}_utt_ids.npy")]


# ------------------------------------------------------------------------- pieces


def test_stop_targets_mark_the_step_holding_the_last_frame():
    # r = 1: 1.8's target, frame >= mel_length - 1.
    np.testing.assert_array_equal(stop_token_targets([3], 5, 1).numpy(), [[0, 0, 1, 1, 1]])
    # r = 2, 3 frames: the step of frames 2-3 holds the last frame, so both are stops.
    np.testing.assert_array_equal(stop_token_targets([3], 6, 2).numpy(), [[0, 0, 1, 1, 1, 1]])


def test_stop_loss_does_not_depend_on_batch_padding():
    logits = tf.constant([[-3.0, -2.0, 1.0, 2.0]])
    padded = tf.concat([logits, tf.fill([1, 4], -7.0)], axis=1)
    short = stop_token_loss(logits, [3], reduction_factor=2, pos_weight=5.0)
    long = stop_token_loss(padded, [3], reduction_factor=2, pos_weight=5.0)
    np.testing.assert_allclose(short.numpy(), long.numpy(), rtol=1e-6)
    # Positive frames weigh more: a missed stop costs more than a false one.
    missed = stop_token_loss(tf.constant([[-2.0, -2.0, -2.0, -2.0]]), [4], 2, 5.0)
    false = stop_token_loss(tf.constant([[2.0, 2.0, 2.0, 2.0]]), [4], 2, 5.0)
    assert float(missed[0]) > float(false[0])


def test_teacher_forcing_follows_the_schedule():
    config = Tacotron2TrainingConfig(start_schedule_teacher_forcing=100, start_ratio_value=0.5,
                                     schedule_decay_steps=50, end_ratio_value=0.0)
    ratios = [float(teacher_forcing_ratio(step, config)) for step in (0, 99, 100, 125, 150, 1000)]
    np.testing.assert_allclose(ratios, [1.0, 1.0, 0.5, 0.25, 0.0, 0.0])


def test_attention_binarization_loss_is_zero_on_a_hard_monotonic_path_and_sharpens_a_soft_one():
    # 3 tokens, 5 decoder steps (padded to 6); the second utterance has 2 tokens, 3 steps.
    hard = np.zeros([2, 4, 6], np.float32)
    for step, token in enumerate([0, 0, 1, 2, 2]):
        hard[0, token, step] = 1.0
    for step, token in enumerate([0, 1, 1]):
        hard[1, token, step] = 1.0
    hard[:, 0, 5] = 1.0  # padded steps and tokens must not count
    hard[1, 0, 3:] = 1.0
    input_lengths, steps = tf.constant([3, 2]), tf.constant([5, 3])
    np.testing.assert_allclose(attention_binarization_loss(hard, input_lengths, steps).numpy(), [0.0, 0.0], atol=1e-6)

    # The same path blurred: 0.6 on the path, the rest on the neighbours.
    soft = tf.Variable(0.6 * hard[:1] + 0.2 * np.roll(hard[:1], 1, axis=1) + 0.2 * np.roll(hard[:1], -1, axis=1))
    with tf.GradientTape() as tape:
        loss = attention_binarization_loss(soft, input_lengths[:1], steps[:1])
    np.testing.assert_allclose(loss.numpy(), [-np.log(0.6)], rtol=1e-5)
    gradient = tape.gradient(loss, soft).numpy()[0]
    # Descending the loss raises the weight on the path (3 tokens x 5 steps) and nothing else.
    on_path = hard[0, :3, :5] == 1.0
    assert (gradient[:3, :5][on_path] < 0).all() and (gradient[:3, :5][~on_path] == 0).all()
    assert (gradient[3:] == 0).all() and (gradient[:, 5:] == 0).all()


def test_durations_expand_decoder_steps_to_frames_and_sum_to_the_mel_length():
    # 3 tokens, 4 decoder steps of r = 3 frames, 11 frames: the last step has only 2.
    alignment = np.array([[0.9, 0.1, 0.0, 0.0], [0.1, 0.8, 0.7, 0.1], [0.0, 0.1, 0.3, 0.9]])
    durations = durations_from_alignment(alignment, input_length=3, mel_length=11, reduction_factor=3)
    assert durations.dtype == np.int32
    np.testing.assert_array_equal(durations, [3, 6, 2])
    padded = np.pad(alignment, [[0, 2], [0, 3]])  # batch padding is cut away
    np.testing.assert_array_equal(durations_from_alignment(padded, 3, 11, 3), durations)


@pytest.mark.parametrize(
    "input_length, mel_length, message",
    [(0, 10, "empty token sequence"), (3, 1, "1 mel frame(s), fewer than one decoder step of reduction_factor=2")],
)
def test_durations_reject_unalignable_utterances_with_a_reason(input_length, mel_length, message):
    with pytest.raises(AlignmentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        durations_from_alignment(np.ones([4, 6]) / 4, input_length, mel_length, 2, name="LJ-bad")


def test_alignment_quality_tells_a_diagonal_from_a_stuck_alignment():
    diagonal = np.eye(6)[:, np.repeat(np.arange(6), 2)]  # 6 tokens, 12 steps
    quality = alignment_quality(diagonal, 6, 12)
    assert quality.focus_rate == 1.0 and quality.monotonic and quality.complete
    assert quality.diagonal_coverage == 1.0 and quality.token_coverage == 1.0
    stuck = alignment_quality(np.full([6, 12], 1 / 6), 6, 12)
    assert stuck.focus_rate < 0.2 and not stuck.complete


@pytest.mark.parametrize("name", sorted(path.name for path in CONF.glob("*.yaml")))
def test_every_recipe_yaml_loads(name):
    recipe = load_recipe(CONF / name)
    assert recipe.model_config.n_mels == 80
    assert recipe.trainer_config.train_max_steps > 0


def test_unknown_yaml_key_is_an_error_naming_the_file(tmp_path, caplog):
    config = write_config(tmp_path / "bad.yaml", TINY, stop_token_weight=3.0)
    status = tacotron2.train_main(["--train-dir", str(tmp_path), "--outdir", str(tmp_path / "exp"), "--config", str(config)])
    assert status == 2
    assert "bad.yaml" in caplog.text and "stop_token_weight" in caplog.text


# ------------------------------------------------------------------------- the recipe


@pytest.fixture(scope="session")
def corpus_dump(tmp_path_factory):
    """The bundled LJSpeech-layout corpus preprocessed (76 train, 4 valid utterances, no durations)."""
    from tensorflow_tts.bin import preprocess

    dump = tmp_path_factory.mktemp("tacotron2_dump")
    status = preprocess.main([
        "--rootdir", str(REPO / "test" / "files" / "corpus" / "ljspeech"), "--outdir", str(dump),
        "--config", str(REPO / "preprocess" / "ljspeech_preprocess.yaml"), "--dataset", "ljspeech", "--verbose", "0",
    ])
    assert status in (0, None)
    return dump


@pytest.fixture(scope="module")
def trained(corpus_dump, tmp_path_factory):
    """3 steps of the tiny Tacotron 2 (r = 2), evaluated and saved at step 3."""
    root = tmp_path_factory.mktemp("tacotron2_run")
    config = write_config(root / "tiny.yaml", TINY, **SHORT_RUN)
    outdir = root / "exp"
    status = tacotron2.train_main(
        ["--train-dir", str(corpus_dump / "train"), "--dev-dir", str(corpus_dump / "valid"), "--outdir", str(outdir),
         "--config", str(config), "--use-norm", "1", "--verbose", "0"]
    )
    assert status == 0
    return {"outdir": outdir, "config": config, "checkpoint": outdir / "checkpoints" / "model-3.h5"}


def test_training_writes_checkpoints_losses_and_alignment_images(trained):
    outdir = trained["outdir"]
    assert (outdir / "checkpoints" / "ckpt-3.index").is_file()
    assert trained["checkpoint"].is_file()
    scalars = read_events(str(outdir / "train"))
    for tag in ("mel_loss_before", "mel_loss_after", "stop_token_loss", "guided_attention_loss",
                "attention_binarization_loss", "total_loss"):
        assert scalars[tag]["steps"] == [1, 2, 3] and np.all(np.isfinite(scalars[tag]["values"])), tag
    # The binarization loss joins the total from step 2 (start 0, warm-up 1 step: weight 0, then 1).
    guided_weight = load_recipe(trained["config"]).training_config.guided_attention_weight
    parts = ("mel_loss_before", "mel_loss_after", "stop_token_loss")
    without = np.sum([scalars[tag]["values"] for tag in parts], axis=0)
    without += guided_weight * np.asarray(scalars["guided_attention_loss"]["values"])
    with_binarization = without + np.array([0.0, 1.0, 1.0]) * scalars["attention_binarization_loss"]["values"]
    np.testing.assert_allclose(scalars["total_loss"]["values"], with_binarization, rtol=1e-4)
    images = read_events(str(outdir / "eval"))
    assert images["alignment/0"]["plugin"] == "images" and images["mel/0"]["plugin"] == "images"
    assert (outdir / "predictions" / "3steps" / "alignment_0.png").is_file()
    assert yaml.safe_load((outdir / "config.yml").read_text())["use_norm"] is True
    assert load_recipe(outdir / "config.yml").model_config == load_recipe(trained["config"]).model_config


@pytest.fixture(scope="module")
def dump_with_durations(trained, corpus_dump, tmp_path_factory):
    dump = tmp_path_factory.mktemp("tacotron2_durations") / "dump"
    shutil.copytree(corpus_dump, dump, ignore=shutil.ignore_patterns("wavs"))
    status = tacotron2_extraction.durations_main(
        ["--dump-dir", str(dump), "--checkpoint", str(trained["checkpoint"]), "--config", str(trained["config"]),
         "--batch-size", "16", "--verbose", "0"]
    )
    assert status == 0
    return dump


def test_extracted_durations_sum_to_every_mel_length(dump_with_durations):
    dump = dump_with_durations
    for split in ("train", "valid"):
        for utt_id in split_ids(dump, split):
            durations = np.load(dump / split / "durations" / f"{utt_id}-durations.npy")
            ids = np.load(dump / split / "ids" / f"{utt_id}-ids.npy")
            assert durations.dtype == np.int32 and durations.shape == ids.shape, utt_id
            assert durations.sum() == mel_frames(dump, split, utt_id), utt_id


def test_fastspeech2_trains_on_the_extracted_durations(dump_with_durations, tmp_path, caplog):
    from tensorflow_tts.recipes import fastspeech2 as train_fastspeech2

    config = write_config(tmp_path / "fs2.yaml", FASTSPEECH2_TINY, train_max_steps=2, save_interval_steps=2,
                          eval_interval_steps=1000, log_interval_steps=1, batch_size=4)
    with caplog.at_level(logging.INFO, logger="tensorflow_tts"):
        status = train_fastspeech2.main(
            ["--dump-dir", str(dump_with_durations), "--outdir", str(tmp_path / "exp"), "--config", str(config),
             "--verbose", "1"]
        )
    assert status == 0
    assert "durations/ of the dump" in caplog.text  # not the built-in aligner
    assert (tmp_path / "exp" / "checkpoints" / "ckpt-2.index").is_file()


def test_postnet_mels_have_the_frames_of_the_reference(trained, corpus_dump, tmp_path):
    status = tacotron2_extraction.postnets_main(
        ["--rootdir", str(corpus_dump / "valid"), "--outdir", str(tmp_path), "--checkpoint", str(trained["checkpoint"]),
         "--config", str(trained["config"]), "--verbose", "0"]
    )
    assert status == 0
    for utt_id in split_ids(corpus_dump, "valid"):
        mel = np.load(tmp_path / "postnets" / f"{utt_id}-postnet.npy")
        assert mel.dtype == np.float32 and mel.shape == (mel_frames(corpus_dump, "valid", utt_id), 80)


def test_decode_writes_mels_cut_at_the_stop(trained, corpus_dump, tmp_path):
    status = tacotron2.decode_main(
        ["--rootdir", str(corpus_dump / "valid"), "--outdir", str(tmp_path), "--checkpoint", str(trained["checkpoint"]),
         "--config", str(trained["config"]), "--maximum-iterations", "8", "--num-samples", "2", "--verbose", "0"]
    )
    assert status == 0
    mels = sorted(tmp_path.glob("*-norm-feats.npy"))
    assert len(mels) == 2 and len(list(tmp_path.glob("*.png"))) == 2
    assert all(0 < np.load(path).shape[0] <= 16 and np.load(path).shape[1] == 80 for path in mels)


def test_unalignable_utterances_are_skipped_with_their_reason(trained, corpus_dump, tmp_path, caplog):
    dump = tmp_path / "dump"
    shutil.copytree(corpus_dump / "valid", dump / "valid", ignore=shutil.ignore_patterns("wavs"))
    shutil.copy(corpus_dump / "valid_utt_ids.npy", dump)
    empty, short, *good = split_ids(dump, "valid")
    np.save(dump / "valid" / "ids" / f"{empty}-ids.npy", np.zeros([0], np.int32))
    np.save(dump / "valid" / "norm-feats" / f"{short}-norm-feats.npy", np.zeros([1, 80], np.float32))
    with caplog.at_level(logging.WARNING, logger="tensorflow_tts"):
        status = tacotron2_extraction.durations_main(
            ["--dump-dir", str(dump), "--splits", "valid", "--checkpoint", str(trained["checkpoint"]),
             "--config", str(trained["config"]), "--verbose", "0"]
        )
    assert status == 0
    assert f"skipping {empty}: empty token sequence" in caplog.text
    assert f"skipping {short}: 1 mel frame(s), fewer than one decoder step (reduction_factor=2)" in caplog.text
    written = sorted(path.name for path in (dump / "valid" / "durations").iterdir())
    assert written == sorted(f"{utt_id}-durations.npy" for utt_id in good)


def test_two_replicas_in_mixed_precision_with_scheduled_teacher_forcing(corpus_dump, tmp_path):
    """The ratio is a tensor from step 0 here: it must follow the bfloat16 frames across 2 replicas."""
    import os
    import subprocess

    config = write_config(tmp_path / "tiny.yaml", TINY, train_max_steps=1, save_interval_steps=1, log_interval_steps=1,
                          batch_size=2, start_schedule_teacher_forcing=0, schedule_decay_steps=2)
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env.update(TF_TTS_CPU_REPLICAS="2", TF_CPP_MIN_LOG_LEVEL="2")
    process = subprocess.run(
        [sys.executable, str(REPO / "examples" / "tacotron2" / "train_tacotron2.py"), "--train-dir",
         str(corpus_dump / "train"), "--outdir", str(tmp_path / "exp"), "--config", str(config), "--mixed_precision", "1"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    assert "training on 2 replica(s): global batch 4" in process.stderr
    assert (tmp_path / "exp" / "checkpoints" / "model-1.h5").is_file()
