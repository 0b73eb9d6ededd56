"""The dump in one room: its layout (docs/dump_layout.md), writing a corpus into it, statistics and normalisation, screening."""
