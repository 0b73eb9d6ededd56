"""User code written for TensorFlowTTS 1.8 runs unchanged: its import paths, its building blocks,
its model calls, its trainers, `save_pretrained` + the Auto classes, and TFLite export.

Every model is built from its 1.8 YAML (examples/*/conf/) with the sizes of test_registry's
tiny models, then used the way 1.8's example scripts and notebooks did.
"""

import tensorflow_tts  # noqa: F401

import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml

from tensorflow_tts.configs import (
    FastSpeech2Config,
    FastSpeechConfig,
    HifiGANDiscriminatorConfig,
    HifiGANGeneratorConfig,
    MelGANDiscriminatorConfig,
    MelGANGeneratorConfig,
    MultiBandMelGANGeneratorConfig,
    Tacotron2Config,
)
from tensorflow_tts.inference import AutoConfig, AutoProcessor, TFAutoModel
from tensorflow_tts.models import (
    TFFastSpeech,
    TFFastSpeech2,
    TFHifiGANGenerator,
    TFHifiGANMultiPeriodDiscriminator,
    TFHifiGANPeriodDiscriminator,
    TFMBMelGANGenerator,
    TFMelGANGenerator,
    TFMelGANMultiScaleDiscriminator,
    TFTacotron2,
)
from tensorflow_tts.models.hifigan import TFHifiGANDiscriminator
from tensorflow_tts.models.melgan import TFConvTranspose1d, TFReflectionPad1d, TFResidualStack
from tensorflow_tts.optimizers import AdamWeightDecay, WarmUp
from tensorflow_tts.processor.registry import PROCESSOR_CLASSES
from tensorflow_tts.trainers import GanBasedTrainer, Seq2SeqBasedTrainer
from tensorflow_tts.utils import calculate_2d_loss, calculate_3d_loss, return_strategy

from helpers.tiny import about_three_frames_per_token
from test_registry import TINY_PARAMS

REPO = Path(__file__).resolve().parent.parent
COMPAT = Path(__file__).resolve().parents[2] / "shared" / "compat"

# What 1.8's package __init__ files exported (the names this package still has).
OLD_EXPORTS = {
    "tensorflow_tts.utils": [
        "basic_cleaners", "collapse_whitespace", "convert_to_ascii", "english_cleaners", "expand_abbreviations",
        "expand_numbers", "lowercase", "transliteration_cleaners", "TFGriffinLim", "GroupConv1D",
        "normalize_numbers", "calculate_2d_loss", "calculate_3d_loss", "return_strategy", "find_files",
        "WeightNormalization",
    ],
    "tensorflow_tts.losses": ["TFMultiResolutionSTFT", "TFMelSpectrogram"],
    "tensorflow_tts.models": [
        "TFFastSpeech", "TFFastSpeech2", "TFMelGANDiscriminator", "TFMelGANGenerator",
        "TFMelGANMultiScaleDiscriminator", "TFPQMF", "TFMBMelGANGenerator", "TFHifiGANGenerator",
        "TFHifiGANMultiPeriodDiscriminator", "TFHifiGANPeriodDiscriminator", "TFTacotron2",
    ],
    "tensorflow_tts.configs": [
        "FastSpeechConfig", "FastSpeech2Config", "MelGANDiscriminatorConfig", "MelGANGeneratorConfig",
        "MultiBandMelGANDiscriminatorConfig", "MultiBandMelGANGeneratorConfig", "HifiGANGeneratorConfig",
        "HifiGANDiscriminatorConfig", "Tacotron2Config",
    ],
    "tensorflow_tts.inference": ["TFAutoModel", "AutoConfig", "AutoProcessor"],
    "tensorflow_tts.processor": [
        "LJSpeechProcessor", "LJSpeechUltimateProcessor", "BakerProcessor", "KSSProcessor", "LibriTTSProcessor",
        "ThorstenProcessor", "SynpaflexProcessor",
    ],
    "tensorflow_tts.trainers": ["GanBasedTrainer", "Seq2SeqBasedTrainer"],
    "tensorflow_tts.optimizers": ["AdamWeightDecay", "WarmUp", "GradientAccumulator"],
}


@pytest.mark.parametrize("module", sorted(OLD_EXPORTS))
def test_every_name_18_exported_imports_from_its_18_path(module):
    names = ", ".join(OLD_EXPORTS[module])
    namespace = {}
    exec(f"from {module} import {names}", namespace)  # the statement 1.8 code contains
    assert all(namespace[name] is not None for name in OLD_EXPORTS[module])


def test_old_utils_names_are_the_objects_at_their_new_homes():
    from tensorflow_tts import utils
    from tensorflow_tts.audio.griffin_lim import TFGriffinLim
    from tensorflow_tts.layers.grouped_conv import GroupedConv1D
    from tensorflow_tts.processor.text.cleaners import english_cleaners

    assert utils.TFGriffinLim is TFGriffinLim and utils.english_cleaners is english_cleaners
    assert utils.GroupConv1D is GroupedConv1D
    assert {"TFGriffinLim", "find_files"} <= set(dir(utils))
    with pytest.raises(AttributeError, match="no attribute 'dynamic_decode'"):
        utils.dynamic_decode  # 1.8's tfa-style decoder: see README, "What changed"


def test_utils_imports_neither_tensorflow_nor_another_folder():
    code = (
        "import sys\n"
        "import tensorflow_tts.utils\n"
        "assert 'tensorflow' not in sys.modules, 'utils imported TensorFlow'\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('tensorflow_tts.'))\n"
        # tensorflow_tts itself loads utils.heap (the malloc arena limit, ctypes only)
        "assert loaded == ['tensorflow_tts.moved', 'tensorflow_tts.utils', 'tensorflow_tts.utils.heap'], loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, timeout=60)


def test_the_hifigan_script_defines_tfhifigandiscriminator_as_1_8_users_import_it():
    # 1.8 users wrote `from examples.hifigan.train_hifigan import TFHifiGANDiscriminator`;
    # the script's namespace holds the package's class (run, not imported: test/ imports no example).
    namespace = runpy.run_path(str(REPO / "examples" / "hifigan" / "train_hifigan.py"), run_name="train_hifigan")
    assert namespace["TFHifiGANDiscriminator"] is TFHifiGANDiscriminator


def test_calculate_losses_crop_to_the_shorter_length_and_average_per_example():
    mae = tf.keras.losses.MeanAbsoluteError(reduction=tf.keras.losses.Reduction.NONE)
    target, prediction = tf.ones([2, 5, 3]), tf.zeros([2, 4, 3])
    np.testing.assert_allclose(calculate_3d_loss(target, prediction, mae), [1.0, 1.0])
    mse = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)
    np.testing.assert_allclose(calculate_2d_loss(tf.fill([2, 3], 2.0), tf.zeros([2, 6]), mse), [4.0, 4.0])


def test_find_files_walks_a_tree_for_a_pattern(tmp_path):
    from tensorflow_tts.utils import find_files

    for name in ("a/1.wav", "a/b/2.wav", "3.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"")
    assert find_files(str(tmp_path), "*.wav", include_root_dir=False) == ["a/1.wav", "a/b/2.wav"]
    assert find_files(str(tmp_path)) == [str(tmp_path / "a/1.wav"), str(tmp_path / "a/b/2.wav")]


def test_18_mel_spectrogram_loss_is_zero_for_equal_signals_only():
    from tensorflow_tts.losses import TFMelSpectrogram

    loss = TFMelSpectrogram(n_mels=20, frame_length=256, frame_step=64, fft_length=256)
    audio = tf.random.stateless_uniform([2, 2048], seed=(8, 8), minval=-0.5, maxval=0.5)
    np.testing.assert_allclose(loss(audio, audio), [0.0, 0.0])
    assert np.all(loss(audio, 0.5 * audio).numpy() > 0.1)


def test_weight_normalization_wraps_a_conv_as_1_8_did():
    from tensorflow_tts.utils import WeightNormalization

    plain = tf.keras.layers.Conv1D(4, 3, padding="same", name="conv")
    normalised = WeightNormalization(plain)
    assert normalised.name == "conv" and normalised.kernel_size == (3,)
    x = tf.random.stateless_normal([1, 5, 2], seed=(9, 9))
    y = normalised(x)
    plain.build(x.shape)
    plain.set_weights([normalised.kernel.numpy(), normalised.bias.numpy()])
    np.testing.assert_allclose(y, plain(x), atol=1e-6)  # g starts at ||v||: the plain conv's output
    assert normalised.g.shape == (4,)
    with pytest.raises(TypeError, match="Conv1D or Conv2D"):
        WeightNormalization(tf.keras.layers.Dense(4))


# --- 1.8's building blocks, constructed directly --------------------------------------------


def test_melgan_layers_take_18_positional_arguments_and_initializer_seeds():
    x = tf.random.stateless_normal([1, 6, 8], seed=(1, 1))
    first, second = TFConvTranspose1d(4, 4, 2, "same", True, 42), TFConvTranspose1d(4, 4, 2, "same", True, 42)
    assert first.is_weight_norm and first.initializer_seed == 42
    np.testing.assert_array_equal(first(x).numpy(), second(x).numpy())  # same seed, same weights
    assert first(x).shape == (1, 12, 4) and "g" in first.g.name
    stack = TFResidualStack(3, 8, 1, True, "LeakyReLU", {"alpha": 0.2}, False, 42)
    assert stack(x).shape == x.shape and not stack.is_weight_norm
    assert TFReflectionPad1d(2)(x).shape == (1, 10, 8)


def test_discriminators_of_18_are_built_from_their_configs():
    audio = tf.random.stateless_normal([1, 96, 1], seed=(2, 2))
    melgan = TFMelGANMultiScaleDiscriminator(MelGANDiscriminatorConfig(**TINY_PARAMS["melgan_discriminator"]))
    hifigan = TFHifiGANMultiPeriodDiscriminator(HifiGANDiscriminatorConfig(**TINY_PARAMS["hifigan_discriminator"]))
    period = TFHifiGANPeriodDiscriminator(2, n_layers=2, filters=4, initializer_seed=42, is_weight_norm=True)
    assert period(audio)[-1].shape[2] == 2  # (B, T / period, period, 1)
    outputs = TFHifiGANDiscriminator(hifigan, melgan)(audio)
    assert len(outputs) == 2 + 2  # one list of feature maps per period, then per scale


# --- every model: 1.8 YAML, 1.8 calls, save_pretrained, Auto classes, TFLite ----------------

# model type -> (1.8 YAML, config class, model class, its Keras name in 1.8's scripts)
MODELS = {
    "fastspeech": ("fastspeech/conf/fastspeech.v1.yaml", FastSpeechConfig, TFFastSpeech, "fastspeech"),
    "fastspeech2": ("fastspeech2/conf/fastspeech2.v1.yaml", FastSpeech2Config, TFFastSpeech2, "fastspeech2"),
    "tacotron2": ("tacotron2/conf/tacotron2.v1.yaml", Tacotron2Config, TFTacotron2, "tacotron2"),
    "melgan_generator": ("melgan/conf/melgan.v1.yaml", MelGANGeneratorConfig, TFMelGANGenerator, "melgan_generator"),
    "multiband_melgan_generator": (
        "multiband_melgan/conf/multiband_melgan.v1.yaml", MultiBandMelGANGeneratorConfig, TFMBMelGANGenerator,
        "mb_melgan",
    ),
    "hifigan_generator": ("hifigan/conf/hifigan.v1.yaml", HifiGANGeneratorConfig, TFHifiGANGenerator, "hifigan_generator"),
}
TOKENS, FRAMES = 5, 8


def yaml_18(model_type):
    """The 1.8 YAML of a model as a dict, its ``<model_type>_params`` (and its discriminator's) shrunk."""
    with open(REPO / "examples" / MODELS[model_type][0]) as file:
        config = yaml.safe_load(file)
    for key in [key for key in config if key.endswith("_params") and key[: -len("_params")] in TINY_PARAMS]:
        config[key].update(TINY_PARAMS[key[: -len("_params")]])
    return config


def build_18(model_type):
    """1.8's example scripts: ``TFX(config=XConfig(**config["x_params"]), name=...)``, then ``_build()``."""
    config = yaml_18(model_type)
    _, config_class, model_class, name = MODELS[model_type]
    model = model_class(config=config_class(**config[f"{model_type}_params"]), name=name)
    model._build()
    if model_type == "tacotron2":
        model.setup_window(win_front=2, win_back=3)
        model.setup_maximum_iterations(6)  # random weights never predict a stop
    if hasattr(model, "duration_predictor"):
        about_three_frames_per_token(model)
    return model


def call_18(model):
    """The teacher-forced call with 1.8's positional arguments."""
    input_ids = tf.constant([[3, 5, 7, 2, 9]], tf.int32)
    speaker_ids, durations = tf.constant([0], tf.int32), tf.constant([[2, 1, 2, 2, 1]], tf.int32)
    if isinstance(model, TFTacotron2):
        mel_gts = tf.zeros([1, FRAMES, model.config.n_mels])
        return model(input_ids, tf.constant([TOKENS]), speaker_ids, mel_gts, tf.constant([FRAMES]), 3, training=False)
    if isinstance(model, TFFastSpeech2):
        f0 = energy = tf.zeros([1, TOKENS])
        return model(input_ids, speaker_ids, durations, f0, energy, training=False)
    if isinstance(model, TFFastSpeech):
        return model(input_ids, speaker_ids, durations, training=False)
    return model(tf.random.stateless_normal([1, FRAMES, 80], seed=(3, 3)))


def inference_18(model):
    """``model.inference`` with 1.8's positional arguments."""
    input_ids, speaker_ids, ones = tf.constant([[3, 5, 7, 2, 9]], tf.int32), tf.constant([0]), tf.ones([1])
    if isinstance(model, TFTacotron2):
        return model.inference(input_ids, tf.constant([TOKENS]), speaker_ids)
    if isinstance(model, TFFastSpeech2):
        return model.inference(input_ids, speaker_ids, ones, ones, ones)
    if isinstance(model, TFFastSpeech):
        return model.inference(input_ids, speaker_ids, ones)
    return model.inference(tf.random.stateless_normal([1, FRAMES, 80], seed=(4, 4)))


@pytest.mark.parametrize("model_type", sorted(MODELS))
def test_18_user_code_builds_calls_saves_reloads_and_exports(model_type, tmp_path):
    model = build_18(model_type)
    expected = call_18(model)
    if model_type == "tacotron2":  # the sixth positional argument is maximum_iterations
        assert expected[0].shape[1] == 3 * model.config.reduction_factor

    model.save_pretrained(str(tmp_path))
    config = AutoConfig.from_pretrained(str(tmp_path / "config.yml"))
    loaded = TFAutoModel.from_pretrained(config=config, pretrained_path=str(tmp_path / "model.h5"), name=model.name)
    for mine, theirs in zip(tf.nest.flatten(expected), tf.nest.flatten(call_18(loaded))):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), atol=1e-6)
    if model_type == "tacotron2":
        loaded.setup_maximum_iterations(6)
    assert all(np.all(np.isfinite(output.numpy())) for output in tf.nest.flatten(inference_18(loaded)))

    # 1.8 exported `inference_tflite` (batch 1) with TFLiteConverter.from_concrete_functions.
    assert model.inference_tflite.input_signature[0].shape[0] == 1
    if model_type.endswith("_generator"):  # the acoustic models' conversion: test_compat_tflite, test_export_tacotron2
        function = model.inference_tflite.get_concrete_function()
        interpreter = tf.lite.Interpreter(model_content=tf.lite.TFLiteConverter.from_concrete_functions([function], model).convert())
        interpreter.resize_tensor_input(0, [1, FRAMES, 80])
        interpreter.allocate_tensors()
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], np.zeros([1, FRAMES, 80], np.float32))
        interpreter.invoke()
        audio = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
        assert audio.shape == (1, FRAMES * model.config.hop_size, 1)


def test_auto_model_takes_the_older_argument_order_and_is_build(tmp_path):
    model = build_18("melgan_generator")
    model.save_pretrained(str(tmp_path))
    loaded = TFAutoModel.from_pretrained(model.config, str(tmp_path / "model.h5"), is_build=True)
    for mine, theirs in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


# --- 1.8's trainers ----------------------------------------------------------------------


class Acoustic18Trainer(Seq2SeqBasedTrainer):
    """A trainer as 1.8's example scripts wrote them (train_fastspeech2.py, train_tacotron2.py)."""

    def __init__(self, config, strategy, steps=0, epochs=0, is_mixed_precision=False):
        super().__init__(steps=steps, epochs=epochs, config=config, strategy=strategy,
                         is_mixed_precision=is_mixed_precision)
        self.list_metrics_name = ["mel_loss_before", "mel_loss_after"]
        self.init_train_eval_metrics(self.list_metrics_name)
        self.reset_states_train()
        self.reset_states_eval()
        self.config = config

    def compile(self, model, optimizer):
        super().compile(model, optimizer)
        self.mae = tf.keras.losses.MeanAbsoluteError(reduction=tf.keras.losses.Reduction.NONE)

    def compute_per_example_losses(self, batch, outputs):
        mel_loss_before = calculate_3d_loss(batch["mel_gts"], outputs[0], loss_fn=self.mae)
        mel_loss_after = calculate_3d_loss(batch["mel_gts"], outputs[1], loss_fn=self.mae)
        losses = {"mel_loss_before": mel_loss_before, "mel_loss_after": mel_loss_after}
        return mel_loss_before + mel_loss_after, losses


class Vocoder18Trainer(GanBasedTrainer):
    """A GAN trainer as 1.8's train_melgan.py wrote it: positional super() call, 2-argument losses."""

    def __init__(self, config, strategy, steps=0, epochs=0, is_generator_mixed_precision=False,
                 is_discriminator_mixed_precision=False):
        super().__init__(steps, epochs, config, strategy, is_generator_mixed_precision,
                         is_discriminator_mixed_precision)
        self.list_metrics_name = ["adversarial_loss", "fm_loss", "gen_loss", "real_loss", "fake_loss", "dis_loss"]
        self.init_train_eval_metrics(self.list_metrics_name)
        self.reset_states_train()
        self.reset_states_eval()
        self.config = config

    def compile(self, gen_model, dis_model, gen_optimizer, dis_optimizer):
        super().compile(gen_model, dis_model, gen_optimizer, dis_optimizer)
        self.mse_loss = tf.keras.losses.MeanSquaredError(reduction=tf.keras.losses.Reduction.NONE)
        self.mae_loss = tf.keras.losses.MeanAbsoluteError(reduction=tf.keras.losses.Reduction.NONE)

    def compute_per_example_generator_losses(self, batch, outputs):
        p_hat = self._discriminator(outputs)
        p = self._discriminator(tf.expand_dims(batch["audios"], 2))
        adv_loss = fm_loss = 0.0
        for fake_maps, real_maps in zip(p_hat, p):
            adv_loss += calculate_3d_loss(tf.ones_like(fake_maps[-1]), fake_maps[-1], loss_fn=self.mse_loss)
            for fake, real in zip(fake_maps[:-1], real_maps[:-1]):
                fm_loss += calculate_3d_loss(real, fake, loss_fn=self.mae_loss) / len(fake_maps[:-1])
        gen_loss = (adv_loss + self.config["lambda_feat_match"] * fm_loss) / len(p_hat)
        return gen_loss, {"adversarial_loss": adv_loss, "fm_loss": fm_loss, "gen_loss": gen_loss}

    def compute_per_example_discriminator_losses(self, batch, gen_outputs):
        real = self._discriminator(tf.expand_dims(batch["audios"], 2))
        fake = self._discriminator(gen_outputs)
        real_loss = fake_loss = 0.0
        for real_maps, fake_maps in zip(real, fake):
            real_loss += calculate_3d_loss(tf.ones_like(real_maps[-1]), real_maps[-1], loss_fn=self.mse_loss)
            fake_loss += calculate_3d_loss(tf.zeros_like(fake_maps[-1]), fake_maps[-1], loss_fn=self.mse_loss)
        dis_loss = (real_loss + fake_loss) / len(real)
        return dis_loss, {"real_loss": real_loss, "fake_loss": fake_loss, "dis_loss": dis_loss}


def acoustic_batches(num_mels):
    """1.8's dataset keys; each model's call takes the entries it names."""
    examples = {
        "utt_ids": tf.constant(["a", "b"]),
        "input_ids": tf.constant([[3, 5, 7, 2, 9], [4, 6, 8, 1, 0]], tf.int32),
        "input_lengths": tf.constant([5, 4], tf.int32),
        "speaker_ids": tf.zeros([2], tf.int32),
        "duration_gts": tf.constant([[2, 1, 2, 2, 1], [2, 2, 2, 2, 0]], tf.int32),
        "f0_gts": tf.zeros([2, TOKENS]),
        "energy_gts": tf.zeros([2, TOKENS]),
        "mel_gts": tf.random.stateless_normal([2, FRAMES, num_mels], seed=(5, 5)),
        "mel_lengths": tf.constant([FRAMES, FRAMES], tf.int32),
    }
    return tf.data.Dataset.from_tensor_slices(examples).batch(2).repeat()


def vocoder_batches(hop_size):
    mels = tf.random.stateless_normal([2, 2 * FRAMES, 80], seed=(6, 6))
    audios = tf.random.stateless_uniform([2, 2 * FRAMES * hop_size], seed=(7, 7), minval=-0.5, maxval=0.5)
    return tf.data.Dataset.from_tensor_slices({"audios": audios, "mels": mels}).batch(2).repeat()


def training_yaml(model_type, outdir, var_train_expr):
    """The whole 1.8 YAML, as 1.8's scripts passed it to the trainer, with a short run."""
    config = yaml_18(model_type)
    config.update(outdir=str(outdir), train_max_steps=2, log_interval_steps=1, var_train_expr=var_train_expr)
    return config


def train_18(model_type, tmp_path, var_train_expr):
    """Train 2 steps the 1.8 way; returns (trainer, weights before training)."""
    strategy = return_strategy()
    config = training_yaml(model_type, tmp_path, var_train_expr)
    if model_type in ("fastspeech", "fastspeech2", "tacotron2"):
        trainer = Acoustic18Trainer(config=config, strategy=strategy, steps=0, epochs=0, is_mixed_precision=False)
        with strategy.scope():
            model = build_18(model_type)
            schedule = WarmUp(initial_learning_rate=0.01, warmup_steps=1,
                              decay_schedule_fn=tf.keras.optimizers.schedules.PolynomialDecay(0.01, 10, 0.001))
            optimizer = AdamWeightDecay(learning_rate=schedule, weight_decay_rate=0.001, beta_1=0.9, beta_2=0.98,
                                        epsilon=1e-6, exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"])
        before = {variable.name: variable.numpy() for variable in model.trainable_variables}
        trainer.compile(model=model, optimizer=optimizer)
        dataset = acoustic_batches(model.num_mels)
    else:
        trainer = Vocoder18Trainer(config=config, strategy=strategy, steps=0, epochs=0,
                                   is_generator_mixed_precision=False, is_discriminator_mixed_precision=False)
        with strategy.scope():
            model = build_18(model_type)
            discriminator = TFMelGANMultiScaleDiscriminator(MelGANDiscriminatorConfig(**TINY_PARAMS["melgan_discriminator"]))
            discriminator(tf.zeros([1, 2 * FRAMES * model.config.hop_size, 1]))
            adam = tf.keras.optimizers.Adam
        before = {variable.name: variable.numpy() for variable in model.trainable_variables}
        trainer.compile(model, discriminator, adam(0.01), adam(0.01))
        dataset = vocoder_batches(model.config.hop_size)
    trainer.fit(dataset.take(2), dataset.take(1), saved_path=str(tmp_path / "checkpoints") + "/", resume="")
    return trainer, model, before


# model type -> var_train_expr: the subset of its variables that trains. One model per trainer
# base, to keep the module fast; test_train_* train every model through its recipe.
SUBSETS = {"fastspeech2": "decoder", "hifigan_generator": "first_conv"}


@pytest.mark.parametrize("model_type", sorted(SUBSETS))
def test_18_trainer_trains_a_subset_of_variables_from_the_whole_yaml(model_type, tmp_path, caplog):
    caplog.set_level("INFO", logger="tensorflow_tts")  # a CLI test may have set the package to WARNING
    trainer, model, before = train_18(model_type, tmp_path, SUBSETS[model_type])
    assert trainer.steps == 2 and (tmp_path / "checkpoints").is_dir()
    ignored = [record for record in caplog.records if "the trainer ignores" in record.getMessage()]
    assert len(ignored) == 1 and f"{model_type}_params" in ignored[0].getMessage()
    assert trainer.config["batch_size"] == yaml_18(model_type)["batch_size"]  # 1.8 subclasses read the YAML
    changed = {name for name, value in before.items()
               if not np.array_equal(value, next(v.numpy() for v in model.trainable_variables if v.name == name))}
    assert changed and all(SUBSETS[model_type] in name for name in changed)


def test_trainer_ignores_other_yaml_keys_but_still_checks_its_own(tmp_path):
    with pytest.raises(ValueError, match="train_max_steps"):
        Acoustic18Trainer(config={**training_yaml("fastspeech", tmp_path, None), "train_max_steps": 0},
                          strategy=return_strategy())


# --- processors --------------------------------------------------------------------------


@pytest.mark.parametrize("processor_class", PROCESSOR_CLASSES, ids=lambda cls: cls.__name__)
def test_processor_save_pretrained_round_trips_through_auto_processor(processor_class, tmp_path):
    processor = processor_class(data_dir=None)
    processor.save_pretrained(str(tmp_path))
    loaded = AutoProcessor.from_pretrained(str(tmp_path) + "/processor.json")
    assert type(loaded) is processor_class
    assert loaded.symbol_to_id == processor.symbol_to_id and loaded.speakers_map == processor.speakers_map


@pytest.mark.parametrize("corpus", ["ljspeech", "baker", "kss"])
def test_18_mapper_files_load(corpus):
    path = COMPAT / "mappers" / f"{corpus}_mapper.json"
    if not path.exists():
        pytest.skip(f"compat fixture {path} is missing")
    processor = AutoProcessor.from_pretrained(str(path))
    assert processor.dataset_name == corpus and len(processor.symbol_to_id) > 40


def test_a_bare_tacotron2_config_builds_1_8s_default_network():
    # 1.8's Tacotron2Config() class defaults, which user code and the side-by-side harness build.
    config = Tacotron2Config()
    assert (config.n_speakers, config.n_conv_encoder, config.reduction_factor) == (5, 3, 5)
    assert (config.encoder_conv_activation, config.prenet_activation) == ("mish", "mish")
    model = TFTacotron2(config)
    ids = tf.constant([[3, 4, 5, 6]], tf.int32)
    model(ids, tf.constant([4]), tf.constant([4]), tf.zeros([1, 10, config.n_mels]), tf.constant([10]), 2,
          training=False)
    speaker_tables = [v for v in model.weights if "speaker" in v.name and v.shape[0] == 5]
    assert speaker_tables, "5 speakers give speaker embeddings"
    assert len([v for v in model.weights if "conv_batch_norm" in v.name and "gamma" in v.name]) >= 3
