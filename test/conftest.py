"""Shared fixtures; each group lives in its own module and is imported here."""

from fixtures_dump import corpus_dump, tiny_dump  # noqa: F401
