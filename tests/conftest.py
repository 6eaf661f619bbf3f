"""Fixtures shared across test files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[1] / "dist" / "models"
# The suite takes about 25 minutes on 2 cores and CI stops at 90, printing nothing more: past
# this, the tests left are skipped and the run ends with its failures printed (a hang that
# pytest-timeout ends can leave the browser driver hung for each later test in turn).
SUITE_LIMIT_S = 70 * 60
STARTED = time.monotonic()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if time.monotonic() - STARTED > SUITE_LIMIT_S:
        pytest.exit(f"the suite ran past {SUITE_LIMIT_S // 60} minutes: stopped at "
                    f"{item.nodeid}", returncode=3)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A failure is printed when it happens, its end first in 1,500 characters: CI keeps
    the head of the output only, and a run stopped early prints no summary."""
    if not report.failed or not _config:
        return
    reporter = _config[0].pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        text = str(report.longrepr)
        reporter.write_line(f"\nFAILED {report.nodeid} ({report.when}): ...{text[-1500:]}")


_config: list[pytest.Config] = []


def pytest_configure(config: pytest.Config) -> None:
    _config.append(config)


@pytest.fixture(scope="session")
def e5():
    """The real multilingual-e5-small (q8), loaded once per session; skips the test when the
    build has not produced dist/models or ONNX Runtime / tokenizers are not installed."""
    if not (MODELS / "manifest.json").exists():
        pytest.skip("dist/models/manifest.json missing: run `python3 build.py` to build the "
                    "models")
    pytest.importorskip("onnxruntime", reason="the e5 tests need ONNX Runtime (cpython extra)")
    pytest.importorskip("tokenizers", reason="the e5 tests need tokenizers (cpython extra)")
    from omoide.embeddings.onnx_provider import OnnxEmbedder

    return OnnxEmbedder.from_model_id("omoide/multilingual-e5-small", "q8", threads=1)
