"""The HTTP API (Starlette, an ASGI app run by uvicorn): synthesis, voices, health, metrics, the page.

    POST /v1/synthesize   {"text": ..., "voice", "speaker", "speed", "f0", "energy", "format": "wav"|"pcm16", "stream"}
    GET  /v1/synthesize?text=...&voice=...
    GET  /v1/voices, /healthz, /metrics (Prometheus), / (the web page)

Refused requests get a JSON body {"error": {"field": ..., "reason": ...}} with a 4xx status;
a request still unanswered after `timeout_s` gets 504 and is dropped if it has not started;
a running batch whose callers have all gone stops before its next model call.
"""

import asyncio
import contextlib
import logging
import time
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tensorflow_tts.inference.synthesizer import SynthesisError
from tensorflow_tts.serving.batcher import Batcher, QueueFull
from tensorflow_tts.serving.metrics import Metrics
from tensorflow_tts.serving.request import RequestError, json_body, parse_request
from tensorflow_tts.serving.wav import pcm16, wav, wav_header

logger = logging.getLogger(__name__)

MEDIA_TYPES = {"wav": "audio/wav", "pcm16": "audio/L16"}


class SpeechServer:
    """The app's state: voices, their batchers, the limits (a ServeConfig) and the metrics."""

    def __init__(self, voices, config):
        self.voices, self.config, self.metrics = voices, config, Metrics()
        wait_s = config.batch_wait_ms / 1000.0 if config.batching else 0.0
        self.batchers = {
            name: Batcher(voice.run_batch, voice.executor, config.max_batch_size, wait_s, config.max_queue,
                          on_batch=self.metrics.batch_size.labels(name).observe)
            for name, voice in voices.items()
        }

    # ------------------------------------------------------------------ endpoints
    async def synthesize(self, request):
        if request.method == "POST":
            values = json_body(await request.body())
        else:
            values = dict(request.query_params)
        speech = parse_request(values, self.voices, self.config.max_chars)
        voice = self.voices[speech.voice]
        headers = {"X-Sampling-Rate": str(voice.sampling_rate)}
        if speech.stream:
            return await self._stream(voice, speech, headers)
        started = time.perf_counter()
        try:
            audio = await asyncio.wait_for(self.batchers[voice.name].submit(speech), self.config.timeout_s)
        except QueueFull as error:
            raise RequestError(503, None, f"the server is busy ({error}); retry later") from None
        except asyncio.TimeoutError:
            raise RequestError(504, None, f"synthesis took longer than the {self.config.timeout_s:g} s limit; cancelled") from None
        self.metrics.audio(voice.name, audio.size / voice.sampling_rate, time.perf_counter() - started)
        body = wav(audio, voice.sampling_rate) if speech.format == "wav" else pcm16(audio)
        return Response(body, media_type=MEDIA_TYPES[speech.format], headers=headers)

    async def _stream(self, voice, speech, headers):
        """Audio chunks as the vocoder makes them, sentence by sentence (chunked transfer)."""
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        deadline = time.monotonic() + self.config.timeout_s
        chunks = voice.synthesizer.stream(speech.text, speaker_id=speech.speaker, speed=speech.speed, f0=speech.f0,
                                          energy=speech.energy, chunk_frames=self.config.chunk_frames)

        def next_chunk():
            return next(chunks, None)

        try:  # the first chunk before the status line, so that a failure is still a proper error
            first = await asyncio.wait_for(loop.run_in_executor(voice.executor, next_chunk), self.config.timeout_s)
        except asyncio.TimeoutError:
            chunks.close()
            raise RequestError(504, None, f"no audio within the {self.config.timeout_s:g} s limit; cancelled") from None
        self.metrics.first_audio.labels(voice.name).observe(time.perf_counter() - started)

        async def body():
            produced = 0
            if speech.format == "wav":
                yield wav_header(voice.sampling_rate)
            chunk = first
            try:
                while chunk is not None:
                    produced += chunk.size
                    yield pcm16(chunk)
                    if time.monotonic() > deadline:
                        logger.warning("stream of voice %s cut at the %g s limit", voice.name, self.config.timeout_s)
                        break
                    chunk = await loop.run_in_executor(voice.executor, next_chunk)
            finally:
                chunks.close()
                self.metrics.audio(voice.name, produced / voice.sampling_rate, time.perf_counter() - started)

        return StreamingResponse(body(), media_type=MEDIA_TYPES[speech.format], headers=headers)

    async def voices_list(self, request):
        return JSONResponse({"voices": [voice.description for voice in self.voices.values()]})

    async def health(self, request):
        return JSONResponse({"status": "ok", "voices": list(self.voices)})

    async def metrics_text(self, request):
        return Response(self.metrics.text(), media_type=self.metrics.content_type)

    async def page(self, request):
        return HTMLResponse(resources.files(__package__).joinpath("page.html").read_text(encoding="utf-8"))

    # ------------------------------------------------------------------ wiring
    def observed(self, endpoint, handler):
        """`handler` with its errors as JSON and its status and latency counted."""

        async def run(request: Request):
            started = time.perf_counter()
            try:
                response = await handler(request)
            except RequestError as error:
                response = JSONResponse(error.to_json(), status_code=error.status)
            except SynthesisError as error:  # what only synthesis finds (e.g. a text with no sound)
                response = JSONResponse(RequestError(422, "text", str(error)).to_json(), status_code=422)
            except Exception:  # noqa: BLE001  (logged with its traceback; the client gets a 500)
                logger.exception("%s %s failed", request.method, request.url.path)
                response = JSONResponse({"error": {"field": None, "reason": "internal error; see the server log"}},
                                        status_code=500)
            self.metrics.requests.labels(endpoint, str(response.status_code)).inc()
            self.metrics.latency.labels(endpoint).observe(time.perf_counter() - started)
            return response

        return run

    def app(self):
        routes = [
            Route("/", self.observed("/", self.page)),
            Route("/v1/synthesize", self.observed("/v1/synthesize", self.synthesize), methods=["GET", "POST"]),
            Route("/v1/voices", self.observed("/v1/voices", self.voices_list)),
            Route("/healthz", self.observed("/healthz", self.health)),
            Route("/metrics", self.metrics_text),
        ]
        return Starlette(routes=routes, lifespan=self.lifespan)

    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        yield
        await self.close()

    async def close(self):
        """Stop the batchers; the voices stay loaded (they belong to whoever loaded them)."""
        for batcher in self.batchers.values():
            await batcher.close()


def create_app(voices, config):
    """The ASGI app serving `voices` ({name: Voice}) under the limits of `config` (a ServeConfig)."""
    return SpeechServer(voices, config).app()
