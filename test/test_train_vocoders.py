"""Vocoder training and decoding on a dump preprocessed from the bundled corpus.

One Multi-band MelGAN run (a subprocess with 2 logical CPU replicas, the discriminator on
from step 1) is shared by the resume and decode tests; the other recipes are checked by
computing their losses once on a real batch.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import tensorflow as tf
import yaml

from helpers.events import read_events
from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.configs.vocoder import split_vocoder_yaml
from tensorflow_tts.datasets import AudioMelDataset
from tensorflow_tts.recipes.vocoder import (
    VocoderGanTrainer,
    build_train_parser,
    build_vocoder_models,
    decode_main,
    decode_mels,
    default_use_feat_match,
    load_recipe,
    match_mel_normalization,
    run_vocoder_training,
)

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml"
TRAIN_SCRIPT = REPO / "examples" / "multiband_melgan" / "train_multiband_melgan.py"
HOP_SIZE = 256


def write_test_config(path, source=TINY, **overrides):
    """The tiny recipe shrunk for a few-step test run."""
    values = yaml.safe_load(Path(source).read_text())
    values.update(
        train_max_steps=3, discriminator_train_start_steps=1, log_interval_steps=1, eval_interval_steps=3,
        save_interval_steps=3, batch_size=2, eval_batch_size=1, batch_max_steps=4096, batch_max_steps_valid=8192,
    )
    values["multiband_melgan_generator_params"].update(filters=32, stacks=2)
    values["multiband_melgan_discriminator_params"].update(scales=1, max_downsample_filters=32)
    values.update(overrides)
    path.write_text(yaml.safe_dump(values))
    return path


def run_script(args, replicas=None, timeout=240):
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CONFIG", "TF_TTS_CPU_REPLICAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if replicas:
        env["TF_TTS_CPU_REPLICAS"] = str(replicas)
    result = subprocess.run(
        [sys.executable, str(TRAIN_SCRIPT), *map(str, args)], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stderr


@pytest.fixture(scope="module")
def trained(corpus_dump, tmp_path_factory):
    """3 steps of the tiny MB-MelGAN on 2 CPU replicas; returns (outdir, stderr)."""
    workdir = tmp_path_factory.mktemp("mb_melgan")
    config = write_test_config(workdir / "tiny.yaml")
    outdir = workdir / "exp"
    log = run_script(
        ["--train-dir", corpus_dump / "train", "--dev-dir", corpus_dump / "valid", "--outdir", outdir,
         "--config", config, "--use-norm", "1"],
        replicas=2,
    )
    return outdir, log


def test_gan_steps_run_on_two_replicas_with_the_discriminator_on(trained):
    outdir, log = trained
    assert "global batch 4 (2 x 2 replicas)" in log
    scalars = read_events(str(outdir / "train"))
    # Step 1 is STFT-only pre-training; from step 2 the discriminator trains and the generator is adversarial.
    assert scalars["dis_loss"]["steps"] == [2, 3]
    assert scalars["adversarial_loss"]["steps"] == [2, 3]
    assert scalars["subband_spectral_convergence_loss"]["steps"] == [1, 2, 3]
    assert scalars["mel_loss"]["steps"] == [1, 2, 3]  # the tiny recipe's log-mel loss
    assert "fm_loss" not in scalars  # MB-MelGAN trains without feature matching
    assert all(np.isfinite(value) for value in scalars["gen_loss"]["values"])
    assert (outdir / "checkpoints" / "generator-3.h5").is_file()


def test_eval_writes_audio_summaries(trained):
    outdir, _ = trained
    events = read_events(str(outdir / "eval"))
    assert events["predicted/0"]["plugin"] == "audio"
    assert events["target/0"]["plugin"] == "audio"
    assert "dis_loss" in events
    predicted, _ = sf.read(outdir / "predictions" / "3steps" / "predicted_0.wav")
    assert len(predicted) == 8192


def test_resume_continues_from_the_last_checkpoint(trained, corpus_dump, tmp_path):
    outdir, _ = trained
    resumed = tmp_path / "exp"
    shutil.copytree(outdir, resumed)
    config = write_test_config(tmp_path / "tiny.yaml", train_max_steps=4, eval_interval_steps=100)
    args = build_train_parser("").parse_args(
        ["--train-dir", str(corpus_dump / "train"), "--dev-dir", str(corpus_dump / "valid"), "--outdir", str(resumed),
         "--config", str(config), "--resume", str(resumed / "checkpoints")]
    )
    trainer = run_vocoder_training(args)
    assert trainer.steps == 4
    steps = read_events(str(resumed / "train"))["gen_loss"]["steps"]
    assert steps == [1, 2, 3, 4]  # the copied run's 1-3, then 4 after resuming
    saved = tf.train.load_checkpoint(str(resumed / "checkpoints" / "ckpt-4"))
    assert saved.get_tensor("steps/.ATTRIBUTES/VARIABLE_VALUE") == 4
    assert (resumed / "checkpoints" / "generator-4.h5").is_file()


def test_decode_writes_wavs_of_frames_times_hop_samples(trained, corpus_dump, tmp_path):
    outdir, _ = trained
    written = decode_mels(
        corpus_dump / "valid", tmp_path / "wavs", outdir / "config.yml", outdir / "checkpoints" / "generator-3.h5",
        use_norm=True,
    )
    assert len(written) == 4
    for path in written:
        utt_id = Path(path).stem
        frames = np.load(corpus_dump / "valid" / "norm-feats" / f"{utt_id}-norm-feats.npy").shape[0]
        audio, sampling_rate = sf.read(path)
        assert sampling_rate == 22050
        assert len(audio) == frames * HOP_SIZE


def test_decode_normalises_raw_mels_for_a_vocoder_trained_on_normalised_ones(trained, corpus_dump, tmp_path):
    outdir, _ = trained
    with pytest.raises(ValueError, match="--stats"):
        decode_mels(corpus_dump / "valid", tmp_path / "a", outdir / "config.yml", outdir / "checkpoints", use_norm=False)
    from_raw = decode_mels(
        corpus_dump / "valid", tmp_path / "raw", outdir / "config.yml", outdir / "checkpoints", use_norm=False,
        stats_path=corpus_dump / "stats.npy",
    )
    from_norm = decode_mels(corpus_dump / "valid", tmp_path / "norm", outdir / "config.yml", outdir / "checkpoints")
    np.testing.assert_allclose(sf.read(from_raw[0])[0], sf.read(from_norm[0])[0], atol=2e-3)


def test_mel_scale_conversion_round_trips():
    stats = np.array([[1.0, -2.0], [2.0, 0.5]], dtype=np.float32)
    mel = np.array([[3.0, -1.0], [0.0, 0.0]], dtype=np.float32)
    normalised = match_mel_normalization(mel, False, True, stats)
    np.testing.assert_allclose(normalised, [[1.0, 2.0], [-0.5, 4.0]])
    np.testing.assert_allclose(match_mel_normalization(normalised, True, False, stats), mel)
    assert match_mel_normalization(mel, True, True, None) is not mel


@pytest.mark.parametrize(
    "recipe, expected",
    [
        ("melgan/conf/melgan.v1.yaml", {"adversarial_loss", "fm_loss"}),
        ("melgan_stft/conf/melgan_stft.v1.yaml", {"spectral_convergence_loss", "log_magnitude_loss", "adversarial_loss", "fm_loss"}),
        ("hifigan/conf/hifigan.v2.yaml", {"spectral_convergence_loss", "log_magnitude_loss", "adversarial_loss", "fm_loss"}),
    ],
)
def test_each_recipe_computes_its_published_losses(recipe, expected, corpus_dump, tmp_path):
    values, model_values, trainer_config, vocoder_config = load_recipe(REPO / "examples" / recipe)
    # Shrink the generator so one eager step is cheap; the losses are what is under test.
    generator_params = model_values[f"{model_values['model_type']}_params"]
    generator_params["filters"] = 32
    for name in ("melgan_discriminator_params", "hifigan_discriminator_params"):
        if name in model_values:
            model_values[name].update({"max_downsample_filters" if name.startswith("melgan") else "max_filters": 64})
    trainer = VocoderGanTrainer(
        trainer_config, vocoder_config, use_feat_match=default_use_feat_match(model_values["model_type"], vocoder_config)
    )
    generator, discriminator = build_vocoder_models(model_values, num_mels=80, segment_samples=4096)
    trainer.compile(generator, discriminator, tf.keras.optimizers.Adam(), tf.keras.optimizers.Adam())
    dataset = AudioMelDataset(corpus_dump, "valid", use_norm=True, batch_max_steps=4096)
    batch = next(iter(dataset.create(2, shuffle=False)))
    state = {"active_groups": ("generator", "discriminator")}
    total, losses = trainer.compute_group_losses("generator", batch, state, training=True)
    assert set(losses) == expected
    assert total.shape == (2,) and all(value.shape == (2,) for value in losses.values())
    dis_losses = trainer.compute_group_losses("discriminator", batch, state, training=True)
    assert set(dis_losses) == {"real_loss", "fake_loss"}


def test_unknown_yaml_keys_are_errors_that_name_the_key():
    values = yaml.safe_load(TINY.read_text())
    values["batch_max_step"] = 8192
    with pytest.raises(ConfigError, match="batch_max_step'"):
        split_vocoder_yaml(values, source="tiny.yaml")


def test_segments_must_fit_the_hop_size():
    values = yaml.safe_load(TINY.read_text())
    values["batch_max_steps"] = 8000
    with pytest.raises(ConfigError, match="batch_max_steps: 8000 is not a multiple of hop_size"):
        split_vocoder_yaml(values)


# --- 1.8's other GAN vocoder recipes, trained by the same recipe: shrunk copies of the published YAMLs
TINY_OVERRIDES = {
    "parallel_wavegan/conf/parallel_wavegan.v1.yaml": {
        "parallel_wavegan_generator_params": dict(
            n_layers=4, stacks=2, residual_channels=8, gate_channels=16, skip_channels=8, aux_channels=16,
        ),
        "parallel_wavegan_discriminator_params": dict(n_layers=3, conv_channels=8),
    },
    "multiband_melgan_hf/conf/multiband_melgan_hf.lju.v1.yml": {
        # The published file is for a 44.1 kHz dump with hop 512; the test dump has hop 256.
        "sampling_rate": 22050, "hop_size": 256,
        "multiband_melgan_generator_params": dict(filters=32, stacks=1, upsample_scales=[4, 4, 4]),
        "multiband_melgan_discriminator_params": dict(scales=1, max_downsample_filters=16),
        "hifigan_discriminator_params": dict(period_scales=[2, 3], n_layers=2, filters=4, max_filters=16),
    },
}


def tiny_recipe(recipe, path):
    values = yaml.safe_load((REPO / "examples" / recipe).read_text())
    for key, value in TINY_OVERRIDES[recipe].items():
        if isinstance(value, dict):
            values[key].update(value)
        else:
            values[key] = value
    values.update(
        train_max_steps=1, discriminator_train_start_steps=0, log_interval_steps=1, eval_interval_steps=100,
        save_interval_steps=1, batch_size=2, batch_max_steps=4096, batch_max_steps_valid=4096,
    )
    path.write_text(yaml.safe_dump(values))
    return path


def test_multiband_melgan_hf_trains_with_both_hifigan_discriminators_on(corpus_dump, tmp_path):
    config = tiny_recipe("multiband_melgan_hf/conf/multiband_melgan_hf.lju.v1.yml", tmp_path / "tiny.yaml")
    args = build_train_parser("").parse_args(
        ["--train-dir", str(corpus_dump / "train"), "--dev-dir", str(corpus_dump / "valid"),
         "--outdir", str(tmp_path / "exp"), "--config", str(config)]
    )
    trainer = run_vocoder_training(args)
    discriminator = trainer._discriminator  # multi-period (periods 2, 3) + multi-scale (1 scale)
    assert len(discriminator.multiperiod_discriminator.discriminators) == 2
    assert len(discriminator.multiscale_discriminator.discriminators) == 1
    scalars = read_events(str(tmp_path / "exp" / "train"))
    assert {"fullband_spectral_convergence_loss", "subband_log_magnitude_loss", "adversarial_loss"} <= set(scalars)
    assert scalars["adversarial_loss"]["steps"] == scalars["dis_loss"]["steps"] == [1]
    assert "fm_loss" not in scalars  # no feature matching, as 1.8's recipe
    assert all(np.isfinite(value) for value in scalars["gen_loss"]["values"])
    assert (tmp_path / "exp" / "checkpoints" / "generator-1.h5").is_file()


def test_parallel_wavegan_recipe_computes_its_losses_and_decodes(corpus_dump, tmp_path):
    config = tiny_recipe("parallel_wavegan/conf/parallel_wavegan.v1.yaml", tmp_path / "config.yml")
    values, model_values, trainer_config, vocoder_config = load_recipe(config)
    assert model_values["parallel_wavegan_generator_params"]["dropout"] == 0.0  # 1.8's key is accepted
    trainer = VocoderGanTrainer(
        trainer_config, vocoder_config, use_feat_match=default_use_feat_match("parallel_wavegan_generator", vocoder_config)
    )
    generator, discriminator = build_vocoder_models(model_values, num_mels=80, segment_samples=4096)
    trainer.compile(generator, discriminator, tf.keras.optimizers.Adam(), tf.keras.optimizers.Adam())
    batch = next(iter(AudioMelDataset(corpus_dump, "valid", use_norm=True, batch_max_steps=4096).create(2, shuffle=False)))
    state = {"active_groups": ("generator", "discriminator")}
    total, losses = trainer.compute_group_losses("generator", batch, state, training=True)
    assert set(losses) == {"spectral_convergence_loss", "log_magnitude_loss", "adversarial_loss"}  # no feature matching
    assert total.shape == (2,) and np.isfinite(total.numpy()).all()
    assert set(trainer.compute_group_losses("discriminator", batch, state, training=True)) == {"real_loss", "fake_loss"}
    # What the decode scripts run: every valid mel -> frames x hop samples (noise drawn per utterance).
    generator.save_weights(str(tmp_path / "generator-1.h5"))
    status = decode_main(["--rootdir", str(corpus_dump / "valid"), "--outdir", str(tmp_path / "wavs"), "--config",
                          str(config), "--checkpoint", str(tmp_path / "generator-1.h5")], "")
    assert status == 0
    wavs = sorted((tmp_path / "wavs").glob("*.wav"))
    assert len(wavs) == 4
    for path in wavs:
        frames = np.load(corpus_dump / "valid" / "norm-feats" / f"{path.stem}-norm-feats.npy").shape[0]
        assert len(sf.read(path)[0]) == frames * HOP_SIZE
