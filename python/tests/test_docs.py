"""The example of docs/src/python.md runs as written: its Python blocks in order, in one
namespace, in a scratch folder, with the repository-relative data path made absolute. The
plotting block runs on matplotlib's Agg backend when matplotlib is installed, and is left
out (the bake and the rasterio write still run) when it is not."""

import re

import numpy as np
import pytest

from conftest import DATA_ROOT, REPO

DOC = REPO / "docs" / "src" / "python.md"


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_docs_example_runs(tatooine_path, rasterio, tmp_path, monkeypatch):
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) == 3, "the example's bake, plot and write blocks"
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display in tests
        plotting = True
    except ImportError:
        plotting = False
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for code in blocks:
        if "matplotlib" in code and not plotting:
            continue
        code = code.replace("../shared/data/swg", DATA_ROOT.resolve().as_posix())
        exec(compile(code, str(DOC), "exec"), namespace)
    b = namespace["b"]
    with rasterio.open(tmp_path / "tatooine-heights.tif") as ds:
        assert np.array_equal(ds.read(1), b.arrays["height"])
        assert tuple(ds.transform.to_gdal()) == b.transform
        assert ds.crs == rasterio.crs.CRS.from_wkt(b.crs)
    if plotting:
        assert (tmp_path / "tatooine-heights.png").stat().st_size > 1000
    else:
        pytest.skip("matplotlib is not installed: the plotting block did not run")
