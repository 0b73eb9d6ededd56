"""A voice as the server holds it: its Synthesizer, its own worker thread and what clients may ask of it.

Every model call of a voice runs on its one worker thread: TFLite interpreters must not be
called from two threads at once, and one thread per voice keeps a 2-core machine from
being oversubscribed by concurrent requests.
"""

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from tensorflow_tts.inference.synthesizer import SynthesisCancelled, SynthesisError, Synthesizer

logger = logging.getLogger(__name__)

WARM_UP_TEXT = "Hello."


class VoiceError(Exception):
    """A voice that cannot be loaded; the message names the voice and the file."""


class Voice:
    """A loaded voice (see VoiceConfig); `speakers` maps speaker names to ids, `n_speakers` counts ids."""

    def __init__(self, config, max_chars):
        self.config, self.name = config, config.name
        try:
            self.synthesizer = Synthesizer(acoustic=config.acoustic, vocoder=config.vocoder, processor=config.processor,
                                           sampling_rate=config.sampling_rate, num_threads=config.num_threads,
                                           max_chars=max_chars)
        except SynthesisError as error:
            raise VoiceError(f"voice {self.name}: {error}") from None
        except Exception as error:  # noqa: BLE001  (a corrupt file can fail deep in a loader)
            files = ", ".join(str(path) for path in (config.acoustic, config.vocoder, config.processor) if path)
            raise VoiceError(f"voice {self.name}: cannot load {files} ({type(error).__name__}: {error})") from None
        self.sampling_rate = self.synthesizer.sampling_rate
        self.speakers = dict(getattr(self.synthesizer.processor, "speakers_map", None) or {})
        self.n_speakers = int(self.synthesizer.acoustic.info.get("n_speakers") or max(len(self.speakers), 1))
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"voice-{self.name}")
        self._warm_up()

    def _warm_up(self):
        """Trace the models once now, so that the first request is not the slow one."""
        started = time.perf_counter()
        try:
            self.synthesizer.synthesize(WARM_UP_TEXT)
        except SynthesisError as error:  # a processor for another language: the first request traces
            logger.info("voice %s: no warm-up (%s)", self.name, error)
            return
        logger.info("voice %s ready in %.1f s of warm-up", self.name, time.perf_counter() - started)

    @property
    def description(self):
        """What GET /v1/voices says about the voice."""
        synthesizer = self.synthesizer
        return {
            "name": self.name,
            "sampling_rate": self.sampling_rate,
            "speakers": self.speakers or {str(index): index for index in range(self.n_speakers)},
            "acoustic": synthesizer.acoustic.info.get("model_type"),
            "vocoder": None if synthesizer.vocoder is None else synthesizer.vocoder.info.get("model_type"),
            "streaming": synthesizer.vocoder is not None,
            "batching": synthesizer.acoustic.batchable,
        }

    def run_batch(self, requests, cancelled=None):
        """SpeechRequests -> each one's audio, or the SynthesisError it raised (on the worker thread).

        A lone request goes through synthesize_batch too: its sentences share one batch, and
        the vocoder sees only bucketed shapes (see inference/batching.py), which keeps the
        server's memory from growing with every new text length. `cancelled()` true (every
        caller gave up) stops the batch before its next model call.
        """
        controls = {name: [getattr(request, name) for request in requests] for name in ("speed", "f0", "energy")}
        try:
            return self.synthesizer.synthesize_batch([request.text for request in requests],
                                                     speaker_id=[request.speaker for request in requests],
                                                     cancelled=cancelled, **controls)
        except SynthesisCancelled as error:
            logger.info("voice %s: %s: every caller gave up", self.name, error)
            return [error] * len(requests)
        except SynthesisError as error:
            if len(requests) == 1:
                return [error]
            return [self.run_batch([request], cancelled)[0] for request in requests]  # find whose request it was

    def close(self):
        self.executor.shutdown(wait=False, cancel_futures=True)


def load_voices(config):
    """{name: Voice} for every voice of a ServeConfig; raises VoiceError naming the voice and file."""
    voices = {}
    for voice_config in config.voices:
        voices[voice_config.name] = Voice(voice_config, config.max_chars)
    return voices
