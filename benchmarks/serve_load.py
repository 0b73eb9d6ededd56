"""Load on tensorflow-tts-serve: throughput and latency with request batching on and off.

    python benchmarks/serve_load.py                      # demo voice (demo_output/), else a random tiny voice
    python benchmarks/serve_load.py --requests 400 --clients 16 --stream

Starts the server on 127.0.0.1 (a fresh process per mode), sends a bounded load of mixed
lengths from `--clients` concurrent clients, and prints per mode: throughput (audio seconds
per wall second), p50/p95/p99 latency, time to first audio byte (--stream), errors, the
server's CPU seconds per audio second (the figure other jobs on the machine disturb least),
its mean batch size and its RSS growth over each half of the run, after a warm-up (100
requests per client by default, not counted) in which TensorFlow's per-shape kernel caches
fill; the RSS the warm-up added is printed too. Nothing leaves this machine.
"""

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
from tensorflow_tts.serving.process import ServerStartError, start_server

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "demo_output"
SENTENCES = [
    "Hello there.",
    "The quick brown fox jumps over the lazy dog.",
    "Printing, in the only sense with which we are at present concerned, differs from most if not from all the arts.",
    "It is a long way to the river. We walked there in the morning, and came back when the sun was low.",
]
WORDS_PER_TEXT = ((2, 5), (8, 14), (18, 24), (30, 40))  # four length classes; long texts have two sentences


def mixed_texts(count, seed=0):
    """`count` different texts of the four length classes in turn (seeded): every request is new
    to the models, as in real traffic, not four sentences repeated."""
    import random

    rng = random.Random(seed)
    words = " ".join(SENTENCES).replace(",", "").replace(".", "").lower().split()
    texts = []
    for index in range(count):
        low, high = WORDS_PER_TEXT[index % len(WORDS_PER_TEXT)]
        chosen = [rng.choice(words) for _ in range(rng.randint(low, high))]
        if len(chosen) > 25:
            chosen[len(chosen) // 2] += "."
        texts.append(" ".join(chosen).capitalize() + ".")
    return texts


def random_voice(folder):
    """A random-weight FastSpeech2 and MB-MelGAN of the tiny recipes, saved with save_pretrained."""
    import numpy as np

    from tensorflow_tts.inference import AutoConfig, save_pretrained
    from tensorflow_tts.inference.auto import build_model, model_class_for
    from tensorflow_tts.processor.registry import default_mapper_path

    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)  # the same voice, the same durations, in every run
    paths = {}
    for name, recipe in (("fastspeech2", "fastspeech2/conf/fastspeech2.tiny.yaml"),
                         ("mb_melgan", "multiband_melgan/conf/multiband_melgan.tiny.yaml")):
        config = AutoConfig.from_pretrained(REPO / "examples" / recipe)
        model = build_model(model_class_for(config)(config))
        if name == "fastspeech2":  # random weights predict 0 or hundreds of frames per token: make it ~3
            model.duration_predictor.projection.kernel.assign(0.1 * model.duration_predictor.projection.kernel)
            model.duration_predictor.projection.bias.assign([np.log(4.0)])
        paths[name] = save_pretrained(model, folder / name)
    return paths["fastspeech2"], paths["mb_melgan"], default_mapper_path("ljspeech")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU seconds of a process so far (less disturbed by other jobs than wall time)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve(voice, max_batch_size, batch_wait_ms):
    """A fresh server for one mode: (process, url)."""
    acoustic, vocoder, processor = voice
    args = ["--acoustic", acoustic, "--vocoder", vocoder, "--processor", processor, "--verbose", "0",
            "--max-batch-size", max_batch_size, "--batch-wait-ms", batch_wait_ms, "--timeout-s", 120]
    try:
        return start_server(args, free_port())
    except ServerStartError as error:
        sys.exit(str(error))


async def one_request(http, text, stream):
    """(latency s, time to first byte s, audio bytes, error or None)."""
    started = time.perf_counter()
    first, size = None, 0
    try:
        async with http.stream("POST", "/v1/synthesize", json={"text": text, "format": "pcm16", "stream": stream}) as reply:
            async for chunk in reply.aiter_raw():
                if first is None and chunk:
                    first = time.perf_counter() - started
                size += len(chunk)
            error = None if reply.status_code == 200 else f"HTTP {reply.status_code}"
    except httpx.HTTPError as exception:
        error = type(exception).__name__
    return time.perf_counter() - started, first, size, error


async def load(url, texts, clients, stream):
    queue = list(enumerate(texts))
    results = []
    async with httpx.AsyncClient(base_url=url, timeout=180) as http:
        async def client():
            while queue:
                _, text = queue.pop()
                results.append(await one_request(http, text, stream))

        started = time.perf_counter()
        await asyncio.gather(*[client() for _ in range(clients)])
        return results, time.perf_counter() - started


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))] if ordered else float("nan")


def run_mode(voice, args, batching):
    server, url = serve(voice, args.max_batch_size if batching else 1, args.batch_wait_ms)
    try:
        sampling_rate = httpx.get(f"{url}/v1/voices").json()["voices"][0]["sampling_rate"]
        started_rss = rss_mib(server.pid)
        warmup = args.warmup if args.warmup is not None else 100 * args.clients
        asyncio.run(load(url, mixed_texts(warmup, seed=1), args.clients, args.stream))  # warm-up, not counted
        texts = mixed_texts(args.requests)
        rss, cpu = [rss_mib(server.pid)], cpu_seconds(server.pid)
        results, wall = [], 0.0
        for half in (texts[: len(texts) // 2], texts[len(texts) // 2 :]):  # RSS in the middle too: does it level off?
            half_results, half_wall = asyncio.run(load(url, half, args.clients, args.stream))
            results, wall = results + half_results, wall + half_wall
            rss.append(rss_mib(server.pid))
        cpu = cpu_seconds(server.pid) - cpu
        metrics = dict(line.rsplit(" ", 1) for line in httpx.get(f"{url}/metrics").text.splitlines()
                       if line.startswith("tts_batch_size_"))
    finally:
        server.terminate()
        server.wait(timeout=30)
    latencies = [latency for latency, _, _, error in results if error is None]
    firsts = [first for _, first, _, error in results if error is None and first is not None]
    audio_seconds = sum(size for _, _, size, error in results if error is None) / 2 / sampling_rate
    errors = [error for *_, error in results if error is not None]
    return {
        "mode": f"batching {'on (max ' + str(args.max_batch_size) + ', ' + str(args.batch_wait_ms) + ' ms)' if batching else 'off'}",
        "throughput": audio_seconds / wall, "p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99), "first_byte_p50": percentile(firsts, 0.5), "errors": len(errors),
        "cpu_per_audio_second": cpu / audio_seconds,
        "mean_batch": float(metrics['tts_batch_size_sum{voice="default"}']) / float(metrics['tts_batch_size_count{voice="default"}']),
        "rss_growth_mib": (rss[1] - rss[0], rss[2] - rss[1]), "wall": wall, "audio_seconds": audio_seconds,
        "warmup": (warmup, rss[0] - started_rss), "rss_mib": rss[-1],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--stream", action="store_true", help="streamed responses (time to first byte)")
    parser.add_argument("--max-batch-size", type=int, default=16)
    parser.add_argument("--batch-wait-ms", type=float, default=10.0)
    parser.add_argument("--only", choices=("on", "off"), default=None, help="run one mode only")
    parser.add_argument("--warmup", type=int, default=None,
                        help="requests sent before the measured ones, not counted (default: 100 per client); "
                             "TensorFlow's per-shape kernel caches fill during it, and the RSS it added is printed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if (DEMO / "fastspeech2").is_dir() and (DEMO / "mb_melgan").is_dir():
            voice, source = (DEMO / "fastspeech2", DEMO / "mb_melgan", DEMO / "processor.json"), "demo_output/"
        else:
            voice, source = random_voice(Path(scratch)), "random-weight tiny FastSpeech2 + MB-MelGAN (no demo_output/)"
        print(f"voice: {source}; {args.requests} different texts of {len(WORDS_PER_TEXT)} length classes from {args.clients} clients"
              f"{', streamed' if args.stream else ''}; load average {os.getloadavg()}", flush=True)
        modes = [mode == "on" for mode in ("on", "off") if args.only in (None, mode)]
        rows = [run_mode(voice, args, batching) for batching in modes]
    for row in rows:
        print(f"{row['mode']:<32} throughput {row['throughput']:6.2f} audio s/s   latency p50 {row['p50']:.3f} "
              f"p95 {row['p95']:.3f} p99 {row['p99']:.3f} s   first byte p50 {row['first_byte_p50']:.3f} s   "
              f"errors {row['errors']}   server CPU {row['cpu_per_audio_second']:.3f} s per audio s   mean batch {row['mean_batch']:.1f}   RSS growth {row['rss_growth_mib'][0]:+.0f} then {row['rss_growth_mib'][1]:+.0f} MiB "
              f"(to {row['rss_mib']:.0f}; {row['warmup'][1]:+.0f} in {row['warmup'][0]} warm-up requests)   "
              f"({row['audio_seconds']:.1f} s of audio in {row['wall']:.1f} s)")
    if len(rows) == 2:
        print(f"batching: {rows[0]['throughput'] / rows[1]['throughput']:.2f}x the throughput, "
              f"p50 {rows[0]['p50']:.3f} s vs {rows[1]['p50']:.3f} s")


if __name__ == "__main__":
    main()
