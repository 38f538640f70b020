"""A wheel built from the repository carries the shipped resources: a non-editable install has
the published figures, the scenario presets and the icon."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_an_installed_wheel_has_the_published_figures_and_presets(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                            str(REPO)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("tickbench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {p.relative_to(REPO).as_posix() for p in (REPO / "resources").rglob("*")
               if p.is_file() and p.suffix in (".json", ".toml", ".svg")}
    assert shipped and shipped <= set(names)
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                                str(target), str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr[-2000:]
    # the installed copy, not the repository, answers (run from elsewhere, the install first)
    probe = ("import workloads, workloads.results.references as r, workloads.paths as p; "
             "print(workloads.__file__); print(p.resources_dir()); print(len(r.load_references())); "
             "print(sorted(x.name for x in (p.resources_dir() / 'scenarios').glob('*.toml')))")
    env = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    module, resources, count, presets = done.stdout.strip().splitlines()
    assert module.startswith(str(target)) and resources.startswith(str(target))
    assert int(count) > 100 and "quick_start.toml" in presets
