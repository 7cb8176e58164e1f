"""Fixtures of the edgegan Python tests: the shipped models, and the command-line tools
whose output the module must equal.

The tests import the installed module (pip install ., or the wheel scripts/test.sh
builds). The CLI comparisons need the tools: EDGEGAN_CLI and EDGEGAN_CONVERT name
them (scripts/test_package.sh sets both); otherwise build/cli/edgegan and
build/converter/edgegan-convert are used, and without those these tests are skipped.
"""

import os
import pathlib
import subprocess

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MODELS = REPO / "models"


def _tool(variable, default):
    path = os.environ.get(variable)
    if path:
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"{variable}={path} is not an executable")
        return path
    path = REPO / default
    return str(path) if os.access(path, os.X_OK) else None


@pytest.fixture(scope="session")
def cli():
    path = _tool("EDGEGAN_CLI", "build/cli/edgegan")
    if path is None:
        pytest.skip("no edgegan CLI: set EDGEGAN_CLI or build it (scripts/build.sh)")
    return path


@pytest.fixture(scope="session")
def convert_cli():
    path = _tool("EDGEGAN_CONVERT", "build/converter/edgegan-convert")
    if path is None:
        pytest.skip("no edgegan-convert: set EDGEGAN_CONVERT or build it (scripts/build.sh)")
    return path


def run_tool(*args):
    """Runs a tool and returns its stdout; a failure shows the tool's stderr."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          env={**os.environ, "OMP_WAIT_POLICY": "passive"})
    assert done.returncode == 0, f"{args[0]} failed: {done.stderr}"
    return done.stdout


@pytest.fixture(scope="session")
def sevens():
    """32 MNIST-style sevens, float32 NCHW in -1..1 (the few-shot sample's data)."""
    return np.load(MODELS / "few_shot" / "sevens_32.npy")
