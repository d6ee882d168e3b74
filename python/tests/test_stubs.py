"""The type stubs (trnbake/_native.pyi) match the native module: mypy's stubtest compares
every name, signature and class flag with what the module has at run time."""

import subprocess
import sys

import pytest


def test_stubs_match_the_module():
    pytest.importorskip("mypy", reason="mypy is not installed (pip install mypy)")
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "trnbake"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
