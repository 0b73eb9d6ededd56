"""The README's main command: corpus to deployable voice, on the bundled corpus.

    python examples/demo/run_demo.py --outdir demo_output

Stages, each through the same command or API a user would call:
  1. preprocess the bundled LJSpeech-layout corpus (tensorflow-tts-preprocess, then the
     standalone compute-statistics and normalize commands);
  2. train a tiny FastSpeech2 whose durations come from the built-in aligner;
  3. train a tiny Multi-band MelGAN;
  4. save both with save_pretrained, synthesize a sentence that is not in the corpus
     (tensorflow-tts-synthesize), plot its mel;
  5. export SavedModel and builtin-only TFLite (tensorflow-tts-export);
  6. write summary.json (losses, real-time factor, file sizes) and print where it all is.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"
PREPROCESS_CONFIG = REPO / "preprocess" / "ljspeech_preprocess.yaml"
FASTSPEECH2_CONFIG = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"
VOCODER_CONFIG = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml"
SENTENCE = "A quick brown fox jumps over the lazy dog near the river bank."


def run(name, command, log_dir):
    """Run one stage as a subprocess (as a user would), its output kept in log_dir."""
    print(f"\n== {name}\n   {' '.join(str(part) for part in command)}", flush=True)
    log_path = log_dir / f"{name.replace(' ', '_')}.log"
    started = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log:
        status = subprocess.run([str(part) for part in command], stdout=log, stderr=subprocess.STDOUT, cwd=REPO).returncode
    seconds = time.perf_counter() - started
    if status:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        sys.exit(f"demo stopped: {name} exited with status {status} after {seconds:.0f} s; last lines of {log_path}:\n"
                 + "\n".join(tail))
    print(f"   done in {seconds:.0f} s (log: {log_path})", flush=True)
    return seconds


def write_recipe(source, destination, steps, overrides):
    """The tiny recipe with the demo's step budget; saved so the run can be repeated."""
    recipe = yaml.safe_load(source.read_text(encoding="utf-8"))
    recipe.update({"train_max_steps": steps, "save_interval_steps": steps, "eval_interval_steps": steps,
                   "log_interval_steps": max(1, min(recipe.get("log_interval_steps", 100), steps // 4 or 1))})
    recipe.update(overrides(steps, recipe))
    destination.write_text(yaml.safe_dump(recipe, sort_keys=False), encoding="utf-8")
    return destination


def fastspeech2_overrides(steps, recipe):
    optimizer = dict(recipe["optimizer_params"], decay_steps=steps)
    aligner = dict(recipe.get("aligner_params") or {})
    # Hard durations sharpen once the soft alignment has formed: keep the same proportions.
    aligner["binarization_start_steps"] = int(steps * 0.1)
    aligner["binarization_warmup_steps"] = int(steps * 0.07)
    return {"optimizer_params": optimizer, "aligner_params": aligner}


def vocoder_overrides(steps, recipe):
    # As the published recipe: STFT/mel pre-training first, then the discriminator for the
    # last tenth (adversarial steps cost several times a pre-training step on the CPU).
    return {"discriminator_train_start_steps": int(steps * 0.9)}


def last_scalars(event_dir):
    """The last value of every scalar in a TensorBoard run folder."""
    import tensorflow as tf
    from tensorflow.core.util import event_pb2

    values = {}
    for path in sorted(Path(event_dir).glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)):
            event = event_pb2.Event.FromString(record.numpy())
            for value in event.summary.value:
                if value.HasField("tensor") and value.metadata.plugin_data.plugin_name == "scalars":
                    values[value.tag] = float(tf.make_ndarray(value.tensor))
    return values


def file_sizes(folder):
    return {str(path.relative_to(folder)): path.stat().st_size for path in sorted(folder.rglob("*")) if path.is_file()}


def save_voice(outdir, fastspeech2_recipe, vocoder_recipe, dump):
    """save_pretrained folders for the trained models and the processor (what the notebook loads)."""
    from tensorflow_tts.inference import AutoConfig, AutoProcessor, TFAutoModel, save_pretrained

    for name, recipe, train_dir in (
        ("fastspeech2", fastspeech2_recipe, outdir / "train" / "fastspeech2"),
        ("mb_melgan", vocoder_recipe, outdir / "train" / "mb_melgan"),
    ):
        config = AutoConfig.from_pretrained(recipe)
        model = TFAutoModel.from_pretrained(train_dir / "checkpoints", config=config)
        save_pretrained(model, outdir / name)
    processor = AutoProcessor.from_pretrained(next(dump.glob("*_mapper.json")))
    save_pretrained(processor, outdir)
    print(f"   saved {outdir / 'fastspeech2'}, {outdir / 'mb_melgan'}, {outdir / 'processor.json'}")


def synthesis_figures(outdir, stats_path):
    """Mel plot and real-time factor of the saved voice through the Python API."""
    import matplotlib

    matplotlib.use("Agg")
    from tensorflow_tts.inference.synthesizer import Synthesizer
    from tensorflow_tts.utils.plotting import plot_mel_comparison

    synthesizer = Synthesizer(outdir / "fastspeech2", outdir / "mb_melgan", processor=outdir / "processor.json")
    synthesizer.synthesize(SENTENCE)  # warm-up: traces the functions
    timings = []
    for _ in range(3):
        started = time.perf_counter()
        audio = synthesizer.synthesize(SENTENCE)
        timings.append(time.perf_counter() - started)
    sampling_rate = yaml.safe_load(PREPROCESS_CONFIG.read_text())["sampling_rate"]
    # An undertrained voice may predict no frame at all (the synthesizer then warns and returns no audio).
    rtf = float(np.median(timings)) / (len(audio) / sampling_rate) if len(audio) else float("nan")

    from tensorflow_tts.inference import AutoProcessor, TFAutoModel

    processor = AutoProcessor.from_pretrained(outdir / "processor.json")
    acoustic = TFAutoModel.from_pretrained(outdir / "fastspeech2")
    ids = np.asarray(processor.text_to_sequence(SENTENCE), np.int32)[None]
    ones = np.ones([1], np.float32)
    outputs = acoustic.inference(ids, np.zeros([1], np.int32), ones, ones, ones)
    mel = np.asarray(outputs[1])[0]
    np.save(outdir / "synthesis" / "demo_mel.npy", mel)
    if mel.shape[0]:
        plot_mel_comparison(mel, None, title=SENTENCE).savefig(outdir / "synthesis" / "demo_mel.png")
    return {"real_time_factor_keras": rtf, "audio_seconds": len(audio) / sampling_rate, "mel_frames": int(mel.shape[0])}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=Path("demo_output"), help="where everything is written")
    parser.add_argument("--fastspeech2-steps", type=int, default=2000, help="training steps of the tiny FastSpeech2")
    parser.add_argument("--vocoder-steps", type=int, default=2000, help="training steps of the tiny MB-MelGAN")
    parser.add_argument("--skip-tflite", action="store_true", help="export the SavedModels only (faster)")
    args = parser.parse_args(argv)

    outdir = args.outdir.resolve()
    dump, logs, configs = outdir / "dump", outdir / "logs", outdir / "configs"
    for folder in (outdir, logs, configs, outdir / "synthesis", outdir / "export"):
        folder.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    bin_module = [python, "-m"]
    timings = {}
    started = time.perf_counter()

    preprocess_config = str(PREPROCESS_CONFIG)
    timings["preprocess"] = run("preprocess", bin_module + [
        "tensorflow_tts.bin.preprocess", "--rootdir", CORPUS, "--outdir", dump,
        "--config", preprocess_config, "--dataset", "ljspeech"], logs)
    # preprocess already writes stats and norm-feats; the standalone commands are run too
    # to show the flow users know (they rewrite the same files).
    timings["statistics"] = run("compute statistics", bin_module + [
        "tensorflow_tts.bin.compute_statistics", "--rootdir", dump / "train", "--outdir", dump,
        "--config", preprocess_config], logs)
    timings["normalize"] = run("normalize", bin_module + [
        "tensorflow_tts.bin.normalize", "--rootdir", dump, "--outdir", dump,
        "--config", preprocess_config, "--stats", dump / "stats.npy"], logs)

    fastspeech2_recipe = write_recipe(FASTSPEECH2_CONFIG, configs / "fastspeech2.yaml", args.fastspeech2_steps,
                                      fastspeech2_overrides)
    vocoder_recipe = write_recipe(VOCODER_CONFIG, configs / "mb_melgan.yaml", args.vocoder_steps, vocoder_overrides)
    timings["train_fastspeech2"] = run("train fastspeech2", [
        python, REPO / "examples" / "fastspeech2" / "train_fastspeech2.py", "--dump-dir", dump,
        "--outdir", outdir / "train" / "fastspeech2", "--config", fastspeech2_recipe, "--use-norm", "1"], logs)
    timings["train_mb_melgan"] = run("train mb_melgan", [
        python, REPO / "examples" / "multiband_melgan" / "train_multiband_melgan.py",
        "--train-dir", dump / "train", "--dev-dir", dump / "valid",
        "--outdir", outdir / "train" / "mb_melgan", "--config", vocoder_recipe, "--use-norm", "1"], logs)

    print("\n== save_pretrained", flush=True)
    save_voice(outdir, fastspeech2_recipe, vocoder_recipe, dump)
    wav = outdir / "synthesis" / "demo.wav"
    timings["synthesize"] = run("synthesize", bin_module + [
        "tensorflow_tts.bin.synthesize", "--text", SENTENCE, "--acoustic", outdir / "fastspeech2",
        "--vocoder", outdir / "mb_melgan", "--processor", outdir / "processor.json", "--out", wav], logs)

    for name in ("fastspeech2", "mb_melgan"):
        timings[f"export_saved_model_{name}"] = run(f"export saved_model {name}", bin_module + [
            "tensorflow_tts.bin.export", "--model", outdir / name, "--format", "saved_model",
            "--outdir", outdir / "export" / "saved_model" / name], logs)
    if not args.skip_tflite:
        timings["export_tflite"] = run("export tflite", bin_module + [
            "tensorflow_tts.bin.export", "--model", outdir / "fastspeech2", "--vocoder", outdir / "mb_melgan",
            "--format", "tflite", "--outdir", outdir / "export" / "tflite"], logs)
        timings["export_tflite_mb_melgan"] = run("export tflite mb_melgan", bin_module + [
            "tensorflow_tts.bin.export", "--model", outdir / "mb_melgan", "--format", "tflite",
            "--outdir", outdir / "export" / "tflite"], logs)
        # The combined model maps token ids straight to a waveform.
        run("synthesize from tflite", bin_module + [
            "tensorflow_tts.bin.synthesize", "--text", SENTENCE, "--processor", outdir / "processor.json",
            "--acoustic", outdir / "export" / "tflite" / "fastspeech2_multiband_melgan_generator.tflite",
            "--out", outdir / "synthesis" / "demo_tflite.wav"], logs)

    print("\n== summary", flush=True)
    summary = {
        "sentence": SENTENCE,
        "wav": str(wav),
        "fastspeech2_final_losses": last_scalars(outdir / "train" / "fastspeech2" / "train"),
        "mb_melgan_final_losses": last_scalars(outdir / "train" / "mb_melgan" / "train"),
        **synthesis_figures(outdir, dump / "stats.npy"),
        "export_file_sizes": file_sizes(outdir / "export"),
        "stage_seconds": {name: round(seconds, 1) for name, seconds in timings.items()},
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    (outdir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    alignments = sorted((outdir / "train" / "fastspeech2" / "predictions").rglob("*align*.png"))
    print(f"Everything is in {outdir}:")
    print(f"  wav: {wav} ({summary['audio_seconds']:.2f} s)")
    print(f"  mel plot: {outdir / 'synthesis' / 'demo_mel.png'}; alignment plots: {len(alignments)} under "
          f"{outdir / 'train' / 'fastspeech2' / 'predictions'}")
    print(f"  TensorBoard: tensorboard --logdir {outdir / 'train'}")
    print(f"  voice: {outdir / 'fastspeech2'}, {outdir / 'mb_melgan'}, {outdir / 'processor.json'}")
    print(f"  exports: {outdir / 'export'}")
    print(f"  summary: {outdir / 'summary.json'} (real-time factor {summary['real_time_factor_keras']:.3f}, "
          f"total {summary['total_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())
