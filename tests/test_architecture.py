"""The package's architecture as tests (developer guide §layers).

* every public import path users rely on still resolves;
* a package ``__init__`` is a face: docstring, imports, ``__all__`` and the
  lazy ``_PUBLIC`` mapping, nothing else;
* an underscored name is imported across packages only from the modules a
  layer declares as its inside;
* no module re-binds names of its own submodules;
* no import circles, lazy imports and the faces' lazy names included;
* every ``developer guide §<name>`` reference in the code names a section of
  ``docs/developer_guide.rst``.
"""

import ast
import importlib
import re
from pathlib import Path

import pytest

import sklearn_hcal

PACKAGE = Path(sklearn_hcal.__file__).parent
ROOT = PACKAGE.parent
GUIDE = ROOT / "docs" / "developer_guide.rst"

# Names users import today, by the path they import them from. New names may
# be added anywhere; none of these may move or disappear.
PUBLIC_PATHS = {
    "sklearn_hcal": [
        "AlphaCalibrator",
        "HumanConformalClassifier",
        "HumanMetricsCallback",
        "MCDropoutClassifier",
        "MatrixScaler",
        "SmallCNN",
        "SoftLabelClassifier",
        "SoftLabelNetClassifier",
        "TemperatureScaler",
        "TestTimeAugmentationClassifier",
        "VectorScaler",
        "make_soft_label_net",
        "predict_disagreement",
        "skorch_logits",
        "__version__",
    ],
    "sklearn_hcal.metrics": [
        "HUMAN_SCORERS",
        "MetricState",
        "aggregated_coverage_score",
        "annotator_agreement",
        "annotator_report",
        "aurc_loss",
        "calibration_error",
        "calibration_loss",
        "classwise_expected_calibration_error",
        "coverage_by_set_size",
        "deferral_score",
        "disagreement_calibration_error",
        "disagreement_calibration_loss",
        "disagreement_probability",
        "disagreement_squared_loss",
        "dispersion_loss",
        "distribution_calibration_error",
        "entropy_calibration_error",
        "entropy_correlation_score",
        "epistemic_loss",
        "expected_calibration_error",
        "expected_squared_loss",
        "fleiss_kappa",
        "get_human_scorer",
        "get_human_scorer_names",
        "histogram_log_loss",
        "human_calibration_report",
        "instance_calibration_errors",
        "item_agreement",
        "jensen_shannon_distance",
        "kl_divergence",
        "krippendorff_alpha",
        "lewidi_scores",
        "loss_decomposition",
        "majority_accuracy_score",
        "majority_coverage_score",
        "make_annotation_scorer",
        "make_deferral_scorer",
        "make_human_scorer",
        "make_set_scorer",
        "manhattan_distance",
        "mean_set_size",
        "metrics_by_agreement",
        "model_agreement",
        "multilabel_entropy_correlation_score",
        "multilabel_manhattan_distance",
        "multilabel_po_jsd_score",
        "multilabel_soft_micro_f1_score",
        "pairwise_cohen_kappa",
        "perspectivist_absolute_distance",
        "perspectivist_error_rate",
        "po_jsd_score",
        "predicted_disagreement",
        "ranked_probability_score_loss",
        "ranking_calibration_score",
        "report_from_states",
        "risk_at_coverage_loss",
        "risk_coverage_curve",
        "size_stratified_coverage_score",
        "soft_accuracy_score",
        "soft_cross_entropy",
        "soft_micro_f1_score",
        "wasserstein_distance",
    ],
    "sklearn_hcal.calibration": [
        "AlphaCalibrator",
        "MCDropoutClassifier",
        "MatrixScaler",
        "TemperatureScaler",
        "TestTimeAugmentationClassifier",
        "VectorScaler",
    ],
    "sklearn_hcal.datasets": [
        "annotations_to_histograms",
        "combine_lewidi_splits",
        "fetch_chaosnli",
        "fetch_lewidi",
        "get_data_home",
        "load_chaosnli",
        "load_cifar10h",
        "load_lewidi",
        "make_label_histograms",
        "make_mixed_digits",
        "read_lewidi_submission",
        "sample_annotations",
        "write_lewidi_submission",
    ],
    "sklearn_hcal.model_selection": [
        "AnnotatorKFold",
        "OneAnnotationPerItemSplit",
        "cross_val_predict_proba",
    ],
    "sklearn_hcal.aggregation": [
        "DawidSkene",
        "GLAD",
        "MACE",
        "MajorityVote",
        "OneCoinDawidSkene",
        "Wawa",
    ],
    "sklearn_hcal.perspectivist": [
        "AnnotationVectorizer",
        "OrdinalClassifier",
        "PerspectivistClassifier",
        "PerspectivistEnsemble",
        "SentenceEncoder",
        "TransformerPerspectivistClassifier",
        "make_default_estimator",
    ],
    "sklearn_hcal.plotting": [
        "AgreementBinDisplay",
        "AnnotatorAgreementDisplay",
        "CalibrationDispersionDisplay",
        "ConformalCoverageDisplay",
        "DisagreementReliabilityDisplay",
        "HumanModelMarginalDisplay",
        "InstanceErrorDisplay",
        "MajorityReliabilityDisplay",
        "RiskCoverageDisplay",
        "error_histogram_divergence",
    ],
    "sklearn_hcal.cli": ["build_parser", "main", "run_demo"],
    "sklearn_hcal.conformal": ["HumanConformalClassifier", "conformity_scores"],
    "sklearn_hcal.report": ["CalibrationReport"],
}


def _public_faces() -> list[str]:
    """The package and its subpackages without a leading underscore that
    declare ``__all__`` (``utils`` is internal and declares none)."""
    faces = ["sklearn_hcal"]
    for path in sorted(PACKAGE.iterdir()):
        init = path / "__init__.py"
        if path.name.startswith("_") or not init.is_file():
            continue
        if "__all__" in init.read_text(encoding="utf-8"):
            faces.append(f"sklearn_hcal.{path.name}")
    return faces


@pytest.mark.parametrize("module", _public_faces())
def test_every_public_name_is_pinned(module):
    # A name in a public face's __all__ is a promise: it is pinned here the
    # day it is added, so that it cannot move or disappear unnoticed.
    names = importlib.import_module(module).__all__
    unpinned = sorted(set(names) - set(PUBLIC_PATHS.get(module, [])))
    assert unpinned == [], f"pin {unpinned} in PUBLIC_PATHS[{module!r}]"


@pytest.mark.parametrize("module", sorted(PUBLIC_PATHS))
def test_public_import_paths_unchanged(module):
    mod = importlib.import_module(module)
    missing = [n for n in PUBLIC_PATHS[module] if n not in mod.__all__]
    assert missing == [], f"{module} lost public names {missing}"
    for name in PUBLIC_PATHS[module]:
        if name == "__version__":
            continue
        if name in ("SmallCNN", "SoftLabelNetClassifier", "make_soft_label_net"):
            pytest.importorskip("skorch")
        assert getattr(mod, name) is not None


# -- modules, packages and what they import ----------------------------------


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        yield ".".join(parts), path, is_pkg


def _package_of(module: str, is_pkg: bool) -> str:
    return module if is_pkg else module.rsplit(".", 1)[0]


def _layer(module: str) -> str:
    """The layer of a module: its first package below ``sklearn_hcal``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else module


def _imports(module: str, path: Path, is_pkg: bool):
    """``(target module, imported name, line)`` of every ``from X import n``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _package_of(module, is_pkg)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")
            if node.level > 1:
                base = base[: len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("sklearn_hcal"):
            continue
        for alias in node.names:
            yield target, alias.name, node.lineno


#: The modules each layer declares as the helpers its siblings may use
#: (developer guide §layers). Their plain names are the layer's inside.
#: Besides these, each layer's ``_shared`` module. A private package's
#: *face* is declared, never its modules: ``sklearn_hcal._validation._scan``
#: is reached through ``sklearn_hcal._validation``.
DECLARED = {
    "sklearn_hcal._validation",
    "sklearn_hcal._training",
    "sklearn_hcal._frontend",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_submodule(target: str, name: str) -> bool:
    return (PACKAGE.parent / (target + "." + name).replace(".", "/")).with_suffix(
        ".py"
    ).exists() or (PACKAGE.parent / (target + "." + name).replace(".", "/")).is_dir()


def test_cross_layer_imports_go_through_declared_modules():
    offenders = []
    for module, path, is_pkg in _modules():
        layer = _layer(module)
        for target, name, line in _imports(module, path, is_pkg):
            if _layer(target) == layer or target.startswith("sklearn_hcal.utils"):
                continue
            if target == "sklearn_hcal":
                continue
            if _is_submodule(target, name):
                # ``from ..metrics import _registry`` reaches into a layer
                # as surely as ``from ..metrics._registry import x``.
                target, name = f"{target}.{name}", ""
            parts = target.split(".")
            private_path = any(_private(p) for p in parts[2:])
            declared = target in DECLARED or target.endswith("._shared")
            if declared:
                if _private(name):
                    offenders.append(f"{module}:{line} {target}.{name}")
                continue
            if private_path or _private(name):
                offenders.append(f"{module}:{line} {target}.{name}")
    assert offenders == [], "\n".join(offenders)


_FACE_NODES = (ast.Import, ast.ImportFrom)


def _is_face_statement(node) -> bool:
    if isinstance(node, _FACE_NODES):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # the docstring
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = []
        for t in targets:
            if isinstance(t, ast.Tuple):
                names += [e.id for e in t.elts if isinstance(e, ast.Name)]
            elif isinstance(t, ast.Name):
                names.append(t.id)
        return set(names) <= {
            "__all__",
            "_PUBLIC",
            "__getattr__",
            "__dir__",
            "__version__",
        }
    return False


@pytest.mark.parametrize(
    "init",
    sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("__init__.py")),
)
def test_init_files_are_faces(init):
    tree = ast.parse((PACKAGE / init).read_text(encoding="utf-8"))
    logic = [
        f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}"
        for node in tree.body
        if not _is_face_statement(node)
    ]
    assert logic == [], f"{init} holds logic: {logic}"


def test_no_module_rebinds_names_of_its_submodules():
    # ``from ._x import f`` then ``f = ...`` (or a second import under the
    # same name) makes two places for one concept.
    offenders = []
    for module, path, _ in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {}
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.level:
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if bound in imported and imported[bound] != node.module:
                        offenders.append(f"{module}: {bound} imported twice")
                    imported[bound] = node.module
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id in imported:
                        offenders.append(f"{module}:{node.lineno} re-binds {t.id}")
    assert offenders == [], offenders


def test_no_class_is_defined_inside_a_function():
    # A class made by a function (torch modules built around ``torch`` passed
    # as an argument) cannot be imported, pickled by name or documented;
    # modules that need an optional dependency import it at their top and
    # are imported lazily instead (developer guide §layers).
    offenders = {}
    for _, path, _ in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ClassDef):
                        rel = path.relative_to(ROOT).as_posix()
                        offenders.setdefault(rel, set()).add(inner.name)
    assert offenders == {}


def _lazy_targets() -> dict:
    """``(face, name) -> module`` of every face's lazy ``_PUBLIC`` mapping."""
    targets = {}
    for module, path, is_pkg in _modules():
        if not is_pkg:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not (
                isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) == "_PUBLIC" for t in node.targets)
            ):
                continue
            for key, value in zip(node.value.keys, node.value.values):
                relative = value.value
                level = len(relative) - len(relative.lstrip("."))
                base = module.split(".")[: len(module.split(".")) - level + 1]
                targets[module, key.value] = ".".join(base + [relative.lstrip(".")])
    return targets


def _import_graph() -> dict:
    modules = {module for module, _, _ in _modules()}
    lazy = _lazy_targets()
    graph = {module: set() for module in modules}
    for module, path, is_pkg in _modules():
        for target, name, _ in _imports(module, path, is_pkg):
            if f"{target}.{name}" in modules:
                graph[module].add(f"{target}.{name}")
            elif target in modules:
                graph[module].add(target)
                # ``from ..metrics import f`` runs the face's lazy import of
                # the module that defines ``f`` at once.
                if lazy.get((target, name)) in modules:
                    graph[module].add(lazy[target, name])
        graph[module].discard(module)
    return graph


def _circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_circles_are_found():
    # The detector itself, on a graph with one circle of three and a tail.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    # Imports inside functions count too: an import moved into a function to
    # break a circle leaves two modules that each need the other (the CLI's
    # ``UsageError`` and the streaming modules were such circles).
    assert _circles(_import_graph()) == []


def _floors() -> dict:
    """``{layer: floor}`` from the developer guide's stack (§layers), 0 lowest.

    The stack is the first literal block of the section: one floor a line,
    the top first; names that share a line (``utils, _lazy``) share a floor.
    """
    text = GUIDE.read_text(encoding="utf-8")
    block = text[text.index(".. _dev-layers:") :].split("::\n\n", 1)[1]
    names = []
    for line in block.splitlines():
        if not line.startswith("    "):
            break
        head = re.match(r"    (\w+(?:, \w+)*)\s{2,}", line)
        if head:
            names.append(head.group(1).split(", "))
    return {name: floor for floor, same in enumerate(reversed(names)) for name in same}


def test_the_guide_stack_names_every_layer_once():
    floors = _floors()
    layers = {_layer(module) for module, _, _ in _modules()}
    layers -= {"sklearn_hcal", "__main__"}  # the top: the package and `python -m`
    assert layers == set(floors), sorted(layers ^ set(floors))
    # The estimators' front end is one floor, right above the validation
    # layer and below every layer that defines an estimator.
    assert floors["_frontend"] == floors["_validation"] + 1
    for layer in ("_training", "calibration", "conformal", "perspectivist"):
        assert floors[layer] > floors["_frontend"], layer


def test_no_import_goes_up_a_floor():
    # Imports inside functions count too: a lazy import of a layer above is
    # an arrow up all the same (the front end's old lazy import of the
    # training layer's logits split it over two floors).
    floors = _floors()
    offenders = []
    for module, path, is_pkg in _modules():
        here = floors.get(_layer(module))
        if here is None:
            continue  # the root package and __main__ sit on top
        for target, name, line in _imports(module, path, is_pkg):
            there = floors.get(_layer(target))
            if there is not None and there > here:
                offenders.append(f"{module}:{line} -> {target}.{name}")
    assert offenders == [], "\n".join(offenders)


#: Lines past which a module says at its top why it stays one (developer
#: guide §modules-by-job): a guide for a reader, not a cap.
LONG_MODULE = 500


def test_long_modules_say_why_they_are_one():
    offenders = []
    for _, path, _ in _modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > LONG_MODULE and not any(
            line.startswith("Why one module:") for line in lines[:30]
        ):
            offenders.append(f"{path.relative_to(ROOT)} ({len(lines)} lines)")
    assert offenders == [], offenders


# -- the design in the repository -----------------------------------------------

_REF = re.compile(r"developer\s+guide\s+§([a-z0-9-]+)")
_ALSO = re.compile(r"developer\s+guide\s+§[a-z0-9-]+\s+and\s+§([a-z0-9-]+)")


def test_developer_guide_references_resolve():
    labels = set(re.findall(r"^\.\. _dev-([a-z0-9-]+):$", GUIDE.read_text(), re.M))
    assert labels, "no section labels in the developer guide"
    unresolved = []
    for folder in ("sklearn_hcal", "tests", "examples", "benchmarks", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in {".py", ".rst", ".md"} or "_build" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            for ref in _REF.findall(text) + _ALSO.findall(text):
                if ref not in labels:
                    unresolved.append(f"{path.relative_to(ROOT)}: §{ref}")
    assert unresolved == [], unresolved


def test_no_reference_to_documents_outside_the_repository():
    pattern = re.compile(r"DECISIONS|SPEC\s*§|\.\./shared/SPEC")
    offenders = []
    for folder in ("sklearn_hcal", "tests", "examples", "benchmarks", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in {".py", ".rst", ".md"} or "_build" in path.parts:
                continue
            if path == Path(__file__):
                continue
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{i + 1}")
    assert offenders == [], offenders


def _top_level_names(path: Path) -> set:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _module_aliases(tree, paths: dict) -> dict:
    """``{local name: module}`` of the package's modules a file binds."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in paths:
                    aliases[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in paths:
                    aliases[alias.asname] = alias.name
    return aliases


def _passed_on(name: str, target: str, paths: dict) -> bool:
    """Whether ``target`` only re-binds ``name``, imported from elsewhere."""
    if target not in paths or name == "*":
        return False
    tpath, tpkg = paths[target]
    if tpkg or target.endswith("._shared") or _is_submodule(target, name):
        return False
    passed_on = {n for _, n, _ in _imports(target, tpath, tpkg)}
    return name not in _top_level_names(tpath) and name in passed_on


def test_names_are_imported_from_the_module_that_defines_them():
    # A chain of re-exports makes a reader follow a name through files that
    # only pass it on; faces (``__init__``) and declared ``_shared`` modules
    # are the only re-exporters. Tests, benchmarks and examples too: a module
    # that keeps a name "importable from here" for them is such a chain.
    paths = {module: (path, is_pkg) for module, path, is_pkg in _modules()}
    files = [(module, path, is_pkg) for module, (path, is_pkg) in paths.items()]
    for folder in ("tests", "benchmarks", "examples"):
        files += [
            (f"{folder}.{path.stem}", path, False)
            for path in sorted((ROOT / folder).rglob("*.py"))
        ]
    offenders = []
    for module, path, is_pkg in files:
        where = path.relative_to(ROOT)
        for target, name, line in _imports(module, path, is_pkg):
            if _passed_on(name, target, paths):
                offenders.append(f"{where}:{line} {name} from {target}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _module_aliases(tree, paths)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _passed_on(node.attr, aliases[node.value.id], paths)
            ):
                target = aliases[node.value.id]
                offenders.append(f"{where}:{node.lineno} {node.attr} from {target}")
    assert offenders == [], "\n".join(offenders)


def test_no_module_keeps_unused_imports_for_others():
    # An import kept under ruff's F401 exemption keeps a name "importable
    # from here" without a use: only faces and ``_shared`` modules re-export.
    offenders = [
        str(path.relative_to(ROOT))
        for module, path, is_pkg in _modules()
        if not is_pkg
        and not module.endswith("._shared")
        and "noqa: F401" in path.read_text(encoding="utf-8")
    ]
    assert offenders == [], offenders
