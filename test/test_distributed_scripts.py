"""The training scripts on many devices, for real: examples/fastspeech2/train_fastspeech2.py and
examples/multiband_melgan/train_multiband_melgan.py on the bundled corpus, each run four ways
at once: one replica with the global batch of 2 x B (the reference), two logical CPUs x B
(MirroredStrategy) and two localhost workers x B (TF_CONFIG: MultiWorkerMirroredStrategy).
They must end with the same weights, and only the chief worker writes files.

What makes the four runs comparable:
* the same `seed`, so the same initial weights (checked), the same shuffling and, for the
  vocoder, the same random segments: AudioMelDataset cuts them in the input pipeline, before
  batching, with stateless ops seeded per example, so the global batch of 2 x B segments is
  the same whatever the replica layout; the trainer then splits it between the replicas;
* no dropout in the FastSpeech2 config: each replica draws its own dropout masks, which no
  seed can make equal to one replica's masks over the global batch (MB-MelGAN has none);
* FastSpeech2's postnet batch norm is synchronised across replicas, so its training
  statistics are those of the global batch, as on one replica.
Only the two workers evaluate (at their last step), so that the chief has figures to write.
"""

from pathlib import Path

import numpy as np
import pytest
import yaml

from helpers.processes import free_port, start_script, tf_config, wait

REPO = Path(__file__).resolve().parents[1]
STEPS = 2
PER_REPLICA_BATCH = 2
LAYOUTS = ("single", "mirrored", "worker0", "worker1")
NO_EVALUATION = 1000
SCRIPTS = {
    "fastspeech2": REPO / "examples" / "fastspeech2" / "train_fastspeech2.py",
    "multiband_melgan": REPO / "examples" / "multiband_melgan" / "train_multiband_melgan.py",
}
# Where each script's evaluation leaves a figure or a sound on the chief.
PREDICTIONS = {"fastspeech2": f"predictions/{STEPS}steps/alignment_0.png", "multiband_melgan": f"predictions/{STEPS}steps/predicted_0.wav"}


def fastspeech2_config(batch_size, eval_interval_steps):
    values = yaml.safe_load((REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml").read_text())
    values["fastspeech2_params"].update(
        encoder_hidden_size=32, encoder_num_hidden_layers=1, encoder_attention_head_size=16, encoder_intermediate_size=64,
        decoder_hidden_size=32, decoder_num_hidden_layers=1, decoder_attention_head_size=16, decoder_intermediate_size=64,
        variant_predictor_filter=32, n_conv_postnet=1, postnet_conv_filters=32,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, variant_dropout_rate=0.0,
        variant_predictor_dropout_rate=0.0, variance_embedding_dropout_rate=0.0, postnet_dropout_rate=0.0,
    )
    values["aligner_params"].update(embedding_size=32, attention_channels=32)
    values.update(batch_size=batch_size, eval_interval_steps=eval_interval_steps)
    return values


def multiband_melgan_config(batch_size, eval_interval_steps):
    values = yaml.safe_load((REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml").read_text())
    values["multiband_melgan_generator_params"].update(filters=32, stacks=2)
    values["multiband_melgan_discriminator_params"].update(scales=1, max_downsample_filters=32)
    # One STFT resolution each: the losses' cost, not their number, is under test elsewhere.
    values["stft_loss_params"] = {"fft_lengths": [512], "frame_steps": [64], "frame_lengths": [256]}
    values["subband_stft_loss_params"] = {"fft_lengths": [128], "frame_steps": [16], "frame_lengths": [64]}
    values.update(
        batch_size=batch_size, eval_interval_steps=eval_interval_steps, discriminator_train_start_steps=0,
        eval_batch_size=1, batch_max_steps=2048, batch_max_steps_valid=4096,
    )
    return values


CONFIGS = {"fastspeech2": fastspeech2_config, "multiband_melgan": multiband_melgan_config}


def write_config(path, model, layout):
    """The tiny recipe, seeded, for a STEPS-step run with the global batch 2 x PER_REPLICA_BATCH."""
    batch_size = 2 * PER_REPLICA_BATCH if layout == "single" else PER_REPLICA_BATCH
    values = CONFIGS[model](batch_size, STEPS if layout.startswith("worker") else NO_EVALUATION)
    values.update(seed=7, train_max_steps=STEPS, save_interval_steps=STEPS, log_interval_steps=1)
    path.write_text(yaml.safe_dump(values, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def runs(corpus_dump, tmp_path_factory):
    """Start all eight runs at once (their start-ups overlap), then wait for each.

    Returns {model: {layout: {"outdir", "initial": [arrays], "final": [arrays]}}}.
    """
    root = tmp_path_factory.mktemp("distributed_scripts")
    started = {}
    for model, script in SCRIPTS.items():
        ports = [free_port(), free_port()]
        environments = {"single": {}, "mirrored": {"TF_TTS_CPU_REPLICAS": "2"}}
        for index in range(2):
            environments[f"worker{index}"] = {"TF_CONFIG": tf_config(ports, index)}
        for layout in LAYOUTS:
            name = f"{model}_{layout}"
            args = [
                "--train-dir", corpus_dump / "train", "--dev-dir", corpus_dump / "valid", "--outdir", root / name,
                "--config", write_config(root / f"{name}.yaml", model, layout), "--use-norm", "1",
            ]
            started[model, layout] = start_script(root / f"{name}.npz", script, args, environments[layout])
    results = {model: {} for model in SCRIPTS}
    for (model, layout), process in started.items():
        wait(process, timeout=600)
        weights = np.load(root / f"{model}_{layout}.npz")
        results[model][layout] = {
            "outdir": root / f"{model}_{layout}",
            **{stage: [weights[key] for key in weights.files if key.startswith(stage)] for stage in ("initial", "final")},
        }
    return results


def assert_equal_to_the_reference(run, reference):
    """Same initial weights; final weights within 0.1 % of how far training moved the reference's."""
    for got, want in zip(run["initial"], reference["initial"], strict=True):
        np.testing.assert_array_equal(got, want)
    moved = max(np.max(np.abs(final - initial)) for final, initial in zip(reference["final"], reference["initial"]))
    assert moved > 1e-4  # the runs trained
    for got, want in zip(run["final"], reference["final"], strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-3 * moved)


@pytest.mark.parametrize("model", SCRIPTS)
def test_two_cpu_replicas_of_b_equal_one_replica_of_2b(runs, model):
    assert_equal_to_the_reference(runs[model]["mirrored"], runs[model]["single"])


@pytest.mark.parametrize("model", SCRIPTS)
def test_two_workers_end_identical_and_equal_to_one_replica_of_2b(runs, model):
    workers = runs[model]["worker0"], runs[model]["worker1"]
    for chief, other in zip(workers[0]["final"], workers[1]["final"], strict=True):
        np.testing.assert_array_equal(chief, other)
    assert_equal_to_the_reference(workers[0], runs[model]["single"])


@pytest.mark.parametrize("model", SCRIPTS)
def test_only_the_chief_writes_checkpoints_summaries_and_plots(runs, model):
    chief, other = runs[model]["worker0"]["outdir"], runs[model]["worker1"]["outdir"]
    weights_file = "model" if model == "fastspeech2" else "generator"
    for written in (f"checkpoints/ckpt-{STEPS}.index", f"checkpoints/{weights_file}-{STEPS}.h5", PREDICTIONS[model]):
        assert (chief / written).is_file(), written
    for folder in ("train", "eval"):
        assert list((chief / folder).glob("events.out.tfevents.*")), folder
    # The other worker keeps only the config it ran with.
    assert sorted(path.name for path in other.iterdir()) == ["config.yml"]
