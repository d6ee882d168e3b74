"""The examples of docs/src/python.md run as written: the example's Python blocks in order,
in one namespace, in a scratch folder, with the repository-relative data path made absolute.
The plotting block runs on matplotlib's Agg backend when matplotlib is installed, and is left
out (the bake and the rasterio write still run) when it is not. The LocalCluster block of
"Planets at scale" runs on its own, as a script's main module."""

import re

import numpy as np
import pytest

from conftest import DATA_ROOT, REPO

DOC = REPO / "docs" / "src" / "python.md"


SCALE = "## Planets at scale"


def python_blocks(text):
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_docs_example_runs(tatooine_path, rasterio, tmp_path, monkeypatch):
    blocks = python_blocks(DOC.read_text(encoding="utf-8").split(SCALE)[0])
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


def test_docs_local_cluster_runs(tatooine_path, rasterio, tmp_path, monkeypatch):
    try:
        import dask.distributed  # noqa: F401
        import rioxarray  # noqa: F401
        import xarray
        import zarr  # noqa: F401
    except ImportError as e:
        from conftest import missing

        missing(f"the [xarray] extra and zarr are not installed: {e}")
    blocks = python_blocks(DOC.read_text(encoding="utf-8").split(SCALE)[1])
    assert len(blocks) == 1, "the LocalCluster block"
    monkeypatch.chdir(tmp_path)
    code = blocks[0].replace("../shared/data/swg", DATA_ROOT.resolve().as_posix())
    namespace = {"__name__": "__main__"}
    exec(compile(code, str(DOC), "exec"), namespace)
    ds = namespace["ds"]
    with rasterio.open(tmp_path / "tatooine-8m.tif") as f:
        assert f.tags(ns="IMAGE_STRUCTURE").get("LAYOUT") == "COG"
        assert tuple(f.transform.to_gdal()) == tuple(ds.attrs["geotransform"])
        assert f.shape == (2049, 2049)
    back = xarray.open_zarr(tmp_path / "tatooine-8m.zarr")
    assert sorted(back.data_vars) == ["env_id", "height", "shader_id"]
    assert back.height.shape == (2049, 2049)
