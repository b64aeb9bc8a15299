"""Shared fixtures of the tessel Python tests: the CLI to compare with, the source tree."""

import json
import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("TESSEL_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
TESSEL_BIN = os.environ.get("TESSEL_BIN", str(SOURCE_DIR / "build/default/tools/tessel/tessel"))
CONFIG_DIR = SOURCE_DIR / "configs" / "hw"


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: every zoo model (ctest label slow/zoo)")


def run_cli(*args, cwd=None):
    """Runs the tessel CLI; fails the test with its stderr when it fails."""
    done = subprocess.run([TESSEL_BIN, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd)
    assert done.returncode == 0, f"tessel {' '.join(map(str, args))}: {done.stderr}"
    return done.stdout


def without(document, *keys):
    """A JSON document (text) as a dict without `keys` (wall-clock fields)."""
    value = json.loads(document) if isinstance(document, str) else document
    for key in keys:
        value.pop(key, None)
    return value


@pytest.fixture(scope="session")
def cli():
    assert os.access(TESSEL_BIN, os.X_OK), f"no tessel executable at {TESSEL_BIN}"
    return run_cli
