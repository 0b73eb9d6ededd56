"""MCD and log-F0 RMSE of an acoustic model's decoded mels, vocoded with Griffin-Lim, against the recordings.

Imported by quality_fastspeech2.py and quality_tacotron2.py (run as `python benchmarks/<script>.py`,
so this folder is on sys.path). Beside each model figure it prints the same figure for
Griffin-Lim of the recorded mel: what the vocoding alone costs, the floor for the model. The
MCD measures the band below the mel's fmax: Griffin-Lim leaves the band above it empty
whatever the model does, and that would otherwise dominate the figure.
"""

import numpy as np

from tensorflow_tts.audio.griffin_lim import TFGriffinLim
from tensorflow_tts.configs import PreprocessConfig
from tensorflow_tts.dump import layout
from tensorflow_tts.metrics import cepstral_scores

GRIFFIN_LIM_ITERS = 60


def griffin_lim_scores(dump, split, mels, n_iter=GRIFFIN_LIM_ITERS):
    """Print and return the MCD (dB) and log-F0 RMSE of decoded mels, Griffin-Lim-vocoded.

    Args:
        dump: the dump folder (its preprocess_config.yml and stats.npy are read).
        split: the split the utterances come from ("valid").
        mels: {utt_id: normalised mel `[frames, num_mels]`} as the model decoded it (any length).

    Returns:
        {"mcd": mean, "log_f0_rmse": mean, "mcd_recorded_mel": ..., "log_f0_rmse_recorded_mel": ...
        (Griffin-Lim of the recording's own mel), "scored": utterances in the means, "utterances": all}.
    """
    config = PreprocessConfig.from_yaml(dump / layout.CONFIG_NAME)
    griffin_lim = TFGriffinLim(config, stats=dump / layout.STATS_NAME)
    print(f"\nGriffin-Lim ({n_iter} iterations) of the decoded mels against the recordings "
          f"(MCD dB below the mel's fmax, {config.mel_fmax:g} Hz; log-F0 RMSE ln Hz; 'rec.': Griffin-Lim of the "
          "recording's own mel)")
    print(f"{'utterance':<14}{'MCD':>8}{'log-F0':>9}{'MCD rec. mel':>14}{'log-F0 rec.':>13}")
    rows = []
    for utt_id, mel in mels.items():
        if len(mel) * config.hop_size < config.fft_size:
            print(f"{utt_id:<14}  decoded to {len(mel)} frame(s), less than one FFT window: left out")
            continue
        recording = layout.load_feature(layout.WAVE, dump / split, utt_id)
        recorded_mel = layout.load_feature(layout.NORM_MEL, dump / split, utt_id)
        scores = [cepstral_scores(recording, griffin_lim(m, n_iter=n_iter).numpy(), config.sampling_rate,
                                  max_frequency=config.mel_fmax)
                  for m in (mel, recorded_mel)]
        rows.append((scores[0].mcd, scores[0].log_f0_rmse, scores[1].mcd, scores[1].log_f0_rmse))
        print(f"{utt_id:<14}" + "".join(f"{value:>{width}.3f}" for value, width in zip(rows[-1], (8, 9, 14, 13))))
    # Utterances left out count in no mean: the row says how many were scored.
    means = np.nanmean(rows, axis=0) if rows else np.full(4, np.nan)
    print(f"{f'mean of {len(rows)}':<14}" + "".join(f"{value:>{width}.3f}" for value, width in zip(means, (8, 9, 14, 13))))
    names = ("mcd", "log_f0_rmse", "mcd_recorded_mel", "log_f0_rmse_recorded_mel")
    return {**dict(zip(names, map(float, means))), "scored": len(rows), "utterances": len(mels)}
