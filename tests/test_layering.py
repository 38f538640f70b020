"""The layers stay apart (import-linter's contracts from pyproject.toml), no modules import one
another in a circle, and no module grows past 500 lines."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold():
    lint = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 8 kept, 0 broken" in result.stdout


def import_circles(packages=("workloads", "app", "widgets")) -> list[list[str]]:
    """Every group of modules that import one another in a circle, function-level imports
    included (a lazy import is still a dependency)."""
    import grimp

    graph = grimp.build_graph(*packages, cache_dir=None)
    ours = {m for m in graph.modules if m.split(".")[0] in packages}
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in ours) for m in ours}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:       # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in edges[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(ours):
        if module not in index:
            visit(module)
    return circles


def test_no_module_imports_itself_through_others():
    assert import_circles() == []


def test_the_circle_finder_finds_a_circle(tmp_path, monkeypatch):
    for name, imports in {"a": "from pkg_circle import b", "b": "def f():\n    from pkg_circle import a"}.items():
        (tmp_path / "pkg_circle").mkdir(exist_ok=True)
        (tmp_path / "pkg_circle" / f"{name}.py").write_text(imports + "\n")
    (tmp_path / "pkg_circle" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_circles(("pkg_circle",)) == [["pkg_circle.a", "pkg_circle.b"]]


MAX_MODULE_LINES = 500


def test_no_module_is_over_500_lines():
    long = {str(p.relative_to(ROOT)): n for p in sorted(ROOT.glob("*/**/*.py"))
            if p.parts[len(ROOT.parts)] in ("workloads", "app", "widgets")
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}


ENTRY_POINTS = {"app": {"__init__.py", "__main__.py", "gui.py", "self_test.py"}, "widgets": {"__init__.py"}}


def test_the_shell_sits_in_rooms_but_for_its_entry_points():
    """``app/`` and ``widgets/`` keep their modules in rooms (``app/cli/``, ``widgets/charts/``, ...):
    only the entry points sit at the top, and every room is a package that says what it holds."""
    for package, allowed in ENTRY_POINTS.items():
        top = {p.name for p in (ROOT / package).glob("*.py")}
        assert top == allowed, sorted(top - allowed)
        rooms = [p for p in (ROOT / package).iterdir() if p.is_dir() and p.name != "__pycache__"]
        assert len(rooms) >= 5
        for room in rooms:
            init = room / "__init__.py"
            assert init.is_file() and init.read_text(encoding="utf-8").startswith('"""'), room
