"""The package's imports flow one way: cli -> cluster -> {ansible (the runner), results}; views -> results.
Read from the source with `ast`, so a new import that breaks a layer fails here, not in a review."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "horovod_cluster"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, str | None]]:
    """(imported module, the function it is imported in or None at module level) for each import."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: list[tuple[str, str | None]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = package.rsplit(".", child.level - 1)[0] if child.level else ""
                module = ".".join(filter(None, [base, child.module]))
                # `from . import x` names a module too
                found.extend((f"{module}.{alias.name}", function) for alias in child.names)
            visit(child, function)

    visit(ast.parse(path.read_text()), None)
    return found


GRAPH = {module_name(path): imports(path) for path in PACKAGE.rglob("*.py")}


def within(target: str, layer: str) -> bool:
    return target == layer or target.startswith(layer + ".")


def offending(modules: list[str], layer: str, anywhere: bool = True) -> list[str]:
    return [f"{module} imports {target}" + (f" in {function}()" if function else "")
            for module in modules for target, function in GRAPH[module]
            if within(target, layer) and (anywhere or function is None)]


def members(layer: str) -> list[str]:
    return [module for module in GRAPH if within(module, layer)]


def test_the_graph_sees_the_layers():
    assert {"horovod_cluster.cli", "horovod_cluster.results", "horovod_cluster.ansible.runner",
            "horovod_cluster.views.junit", "horovod_cluster.sandbox"} <= GRAPH.keys()
    assert offending(["horovod_cluster.cluster"], "horovod_cluster.ansible.runner", anywhere=False)


def test_results_and_views_never_import_the_runner():
    model = ["horovod_cluster.results", "horovod_cluster.outcome", *members("horovod_cluster.views")]
    assert offending(model, "horovod_cluster.ansible") == []


def test_the_runner_imports_no_result_view_or_cluster():
    runner = members("horovod_cluster.ansible")
    for layer in ("horovod_cluster.results", "horovod_cluster.views", "horovod_cluster.cluster", "horovod_cluster.cli"):
        assert offending(runner, layer) == []


def test_results_import_no_view():
    """Only the documented `.to_junit()`/`.to_html()` reach a view, at call time."""
    late = [(target, function) for target, function in GRAPH["horovod_cluster.results"]
            if within(target, "horovod_cluster.views")]
    assert all(function in ("to_junit", "to_html") for _, function in late), late


def test_only_the_cli_shows_results():
    product = [m for m in GRAPH if not within(m, "horovod_cluster.views") and m not in (
        "horovod_cluster.cli", "horovod_cluster.results")]
    assert offending(product, "horovod_cluster.views") == []


def test_the_product_never_loads_the_sandbox():
    product = [m for m in GRAPH if not within(m, "horovod_cluster.sandbox") and m != "horovod_cluster.cli"]
    assert offending(product, "horovod_cluster.sandbox") == []
    assert offending(["horovod_cluster.cli"], "horovod_cluster.sandbox", anywhere=False) == []


def test_importing_the_cli_leaves_the_sandbox_out():
    code = "import sys, horovod_cluster.cli; print(sorted(m for m in sys.modules if 'sandbox' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
