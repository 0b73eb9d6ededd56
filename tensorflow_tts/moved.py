"""Module paths that moved when the package took its one-room-per-concept layout.

User code, notebooks and guides import e.g. `tensorflow_tts.utils.cleaners`; those
modules now live in the room of their concept (`tensorflow_tts.processor.text.cleaners`).
A finder on `sys.meta_path` answers each old name with the module at its new place, the
same object, so `isinstance`, monkeypatching and pickles see one module. A module that
was split over several new ones is answered with a view that reads each name from the
first of them that has it. The old rooms keep no stub files that would import upwards
(`utils/` imports no other package folder).
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types

# Old module path -> where it lives now. Add a line whenever a module moves.
MOVED_MODULES = {
    "tensorflow_tts.utils.cleaners": "tensorflow_tts.processor.text.cleaners",
    "tensorflow_tts.utils.g2p": "tensorflow_tts.processor.text.g2p",
    "tensorflow_tts.utils.german": "tensorflow_tts.processor.text.german",
    "tensorflow_tts.utils.korean": "tensorflow_tts.processor.text.korean",
    "tensorflow_tts.utils.number_norm": "tensorflow_tts.processor.text.number_norm",
    "tensorflow_tts.utils.text_split": "tensorflow_tts.processor.text.text_split",
    "tensorflow_tts.utils.alignment_search": "tensorflow_tts.alignment.search",
    "tensorflow_tts.utils.alignments": "tensorflow_tts.alignment.attention",
    "tensorflow_tts.utils.textgrid": "tensorflow_tts.alignment.textgrid",
    "tensorflow_tts.utils.legacy_weights": "tensorflow_tts.models.legacy_weights",
    "tensorflow_tts.trainers.vocoder": "tensorflow_tts.recipes.vocoder",
    "tensorflow_tts.trainers.acoustic_recipe": "tensorflow_tts.recipes.acoustic",
    # Split modules: a view over their new homes.
    "tensorflow_tts.utils.durations": (
        "tensorflow_tts.alignment.durations",
        "tensorflow_tts.dump.screening",
        "tensorflow_tts.dump.statistics",
    ),
    "tensorflow_tts.utils.dump": (
        "tensorflow_tts.dump.layout",
        "tensorflow_tts.dump.statistics",
        "tensorflow_tts.dump.preprocess",
    ),
}


class SplitModule(types.ModuleType):
    """An old module whose names now live in several modules; each name is read from the first that has it."""

    def __init__(self, name, homes):
        super().__init__(name, f"Moved: its names now live in {', '.join(homes)}.")
        self._homes = [importlib.import_module(home) for home in homes]

    def __getattr__(self, attribute):
        for home in self._homes:
            if hasattr(home, attribute):
                return getattr(home, attribute)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attribute!r}")

    def __dir__(self):
        return sorted({name for home in self._homes for name in dir(home)})


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module now at its new path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        # The new module keeps its own __name__ and __spec__; the import system only adds
        # attributes a module lacks, so it is registered under the old name as it is.
        target = MOVED_MODULES[spec.name]
        if isinstance(target, tuple):
            return SplitModule(spec.name, target)
        return importlib.import_module(target)

    def exec_module(self, module):
        """Nothing to run: the module was executed when it was imported under its new name."""


def install():
    """Put the finder first on sys.meta_path (once)."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
