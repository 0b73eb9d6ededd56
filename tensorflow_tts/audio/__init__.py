"""Audio features, defined once: loading, silence trimming, STFT, mel, F0 and energy.

Preprocessing, losses and Griffin-Lim all use these definitions, so training and
inference features cannot drift apart.
"""

from tensorflow_tts.audio.energy import frame_energy
from tensorflow_tts.audio.f0 import extract_f0
from tensorflow_tts.audio.features import (
    UtteranceFeatures,
    extract_features,
    load_for_features,
    mel_filterbank_for,
    pad_to_whole_frames,
)
from tensorflow_tts.audio.load import AudioError, load_audio
from tensorflow_tts.audio.mel import MIN_MAGNITUDE, log_mel_spectrogram, magnitude_to_log_mel, mel_filterbank
from tensorflow_tts.audio.stft import magnitude_stft, num_frames, stft
from tensorflow_tts.audio.trim import is_silent, trim_silence
