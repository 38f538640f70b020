"""Why a window cannot open is said in words, instead of Qt's abort."""
import ctypes
import subprocess
import sys

from app import gui


def test_no_display_is_explained(monkeypatch):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert "no display found" in gui.display_problem()


def test_a_missing_xcb_library_is_named(monkeypatch):
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")

    def refuse(path, *args, **kwargs):
        raise OSError("libxcb-icccm.so.4: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(ctypes, "CDLL", refuse)
    problem = gui.display_problem()
    assert "libxcb-icccm.so.4" in problem and "apt install" in problem


def test_an_explicit_platform_is_trusted(monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.delenv("DISPLAY", raising=False)
    assert gui.display_problem() is None


def test_the_app_exits_with_the_reason_not_an_abort(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "TICKBENCH_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "app"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("tickbench: cannot open the window: no display found")
