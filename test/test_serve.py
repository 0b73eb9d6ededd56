"""The speech server: API round trip, streaming, request batching, bad input, metrics, start-up failures.

The ASGI app runs in-process (Starlette's TestClient, httpx for concurrent requests) over
the tiny random-weight FastSpeech2 and MB-MelGAN of the synthesis tests.
"""

import asyncio
import io
import struct
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
import soundfile as sf
from starlette.testclient import TestClient

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)

from tensorflow_tts.bin.serve import load_config, main, parse_args  # noqa: E402
from tensorflow_tts.configs.base_config import ConfigError  # noqa: E402
from tensorflow_tts.inference.synthesizer import SynthesisCancelled  # noqa: E402
from tensorflow_tts.serving.app import create_app  # noqa: E402
from tensorflow_tts.serving.batcher import Batcher  # noqa: E402
from tensorflow_tts.serving.config import ServeConfig  # noqa: E402
from tensorflow_tts.serving.voices import load_voices  # noqa: E402
from test_export import LJSPEECH_MAPPER, save_model_folder, shared_models  # noqa: E402

SAMPLING_RATE = 8000
HOP_SIZE = 12  # the tiny MB-MelGAN: upsample [2, 3] x 2 subbands


def voice_folders(root):
    """The tiny FastSpeech2 and MB-MelGAN as save_pretrained-style folders: (acoustic, vocoder)."""
    models = shared_models()
    acoustic = save_model_folder(models["fastspeech2"], root / "fs2", sampling_rate=SAMPLING_RATE, hop_size=HOP_SIZE)
    vocoder = save_model_folder(models["multiband_melgan_generator"], root / "mb", sampling_rate=SAMPLING_RATE)
    return acoustic, vocoder


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return voice_folders(tmp_path_factory.mktemp("serve"))


def make_config(folders, **limits):
    acoustic, vocoder = folders
    return ServeConfig.from_dict(dict(limits, voices=[
        {"name": "lj", "acoustic": str(acoustic), "vocoder": str(vocoder), "processor": LJSPEECH_MAPPER}]))


@pytest.fixture(scope="module")
def voices(folders):
    return load_voices(make_config(folders))


@pytest.fixture(scope="module")
def client(folders, voices):
    with TestClient(create_app(voices, make_config(folders, max_chars=200, batch_wait_ms=20))) as client:
        yield client


def read_wav(body):
    audio, rate = sf.read(io.BytesIO(body), dtype="float32")
    return audio, rate


def pcm(body):
    return np.frombuffer(body, "<i2")


# ------------------------------------------------------------------------------ round trip
def test_post_returns_a_wav_of_whole_frames(client, voices):
    response = client.post("/v1/synthesize", json={"text": "Hello world.", "voice": "lj"})
    assert response.status_code == 200 and response.headers["content-type"] == "audio/wav"
    assert response.content[:4] == b"RIFF" and response.content[8:12] == b"WAVE"
    audio, rate = read_wav(response.content)
    assert rate == SAMPLING_RATE and audio.size > 0 and audio.size % HOP_SIZE == 0
    expected = voices["lj"].synthesizer.synthesize("Hello world.")
    assert audio.size == expected.size
    np.testing.assert_allclose(audio, np.clip(expected, -1, 1), atol=1.0 / 32767 + 1e-6)


def test_get_with_query_parameters_equals_post(client):
    posted = client.post("/v1/synthesize", json={"text": "Good day.", "speed": 1.5, "format": "pcm16"})
    got = client.get("/v1/synthesize", params={"text": "Good day.", "speed": "1.5", "format": "pcm16"})
    assert got.status_code == posted.status_code == 200 and got.headers["content-type"] == "audio/L16"
    assert got.content == posted.content and len(got.content) % (2 * HOP_SIZE) == 0


def test_streamed_chunks_concatenate_to_the_whole_audio(client):
    text = "The first sentence. And then a second one, a little longer than the first."
    whole = client.post("/v1/synthesize", json={"text": text, "format": "pcm16"}).content
    with client.stream("POST", "/v1/synthesize", json={"text": text, "format": "pcm16", "stream": True}) as response:
        assert response.status_code == 200
        chunks = [chunk for chunk in response.iter_raw() if chunk]
    assert len(chunks) > 2  # sentence by sentence and chunk by chunk, not one piece
    streamed = pcm(b"".join(chunks))
    assert streamed.size == pcm(whole).size
    assert np.abs(streamed.astype(np.int32) - pcm(whole)).max() <= 1


def test_streamed_wav_starts_with_a_header(client):
    with client.stream("GET", "/v1/synthesize", params={"text": "Hi there.", "stream": "true"}) as response:
        body = response.read()
    assert body[:4] == b"RIFF" and struct.unpack("<I", body[40:44])[0] == 0xFFFFFFFF
    assert (len(body) - 44) % (2 * HOP_SIZE) == 0


def test_voices_health_and_page(client):
    voices = client.get("/v1/voices").json()["voices"]
    assert voices == [{"name": "lj", "sampling_rate": SAMPLING_RATE, "speakers": {"ljspeech": 0}, "acoustic": "fastspeech2",
                       "vocoder": "multiband_melgan_generator", "streaming": True, "batching": True}]
    assert client.get("/healthz").json() == {"status": "ok", "voices": ["lj"]}
    page = client.get("/")
    assert page.status_code == 200 and 'id="play"' in page.text
    assert "http://" not in page.text and "https://" not in page.text  # no external assets


# ------------------------------------------------------------------------------ batching
def test_concurrent_requests_run_as_one_batch_with_the_same_audio(folders, voices):
    texts = ["Hello world.", "A somewhat longer sentence, with a comma.", "Hi.", "One more. Two sentences here!"]
    speeds = [1.0, 1.3, 0.8, 1.0]
    app = create_app(voices, make_config(folders, batch_wait_ms=200))

    async def send_all():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://serve") as http:
            replies = await asyncio.gather(*[
                http.post("/v1/synthesize", json={"text": text, "speed": speed, "format": "pcm16"})
                for text, speed in zip(texts, speeds)])
            return replies, (await http.get("/metrics")).text

    replies, metrics = asyncio.run(send_all())
    assert 'tts_batch_size_bucket{le="4.0",voice="lj"} 1.0' in metrics and 'tts_batch_size_count{voice="lj"} 1.0' in metrics
    for text, speed, reply in zip(texts, speeds, replies):
        alone = voices["lj"].synthesizer.synthesize(text, speed=speed)
        assert reply.status_code == 200
        audio = pcm(reply.content).astype(np.float32) / 32767
        assert audio.size == alone.size
        np.testing.assert_allclose(audio, np.clip(alone, -1, 1), atol=1.0 / 32767 + 1e-5)


def test_synthesize_batch_equals_one_at_a_time(voices):
    synthesizer = voices["lj"].synthesizer
    texts = ["Printing, in the only sense.", "Short.", "Two sentences here. The second is longer than the first."]
    batch = synthesizer.synthesize_batch(texts, speed=[1.0, 0.7, 1.4], f0=1.1)
    for text, speed, audio in zip(texts, [1.0, 0.7, 1.4], batch):
        alone = synthesizer.synthesize(text, speed=speed, f0=1.1)
        assert audio.shape == alone.shape
        np.testing.assert_allclose(audio, alone, atol=1e-5)


def test_savedmodel_voices_batch_and_tflite_vocoders_run_on_litert(folders, tmp_path):
    """A SavedModel pair takes batches; a .tflite (batch 1) runs row by row on ai-edge-litert's interpreter."""
    from tensorflow_tts.inference.export import export_saved_model
    from tensorflow_tts.inference.synthesizer import Synthesizer
    from test_export import shared_tflite

    models = shared_models()
    export_saved_model(models["fastspeech2"], tmp_path / "fs2", sampling_rate=SAMPLING_RATE, hop_size=HOP_SIZE)
    export_saved_model(models["multiband_melgan_generator"], tmp_path / "mb", sampling_rate=SAMPLING_RATE)
    (tmp_path / "mb.tflite").write_bytes(shared_tflite("multiband_melgan_generator"))
    texts = ["Hello world.", "A second, longer sentence to read."]
    saved = Synthesizer(tmp_path / "fs2", tmp_path / "mb", processor=LJSPEECH_MAPPER)
    mixed = Synthesizer(tmp_path / "fs2", tmp_path / "mb.tflite", processor=LJSPEECH_MAPPER)
    assert saved.acoustic.batchable and saved.vocoder.batchable and not mixed.vocoder.batchable
    assert type(mixed.vocoder._model.interpreter).__module__.startswith("ai_edge_litert")
    for synthesizer in (saved, mixed):
        for text, audio in zip(texts, synthesizer.synthesize_batch(texts)):
            np.testing.assert_allclose(audio, synthesizer.synthesize(text), atol=1e-5)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "body, status, field, reason",
    [
        ({"text": ""}, 422, "text", "is empty"),
        ({"text": " \n\t "}, 422, "text", "is empty"),
        ({"text": "a" * 201}, 422, "text", "201 characters, more than the limit of 200"),
        ({"text": "Hi.", "voice": "../../etc/passwd"}, 422, "voice", "unknown voice"),
        ({"text": "Hi.", "speaker": 3}, 422, "speaker", "unknown speaker id 3"),
        ({"text": "Hi.", "speaker": "nobody"}, 422, "speaker", "unknown speaker \"nobody\""),
        ({"text": "Hi.", "speed": 0}, 422, "speed", "finite positive number"),
        ({"text": "Hi.", "f0": -1.5}, 422, "f0", "finite positive number"),
        ({"text": "Hi.", "energy": "fast"}, 422, "energy", "must be a number"),
        ({"text": "Hi.", "speed": True}, 422, "speed", "must be a number"),
        ({"text": "Hi.", "format": "mp3"}, 422, "format", "must be one of wav, pcm16"),
        ({"text": "Hi.", "volume": 2}, 422, "volume", "unknown field"),
        ({"voice": "lj"}, 422, "text", "is required"),
        ({"text": "Hello ~ world | again"}, 422, "text", "characters with no symbol in voice lj: '|' '~'"),
        ({"text": "###"}, 422, "text", "characters with no symbol"),
        ([1, 2], 400, None, "expected a JSON object"),
    ],
)
def test_bad_input_is_a_json_error_naming_the_field(client, body, status, field, reason):
    response = client.post("/v1/synthesize", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["field"] == field and reason in error["reason"]
    assert client.post("/v1/synthesize", json={"text": "Still served."}).status_code == 200


@pytest.mark.parametrize(
    "content, reason",
    [(b'{"text": "Hi.",', "not valid JSON"), (b'{"text": "caf\xe9"}', "not UTF-8 (byte 0xe9"),
     (b'{"text": "Hi.", "speed": NaN}', "finite positive number")],
)
def test_malformed_bodies_are_refused(client, content, reason):
    response = client.post("/v1/synthesize", content=content, headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500 and reason in response.json()["error"]["reason"]


def test_non_finite_query_parameter_is_refused(client):
    response = client.get("/v1/synthesize", params={"text": "Hi.", "speed": "inf"})
    assert response.status_code == 422 and response.json()["error"]["field"] == "speed"


def test_a_request_over_the_time_limit_gets_504_and_the_next_is_served(folders, voices):
    with TestClient(create_app(voices, make_config(folders, timeout_s=0.001))) as slow:
        response = slow.post("/v1/synthesize", json={"text": "This takes longer than a millisecond. " * 3})
        assert response.status_code == 504 and "limit" in response.json()["error"]["reason"]
    with TestClient(create_app(voices, make_config(folders))) as fresh:
        assert fresh.post("/v1/synthesize", json={"text": "Served."}).status_code == 200


def test_a_running_batch_is_told_when_its_caller_gave_up():
    told = []

    def run_batch(items, cancelled):  # a model call that takes long, then the check before the next one
        deadline = time.monotonic() + 5
        while not cancelled() and time.monotonic() < deadline:
            time.sleep(0.01)
        told.append(cancelled())
        return [SynthesisCancelled("stopped")] * len(items)

    async def give_up_after(seconds):
        with ThreadPoolExecutor(max_workers=1) as executor:
            batcher = Batcher(run_batch, executor, max_batch_size=4, wait_s=0.0, max_queue=8)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(batcher.submit("text"), seconds)
            while not told:
                await asyncio.sleep(0.01)
            await batcher.close()

    started = time.monotonic()
    asyncio.run(give_up_after(0.05))
    assert told == [True] and time.monotonic() - started < 4


# ------------------------------------------------------------------------------ metrics
def counter(text, name):
    lines = [line for line in text.splitlines() if line.startswith(name)]
    return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0


def test_metrics_counters_move(client):
    before = client.get("/metrics").text
    client.post("/v1/synthesize", json={"text": "Count me."})
    client.post("/v1/synthesize", json={"text": ""})
    after = client.get("/metrics").text
    ok, refused = ('tts_requests_total{endpoint="/v1/synthesize",status="200"}',
                   'tts_requests_total{endpoint="/v1/synthesize",status="422"}')
    assert counter(after, ok) == counter(before, ok) + 1
    assert counter(after, refused) == counter(before, refused) + 1
    assert counter(after, 'tts_audio_seconds_total{voice="lj"}') > counter(before, 'tts_audio_seconds_total{voice="lj"}')
    for name in ("tts_request_latency_seconds_bucket", "tts_real_time_factor_count", "tts_batch_size_count"):
        assert name in after


# ------------------------------------------------------------------------------ start-up
def test_voices_yaml_with_an_unknown_key_is_refused(folders, tmp_path):
    path = tmp_path / "voices.yaml"
    path.write_text(f"voices:\n  - name: lj\n    acoustic: {folders[0]}\n    colour: blue\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="voices\\[0\\]: unknown key\\(s\\) 'colour'"):
        load_config(parse_args(["--config", str(path)]))


def test_flags_make_one_voice_and_override_limits(folders):
    config = load_config(parse_args(["--acoustic", str(folders[0]), "--vocoder", str(folders[1]), "--port", "9001",
                                     "--max-batch-size", "1"]))
    assert config.port == 9001 and not config.batching and config.host == "127.0.0.1"
    assert config.voices[0].acoustic == str(folders[0])


@pytest.mark.parametrize("broken", ["missing", "corrupt tflite", "corrupt weights"])
def test_a_server_with_a_bad_model_fails_at_start_naming_the_file(folders, tmp_path, broken, caplog):
    vocoder = tmp_path / "mb.tflite"
    if broken == "corrupt tflite":
        vocoder.write_bytes(b"\x00" * 64)
    elif broken == "corrupt weights":  # a model folder whose model.h5 is not HDF5: the folder is named
        vocoder = tmp_path / "mb"
        vocoder.mkdir()
        (vocoder / "config.yml").write_bytes((folders[1] / "config.yml").read_bytes())
        (vocoder / "model.h5").write_bytes(b"not hdf5" * 8)
    argv = ["--acoustic", str(folders[0]), "--vocoder", str(vocoder), "--processor", LJSPEECH_MAPPER, "--port", "1"]
    assert main(argv) == 1  # before listening: port 1 is never bound
    assert str(vocoder) in caplog.text and "Traceback" not in caplog.text
