"""GAN vocoders (MelGAN, MelGAN-STFT, Multi-band MelGAN with or without the HiFi-GAN
discriminator, HiFi-GAN, Parallel WaveGAN): their losses, building them from a TensorFlowTTS
YAML, the training run behind the example scripts, and decoding mels.

The `examples/*/train_*.py` scripts call `train_main`; the decode scripts call `decode_main`.
"""

import argparse
import logging
import os
from pathlib import Path

import numpy as np
import tensorflow as tf
import yaml

from tensorflow_tts.audio.griffin_lim import TFMelSpectrogram
from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.configs.registry import model_config_from_yaml, read_yaml
from tensorflow_tts.configs.vocoder import VocoderTrainingConfig, split_vocoder_yaml
from tensorflow_tts.datasets import AudioMelDataset, DumpError, with_num_workers
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.statistics import load_mel_statistics, normalize_mel
from tensorflow_tts.losses.adversarial import (
    TFFeatureMatchLoss,
    TFMelGANAdversarialLoss,
)
from tensorflow_tts.losses.stft import TFMultiResolutionSTFT
from tensorflow_tts.models import (
    TFHifiGANDiscriminator,
    TFHifiGANMultiPeriodDiscriminator,
    TFMelGANMultiScaleDiscriminator,
    registry,
)
from tensorflow_tts.optimizers import create_optimizer, pop_optimizer_params
from tensorflow_tts.recipes.acoustic import finite_or_warn
from tensorflow_tts.utils.precision import to_float32
from tensorflow_tts.trainers.gan_trainer import GanBasedTrainer
from tensorflow_tts.utils.strategy import return_strategy
from tensorflow_tts.utils.checkpoints import restore_weights
from tensorflow_tts.utils.logs import setup_logging  # noqa: F401  (re-exported for the scripts)
from tensorflow_tts.utils.seeding import seed_everything

logger = logging.getLogger(__name__)

GENERATOR_CLASSES = {entry.name: entry.model_class for entry in registry.of_role(registry.VOCODER)}

# 1.8 built vocoder optimizers as tf.keras Adam, so its files assume Adam's own defaults.
_VOCODER_ADAM_DEFAULTS = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
# What a guide-style `optimizer: {type, args}` section sets in a GAN recipe: both optimizers.
_OPTIMIZER_SECTIONS = ("generator_optimizer_params", "discriminator_optimizer_params")


# ---------------------------------------------------------------------------- the trainer


class VocoderGanTrainer(GanBasedTrainer):
    """GanBasedTrainer with the vocoder losses of TensorFlowTTS 1.8.

    Generator, per example ``[B]``:
        ``0.5 * (sc + mag)`` of the full-band MR-STFT loss (when `stft_loss_params`),
        ``+ 0.5 * (sc + mag)`` of the sub-band one on PQMF bands (when `subband_stft_loss_params`),
        ``+ lambda_mel * |log10 mel - log10 mel|`` (when `mel_loss_params`; new),
        ``+ lambda_adv * (adversarial + lambda_feat_match * feature_matching)`` once the
        discriminator trains (feature matching only when enabled).
    Discriminator: least-squares (or hinge) real and fake losses summed over scales/periods.

    The trainer calls no model class: a multi-band generator is recognised by its `pqmf`
    layer and its ``call(mels, return_subbands=True)``.
    """

    def __init__(self, config, vocoder_config=None, strategy=None, use_feat_match=True, **kwargs):
        vocoder_config = vocoder_config or VocoderTrainingConfig()
        # Loss layers first: BaseTrainer sets a mixed global policy, and losses (FFTs) must stay float32.
        self._stft_loss = (
            TFMultiResolutionSTFT(**vocoder_config.stft_loss_params.as_kwargs(), name="stft_loss")
            if vocoder_config.stft_loss_params
            else None
        )
        self._subband_stft_loss = (
            TFMultiResolutionSTFT(**vocoder_config.subband_stft_loss_params.as_kwargs(), name="subband_stft_loss")
            if vocoder_config.subband_stft_loss_params
            else None
        )
        self._adversarial_loss = TFMelGANAdversarialLoss(vocoder_config.adversarial_loss_type)
        self._feature_match_loss = TFFeatureMatchLoss()
        super().__init__(config, strategy=strategy, **kwargs)
        self.vocoder_config = vocoder_config
        self.sampling_rate = vocoder_config.sampling_rate
        self.use_feat_match = bool(use_feat_match)
        self._mel = None
        if vocoder_config.mel_loss_params is not None:
            mel_params = vocoder_config.mel_loss_params
            self._mel = TFMelSpectrogram(
                {**mel_params.to_dict(), "sampling_rate": vocoder_config.sampling_rate, "hop_size": vocoder_config.hop_size}
            )
        self._pqmf = None
        if self._stft_loss is None and self._mel is None and self.config.discriminator_train_start_steps > 0:
            raise ConfigError(
                f"discriminator_train_start_steps={self.config.discriminator_train_start_steps} but neither "
                "stft_loss_params nor mel_loss_params: the generator would have no loss before the discriminator "
                "starts; add stft_loss_params or set discriminator_train_start_steps: 0"
            )

    def compile(self, gen_model, dis_model, gen_optimizer, dis_optimizer):
        super().compile(gen_model, dis_model, gen_optimizer, dis_optimizer)
        if self._subband_stft_loss is not None:
            self._pqmf = getattr(gen_model, "pqmf", None)
            if self._pqmf is None:
                raise ConfigError(
                    f"subband_stft_loss_params needs a multi-band generator; {type(gen_model).__name__} has no "
                    "PQMF (remove subband_stft_loss_params or use model_type: multiband_melgan_generator)"
                )

    def generate(self, batch, training):
        """Args: batch["mels"] ``(B, T, num_mels)``. Returns {"audios": ``(B, T * hop, 1)``[, "subbands"]}."""
        if self._pqmf is not None:
            audios, subbands = self._generator(batch["mels"], training=training, return_subbands=True)
            return {"audios": audios, "subbands": subbands}
        return {"audios": self._generator(batch["mels"], training=training)}

    def predict_for_summaries(self, batch):
        return {"audios": self._generator(batch["mels"], training=False)}

    def _discriminate(self, audios):
        """Discriminator outputs on ``(B, T, 1)`` audio, one entry per sub-discriminator, in float32
        under mixed precision (a single discriminator's bare score tensor becomes a list of one)."""
        outputs = self._discriminator(audios)
        return to_float32(outputs if isinstance(outputs, (list, tuple)) else [outputs])

    def compute_per_example_generator_losses(self, batch, outputs, adversarial):
        targets = batch["audios"]  # (B, T)
        predicted = outputs["audios"]  # (B, T, 1)
        total = tf.zeros([tf.shape(targets)[0]], tf.float32)
        losses = {}
        if self._stft_loss is not None:
            sc_loss, mag_loss = self._stft_loss(targets, predicted[..., 0])
            prefix = "fullband_" if self._pqmf is not None else ""
            losses[f"{prefix}spectral_convergence_loss"] = sc_loss
            losses[f"{prefix}log_magnitude_loss"] = mag_loss
            total += 0.5 * (sc_loss + mag_loss)
        if self._pqmf is not None:
            sub_sc_loss, sub_mag_loss = self._subband_loss(targets, outputs["subbands"])
            losses["subband_spectral_convergence_loss"] = sub_sc_loss
            losses["subband_log_magnitude_loss"] = sub_mag_loss
            total += 0.5 * (sub_sc_loss + sub_mag_loss)
        if self._mel is not None:
            floor = self.vocoder_config.mel_loss_params.log_floor
            mel_error = tf.abs(self._mel.log_mel(predicted[..., 0], floor) - self._mel.log_mel(targets, floor))
            losses["mel_loss"] = tf.reduce_mean(mel_error, axis=[1, 2])
            total += self.vocoder_config.lambda_mel * losses["mel_loss"]
        if adversarial:
            fake_outputs = self._discriminate(predicted)
            adversarial_loss = self._adversarial_loss.generator_loss(fake_outputs)
            losses["adversarial_loss"] = adversarial_loss
            term = adversarial_loss
            if self.use_feat_match:
                real_outputs = self._discriminate(targets[..., tf.newaxis])
                fm_loss = self._feature_match_loss(real_outputs, fake_outputs)
                losses["fm_loss"] = fm_loss
                term += self.vocoder_config.lambda_feat_match * fm_loss
            total += self.vocoder_config.lambda_adv * term
        return total, losses

    def _subband_loss(self, targets, predicted_subbands):
        """Args: targets ``(B, T)``, predicted_subbands ``(B, T / S, S)``. Returns (sc ``[B]``, mag ``[B]``)."""
        target_subbands = self._pqmf.analysis(targets[..., tf.newaxis])
        subbands = self._pqmf.subbands

        def fold(bands):  # (B, T', S) -> (B * S, T'): every band is a signal of its own
            return tf.reshape(tf.transpose(bands, [0, 2, 1]), [-1, tf.shape(bands)[1]])

        sc_loss, mag_loss = self._subband_stft_loss(fold(target_subbands), fold(predicted_subbands))
        return (
            tf.reduce_mean(tf.reshape(sc_loss, [-1, subbands]), axis=1),
            tf.reduce_mean(tf.reshape(mag_loss, [-1, subbands]), axis=1),
        )

    def compute_per_example_discriminator_losses(self, batch, outputs):
        real_outputs = self._discriminate(batch["audios"][..., tf.newaxis])
        fake_outputs = self._discriminate(outputs["audios"])
        real_loss, fake_loss = self._adversarial_loss.discriminator_loss(real_outputs, fake_outputs)
        return {"real_loss": real_loss, "fake_loss": fake_loss}


# ---------------------------------------------------------------------------- models


def build_generator(model_values, source="config"):
    """The (unbuilt) generator a YAML's `model_type` and `<model_type>_params` describe."""
    model_type = model_values.get("model_type")
    if model_type not in GENERATOR_CLASSES:
        raise ConfigError(
            f"{source}: model_type {model_type!r} is not a vocoder generator; expected one of "
            f"{', '.join(sorted(GENERATOR_CLASSES))}"
        )
    config = model_config_from_yaml(model_values, model_type, source=source)
    return GENERATOR_CLASSES[model_type](config)


def build_discriminator(model_values, source="config"):
    """The (unbuilt) discriminator of the generator's recipe.

    MelGAN and MB-MelGAN: the multi-scale discriminator of `<name>_discriminator_params`;
    with a `hifigan_discriminator_params` block as well (1.8's `multiband_melgan_hf` recipe),
    HiFi-GAN's multi-period discriminator joins it. HiFi-GAN: the multi-period one of
    `hifigan_discriminator_params` plus the multi-scale one of `melgan_discriminator_params`.
    Parallel WaveGAN: its own of `parallel_wavegan_discriminator_params`.
    """
    model_type = model_values["model_type"]
    discriminator_type = registry.DISCRIMINATOR_OF[model_type]
    config = model_config_from_yaml(model_values, discriminator_type, source=source)
    discriminator = registry.model_type(discriminator_type).model_class(config)
    if discriminator_type == "hifigan_discriminator":
        multiscale = model_config_from_yaml(model_values, "melgan_discriminator", source=source)
        return TFHifiGANDiscriminator(discriminator, TFMelGANMultiScaleDiscriminator(multiscale))
    if isinstance(discriminator, TFMelGANMultiScaleDiscriminator) and "hifigan_discriminator_params" in model_values:
        multiperiod = model_config_from_yaml(model_values, "hifigan_discriminator", source=source)
        return TFHifiGANDiscriminator(TFHifiGANMultiPeriodDiscriminator(multiperiod), discriminator)
    return discriminator


def build_vocoder_models(model_values, num_mels, segment_samples, source="config"):
    """(generator, discriminator), both built; call inside `strategy.scope()`."""
    generator = build_generator(model_values, source).build_once(num_mels)
    discriminator = build_discriminator(model_values, source)
    discriminator(tf.zeros([1, segment_samples, 1]))
    return generator, discriminator


def vocoder_optimizer(params, train_max_steps, name):
    """An optimizer from `generator_optimizer_params` / `discriminator_optimizer_params`.

    Accepts 1.8's `lr` (a constant learning rate, as melgan.v1.yaml); beta_2 and epsilon
    default to Keras Adam's, which 1.8 vocoders used.
    """
    params = {**_VOCODER_ADAM_DEFAULTS, **(params or {})}
    try:
        return create_optimizer(params, train_max_steps=train_max_steps, name=name)
    except ConfigError as error:
        raise ConfigError(f"{name}: {error}") from error


def default_use_feat_match(model_type, vocoder_config):
    """Feature matching as 1.8 did: MelGAN and HiFi-GAN yes, MB-MelGAN (with either discriminator)
    and Parallel WaveGAN (its discriminator returns no feature maps) no, unless the YAML says."""
    if vocoder_config.use_feat_match_loss is not None:
        return vocoder_config.use_feat_match_loss
    return model_type not in ("multiband_melgan_generator", "parallel_wavegan_generator")


# ---------------------------------------------------------------------------- the training run


def int_flag(value):
    """1.8 passed booleans as 0/1; also accept true/false."""
    lowered = str(value).strip().lower()
    if lowered in ("1", "true", "yes"):
        return 1
    if lowered in ("0", "false", "no", ""):
        return 0
    raise argparse.ArgumentTypeError(f"expected 0 or 1, got {value!r}")


def build_train_parser(description):
    """The flags every vocoder training script takes (those of TensorFlowTTS 1.8)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train-dir", required=True, help="dump split to train on, e.g. dump/train")
    parser.add_argument("--dev-dir", required=True, help="dump split to evaluate on, e.g. dump/valid")
    parser.add_argument("--outdir", required=True, help="checkpoints, TensorBoard logs, predictions, config.yml")
    parser.add_argument("--config", required=True, help="the recipe YAML (conf/*.yaml)")
    parser.add_argument("--use-norm", type=int_flag, default=1, help="train on norm-feats (1) or raw-feats (0)")
    parser.add_argument("--resume", default="", help="checkpoint (ckpt-N) or checkpoint folder to continue from")
    parser.add_argument("--pretrained", default="", help="generator .h5 (ours or 1.8's) or a checkpoint: weights only")
    parser.add_argument("--mixed_precision", type=int_flag, nargs="?", const=1, default=0, help="mixed precision")
    # 1.8 had one switch per model; our loop has one policy, so either switches it on for both.
    parser.add_argument("--generator_mixed_precision", type=int_flag, nargs="?", const=1, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--discriminator_mixed_precision", type=int_flag, nargs="?", const=1, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2), help="0 warnings, 1 info, 2 debug")
    parser.add_argument("--seed", type=int, default=None, help="overrides the YAML's seed (initialisation, shuffling, segments)")
    return parser


def _split_dir(path, flag):
    path = Path(str(path).rstrip("/\\"))
    if not path.is_dir():
        raise ConfigError(f"{flag} {path}: no such folder; pass a dump split such as dump/train")
    return path.parent, path.name


def load_recipe(config_path, model_types=None):
    """(raw YAML values, model blocks, TrainerConfig, VocoderTrainingConfig) of a recipe file."""
    values = read_yaml(config_path)
    sections = dict(values)
    sections.update(pop_optimizer_params(sections, _OPTIMIZER_SECTIONS, source=str(config_path)))
    model_values, trainer_config, vocoder_config = split_vocoder_yaml(sections, source=str(config_path))
    model_type = model_values["model_type"]
    if model_types and model_type not in model_types:
        raise ConfigError(f"{config_path}: model_type {model_type!r}; this script trains {' or '.join(model_types)}")
    return values, model_values, trainer_config, vocoder_config


def make_vocoder_datasets(train_dir, dev_dir, vocoder_config, use_norm, hop_size, num_replicas):
    """(train, valid) AudioMelDatasets of random segments, and their batched tf.data pipelines."""
    train_root, train_split = _split_dir(train_dir, "--train-dir")
    dev_root, dev_split = _split_dir(dev_dir, "--dev-dir")
    cache = dict(allow_cache=vocoder_config.allow_cache, cache_max_ram_fraction=vocoder_config.cache_max_ram_fraction)
    train_set = AudioMelDataset(
        train_root, train_split, use_norm=use_norm, batch_max_steps=vocoder_config.batch_max_steps,
        hop_size=hop_size, **cache,
    )
    valid_set = AudioMelDataset(
        dev_root, dev_split, use_norm=use_norm, batch_max_steps=vocoder_config.batch_max_steps_valid,
        hop_size=hop_size, **cache,
    )
    train_batch = vocoder_config.batch_size * num_replicas
    if len(train_set) < train_batch:
        raise ConfigError(
            f"{train_set.split_dir}: {len(train_set)} utterance(s) long enough for batch_max_steps, fewer than one "
            f"global batch ({vocoder_config.batch_size} x {num_replicas} replicas); lower batch_size"
        )
    # Every replica must get a non-empty batch, so evaluation drops the last partial batch.
    valid_batch = min(vocoder_config.global_eval_batch_size * num_replicas, len(valid_set) // num_replicas * num_replicas)
    if valid_batch == 0:
        raise ConfigError(f"{valid_set.split_dir}: fewer valid utterances than replicas ({num_replicas})")
    train = train_set.create(
        train_batch, num_replicas=num_replicas, drop_remainder=True, shuffle=vocoder_config.is_shuffle,
        seed=vocoder_config.seed,
    )
    valid = valid_set.create(valid_batch, num_replicas=num_replicas, drop_remainder=True, shuffle=False, seed=vocoder_config.seed)
    workers = vocoder_config.num_workers
    return train_set, valid_set, with_num_workers(train, workers), with_num_workers(valid, workers)


def _check_lengths(vocoder_config, generator, train_set):
    if not generator.hop_size == vocoder_config.hop_size == train_set.hop_size:
        raise ConfigError(
            f"hop sizes disagree: generator upsamples by {generator.hop_size}, config hop_size is "
            f"{vocoder_config.hop_size}, the dump has {train_set.hop_size} samples per frame"
        )
    for loss in ("stft_loss_params", "subband_stft_loss_params"):
        params = getattr(vocoder_config, loss)
        if params is None:
            continue
        samples = vocoder_config.batch_max_steps // (generator.config.subbands if loss.startswith("sub") else 1)
        if samples < params.min_samples:
            raise ConfigError(
                f"batch_max_steps={vocoder_config.batch_max_steps} gives {samples}-sample signals, shorter than the "
                f"longest {loss} frame ({params.min_samples}); raise batch_max_steps"
            )


def run_vocoder_training(args, model_types=None, trainer_class=VocoderGanTrainer, strategy=None):
    """Train a vocoder from parsed `build_train_parser` flags; returns the trainer.

    Writes `<outdir>/config.yml` (the recipe plus `use_norm`, which decoding reads).
    """
    values, model_values, trainer_config, vocoder_config = load_recipe(args.config, model_types)
    trainer_config.outdir = str(args.outdir)
    if args.seed is not None:
        vocoder_config.seed = values["seed"] = args.seed
    seed_everything(vocoder_config.seed, trainer_config.deterministic)
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "config.yml"), "w", encoding="utf-8") as stream:
        yaml.safe_dump({**values, "use_norm": bool(args.use_norm)}, stream, sort_keys=False)

    strategy = strategy or return_strategy()
    num_replicas = strategy.num_replicas_in_sync
    mixed_precision = bool(args.mixed_precision or args.generator_mixed_precision or args.discriminator_mixed_precision)
    model_type = model_values["model_type"]
    # The trainer first: with mixed precision it sets the Keras policy the models are built under.
    trainer = trainer_class(
        trainer_config, vocoder_config, strategy=strategy, is_mixed_precision=mixed_precision,
        use_feat_match=default_use_feat_match(model_type, vocoder_config),
    )
    generator_hop = build_generator(model_values, args.config).config.hop_size
    train_set, valid_set, train, valid = make_vocoder_datasets(
        args.train_dir, args.dev_dir, vocoder_config, bool(args.use_norm), generator_hop, num_replicas
    )
    logger.info(
        "%s: %d train / %d valid utterances, global batch %d (%d x %d replicas), segments of %d samples",
        model_type, len(train_set), len(valid_set), vocoder_config.batch_size * num_replicas, vocoder_config.batch_size,
        num_replicas, vocoder_config.batch_max_steps,
    )
    with strategy.scope():
        generator, discriminator = build_vocoder_models(
            model_values, train_set.num_mels, vocoder_config.batch_max_steps, source=args.config
        )
        _check_lengths(vocoder_config, generator, train_set)
        trainer.compile(
            generator,
            discriminator,
            vocoder_optimizer(vocoder_config.generator_optimizer_params, trainer_config.train_max_steps, "generator_optimizer"),
            vocoder_optimizer(
                vocoder_config.discriminator_optimizer_params, trainer_config.train_max_steps, "discriminator_optimizer"
            ),
        )
    pretrained = args.pretrained or None
    if pretrained and pretrained.endswith(".h5"):
        generator.load_weights(pretrained)  # ours, or a TensorFlowTTS 1.8 generator-N.h5
        logger.info("loaded generator weights from %s", pretrained)
        pretrained = None
    trainer.fit(train, valid, resume=args.resume or None, pretrained=pretrained)
    return trainer


def train_main(argv, description, model_types):
    """Entry point of the example training scripts."""
    args = build_train_parser(description).parse_args(argv)
    setup_logging(args.verbose)
    try:
        run_vocoder_training(args, model_types)
    except (ConfigError, DumpError) as error:
        logger.error("%s", error)
        return 2
    return 0


# ---------------------------------------------------------------------------- decoding


def load_generator(config_path, checkpoint, num_mels=80):
    """(generator with weights, VocoderTrainingConfig) from a recipe/config.yml and a checkpoint.

    `checkpoint`: `generator-N.h5` (ours or TensorFlowTTS 1.8's), a `ckpt-N` prefix, or a
    checkpoint folder (its latest).
    """
    _, model_values, _, vocoder_config = load_recipe(config_path)
    generator = build_generator(model_values, str(config_path)).build_once(num_mels)
    restore_weights({"generator": generator}, checkpoint, label="--checkpoint ")
    return generator, vocoder_config


def find_mel_files(rootdir, use_norm):
    """Mel `.npy` files to decode, sorted: `<rootdir>/{norm,raw}-feats/*.npy` for a dump split,
    else every `*.npy` directly in `rootdir` (FastSpeech2 / Tacotron2 decode output)."""
    rootdir = Path(rootdir)
    folder = rootdir / layout.mel_kind(use_norm).folder
    files = sorted(folder.glob("*.npy")) if folder.is_dir() else sorted(rootdir.glob("*.npy"))
    if not files:
        raise FileNotFoundError(f"--rootdir {rootdir}: no mel .npy files (nor a {folder.name}/ folder of them)")
    return files


def utt_id_of(path):
    """`LJ001-0001-norm-feats.npy` -> `LJ001-0001`."""
    name = Path(path).name[: -len(".npy")]
    for suffix in (f"-{layout.NORM_MEL.suffix}", f"-{layout.MEL.suffix}", "-feats", "-norm", "-raw"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def match_mel_normalization(mel, mel_is_normalized, vocoder_wants_normalized, stats):
    """Bring a log10 mel ``[frames, num_mels]`` to the scale the vocoder was trained on.

    normalised -> raw: ``mel * std + mean``; raw -> normalised: ``(mel - mean) / std``;
    equal scales: unchanged. `stats` is `stats.npy` ``[2, num_mels]`` (needed only to convert).
    """
    if mel_is_normalized == vocoder_wants_normalized:
        return mel.astype(np.float32)
    if stats is None:
        raise ValueError("the mels and the vocoder use different normalisation; pass --stats stats.npy")
    if mel_is_normalized:
        return (mel * stats[1] + stats[0]).astype(np.float32)
    return normalize_mel(mel, stats)


def decode_mels(rootdir, outdir, config_path, checkpoint, use_norm=True, stats_path=None):
    """Write `<outdir>/<utt_id>.wav` (16-bit PCM) for every mel under `rootdir`; returns the paths.

    `use_norm`: whether the mel files are normalised. The vocoder's own input scale is the
    `use_norm` that training wrote into its `config.yml`; when it differs (or is unknown and
    assumed equal), mels are converted with `stats_path`.
    """
    import soundfile as sf

    files = find_mel_files(rootdir, use_norm)
    first = np.load(files[0])
    generator, vocoder_config = load_generator(config_path, checkpoint, num_mels=first.shape[-1])
    vocoder_norm = use_norm if vocoder_config.use_norm is None else vocoder_config.use_norm
    stats = load_mel_statistics(stats_path, first.shape[-1]) if stats_path else None
    os.makedirs(outdir, exist_ok=True)
    written = []
    infer = tf.function(
        lambda mels: generator(mels, training=False),
        input_signature=[tf.TensorSpec([None, None, first.shape[-1]], tf.float32)],
    )
    from tqdm import tqdm

    for path in tqdm(files, desc="[decode]", unit="utt"):
        utt_id = utt_id_of(path)
        mel = match_mel_normalization(np.load(path), use_norm, vocoder_norm, stats)
        if mel.shape[0] == 0:  # an acoustic model that predicted no frame: the convs cannot run on none
            logger.warning("%s: the mel has no frame; wrote an empty wav", utt_id)
            audio = np.zeros([0], np.float32)
        else:
            audio = infer(mel[np.newaxis]).numpy()[0, :, 0]
        if not finite_or_warn(audio, utt_id, what="audio"):
            continue
        target = os.path.join(outdir, f"{utt_id}.wav")
        sf.write(target, audio, vocoder_config.sampling_rate, subtype="PCM_16")
        written.append(target)
    return written


def decode_main(argv, description):
    """Entry point of the example decoding scripts (the flags of TensorFlowTTS 1.8's)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rootdir", required=True, help="dump split or folder of mel .npy files")
    parser.add_argument("--outdir", required=True, help="where <utt_id>.wav files are written")
    parser.add_argument("--checkpoint", required=True, help="generator-N.h5, ckpt-N or a checkpoints folder")
    parser.add_argument("--config", required=True, help="the training config.yml (or the recipe YAML)")
    parser.add_argument("--use-norm", type=int_flag, default=1, help="the mels are normalised (1) or raw (0)")
    parser.add_argument("--stats", default=None, help="stats.npy, needed when mel and vocoder scales differ")
    parser.add_argument("--batch-size", type=int, default=1, help="kept for 1.8 command lines; mels decode one by one")
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    args = parser.parse_args(argv)
    setup_logging(args.verbose)
    try:
        written = decode_mels(args.rootdir, args.outdir, args.config, args.checkpoint, bool(args.use_norm), args.stats)
    except (ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    logger.info("wrote %d wav files to %s", len(written), args.outdir)
    return 0
