#!/usr/bin/env bash
# One side of the comparison with TensorFlowTTS 1.8, for ../shared/peers/compare.py:
#   side_by_side.sh peer   1.8 in the peers' venv, with their import shims (stubs/)
#   side_by_side.sh ours   this checkout's .venv (no shims: our package imports on its own)
# Further arguments go to benchmarks/side_by_side.py (and through it to bench_tts.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peers="${TTS_PEERS_DIR:-$(cd "$here/../.." && pwd)/shared/peers}"
export TTS_PEERS_DIR="$peers" TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
side="${1:?usage: side_by_side.sh peer|ours [bench_tts.py arguments]}"
shift
case "$side" in
    peer) export PYTHONPATH="$peers/stubs${PYTHONPATH:+:$PYTHONPATH}"
          python="${PEERS_HOME:-$HOME/.cache/tts-peers}/.venv-tftts/bin/python" ;;
    ours) python="$here/../.venv/bin/python" ;;
    *) echo "side_by_side.sh: expected 'peer' or 'ours', got '$side'" >&2; exit 2 ;;
esac
exec "$python" -W ignore "$here/side_by_side.py" "$@"
