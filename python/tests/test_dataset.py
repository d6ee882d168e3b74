"""trnbake.open_dataset and the xarray backend against the trnbake command line, on the real
Tatooine terrain: a LocalCluster of two worker processes computes the whole planet at 8 m,
every default map, in 512² chunks, and every variable equals the command line's bake of the
same grid; a window computes only the chunks it touches; the graph pickles and its names are
deterministic; ``xr.open_dataset(engine="trnbake")`` gives the same Dataset and its heights
write as a valid COG."""

import json
import pickle
import subprocess
import warnings

import numpy as np
import pytest

import trnbake

from conftest import DATA_ROOT, missing

SPACING = 8
CHUNKS = {"y": 512, "x": 512}
SMALL = (-1024.0, -1024.0, 1024.0, 1024.0)


@pytest.fixture(scope="module")
def xr():
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
        import rioxarray  # noqa: F401
        import xarray
    except ImportError as e:
        missing(f"the [xarray] extra is not installed (pip install './python[xarray]'): {e}")
    return xarray


@pytest.fixture(scope="module")
def client(xr):
    from dask.distributed import Client, LocalCluster

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Port 8787 is already in use" and the like
        cluster = LocalCluster(n_workers=2, processes=True, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def cli_planet(tmp_path_factory, tatooine_path, cli):
    """The command line's bake of the whole planet at 8 m, every default map."""
    out = tmp_path_factory.mktemp("cli-8m")
    subprocess.run(
        [str(cli), "bake", str(tatooine_path), "--data-root", str(DATA_ROOT), "--spacing", str(SPACING), "--maps", "auto",
         "--format", "tif", "-o", str(out), "--backend", "cpu", "-q"],
        check=True,
    )
    return out


def read(rasterio, path):
    with warnings.catch_warnings():
        # A PNG without a world file (the engines' splat maps) carries no georeferencing.
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with rasterio.open(path) as ds:
            return ds.read()


def test_planet_on_a_local_cluster_equals_cli(client, cli_planet, tatooine_path, rasterio):
    ds = trnbake.open_dataset(tatooine_path, data_root=DATA_ROOT, spacing=SPACING, variables="auto", chunks=CHUNKS)
    assert ds.sizes["y"] == ds.sizes["x"] == 2049
    assert ds.height.data.chunksize == (512, 512) and ds.height.data.npartitions == 25
    expected = ["height", "normals", "shader_id", "splat_weights"]
    expected += [f"flora_{c}_{k}" for c in ["collidable", "noncollidable", "radial_near", "radial_far"] for k in ["id", "density"]]
    expected += ["water_height", "water_mask", "env_id", "color", "exclude", "passable"]
    assert sorted(ds.data_vars) == sorted(expected)
    a = ds.compute()  # on the cluster: Client() made itself the default scheduler
    cli = cli_planet

    def tif(name):
        with rasterio.open(cli / name) as f:
            assert tuple(f.transform.to_gdal()) == tuple(ds.attrs["geotransform"])
            return f.read(1)

    with rasterio.open(cli / "height.tif") as f:
        # Georeferencing: GDAL's transform and CRS of the CLI's GeoTIFF, as attributes and for rioxarray.
        assert tuple(f.transform.to_gdal()) == tuple(ds.attrs["geotransform"])
        assert f.crs.to_wkt() == ds.attrs["crs_wkt"]
        assert ds.rio.crs == f.crs
        assert tuple(ds.rio.transform().to_gdal()) == tuple(f.transform.to_gdal())
        # Post-centred world coordinates, north row first.
        assert a.x.values[0] == f.transform.c + SPACING / 2 and a.y.values[0] == f.transform.f - SPACING / 2
        # Heights bit for bit.
        assert np.array_equal(a.height.values.view(np.uint32), f.read(1).view(np.uint32))

    for name in ["shader_id", "env_id", "flora_collidable_id", "flora_noncollidable_id", "flora_radial_near_id", "flora_radial_far_id"]:
        assert a[name].dtype == np.int32
        assert np.array_equal(a[name].values, tif(f"{name}.tif")), name
    assert np.array_equal(a.water_height.values, tif("water_height.tif"), equal_nan=True)
    for c in ["collidable", "noncollidable", "radial_near", "radial_far"]:
        # The PNG holds round(p · 65535) (Rust rounds halves away from zero).
        density = a[f"flora_{c}_density"].values.astype(np.float64)
        assert np.array_equal(np.floor(density * 65535 + 0.5), read(rasterio, cli / f"flora_{c}_density.png")[0]), c
    assert np.array_equal(a.color.values, read(rasterio, cli / "color.png"))
    for name in ["exclude", "passable", "water_mask"]:
        assert np.array_equal(np.where(a[name].values, 255, 0), read(rasterio, cli / f"{name}.png")[0]), name
    # normals.png: x, z, y of the unit normal as (c · 0.5 + 0.5) · 255 in float32, rounded.
    n = (a.normals.sel(component=["x", "z", "y"]).values * np.float32(0.5) + np.float32(0.5)) * np.float32(255)
    assert np.array_equal(np.floor(n.astype(np.float64) + 0.5), read(rasterio, cli / "normals.png"))
    # Splat weights: one channel per shader family of the file; the CLI's splat_K.png channels
    # hold the families that claim a post, as bytes summing to 255 (each within 1 of w · 255);
    # every other family weighs 0 everywhere.
    legend = json.loads((cli / "splat_legend.json").read_text())["channels"]
    w = a.splat_weights
    assert list(w.shader_family.values) == sorted(e["id"] for e in json.loads(w.attrs["legend"]))
    claimed = []
    for e in legend:
        png = read(rasterio, cli / e["image"])["rgba".index(e["channel"])].astype(np.float64)
        assert np.abs(png - w.sel(shader_family=e["family_id"]).values * 255).max() <= 1.0, e
        claimed.append(e["family_id"])
    others = [f for f in w.shader_family.values if f not in claimed]
    assert not w.sel(shader_family=others).values.any()
    total = w.values.sum(axis=0)
    assert np.allclose(total[a.shader_id.values > 0], 1.0, atol=1e-5)


def test_a_window_computes_only_its_chunks(client, tatooine_path, tatooine):
    from dask.distributed import get_task_stream

    ds = trnbake.open_dataset(tatooine_path, data_root=DATA_ROOT, spacing=SPACING, chunks=CHUNKS)
    # x −1000..1000 and z 1000..−1000 (north first) lie in chunk columns and rows 1 and 2 of 5.
    sub = ds.height.sel(x=slice(-1000, 1000), y=slice(1000, -1000))
    with get_task_stream(client) as ts:
        h = sub.compute()
    windows = {str(t["key"]) for t in ts.data if "trnbake-window" in str(t["key"])}
    assert len(windows) == 4, sorted(windows)
    # The same posts as Terrain.bake of that region.
    b = tatooine.bake(region=(float(h.x[0]), float(h.y[-1]), float(h.x[-1]), float(h.y[0])), spacing=SPACING)
    assert np.array_equal(h.values, b.arrays["height"])
    assert tuple(b.transform) == (float(h.x[0]) - 4, 8.0, 0.0, float(h.y[0]) + 4, 0.0, -8.0)


def test_graph_pickles_with_deterministic_names(xr, tatooine_path):
    open_ = lambda **kw: trnbake.open_dataset(tatooine_path, data_root=DATA_ROOT, region=SMALL, chunks=128, **kw)  # noqa: E731
    ds = open_(spacing=8, variables=["height", "splat"])
    again = open_(spacing=8, variables=["height", "splat"])
    assert ds.height.data.name == again.height.data.name and ds.height.data.name.startswith("trnbake-height-")
    assert set(ds.height.data.__dask_graph__()) == set(again.height.data.__dask_graph__())
    assert open_(spacing=4).height.data.name != ds.height.data.name
    back = pickle.loads(pickle.dumps(ds))
    assert back.height.data.name == ds.height.data.name
    # Computed in this process from the unpickled graph (the synchronous scheduler).
    import dask

    with dask.config.set(scheduler="synchronous"):
        h = back.height.values
        w = back.splat_weights.values
    b = trnbake.Terrain(tatooine_path, DATA_ROOT).bake(region=SMALL, spacing=8, maps=["height", "splat"])
    assert np.array_equal(h, b.arrays["height"])
    for k, f in enumerate(b.splat_families):
        assert np.array_equal(w[list(back.shader_family.values).index(f)], b.arrays["splat_weights"][..., k])
    with pytest.raises(ValueError, match="unknown variable"):
        open_(variables=["heigth"])


def test_xarray_backend_and_cog(xr, tatooine_path, rasterio, tmp_path):
    kw = dict(data_root=DATA_ROOT, spacing=SPACING, region=SMALL, variables=["height", "env"])
    ds = xr.open_dataset(tatooine_path, engine="trnbake", chunks=CHUNKS, **kw)
    ours = trnbake.open_dataset(tatooine_path, chunks=CHUNKS, **kw)
    assert ds.height.chunks is not None  # lazy, Dask-backed
    import dask

    with dask.config.set(scheduler="threads"):
        xr.testing.assert_identical(ds.compute(), ours.compute())
        ds.height.rio.to_raster(tmp_path / "h.tif", driver="COG")
        ours.to_zarr(tmp_path / "h.zarr") if _has_zarr() else None
    with rasterio.open(tmp_path / "h.tif") as f:
        assert f.tags(ns="IMAGE_STRUCTURE").get("LAYOUT") == "COG"
        assert tuple(f.transform.to_gdal()) == tuple(ds.attrs["geotransform"])
        assert f.crs.to_wkt() == ds.attrs["crs_wkt"]
        assert np.array_equal(f.read(1), ours.height.values)
    if _has_zarr():
        back = xr.open_zarr(tmp_path / "h.zarr")
        assert np.array_equal(back.height.values, ours.height.values)
        assert np.array_equal(back.env_id.values, ours.env_id.values) and back.env_id.dtype == np.int32


def _has_zarr():
    try:
        import zarr  # noqa: F401
    except ImportError:
        return False
    return True
