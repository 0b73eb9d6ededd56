"""Training-step time on this machine: FastSpeech2 v1 and the MB-MelGAN v1 generator.

Runs the real trainers (`FastSpeech2Trainer`, `VocoderGanTrainer`) on the real input
pipelines over a synthetic dump (random features, so every batch has the same shape):

* fastspeech2: examples/fastspeech2/conf/fastspeech2.v1.yaml, batch 16 x 600 frames
  (120 tokens, durations from the dump);
* mb_melgan: examples/multiband_melgan/conf/multiband_melgan.v1.yaml, generator only
  (the STFT-loss pre-training phase), batch 8 x 32 frames (8192 samples); with
  `--with-discriminator`, the adversarial step (both updates). `--vocoder-config` and
  `--fastspeech2-config` time other recipes (e.g. the tiny ones the demo trains).

Each variant (`fp32`, `xla` = `jit_compile: true`, and `mixed` / `mixed+xla` = the trainer's
mixed precision: float16 on a GPU, bfloat16 on a CPU) trains `--warmup` steps (tracing,
compilation) and then `--steps` timed ones. Printed per variant: the median step time,
the fastest, the first step (trace + compile), and the input-pipeline wait (time the loop
spent waiting for tf.data, as a share of the timed steps). Also printed: the machine's
fp32 matmul GFLOP/s, the thread settings and the load average.

    python benchmarks/train_step.py                         # both models, fp32 and xla (CPU)
    python benchmarks/train_step.py --models mb_melgan --variants fp32 xla mixed --steps 20
    python benchmarks/train_step.py --models mb_melgan --profile 3   # + ms per op type

`--gradient-checkpointing` trains with `gradient_checkpointing: true`. `--memory` prints the
peak memory of FastSpeech2 fp32 training with and without it, each run in its own process
(the peak of GPU:0 where a GPU is visible, else the process's peak RSS, which includes
TensorFlow itself):

    python benchmarks/train_step.py --memory --frames 1000 --tokens 200   # batch 16 x 1,000 frames
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import tensorflow as tf
import yaml

from measure import finish, op_types_of_trace, print_machine
from tensorflow_tts.datasets.synthetic import write_synthetic_dump
from tensorflow_tts.optimizers import create_optimizer
from tensorflow_tts.recipes import acoustic as acoustic_recipe
from tensorflow_tts.recipes.fastspeech2 import FastSpeech2Trainer, build_fastspeech2
from tensorflow_tts.recipes.vocoder import VocoderGanTrainer, build_train_parser, run_vocoder_training

REPO = Path(__file__).resolve().parents[1]

FASTSPEECH2 = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.v1.yaml"
MB_MELGAN = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.v1.yaml"
MODELS = ("fastspeech2", "mb_melgan")
VARIANTS = ("fp32", "xla", "mixed", "mixed+xla")


class StepClock:
    """Mixed into a trainer: when fit starts, when each step ends, how long each batch took to arrive."""

    def fit(self, *args, **kwargs):
        self.step_ends, self.input_waits = [], []
        self.fit_started = time.perf_counter()
        return super().fit(*args, **kwargs)

    def _next_train_batch(self):
        start = time.perf_counter()
        batch = super()._next_train_batch()
        self.input_waits.append(time.perf_counter() - start)
        return batch

    def _after_train_step(self, micro_results, window):
        super()._after_train_step(micro_results, window)
        self.step_ends.append(time.perf_counter())


def clocked(trainer_class):
    return type(f"Clocked{trainer_class.__name__}", (StepClock, trainer_class), {})


def trainer_overrides(args, variant, total_steps, outdir):
    overrides = {
        "train_max_steps": total_steps,
        "log_interval_steps": total_steps + 1,
        "eval_interval_steps": total_steps + 1,
        "save_interval_steps": total_steps + 1,
        "save_weights_h5": False,
        "jit_compile": "xla" in variant,
        "outdir": str(outdir),
        "gradient_checkpointing": args.gradient_checkpointing,
    }
    if args.profile:  # trace the last `--profile` timed steps
        overrides["profile_steps"] = [total_steps - args.profile + 1, total_steps]
    return overrides


def run_fastspeech2(args, variant, workdir):
    recipe = acoustic_recipe.load_recipe(args.fastspeech2_config, "fastspeech2")
    dump = workdir / "fastspeech2_dump"
    if not dump.exists():
        write_synthetic_dump(
            dump, num_utterances=4 * args.fastspeech2_batch, frames_range=(args.frames, args.frames),
            tokens_range=(args.tokens, args.tokens), num_speakers=1, vocab_size=recipe.model_config.vocab_size,
            with_waves=False,
        )
    data_config = recipe.data_config
    data_config.batch_size, data_config.batching, data_config.max_mel_length = args.fastspeech2_batch, "padded", None
    batches, _ = acoustic_recipe.build_dataset(
        dump / "train", data_config, use_norm=True, with_durations=True, n_speakers=1,
        vocab_size=recipe.model_config.vocab_size, num_replicas=1, training=True,
    )
    total = args.warmup + args.steps
    trainer_config = {**recipe.trainer_config.to_dict(), **trainer_overrides(args, variant, total, workdir / f"fastspeech2_{variant}")}
    trainer = clocked(FastSpeech2Trainer)(
        config=trainer_config, strategy=tf.distribute.get_strategy(), is_mixed_precision="mixed" in variant,
        f0_stats=[180.0, 50.0], energy_stats=[25.0, 14.0],
    )
    model, _ = build_fastspeech2(recipe.model_config)
    trainer.compile(model, create_optimizer(recipe.optimizer_params, train_max_steps=total))
    trainer.fit(batches)
    return summarise(trainer, args.warmup)


def run_mb_melgan(args, variant, workdir):
    dump = workdir / "vocoder_dump"
    if not dump.exists():
        # Utterances a little longer than a segment, so random crops cost what they cost in training;
        # 8 batches an epoch, since each epoch starts a new (distributed) iterator, ~70 ms here.
        for split in ("train", "valid"):
            write_synthetic_dump(dump, num_utterances=8 * args.vocoder_batch, split=split, frames_range=(48, 64),
                                 tokens_range=(10, 20), num_speakers=1, with_durations=False)
    values = yaml.safe_load(args.vocoder_config.read_text())
    total = args.warmup + args.steps
    values.update(
        batch_size=args.vocoder_batch, batch_max_steps=args.segment_frames * 256,
        discriminator_train_start_steps=0 if args.with_discriminator else total + 1,
        **trainer_overrides(args, variant, total, workdir / f"mb_melgan_{variant}"),
    )
    config = workdir / f"mb_melgan_{variant}.yaml"
    config.write_text(yaml.safe_dump(values))
    flags = ["--train-dir", str(dump / "train"), "--dev-dir", str(dump / "valid"), "--outdir", str(workdir / f"mb_melgan_{variant}"),
             "--config", str(config), "--mixed_precision", str(int("mixed" in variant)), "--verbose", "0"]
    trainer = run_vocoder_training(build_train_parser("").parse_args(flags), trainer_class=clocked(VocoderGanTrainer))
    return summarise(trainer, args.warmup)


def summarise(trainer, warmup):
    """Step times (the first includes tracing and compilation) and input wait of a clocked trainer's fit."""
    ends = [trainer.fit_started] + trainer.step_ends
    durations = [later - earlier for earlier, later in zip(ends, ends[1:])]
    timed, waits = durations[warmup:], trainer.input_waits[warmup:]
    timing = {
        "first_step_s": round(durations[0], 2),
        "median_step_s": round(statistics.median(timed), 4),
        "fastest_step_s": round(min(timed), 4),
        "input_wait_share": round(sum(waits) / sum(timed), 4),
        "timed_steps": len(timed),
        "peak_memory_mb": round(peak_memory_bytes() / 2**20, 1),
    }
    if trainer.config.profile_steps:
        first, last = trainer.config.profile_steps
        ops = op_types_of_trace(Path(trainer.config.outdir) / "plugins" / "profile", last - first + 1)
        timing["op_ms_per_step"] = {name: round(ms, 1) for name, ms in list(ops.items())[:15]}
    return timing


def peak_memory_bytes():
    """Peak GPU:0 memory since the process started where a GPU is visible, else the peak RSS."""
    if tf.config.list_physical_devices("GPU"):
        return tf.config.experimental.get_memory_info("GPU:0")["peak"]
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def compare_memory(argv, args):
    """FastSpeech2 fp32 without and with gradient checkpointing, each in a fresh process (peaks only grow)."""
    passed = [arg for arg in (argv if argv is not None else sys.argv[1:]) if arg != "--memory"]
    results = {}
    with tempfile.TemporaryDirectory(prefix="tts_train_memory_") as workdir:
        for checkpointing in (False, True):
            report = Path(workdir) / f"checkpointing_{checkpointing}.json"
            command = [sys.executable, __file__, *passed, "--models", "fastspeech2", "--variants", "fp32", "--json", str(report)]
            subprocess.run(command + (["--gradient-checkpointing"] if checkpointing else []), check=True, stdout=subprocess.DEVNULL)
            timing = json.loads(report.read_text())["results"]["fastspeech2/fp32"]
            results[f"gradient_checkpointing={str(checkpointing).lower()}"] = timing
            print(f"fastspeech2 fp32 batch {args.fastspeech2_batch} x {args.frames} frames, gradient_checkpointing: "
                  f"{str(checkpointing).lower():5s}: peak memory {timing['peak_memory_mb']:8.1f} MiB, "
                  f"median {timing['median_step_s'] * 1000:.1f} ms/step", flush=True)
    return finish({"memory": results}, args.json)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument("--variants", nargs="*", choices=VARIANTS,
                        help="default: fp32 and xla on a CPU; all four where a GPU is visible")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps first (tracing, XLA compilation)")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per variant")
    parser.add_argument("--fastspeech2-config", type=Path, default=FASTSPEECH2)
    parser.add_argument("--vocoder-config", type=Path, default=MB_MELGAN, help="any MB-MelGAN/MelGAN/HiFi-GAN recipe")
    parser.add_argument("--fastspeech2-batch", type=int, default=16)
    parser.add_argument("--frames", type=int, default=600, help="FastSpeech2 mel frames per utterance")
    parser.add_argument("--tokens", type=int, default=120, help="FastSpeech2 tokens per utterance")
    parser.add_argument("--vocoder-batch", type=int, default=8)
    parser.add_argument("--segment-frames", type=int, default=32, help="MB-MelGAN segment, in mel frames")
    parser.add_argument("--with-discriminator", action="store_true",
                        help="time the adversarial step (generator + discriminator) instead of pre-training")
    parser.add_argument("--profile", type=int, default=0, metavar="STEPS",
                        help="trace the last STEPS timed steps and print ms per op type")
    parser.add_argument("--gradient-checkpointing", action="store_true", help="train with gradient_checkpointing: true")
    parser.add_argument("--memory", action="store_true",
                        help="peak memory of FastSpeech2 fp32 without and with gradient checkpointing")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.memory:
        return compare_memory(argv, args)
    if args.profile > args.steps:
        parser.error("--profile cannot trace more steps than --steps")
    has_gpu = bool(tf.config.list_physical_devices("GPU"))
    variants = args.variants or (list(VARIANTS) if has_gpu else ["fp32", "xla"])

    machine, gflops = print_machine()
    runners = {"fastspeech2": run_fastspeech2, "mb_melgan": run_mb_melgan}
    results = {}
    with tempfile.TemporaryDirectory(prefix="tts_train_step_") as workdir:
        for model in args.models:
            for variant in variants:
                timing = runners[model](args, variant, Path(workdir))
                tf.keras.mixed_precision.set_global_policy("float32")
                results[f"{model}/{variant}"] = timing
                print(f"{model:12s} {variant:10s} median {timing['median_step_s'] * 1000:8.1f} ms/step "
                      f"(fastest {timing['fastest_step_s'] * 1000:.1f}, first {timing['first_step_s']:.1f} s, "
                      f"input wait {100 * timing['input_wait_share']:.1f}% of step time)", flush=True)
                if "op_ms_per_step" in timing:
                    print("    ms/step by op type: " + json.dumps(timing["op_ms_per_step"]))
    summary = {"gflops_fp32": round(gflops, 1), "machine": machine, "results": results}
    return finish(summary, args.json)


if __name__ == "__main__":
    sys.exit(main())
