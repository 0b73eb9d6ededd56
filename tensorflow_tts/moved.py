"""Module paths that moved when the package took its one-room-per-concept layout.

User code, notebooks and guides import e.g. `tensorflow_tts.utils.cleaners`; those
modules now live in the room of their concept (`tensorflow_tts.processor.text.cleaners`).
A finder on `sys.meta_path` answers each old name with the module at its new place, the
same object, so `isinstance`, monkeypatching and pickles see one module. A module that
was split over several new ones is answered with a view that reads each name from the
first of them that has it. The old rooms keep no stub files that would import upwards
(`utils/` imports no other package folder).

Names work the same way: 1.8's `from tensorflow_tts.utils import TFGriffinLim` reads a name
that now lives in `audio/`. A package listed in MOVED_NAMES gets a module `__getattr__`
(PEP 562) when it is first imported, which imports the name's new home on first use; so
`utils/` itself still imports nothing of the package.
"""

import importlib
import importlib.abc
import importlib.machinery
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

# Package -> {old name: "new.module" or "new.module:new_name"}, read lazily on first use.
MOVED_NAMES = {
    "tensorflow_tts.utils": {
        # What TensorFlowTTS 1.8's tensorflow_tts/utils/__init__.py exported.
        **{
            name: "tensorflow_tts.processor.text.cleaners"
            for name in (
                "basic_cleaners", "collapse_whitespace", "convert_to_ascii", "english_cleaners",
                "expand_abbreviations", "expand_numbers", "lowercase", "transliteration_cleaners",
            )
        },
        "normalize_numbers": "tensorflow_tts.processor.text.number_norm",
        "TFGriffinLim": "tensorflow_tts.audio.griffin_lim",
        "GroupConv1D": "tensorflow_tts.layers.grouped_conv:GroupedConv1D",
        "WeightNormalization": "tensorflow_tts.layers.weight_norm",
        "calculate_2d_loss": "tensorflow_tts.losses.spectrogram",
        "calculate_3d_loss": "tensorflow_tts.losses.spectrogram",
        "return_strategy": "tensorflow_tts.utils.strategy",
        "find_files": "tensorflow_tts.utils.files",
    },
}


def moved_attribute(package, name):
    """The object that `package.name` named before it moved (see MOVED_NAMES)."""
    target = MOVED_NAMES.get(package, {}).get(name)
    if target is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    module_name, _, new_name = target.partition(":")
    return getattr(importlib.import_module(module_name), new_name or name)


class _MovedNamesLoader(importlib.abc.Loader):
    """Runs a package's own loader, then lets the package answer its MOVED_NAMES."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        package = module.__name__
        module.__getattr__ = lambda name: moved_attribute(package, name)
        module.__dir__ = lambda: sorted(set(vars(module)) | set(MOVED_NAMES[package]))


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
        if fullname in MOVED_NAMES:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            spec.loader = _MovedNamesLoader(spec.loader)
            return spec
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
