"""Every test runs in its own environment (tests/conftest.py's autouse `isolated_env`)."""

from __future__ import annotations

import os
from pathlib import Path

from wikireact._paths import data_dir as wikireact_data_dir


def test_each_test_has_its_own_data_dir_and_no_outside_setting(tmp_path: Path) -> None:
    # A WIKIREACT_MODEL or GROQ_API_KEY in the developer's shell must not change a result,
    # and no test may write into the developer's data dir.
    assert wikireact_data_dir() == tmp_path / "data"
    # conftest sets two itself: the data dir, and verify_finish off (the paper's protocol;
    # tests/evidence turns it on, as `ask` and the served graph have it by default)
    own = {"WIKIREACT_DATA_DIR", "WIKIREACT_VERIFY_FINISH"}
    outside = [n for n in os.environ if n.startswith("WIKIREACT_") and n not in own]
    assert outside == [] and "GROQ_API_KEY" not in os.environ
    assert os.environ["WIKIREACT_VERIFY_FINISH"] == "off"
