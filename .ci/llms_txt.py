"""Write llms.txt (https://llmstxt.org) from the site's navigation and pages.

Each page of mkdocs.yml's `nav` becomes a link to its Markdown source with its lead (the
first paragraph after its title); `tests/package/test_docs_site.py` checks that llms.txt is current.
Run: `python .ci/llms_txt.py` from the repository root (rewrites llms.txt).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = """# wikireact

> The ReAct agent (Yao et al. 2022) over Wikipedia as an explicit, checkpointed LangGraph state
> machine, with sibling agents ReWOO, Plan-and-Execute, Reflexion and LATS, HotpotQA and FEVER
> evaluations, SQLite and PostgreSQL checkpoint stores, and an offline default (a local model
> and a Wikipedia snapshot: no key, no network).

The links below are the Markdown sources of the documentation site, in its reading order.
"""


def nav_pages() -> list[tuple[str, str, str]]:
    """(section, title, path) for each page of mkdocs.yml's nav, read without a YAML parser."""
    pages = []
    section = "Documentation"
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for line in re.split(r"^nav:$", config, flags=re.M)[1].splitlines():
        if line and not line.startswith(" "):
            break
        entry = re.match(r"^(\s*)- ([^:]+):\s*(\S*)$", line)
        if not entry:
            continue
        indent, title, path = entry.groups()
        if not path:
            section = title
            continue
        else:
            if len(indent) <= 2 and section != "Documentation":
                section = "Operations and reference"  # the top-level pages after a group
            pages.append((section, title, path))
    return pages


def lead(page: Path) -> str:
    """Return a page's lead: its first paragraph of prose after the title, on one line."""
    text = re.sub(r"<!--.*?-->", "", page.read_text(encoding="utf-8"), flags=re.S)
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        if block and not block.startswith(("#", "```", "|", "-", ":::", "--8<--", "<")):
            return block
    return ""


def render() -> str:
    """Return the whole llms.txt."""
    out = [HEADER]
    current = None
    for section, title, path in nav_pages():
        if section != current:
            out.append(("" if current is None else "\n") + f"## {section}\n")
            current = section
        link = "CHANGELOG.md" if path == "changelog.md" else f"docs/{path}"  # an include
        out.append(f"- [{title}]({link}): {lead(ROOT / link)}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    (ROOT / "llms.txt").write_text(render(), encoding="utf-8")
    sys.stdout.write("wrote llms.txt\n")
