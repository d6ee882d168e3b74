"""Shared fixtures: the real game data, the trnbake command line, optional GIS packages.

The game files are read in place from ``../shared/data/swg`` beside the repository (never
copied into it). As in the Rust tests, a missing file or tool is a printed skip on a
developer's machine and a failure when ``CI=true``, so CI cannot pass by skipping.
"""

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_ROOT = REPO / ".." / "shared" / "data" / "swg"
TATOOINE = DATA_ROOT / "terrain" / "tatooine.trn"


def in_ci() -> bool:
    return os.environ.get("CI") == "true"


def missing(what: str) -> None:
    """Skips the test, or fails it in CI, because ``what`` is not there."""
    if in_ci():
        pytest.fail(f"{what} (CI=true: a missing input is a failure)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def tatooine_path() -> Path:
    if not TATOOINE.is_file():
        missing(f"test data {TATOOINE} is missing")
    return TATOOINE


@pytest.fixture(scope="session")
def tatooine(tatooine_path):
    import trnbake

    return trnbake.Terrain(tatooine_path, data_root=DATA_ROOT)


@pytest.fixture(scope="session")
def cli() -> Path:
    """The trnbake binary: $TRNBAKE_BIN, else the release build of the workspace (which CI's
    ``cargo test --release`` has built before the Python tests run); built when missing."""
    if os.environ.get("TRNBAKE_BIN"):
        return Path(os.environ["TRNBAKE_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    exe = target / "release" / "trnbake"
    if not exe.is_file():
        subprocess.run(["cargo", "build", "--release", "-p", "trnbake"], cwd=REPO, check=True)
    return exe


@pytest.fixture(scope="session")
def rasterio():
    try:
        import rasterio
    except ImportError:
        missing("rasterio is not installed (pip install rasterio)")
    return rasterio
