"""The package's rooms: which folder may import which, and old module paths that still import."""

import ast
import re
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from tensorflow_tts.moved import MOVED_MODULES

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "tensorflow_tts"
MAX_EXAMPLE_LINES = 60

# folder -> folders of the package it must never import (docs/architecture.md).
FORBIDDEN = {
    "utils": "every other folder",
    "trainers": {"models", "datasets", "dump", "recipes", "inference", "bin"},
    "processor": {"dump", "datasets", "trainers", "models", "layers", "inference", "recipes", "bin"},
    "audio": {"dump", "datasets", "trainers", "models", "layers", "inference", "recipes", "bin", "processor"},
    # Evaluation runs without TensorFlow: audio features only.
    "metrics": {"dump", "datasets", "trainers", "models", "layers", "losses", "inference", "recipes", "bin",
                "processor", "optimizers", "alignment", "configs", "utils"},
}


def imported_folders(path):
    """The package folders a module imports (absolute and relative imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package_parts = path.relative_to(PACKAGE.parent).parts[:-1]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - node.level + 1]
                names.append(".".join(base + ((node.module,) if node.module else ())))
            elif node.module:
                names.append(node.module)
    return {name.split(".")[1] for name in names if name.startswith("tensorflow_tts.") and name.count(".") >= 1}


def folder_graph():
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        if len(parts) < 2:
            continue
        graph.setdefault(parts[0], set()).update(imported_folders(path) - {parts[0]})
    return graph


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_folder_imports_stay_downward(folder):
    imports = folder_graph().get(folder, set())
    forbidden = FORBIDDEN[folder]
    wrong = imports if forbidden == "every other folder" else imports & forbidden
    assert not wrong, f"tensorflow_tts/{folder}/ imports {sorted(wrong)}"


def documented_graph():
    """{folder: folders it imports} from the level table of docs/architecture.md."""
    graph, levels = {}, {}
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].isdigit():
            continue
        imports = set() if cells[2].startswith("nothing") else {name.strip() for name in cells[2].split(",")}
        for folder in cells[1].replace("`", "").split(","):
            graph[folder.strip().rstrip("/")] = imports
            levels[folder.strip().rstrip("/")] = int(cells[0])
    return graph, levels


def test_architecture_doc_shows_the_real_imports():
    real = folder_graph()
    documented, levels = documented_graph()
    assert set(documented) == {folder for folder in real if (PACKAGE / folder / "__init__.py").is_file()}
    for folder, imports in documented.items():
        assert real.get(folder, set()) == imports, f"docs/architecture.md: {folder}/ imports {sorted(real.get(folder, ()))}"
        assert all(levels[name] < levels[folder] for name in imports), f"{folder}/ imports a folder of its level or above"


def test_no_import_cycle_between_folders():
    graph = folder_graph()
    visiting, done = [], set()

    def visit(folder):
        if folder in visiting:
            cycle = visiting[visiting.index(folder):] + [folder]
            pytest.fail("import cycle between folders: " + " -> ".join(cycle))
        if folder in done:
            return
        visiting.append(folder)
        for child in sorted(graph.get(folder, ())):
            visit(child)
        visiting.pop()
        done.add(folder)

    for folder in sorted(graph):
        visit(folder)


MOVED = sorted(old for old, new in MOVED_MODULES.items() if isinstance(new, str))
SPLIT = sorted(old for old, new in MOVED_MODULES.items() if isinstance(new, tuple))


@pytest.mark.parametrize("old", MOVED)
def test_old_module_path_is_the_moved_module(old):
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED_MODULES[old])


@pytest.mark.parametrize("old", SPLIT)
def test_split_module_serves_every_public_name_of_its_new_homes(old):
    module = importlib.import_module(old)
    homes = [importlib.import_module(home) for home in MOVED_MODULES[old]]
    for name in {name for home in homes for name in vars(home) if not name.startswith("_")}:
        first_home = next(home for home in homes if hasattr(home, name))
        assert name in dir(module)
        assert getattr(module, name) is getattr(first_home, name)
    with pytest.raises(AttributeError, match="no attribute"):
        module.no_such_name


def test_old_dump_names_used_by_scripts_still_import():
    from tensorflow_tts.utils.dump import STATS_NAME, normalize_mel, preprocess_corpus  # noqa: F401
    from tensorflow_tts.utils.durations import fix_durations, read_stats, screen_utterances  # noqa: F401

    from tensorflow_tts.dump.preprocess import preprocess_corpus as moved
    assert preprocess_corpus is moved


def test_old_path_works_in_a_fresh_process_with_from_import():
    # `from old.path import name` is how 1.8 user code reads; a fresh process sees the finder
    # installed by `import tensorflow_tts` alone.
    old, new = next(iter(sorted(MOVED_MODULES.items())))
    code = (f"import importlib; from {old} import __name__ as name; "
            f"assert name == {new!r}, name; print('ok')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_unknown_old_path_still_fails():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tensorflow_tts.utils.no_such_module")


def wiring_lines(path):
    """Lines of a script that are code: no blank lines, comments or docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstring_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and ast.get_docstring(node):
            first = node.body[0]
            docstring_lines.update(range(first.lineno, first.end_lineno + 1))
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line for number, line in enumerate(lines, 1)
            if line.strip() and not line.strip().startswith("#") and number not in docstring_lines]


MODEL_SCRIPTS = sorted(path for path in (REPO / "examples").glob("*/*.py")
                       if path.name != "__init__.py" and path.parent.name != "demo")


@pytest.mark.parametrize("script", MODEL_SCRIPTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_example_scripts_are_thin_wiring(script):
    assert len(wiring_lines(script)) <= MAX_EXAMPLE_LINES, f"{script}: the recipe belongs in tensorflow_tts/recipes/"


def python_files_outside_examples():
    for folder in ("tensorflow_tts", "test", "benchmarks"):
        yield from (REPO / folder).rglob("*.py")


# Files outside examples/ allowed to put the checkout on sys.path, and why. Only when run as
# a file (`not __package__`), never on import or as a console script.
SYS_PATH_ALLOWED = {
    "tensorflow_tts/bin/preprocess.py": "1.8's guides run `python tensorflow_tts/bin/preprocess.py` from a checkout",
}


def test_nothing_outside_examples_imports_examples_or_edits_sys_path():
    offenders = []
    for path in python_files_outside_examples():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(name == "examples" or name.startswith("examples.") for name in names):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} imports examples")
        guarded = 'if __name__ == "__main__" and not __package__:' in text
        allowed = path.relative_to(REPO).as_posix() in SYS_PATH_ALLOWED and guarded
        if "sys.path.insert(" in text and path.name != "test_layout.py" and not allowed:
            offenders.append(f"{path.relative_to(REPO)}: sys.path.insert")
    assert not offenders, offenders


def documented_imports():
    """Every `from tensorflow_tts... import ...` line in the READMEs, the docs, the notebook and the benchmarks' notes."""
    sources = [REPO / "README.md", *REPO.glob("docs/*.md"), *REPO.glob("examples/*/README.md"),
               *REPO.glob("notebooks/*.ipynb"), REPO / "benchmarks" / "README.md",
               REPO / "benchmarks" / "HISTORY.md"]
    found = set()
    for path in sources:
        for match in re.finditer(r"from (tensorflow_tts[\w.]*) import ([\w, ]+)", path.read_text(encoding="utf-8")):
            found.add((match.group(1), tuple(name.strip() for name in match.group(2).split(",") if name.strip())))
    return sorted(found)


@pytest.mark.parametrize("module, names", documented_imports(), ids=lambda value: str(value))
def test_every_import_the_docs_show_works(module, names):
    imported = importlib.import_module(module)
    for name in names:
        assert hasattr(imported, name), f"{module} has no {name}"
