"""The documentation: the MkDocs site builds strictly (a broken link, a missing anchor or a page left
out of the nav fails it), offline; the README stays a short front page whose links, like the docs',
never leave the repository; `.ci/run` runs exactly the README's test command; every screenshot is linked
from a page and named by scripts/render_screenshots.py, and a full-window one is 1280x800."""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
HTML_ATTR = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def links(page: Path) -> list[str]:
    """Every link and image target of a Markdown page, code blocks and code spans left out."""
    text = CODE_SPAN.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return [*INLINE_LINK.findall(text), *REFERENCE.findall(text), *HTML_ATTR.findall(text)]


def slug(heading: str) -> str:
    """GitHub's and Python-Markdown's anchor for a heading (lower case, punctuation dropped)."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def test_the_docs_site_builds_strictly_offline_without_a_warning(tmp_path):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True
    plugins = [p if isinstance(p, str) else next(iter(p)) for p in config.get("plugins", [])]
    assert set(plugins) <= {"search"}, f"only offline plugins: {plugins} (social, privacy... fetch)"
    assert config["theme"]["name"] == "material" and config["theme"].get("font") is False, \
        "system fonts: Material would link Google Fonts"
    for key in ("omitted_files", "not_found", "absolute_links", "unrecognized_links", "anchors"):
        assert config["validation"][key] == "warn", key
    # any network access would go to a closed port and fail
    env = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "NO_PROXY": ""}
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output, output
    assert (site / "index.html").is_file() and (site / "engines" / "duckdb" / "index.html").is_file()
    # the mutation table is included from tests/MUTATIONS.md, not copied
    assert "Claims and the deliberate bugs" in (site / "mutations" / "index.html").read_text(encoding="utf-8")


def test_every_docs_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages - listed == set(), "pages missing from mkdocs.yml's nav"
    assert listed - pages == set(), "nav entries without a page"


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the detail to docs/"


def test_no_readme_or_docs_link_leaves_the_repository():
    bad = []
    for page in PAGES:
        for target in links(page):
            where = f"{page.relative_to(ROOT)}: {target}"
            if SCHEME.match(target) or target.startswith(("/", "//")):
                bad.append(f"{where} (outside the repository)")
                continue
            path, _, anchor = target.partition("#")
            if not path:
                headings = {slug(h) for h in re.findall(r"^#+\s+(.*)$", FENCE.sub("", page.read_text()), re.M)}
                if anchor not in headings:
                    bad.append(f"{where} (no such heading)")
                continue
            resolved = (page.parent / path.split("?")[0]).resolve()
            if not resolved.is_relative_to(ROOT):
                bad.append(f"{where} (outside the repository)")
            elif not resolved.exists():
                bad.append(f"{where} (no such file)")
    assert not bad, "\n".join(bad)


def test_the_link_checker_sees_links_and_ignores_code(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](x.md) ![b](img/y.png \"t\") `[c](z.md)`\n```\n[d](w.md)\n```\n[e]: ../f.md\n"
                    "<img src=\"g.png\">\n")
    assert sorted(links(page)) == ["../f.md", "g.png", "img/y.png", "x.md"]


def test_ci_runs_exactly_the_readmes_test_command():
    readme = README.read_text(encoding="utf-8")
    after = readme.split("Run the whole test suite:", 1)[1]
    command = re.search(r"```bash\n(.+?)\n```", after, re.S).group(1).strip()
    assert "\n" not in command and "pytest" in command
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert command in ci, f".ci/run must run the README's test command:\n{command}"
    app = re.search(r"```bash\n(.+?)\n```", readme.split("Run the app on its embedded default", 1)[1], re.S)
    assert app.group(1).strip() == "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/tickbench"


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


def test_the_readmes_screenshot_is_the_window_at_1280x800_and_the_script_renders_that_size():
    shots = [t for t in links(README) if t.endswith(".png")]
    assert len(shots) == 1, f"the README shows one screenshot: {shots}"
    assert png_size(ROOT / shots[0]) == (1280, 800)
    script = (ROOT / "scripts" / "render_screenshots.py").read_text(encoding="utf-8")
    assert re.search(r'"--size", default="1280x800"', script)


SHOTS = DOCS / "screenshots"
FULL_WINDOW = re.compile(r"(main_window_.*|history|compare.*|engines_compare|suite_.*|import_footprint|demo_dark)\.png")


def test_every_screenshot_is_linked_regenerated_by_the_script_and_a_full_window_is_1280x800():
    """One script renders every picture the docs show, and no picture is left that nothing shows."""
    linked = {(page.parent / t).resolve() for page in PAGES for t in links(page) if t.endswith(".png")}
    shots = set(SHOTS.glob("*.png"))
    script = "".join(p.read_text(encoding="utf-8") for p in
                     [ROOT / "scripts" / "render_screenshots.py", *ROOT.glob("scripts/screenshot_*.py")])
    problems = [f"{p.name}: linked from no docs page nor the README" for p in sorted(shots - linked)]
    problems += [f"{p.relative_to(ROOT)}: linked but missing" for p in sorted(linked) if not p.exists()]
    for shot in sorted(shots):
        if not re.search(rf"[\"']{re.escape(shot.stem)}(\.png)?[\"']", script):   # a quoted file name
            problems.append(f"{shot.name}: not named in scripts/render_screenshots.py or its screenshot_*.py")
        if FULL_WINDOW.fullmatch(shot.name) and png_size(shot) != (1280, 800):
            problems.append(f"{shot.name}: {png_size(shot)}, not the full window at 1280x800")
    assert not problems, "\n".join(problems)
