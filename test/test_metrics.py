"""Objective metrics on real recordings of the bundled corpus: perfect scores for identical
audio, worse ones for noise and pitch shifts, DTW over different lengths, and the evaluate
command's pairing and reporting of files it cannot use."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf

from tensorflow_tts.configs import PreprocessConfig
from tensorflow_tts.dump import layout
from tensorflow_tts.metrics import (
    PESQ_WB_MAX,
    MetricError,
    all_pass_alpha,
    cepstral_scores,
    dtw_mel_l1,
    evaluate_pair,
    log_mel_l1,
    mel_cepstrum,
    mr_stft_distance,
    pesq_wb,
    stoi,
)
from tensorflow_tts.metrics.cepstral import warp_frequency
from tensorflow_tts.metrics.spectral import log_mel

WAVS = Path(__file__).parent / "files" / "corpus" / "ljspeech" / "wavs"
RATE = 22050


def recording(utt_id="LJ001-0001"):
    audio, rate = sf.read(WAVS / f"{utt_id}.wav", dtype="float32")
    assert rate == RATE
    return audio


def with_noise(audio, std, seed=0):
    return audio + np.random.default_rng(seed).normal(0.0, std, len(audio)).astype(np.float32)


def test_identical_audio_scores_perfectly():
    audio = recording()
    scores = cepstral_scores(audio, audio.copy(), RATE)
    assert (scores.mcd, scores.log_f0_rmse, scores.vuv_error) == (0.0, 0.0, 0.0)
    assert scores.frames == len(audio) // 110 + 1  # the diagonal of 5 ms frames
    assert stoi(audio, audio, RATE) == pytest.approx(1.0, abs=1e-6)
    assert pesq_wb(audio, audio, RATE) == pytest.approx(PESQ_WB_MAX, abs=1e-3)
    assert mr_stft_distance(audio, audio) == (0.0, 0.0)
    assert log_mel_l1(audio, audio, PreprocessConfig()) == 0.0


def test_more_noise_scores_worse_on_every_metric():
    audio = recording()
    light, heavy = with_noise(audio, 0.003), with_noise(audio, 0.03)
    mcd = [cepstral_scores(audio, noisy, RATE).mcd for noisy in (light, heavy)]
    pesq = [pesq_wb(audio, noisy, RATE) for noisy in (light, heavy)]
    intelligibility = [stoi(audio, noisy, RATE) for noisy in (light, heavy)]
    spectral = [sum(mr_stft_distance(audio, noisy)) for noisy in (light, heavy)]
    mel = [log_mel_l1(audio, noisy, PreprocessConfig()) for noisy in (light, heavy)]
    assert 0.5 < mcd[0] < mcd[1] < 20.0
    assert PESQ_WB_MAX - 0.3 > pesq[0] > pesq[1] > 1.0
    assert 1.0 > intelligibility[0] > intelligibility[1] > 0.8
    assert 0.0 < spectral[0] < spectral[1]
    assert 0.0 < mel[0] < mel[1]


def test_pitch_shift_shows_as_its_log_f0_ratio():
    audio = recording()
    shifted = librosa.effects.pitch_shift(audio, sr=RATE, n_steps=2)
    scores = cepstral_scores(audio, shifted, RATE)
    noisy = cepstral_scores(audio, with_noise(audio, 0.003), RATE)
    two_semitones = np.log(2 ** (2 / 12))  # 0.1155
    assert scores.log_f0_rmse == pytest.approx(two_semitones, abs=0.04)
    assert scores.log_f0_rmse > 2 * noisy.log_f0_rmse
    assert scores.mcd > noisy.mcd
    assert 0.0 < scores.vuv_error < 0.5


def test_dtw_aligns_utterances_of_different_lengths():
    audio = recording()
    slower = librosa.effects.time_stretch(audio, rate=0.85)
    assert len(slower) > 1.1 * len(audio)
    same_words = cepstral_scores(audio, slower, RATE)
    other_words = cepstral_scores(audio, recording("LJ001-0002"), RATE)
    assert same_words.frames >= len(slower) // 110
    assert 0.0 < same_words.mcd < other_words.mcd
    assert same_words.log_f0_rmse < 0.1 < other_words.log_f0_rmse


def test_max_frequency_leaves_an_empty_upper_band_out_of_the_mcd():
    audio = recording()
    band_limited = librosa.resample(librosa.resample(audio, orig_sr=RATE, target_sr=16000), orig_sr=16000,
                                    target_sr=RATE)[: len(audio)]
    assert cepstral_scores(audio, band_limited, RATE).mcd > 5.0
    assert cepstral_scores(audio, band_limited, RATE, max_frequency=7600).mcd < 0.2


def test_dtw_mel_l1_aligns_mels_of_different_lengths():
    config = PreprocessConfig()
    mel = log_mel(recording(), config)
    slower = log_mel(librosa.effects.time_stretch(recording(), rate=0.85), config)
    other = log_mel(recording("LJ001-0002"), config)
    assert dtw_mel_l1(mel, mel) == 0.0
    assert len(slower) > len(mel)
    assert 0.0 < dtw_mel_l1(slower, mel) < dtw_mel_l1(other, mel)


def test_same_length_metrics_refuse_different_lengths():
    audio = recording()
    with pytest.raises(MetricError, match=r"lengths differ by 4410 samples \(32826 vs 28416\)"):
        pesq_wb(audio, audio[:-4410], RATE)


def test_pesq_failure_is_a_metric_error():
    audio = recording()
    with pytest.raises(MetricError, match="PESQ failed"):
        pesq_wb(audio, np.zeros_like(audio), RATE)


def test_too_short_audio_is_a_reason_per_metric_not_a_crash():
    snippet = recording()[5000:6000]  # 45 ms of speech
    scores, failures = evaluate_pair(snippet, snippet, RATE, mel_config=PreprocessConfig())
    assert sorted(failures) == ["log_mel_l1", "mr_stft", "pesq", "stoi"]
    assert "at least 1200" in failures["mr_stft"] and "1/4 of a second" in failures["pesq"]
    assert "at least one FFT window (1024)" in failures["log_mel_l1"]
    assert (scores["mcd"], scores["vuv_error"]) == (0.0, 0.0)
    assert np.isnan(scores["log_f0_rmse"])  # 45 ms: no frame voiced in both


def test_mr_stft_distance_equals_the_training_loss():
    import tensorflow as tf

    from tensorflow_tts.losses.stft import MAGNITUDE_EPSILON, MAGNITUDE_MAX, TFMultiResolutionSTFT
    from tensorflow_tts.metrics import spectral

    assert (spectral.MAGNITUDE_EPSILON, spectral.MAGNITUDE_MAX) == (MAGNITUDE_EPSILON, MAGNITUDE_MAX)
    audio = recording()
    noisy = with_noise(audio, 0.01)
    loss = TFMultiResolutionSTFT()
    expected = [float(value[0]) for value in loss(tf.constant(audio[None]), tf.constant(noisy[None]))]
    assert spectral.MR_STFT_RESOLUTIONS == tuple(zip(loss.fft_lengths, loss.frame_steps, loss.frame_lengths))
    np.testing.assert_allclose(mr_stft_distance(audio, noisy), expected, rtol=1e-4)


def test_all_pass_alpha_follows_the_mel_scale_at_common_rates():
    assert [all_pass_alpha(rate) for rate in (16000, 22050, 44100, 48000)] == [0.41, 0.455, 0.544, 0.554]


def test_mel_cepstrum_recovers_the_coefficients_an_envelope_was_made_from():
    order, alpha = 24, all_pass_alpha(RATE)
    coefficients = np.random.default_rng(1).normal(0.0, 0.3, order + 1) / (1 + np.arange(order + 1))
    warped = warp_frequency(np.linspace(0.0, np.pi, 1025), alpha)
    log_amplitude = coefficients[0] + np.cos(np.outer(warped, np.arange(1, order + 1))) @ coefficients[1:]
    envelope = np.exp(2 * log_amplitude)[None]
    np.testing.assert_allclose(mel_cepstrum(envelope, order, alpha)[0], coefficients, atol=2e-3)


def test_importing_metrics_loads_no_tensorflow():
    code = "import sys, tensorflow_tts.metrics; print('tensorflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def run_evaluate(*args):
    return subprocess.run([sys.executable, "-m", "tensorflow_tts.bin.evaluate", "--verbose", "0", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_evaluate_pairs_by_id_resamples_and_names_every_file_it_cannot_use(tmp_path):
    reference, synthesized = tmp_path / "reference", tmp_path / "synthesized"
    reference.mkdir()
    synthesized.mkdir()
    for utt_id in ("LJ001-0001", "LJ001-0002", "LJ001-0003", "LJ001-0004"):
        (reference / f"{utt_id}.wav").write_bytes((WAVS / f"{utt_id}.wav").read_bytes())
    (synthesized / "LJ001-0001.wav").write_bytes((WAVS / "LJ001-0001.wav").read_bytes())
    noisy = librosa.resample(with_noise(recording("LJ001-0002"), 0.01), orig_sr=RATE, target_sr=16000)
    sf.write(synthesized / "LJ001-0002.wav", noisy, 16000)
    (synthesized / "LJ001-0003.wav").write_bytes(b"RIFF not really")
    (synthesized / "LJ009-9999.wav").write_bytes((WAVS / "LJ001-0005.wav").read_bytes())

    result = run_evaluate("--reference", reference, "--synthesized", synthesized, "--out", tmp_path / "report.json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "LJ001-0003.wav: truncated or corrupt WAV header" in result.stderr
    assert "LJ001-0004: no synthesized file" in result.stderr
    assert "LJ009-9999: no reference file" in result.stderr
    assert "1 synthesized file(s): resampled from 16000 Hz to 22050 Hz" in result.stderr
    assert "2 utterance(s) scored, 3 file(s) left out" in result.stdout
    for name in ("mcd", "log_f0_rmse", "vuv_error", "pesq", "stoi", "mr_stft", "log_mel_l1"):
        assert name in result.stdout

    report = json.loads((tmp_path / "report.json").read_text())
    assert sorted(report["utterances"]) == ["LJ001-0001", "LJ001-0002"]
    assert report["utterances"]["LJ001-0001"]["mcd"] == 0.0
    assert report["utterances"]["LJ001-0001"]["pesq"] == pytest.approx(PESQ_WB_MAX, abs=1e-3)
    assert report["utterances"]["LJ001-0002"]["pesq"] < 3.5
    assert "resampled from 16000 Hz" in report["utterances"]["LJ001-0002"]["notes"]
    assert len(report["problems"]) == 3
    assert report["summary"]["mcd"]["count"] == 2
    with open(tmp_path / "report.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [row["utt_id"] for row in rows] == ["LJ001-0001", "LJ001-0002"]
    assert float(rows[0]["stoi"]) == pytest.approx(1.0, abs=1e-4)


def test_evaluate_reads_a_dump_split_and_leaves_out_same_length_metrics_for_other_lengths(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    PreprocessConfig().to_yaml(dump / layout.CONFIG_NAME)
    synthesized = tmp_path / "synthesized"
    synthesized.mkdir()
    for utt_id in ("LJ001-0001", "LJ001-0002"):
        layout.save_feature(layout.WAVE, dump / "valid", utt_id, recording(utt_id))
        sf.write(synthesized / f"{utt_id}.wav", librosa.effects.time_stretch(recording(utt_id), rate=0.9), RATE)

    result = run_evaluate("--reference", dump / "valid", "--synthesized", synthesized,
                          "--metrics", "mcd", "pesq", "--max-frequency", 7600, "--out", tmp_path / "out" / "report.json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "LJ001-0001: pesq not computed: lengths differ" in result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert sorted(report["summary"]) == ["mcd"]
    assert 0.0 < report["utterances"]["LJ001-0002"]["mcd"] < 12.0
    assert "pesq not computed" in report["utterances"]["LJ001-0002"]["notes"]


def test_evaluate_without_any_pair_exits_1(tmp_path):
    (tmp_path / "synthesized").mkdir()
    (tmp_path / "synthesized" / "other.wav").write_bytes((WAVS / "LJ001-0001.wav").read_bytes())
    result = run_evaluate("--reference", WAVS, "--synthesized", tmp_path / "synthesized", "--out", tmp_path / "r.json")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "other: no reference file" in result.stderr
    assert "0 utterance(s) scored" in result.stdout
