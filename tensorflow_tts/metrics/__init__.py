"""Objective quality metrics of synthesized speech against recordings (numpy, no TensorFlow).

MCD, log-F0 RMSE and V/UV error on DTW-aligned WORLD frames (`cepstral`); PESQ-WB and
STOI (`perceptual`), the log-mel L1 and the multi-resolution STFT distance of same-length
copy-synthesis, and the DTW-aligned mel L1 of an acoustic model's mels (`spectral`);
scoring pairs and summarising them (`evaluation`).
"""

from tensorflow_tts.metrics.cepstral import CepstralScores, all_pass_alpha, cepstral_scores, mel_cepstrum, world_frames
from tensorflow_tts.metrics.evaluation import METRIC_NAMES, METRICS, evaluate_pair, summarize
from tensorflow_tts.metrics.perceptual import PESQ_WB_MAX, pesq_wb, stoi
from tensorflow_tts.metrics.signals import MetricError
from tensorflow_tts.metrics.spectral import dtw_mel_l1, log_mel_l1, mr_stft_distance
