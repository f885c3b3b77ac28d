"""The package's public face: `wikireact` exports its API lazily, and its submodules stay modules.

Each check runs in a fresh interpreter, so what one import pulls in is seen alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import wikireact

HEAVY = ("langgraph", "langchain_core", "langchain", "pydantic", "typer", "rich")


def fresh(code: str) -> str:
    """Run `code` in a new interpreter; return what it prints."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def loaded_after(statement: str) -> set[str]:
    """The heavy top-level packages in `sys.modules` after `statement` in a new interpreter."""
    out = fresh(
        f"import sys\n{statement}\n"
        "import json; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    return set(json.loads(out)) & set(HEAVY)


@pytest.mark.parametrize(
    "statement",
    [
        "import wikireact",
        "import wikireact.errors",
        "import wikireact.context",
        "from wikireact.context import Context; Context()",
        "from wikireact.errors import ConfigurationError",
    ],
)
def test_errors_and_settings_import_without_langgraph(statement: str) -> None:
    assert loaded_after(statement) == set()


def test_the_graph_submodule_is_the_module_not_the_compiled_graph() -> None:
    out = fresh(
        "import wikireact.graph\n"
        "print(type(wikireact.graph).__name__, callable(wikireact.graph.run_to_end), "
        "type(wikireact.graph.graph).__name__)"
    )
    assert out.split() == ["module", "True", "EpisodeGraph"]


@pytest.mark.parametrize(
    "first", ["pass", "import wikireact.graph", "from wikireact import build_graph"]
)
def test_from_wikireact_import_graph_gives_the_module_whatever_was_imported_before(
    first: str,
) -> None:
    out = fresh(f"{first}\nfrom wikireact import graph\nprint(graph.__name__)")
    assert out.strip() == "wikireact.graph"


def test_every_exported_name_resolves() -> None:
    assert sorted(wikireact.__all__) == sorted(wikireact._EXPORTS)
    for name in wikireact.__all__:
        assert getattr(wikireact, name) is not None, name
        assert name in dir(wikireact)
    assert not isinstance(wikireact.build_graph, types.ModuleType)
    from wikireact import Context, build_graph, builder

    assert callable(build_graph) and Context().max_steps >= 1 and builder is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        wikireact.no_such_thing  # noqa: B018
    with pytest.raises(ImportError):
        from wikireact import no_such_thing  # noqa: F401
