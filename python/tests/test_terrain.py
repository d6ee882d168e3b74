"""trnbake's Python package against the trnbake command line, on the real Tatooine terrain:
heights equal `trnbake sample`, bakes equal `trnbake bake --backend cpu` value for value, with
the same georeferencing as GDAL reads it from the command line's GeoTIFFs."""

import subprocess
import threading
import time

import numpy as np
import pytest

import trnbake

from conftest import DATA_ROOT

REGION = (-1024.0, -1024.0, 1022.0, 1022.0)
SURFACE_MAPS = ["height", "normals", "splat", "flora", "water", "env", "color", "exclude"]


def cli_bake(cli, trn, out, maps, spacing=16, region=REGION):
    subprocess.run(
        [str(cli), "bake", str(trn), "--data-root", str(DATA_ROOT), "--region", ",".join(f"{v:g}" for v in region),
         "--spacing", str(spacing), "--maps", ",".join(maps), "--format", "tif", "-o", str(out), "--backend", "cpu", "-q"],
        check=True,
    )


def test_sample_equals_cli(tatooine, tatooine_path, cli):
    rng = np.random.default_rng(15)
    # Quarter metres: exactly representable, so both sides read the same float32 coordinates.
    xs = np.round(rng.uniform(-8000, 8000, 500) * 4) / 4
    zs = np.round(rng.uniform(-8000, 8000, 500) * 4) / 4
    xs[0], zs[0] = 3528.0, -4804.0
    points = "x,z\n" + "".join(f"{x},{z}\n" for x, z in zip(xs, zs))
    out = subprocess.run([str(cli), "sample", str(tatooine_path), "--points", "-", "--data-root", str(DATA_ROOT)],
                         input=points, capture_output=True, text=True, check=True).stdout
    expected = [line.split(",")[2] for line in out.splitlines()]
    heights = tatooine.sample(xs, zs)
    assert heights.dtype == np.float32 and heights.shape == (500,)
    # The command line prints 4 decimals of the float32 height: so does Python, from the same value.
    assert [f"{h:.4f}" for h in heights] == expected
    assert expected[0] == "4.0399"  # the 0015 Tatooine vector (docs/src/library.md)


def test_sample_takes_array_likes(tatooine):
    one = tatooine.sample([3528.0], [-4804.0])
    assert tatooine.sample(3528, -4804).shape == ()
    assert tatooine.sample((3528,), np.array([-4804.0], dtype=np.float64))[0] == one[0]
    grid = tatooine.sample(np.zeros((2, 3)), np.ones((2, 3)))
    assert grid.shape == (2, 3) and grid.dtype == np.float32
    with pytest.raises(ValueError, match="same shape"):
        tatooine.sample([0.0, 1.0], [0.0])
    with pytest.raises(ValueError, match="finite"):
        tatooine.sample([float("nan")], [0.0])


def test_bake_equals_cli_geotiff(tatooine, tatooine_path, cli, rasterio, tmp_path):
    cli_bake(cli, tatooine_path, tmp_path, ["height"])
    b = tatooine.bake(region=REGION, spacing=16, maps=["height"], backend="cpu")
    h = b.arrays["height"]
    assert h.dtype == np.float32 and h.shape == b.shape == (128, 128)
    with rasterio.open(tmp_path / "height.tif") as ds:
        expected = ds.read(1)
        assert expected.shape == h.shape
        assert np.array_equal(h, expected, equal_nan=True)
        assert tuple(ds.transform.to_gdal()) == b.transform
        # GDAL reads the GeoKeys back as this very WKT, and as the same CRS.
        assert ds.crs.to_wkt() == b.crs
        assert rasterio.crs.CRS.from_wkt(b.crs) == ds.crs
    assert b.transform == (-1032.0, 16.0, 0.0, 1016.0, 0.0, -16.0)
    assert b.region == (-1024.0, -1024.0, 1008.0, 1008.0)
    assert "SWG tatooine local metres" in b.crs


def png(rasterio, path):
    import warnings

    with warnings.catch_warnings():
        # A PNG without a world file (the engines' splat maps) carries no georeferencing.
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with rasterio.open(path) as ds:
            return ds.read()


def test_surface_maps_equal_cli(tatooine, tatooine_path, cli, rasterio, tmp_path):
    cli_bake(cli, tatooine_path, tmp_path, SURFACE_MAPS)
    b = tatooine.bake(region=REGION, spacing=16, maps=SURFACE_MAPS)
    a = b.arrays

    def tif(name):
        with rasterio.open(tmp_path / name) as ds:
            assert tuple(ds.transform.to_gdal()) == b.transform
            return ds.read(1)

    assert np.array_equal(a["shader_id"], tif("shader_id.tif"))
    assert np.array_equal(a["env_id"], tif("env_id.tif"))
    assert np.array_equal(a["water_height"], tif("water_height.tif"), equal_nan=True)
    for c in ["collidable", "noncollidable", "radial_near", "radial_far"]:
        assert a[f"flora_{c}_id"].dtype == np.int32
        assert np.array_equal(a[f"flora_{c}_id"], tif(f"flora_{c}_id.tif"))
        # The PNG holds round(p · 65535) (Rust rounds halves away from zero).
        density = a[f"flora_{c}_density"].astype(np.float64)
        assert np.array_equal(np.floor(density * 65535 + 0.5), png(rasterio, tmp_path / f"flora_{c}_density.png")[0])
    assert np.array_equal(np.moveaxis(a["color"], 2, 0), png(rasterio, tmp_path / "color.png"))
    assert np.array_equal(np.where(a["exclude"], 255, 0), png(rasterio, tmp_path / "exclude.png")[0])
    assert np.array_equal(np.where(a["passable"], 255, 0), png(rasterio, tmp_path / "passable.png")[0])
    assert np.array_equal(np.where(a["water_mask"], 255, 0), png(rasterio, tmp_path / "water_mask.png")[0])
    # normals.png: x, z, y of the unit normal as (c · 0.5 + 0.5) · 255 in float32, rounded.
    n = (a["normals"][..., [0, 2, 1]] * np.float32(0.5) + np.float32(0.5)) * np.float32(255)
    assert np.array_equal(np.floor(n.astype(np.float64) + 0.5), np.moveaxis(png(rasterio, tmp_path / "normals.png"), 0, 2))
    # splat_0.png: the weights as bytes summing to 255 (largest remainder: each within 1).
    w = a["splat_weights"]
    assert w.shape[2] == len(b.splat_families) <= 4
    splat = np.moveaxis(png(rasterio, tmp_path / "splat_0.png"), 0, 2)[..., : w.shape[2]].astype(np.float64)
    assert np.abs(splat - w * 255).max() <= 1.0


def test_post_counts_and_defaults(tatooine):
    assert tatooine.bake(region=(0, 0, 10, 10), spacing=3).shape == (4, 4)
    assert tatooine.bake(region=(0, 0, 8, 8)).shape == (5, 5)  # the file's 2 m pole spacing
    whole = tatooine.bake(spacing=512)
    assert whole.shape == (33, 33) and whole.region == (-8192.0, -8192.0, 8192.0, 8192.0)
    assert list(whole.arrays) == ["height"]
    with pytest.raises(ValueError, match="region is empty"):
        tatooine.bake(region=(10, 0, 0, 10), spacing=1)
    with pytest.raises(ValueError, match="spacing"):
        tatooine.bake(region=(0, 0, 10, 10), spacing=0)


def test_bad_maps_and_backends(tatooine):
    with pytest.raises(ValueError, match="known maps are height, normals, splat"):
        tatooine.bake(region=(0, 0, 8, 8), maps=["height", "heigth"])
    for backend in ["gpu", "auto"]:
        with pytest.raises(ValueError, match="CPU"):
            tatooine.bake(region=(0, 0, 8, 8), backend=backend)


def test_missing_path_is_oserror(tmp_path):
    missing = tmp_path / "nowhere" / "naboo.trn"
    with pytest.raises(OSError) as e:
        trnbake.Terrain(missing)
    assert isinstance(e.value, FileNotFoundError)
    assert str(missing) in str(e.value) and e.value.filename == str(missing)
    with pytest.raises(IsADirectoryError, match=str(tmp_path)):
        trnbake.Terrain(tmp_path)


def test_text_file_is_valueerror(tmp_path):
    bad = tmp_path / "notes.trn"
    bad.write_text("These are not the droids you are looking for.\n")
    with pytest.raises(ValueError) as e:
        trnbake.Terrain(bad)
    msg = str(e.value)
    assert str(bad) in msg and "chunk" in msg and "byte offset 0" in msg


def test_missing_bitmap_is_oserror(tatooine_path, tmp_path):
    with pytest.raises(FileNotFoundError, match="moseisely_road_height.tga"):
        trnbake.Terrain(tatooine_path, data_root=tmp_path)
    # As --missing-bitmaps zero: the terrain loads, and each bitmap read as black is a
    # RuntimeWarning (the library never prints: Python's warnings route or silence it).
    with pytest.warns(RuntimeWarning, match="moseisely_road_height.tga.*using an all-zero bitmap"):
        assert trnbake.Terrain(tatooine_path, data_root=tmp_path, missing_bitmaps="zero").map_width == 16384


def test_bake_reports_progress(tatooine):
    calls = []
    b = tatooine.bake(region=(-256, -256, 256, 256), spacing=8, maps=["height", "splat"], progress=lambda *a: calls.append(a))
    posts = b.shape[0] * b.shape[1]
    assert calls[0] == (0, posts, "height")
    assert (posts, posts, "height") in calls
    assert calls[-1] == (1, 1, "surface maps")
    # An exception of the callable ends the reports and is raised when the bake returns.
    def stop(done, total, label):
        raise RuntimeError("stop")
    with pytest.raises(RuntimeError, match="stop"):
        tatooine.bake(region=(-64, -64, 64, 64), spacing=8, progress=stop)
    with pytest.raises(ValueError, match="progress must be a callable"):
        tatooine.bake(region=(-64, -64, 64, 64), spacing=8, progress=3)


def test_gil_released_during_bake(tatooine):
    # A Python thread notes the longest pause between two of its loop turns. Were the GIL
    # held through the bake, that pause would last the whole bake; released, the thread
    # keeps turning (pauses of a switch interval or an OS time slice).
    longest = 0.0
    turns = 0
    stop = threading.Event()

    def counter():
        nonlocal longest, turns
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
            turns += 1

    tatooine.bake(region=(0, 0, 64, 64), spacing=4, maps=["height", "splat"])  # build the surface plans first
    t = threading.Thread(target=counter, daemon=True)
    t.start()
    try:
        time.sleep(0.05)
        # Long enough to tell (at least 0.3 s), on slow and fast machines alike.
        for spacing in [8, 4, 2]:
            longest, before = 0.0, turns
            start = time.perf_counter()
            b = tatooine.bake(region=(-2048, -2048, 2046, 2046), spacing=spacing, maps=["height", "splat"])
            seconds = time.perf_counter() - start
            if seconds >= 0.3:
                break
        pause, during = longest, turns - before
    finally:
        stop.set()
        t.join()
    assert b.shape[0] == 4096 // spacing
    assert pause < seconds / 2, f"the counting thread stalled {pause:.3f} s of a {seconds:.3f} s bake ({during} turns)"


def test_terrain_is_shared_between_threads(tatooine):
    from concurrent.futures import ThreadPoolExecutor

    xs = np.linspace(-5000, 5000, 2000)
    zs = np.linspace(4000, -4000, 2000)
    expected = tatooine.sample(xs, zs)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: tatooine.sample(xs, zs), range(8)))
    assert all(np.array_equal(r, expected) for r in results)


def test_info(tatooine):
    info = tatooine.info()
    for key in ["version", "source_file", "map_width", "chunk_width", "tiles_per_chunk", "pole_spacing", "posts_per_side",
                "global_water", "families", "layers", "enabled_layers", "max_depth", "rules", "bitmap_files", "has_baked_maps",
                "has_flora_maps", "warnings", "path", "data_root"]:
        assert key in info, key
    assert info["version"] == 15
    assert info["map_width"] == 16384.0 and info["chunk_width"] == 8.0 and info["pole_spacing"] == 2.0
    assert info["posts_per_side"] == 8193
    assert set(info["families"]) == {"shader", "flora", "radial", "environment", "fractal", "bitmap"}
    assert info["families"]["shader"] == 16
    assert info["layers"] >= info["enabled_layers"] > 0
    assert "terrain/moseisely_road_height.tga" in info["bitmap_files"]
    assert tatooine.map_width == 16384.0 and tatooine.pole_spacing == 2.0
    assert trnbake.MAP_NAMES == SURFACE_MAPS


def test_off_map_points_and_regions(tatooine):
    """Off the map there is no ground (issue 37 item 5): a single point is a ValueError, an
    array gets NaN there with one RuntimeWarning, a region wholly off the map or absurd is a
    ValueError, and one reaching past the edge is baked with a warning."""
    half = tatooine.map_width / 2
    with pytest.raises(ValueError, match=r"99999,0 is off the map \(x and z from -8192 to 8192 m\)"):
        tatooine.sample(99999.0, 0.0)
    assert np.isfinite(tatooine.sample(half, -half))  # the edges are on the map
    with pytest.warns(RuntimeWarning, match=r"2 of 3 points are off the map .* the first: 99999,0"):
        hs = tatooine.sample([99999.0, 3528.0, 0.0], [0.0, -4804.0, -9000.0])
    assert np.isnan(hs[0]) and np.isnan(hs[2]) and f"{hs[1]:.4f}" == "4.0399"
    with pytest.raises(ValueError, match="entirely off the map"):
        tatooine.bake(region=(20000, 20000, 20100, 20100), spacing=4)
    with pytest.raises(ValueError, match="not finite"):
        tatooine.bake(region=(1e300, 0, 1e300, 0), spacing=4)
    with pytest.raises(ValueError, match="finite"):
        tatooine.bake(region=(float("inf"), 0, 10, 10), spacing=4)
    with pytest.warns(RuntimeWarning, match="reaches past the map's edge"):
        b = tatooine.bake(region=(half - 8, 0, half + 8, 8), spacing=4)
    assert b.arrays["height"].shape == (3, 5)
