"""The documentation site: `mkdocs build --strict` passes, and Chromium renders its pages (issue 39).

Strict mode turns every broken link, missing anchor, page left out of the navigation and
unresolved API reference into a failure. The built pages are then loaded in headless
Chromium (as the trajectory browser's test does), which runs Material's own scripts: the
rendered DOM must show the page's headings, the site's navigation and the Mermaid block.
Mermaid's script itself comes from a CDN that a machine without network cannot reach (and
draws into a closed shadow root), so the test checks the diagram's source is on the rendered
page, in the block Material hands to Mermaid.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest
from browser import chromium

ROOT = Path(__file__).resolve().parents[2]
NAV = ["Getting started", "The CLI", "Evaluation", "Reference", "Changelog", "LATS"]


def need_mkdocs() -> None:
    """Skip without the docs tools (the `docs` extra, part of `dev`); fail under CI=true."""
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError as exc:
        reason = f"the docs extra is not installed ({exc.name}): pip install 'wikireact[docs]'"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + "; CI installs it with dev")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    need_mkdocs()
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(target)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return target


def text(html: str) -> str:
    """The text of an HTML fragment: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@dataclass
class Page:
    """Headings, navigation labels and Mermaid sources of a rendered page."""

    headings: list[str]
    nav: set[str]
    mermaid: list[str]

    @classmethod
    def parse(cls, dom: str) -> Page:
        """Read them from a page's DOM (as Chromium dumped it)."""
        headings = [text(h) for h in re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", dom, re.S)]
        links = re.findall(r'class="md-nav__link[^"]*"[^>]*>(.*?)</(?:a|label)>', dom, re.S)
        diagrams = re.findall(r"<pre[^>]*>\s*<code>((?:---|graph TD;).*?)</code>", dom, re.S)
        return cls(headings, {text(link) for link in links}, [unescape(d) for d in diagrams])


def render(page: Path, tmp_path: Path) -> Page:
    """Load a built page in headless Chromium and parse the DOM its scripts left."""
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return Page.parse(done.stdout)


def test_strict_build_makes_every_page(site: Path) -> None:
    for page in ["index.html", "evaluation/index.html", "agents/lats/index.html"]:
        assert (site / page).is_file()
    reference = (site / "reference" / "index.html").read_text(encoding="utf-8")
    assert "build_graph" in reference and "compact_tool" in reference  # from the docstrings
    assert "Version policy" in (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert not (site / "_moved" / "index.html").exists()


def test_home_page_renders_headings_navigation_and_mermaid(site: Path, tmp_path: Path) -> None:
    page = render(site / "index.html", tmp_path)
    assert any("wikireact" in heading for heading in page.headings)
    assert set(NAV) <= set(page.nav)
    assert page.mermaid and "parse -.-> act" in page.mermaid[0]
    built = (site / "index.html").read_text(encoding="utf-8")
    assert '<pre class="mermaid"><code>graph TD;' in built  # what Material hands to Mermaid


def test_evaluation_page_renders(site: Path, tmp_path: Path) -> None:
    page = render(site / "evaluation" / "index.html", tmp_path)
    assert any(heading.startswith("Evaluation") for heading in page.headings)
    assert any("FEVER" in heading for heading in page.headings)
    assert set(NAV) <= set(page.nav)


def test_agent_page_renders_its_graph(site: Path, tmp_path: Path) -> None:
    page = render(site / "agents" / "lats" / "index.html", tmp_path)
    assert any("LATS" in heading for heading in page.headings)
    assert page.mermaid and "select -.-> expand" in page.mermaid[-1]


def test_llms_txt_lists_every_page_as_the_site_has_it() -> None:
    """llms.txt is what `.ci/llms_txt.py` makes of the current pages (rerun it after an edit)."""
    spec = importlib.util.spec_from_file_location("llms_txt", ROOT / ".ci" / "llms_txt.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "llms.txt").read_text(encoding="utf-8") == module.render()
    assert len(module.nav_pages()) == 21
