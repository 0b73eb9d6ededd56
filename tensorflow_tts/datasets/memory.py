"""The memory budget of `allow_cache`: refuse to cache a split that would not fit a share of RAM."""

import os
from pathlib import Path

from tensorflow_tts.dump.layout import DumpError

# cgroup v2, then v1: a container's limit is usually far below the machine's memory.
_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


class CacheTooLargeError(DumpError):
    """`allow_cache` asked for a split whose decoded features would not fit the memory budget."""


def ram_bytes():
    """Physical memory, or the cgroup memory limit when that is lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in _CGROUP_LIMITS:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def check_cache_fits(what, estimate_bytes, max_ram_fraction, ram=None):
    """Raise CacheTooLargeError when `estimate_bytes` exceed `max_ram_fraction` of `ram` (default: ram_bytes())."""
    ram = ram_bytes() if ram is None else ram
    limit = max_ram_fraction * ram
    if estimate_bytes > limit:
        gib = 1 << 30
        raise CacheTooLargeError(
            f"{what}: allow_cache would keep about {estimate_bytes / gib:.3g} GB of decoded features in memory "
            f"(estimated from the indexed lengths), over the limit of {limit / gib:.3g} GB "
            f"(cache_max_ram_fraction={max_ram_fraction} of {ram / gib:.3g} GB RAM); set allow_cache: false "
            "(memory then stays flat) or raise cache_max_ram_fraction"
        )
