"""Losses: spectrogram, multi-resolution STFT, adversarial, guided attention, alignment."""

from tensorflow_tts.losses.spectrogram import TFMelSpectrogram, calculate_2d_loss, calculate_3d_loss
from tensorflow_tts.losses.stft import TFMultiResolutionSTFT
