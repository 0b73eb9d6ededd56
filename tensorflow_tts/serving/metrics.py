"""The server's Prometheus metrics, in a registry of its own (several apps may live in one process).

prometheus-client writes the text exposition format (HELP/TYPE lines, histogram buckets,
label escaping) as Prometheus reads it; hand-written exporters tend to get those details wrong.
"""

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
RTF_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)


class Metrics:
    """requests by endpoint and status, latency, audio seconds, real-time factor, batch sizes."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self):
        self.registry = CollectorRegistry()
        self.requests = Counter("tts_requests", "HTTP requests answered", ["endpoint", "status"], registry=self.registry)
        self.latency = Histogram("tts_request_latency_seconds", "Seconds from request to response start",
                                 ["endpoint"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.first_audio = Histogram("tts_time_to_first_audio_seconds", "Seconds to the first audio byte of a stream",
                                     ["voice"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.audio_seconds = Counter("tts_audio_seconds", "Seconds of audio produced", ["voice"], registry=self.registry)
        self.real_time_factor = Histogram("tts_real_time_factor", "Seconds from request to audio (queue included) per audio second",
                                          ["voice"], buckets=RTF_BUCKETS, registry=self.registry)
        self.batch_size = Histogram("tts_batch_size", "Requests run together in one batch", ["voice"],
                                    buckets=BATCH_BUCKETS, registry=self.registry)

    def audio(self, voice, audio_seconds, synthesis_seconds):
        """Count audio made by `voice` in `synthesis_seconds`."""
        self.audio_seconds.labels(voice).inc(audio_seconds)
        if audio_seconds > 0:
            self.real_time_factor.labels(voice).observe(synthesis_seconds / audio_seconds)

    def text(self):
        return generate_latest(self.registry)
