"""Whether an acoustic model and a vocoder fit together, from what their files record (`model_info`).

Plain Python over the recorded dicts: a synthesizer running two .tflite files checks its pair
without importing TensorFlow.
"""


def pair_mismatch(acoustic_info, vocoder_info):
    """Why the vocoder does not fit the acoustic model's features (a message), or None when it does.

    Compared: mel bins always; hop size and sampling rate where both files record them.
    """
    if acoustic_info["num_mels"] != vocoder_info["num_mels"]:
        return (
            f"the acoustic model ({acoustic_info['model_type']}) makes {acoustic_info['num_mels']} mel bins, but "
            f"the vocoder ({vocoder_info['model_type']}) expects {vocoder_info['num_mels']}; use a vocoder "
            "trained on the same features"
        )
    for key, what in (("hop_size", "hop size"), ("sampling_rate", "sampling rate")):
        if acoustic_info.get(key) and vocoder_info.get(key) and acoustic_info[key] != vocoder_info[key]:
            return (
                f"the acoustic model was trained with {what} {acoustic_info[key]}, the vocoder with "
                f"{vocoder_info[key]}; use a vocoder trained on the same features"
            )
    return None
