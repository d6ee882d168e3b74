"""A terrain bake as a lazy, chunked ``xarray.Dataset`` backed by Dask (``trnbake.open_dataset``).

Every chunk of every variable comes from one task per window of posts: a pure call into Rust
(``trnbake._native._window``, the GIL released) that evaluates the window's heights, its
1-post apron, normals and surface passes, and gives the values of the command line's bake of
the whole grid at those posts. The graph holds only plain values (the file's path, the
options, the grid and the window), so it pickles: each worker process opens the terrain
itself, once (a per-process cache of terrain handles). Task names are deterministic: a token
of the terrain's SHA-256, the options, the grid and the chunking, and the window's indices.

xarray, dask and (for ``.rio``) rioxarray are optional dependencies: ``pip install
trnbake[xarray]``.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import threading
from typing import Any, Dict, Iterable, Literal, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native

__all__ = ["open_dataset", "DEFAULT_CHUNKS"]

#: The default chunk: 2048² posts (every map: ~0.5 GiB of transient state a chunk).
DEFAULT_CHUNKS = {"y": 2048, "x": 2048}

# ---- the per-process cache of terrain handles (workers open the terrain themselves) ----

_TERRAINS: Dict[tuple, Any] = {}
_TERRAINS_LOCK = threading.Lock()
_LOADING: Dict[tuple, threading.Lock] = {}


def _terrain(path: str, data_root: Optional[str], roads: bool, bitmap_gain: bool, missing_bitmaps: Literal["error", "zero"]):
    """The terrain of these options, loaded once per process (threads wait for the first)."""
    key = (path, data_root, roads, bitmap_gain, missing_bitmaps)
    with _TERRAINS_LOCK:
        t = _TERRAINS.get(key)
        if t is not None:
            return t
        lock = _LOADING.setdefault(key, threading.Lock())
    with lock:
        with _TERRAINS_LOCK:
            t = _TERRAINS.get(key)
        if t is None:
            t = _native.Terrain(path, data_root, roads=roads, bitmap_gain=bitmap_gain, missing_bitmaps=missing_bitmaps)
            with _TERRAINS_LOCK:
                _TERRAINS[key] = t
    return t


def _compute_window(source: tuple, grid: tuple, window: tuple, arrays: tuple, splat_families: tuple) -> dict:
    """One chunk task: the arrays of posts ``window`` = (c0, r0, cols, rows) (rows from the
    south) of ``grid``, as a dict of numpy arrays, north row first."""
    t = _terrain(*source)
    return _native._window(t, grid, window, list(arrays), list(splat_families))


# ---- what each array is ----

_FLORA = ["collidable", "noncollidable", "radial_near", "radial_far"]


def _describe(name: str) -> dict:
    """dtype, extra leading dimension, attributes and encoding of an array (Dataset variable)."""
    f32, i32, u8, b = np.dtype("float32"), np.dtype("int32"), np.dtype("uint8"), np.dtype("bool")
    nan = {"_FillValue": np.float32(np.nan)}
    if name == "height":
        return dict(dtype=f32, attrs=dict(long_name="ground height", units="m", standard_name="surface_altitude"), encoding=nan)
    if name == "normals":
        return dict(dtype=f32, channels="component", attrs=dict(long_name="unit ground normal (x east, y up, z north)", units="1"), encoding=nan)
    if name == "shader_id":
        return dict(dtype=i32, legend="shader", attrs=dict(long_name="shader family id (0: none)"), encoding={"_FillValue": None})
    if name == "splat_weights":
        return dict(dtype=f32, channels="shader_family", attrs=dict(long_name="splat weight of each shader family, summing to 1 where a shader applies", units="1"), encoding=nan)
    if name.startswith("flora_"):
        cls = name[len("flora_"):].rsplit("_", 1)[0]
        legend = "radial" if cls.startswith("radial") else "flora"
        if name.endswith("_id"):
            return dict(dtype=i32, legend=legend, attrs=dict(long_name=f"most likely {cls} flora family id (0: none)"), encoding={"_FillValue": None})
        return dict(dtype=f32, attrs=dict(long_name=f"placement probability of the most likely {cls} flora family", units="1"), encoding=nan)
    if name == "water_height":
        return dict(dtype=f32, attrs=dict(long_name="water surface height (NaN: no water)", units="m"), encoding=nan)
    if name == "water_mask":
        return dict(dtype=b, attrs=dict(long_name="ground below the water surface"), encoding={})
    if name == "env_id":
        return dict(dtype=i32, legend="environment", attrs=dict(long_name="environment family id (0: none)"), encoding={"_FillValue": None})
    if name == "color":
        return dict(dtype=u8, channels="rgb", attrs=dict(long_name="terrain colour (sRGB bytes)"), encoding={})
    if name in ("exclude", "passable"):
        what = "flora excluded" if name == "exclude" else "passable (no passable rule: passable)"
        return dict(dtype=b, attrs=dict(long_name=what), encoding={})
    raise ValueError(f"unknown array {name!r}")


def _arrays_of(variables: Union[str, Iterable[str]], terrain) -> list:
    """Array names (Dataset variables) from map names, array names, "auto" (the maps the
    command line bakes by default) and "all" (every map)."""
    if isinstance(variables, str):
        variables = [variables]
    names = []
    for v in variables:
        if v == "auto":
            maps = _native._default_maps(terrain)
        elif v == "all":
            maps = list(_native.MAP_NAMES)
        else:
            maps = [v]
        for m in maps:
            if m in _native.MAP_ARRAYS:
                names.extend(_native.MAP_ARRAYS[m])
            elif any(m in arrays for arrays in _native.MAP_ARRAYS.values()):
                names.append(m)
            else:
                known = ", ".join(list(_native.MAP_NAMES) + [a for arrays in _native.MAP_ARRAYS.values() for a in arrays])
                raise ValueError(f"unknown variable {m!r}; known: auto, all, {known}")
    return list(dict.fromkeys(names))


def _chunk_sizes(total: int, size: int) -> Tuple[int, ...]:
    if size is None or size == -1 or size >= total:
        return (total,)
    if size <= 0:
        raise ValueError(f"chunk sizes must be positive, got {size}")
    return tuple([size] * (total // size) + ([total % size] if total % size else []))


def _chunks_of(chunks, rows: int, cols: int) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    if chunks is None:
        chunks = DEFAULT_CHUNKS
    if isinstance(chunks, int):
        chunks = {"y": chunks, "x": chunks}
    elif isinstance(chunks, (tuple, list)):
        chunks = {"y": chunks[0], "x": chunks[1]}
    elif not isinstance(chunks, Mapping):
        raise ValueError(f"chunks must be a dict like {{'y': 2048, 'x': 2048}}, an int or (y, x), not {chunks!r}")
    bad = set(chunks) - {"y", "x"} - {"component", "shader_family", "rgb"}
    if bad:
        raise ValueError(f"chunks names unknown dimensions {sorted(bad)}; the dimensions are y and x")
    return _chunk_sizes(rows, chunks.get("y", DEFAULT_CHUNKS["y"])), _chunk_sizes(cols, chunks.get("x", DEFAULT_CHUNKS["x"]))


def file_sha256(path: Union[str, os.PathLike]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def open_dataset(
    path: Union[str, os.PathLike],
    *,
    data_root: Optional[Union[str, os.PathLike]] = None,
    spacing: float = 2.0,
    region: Optional[Sequence[float]] = None,
    variables: Union[str, Iterable[str]] = ("height",),
    chunks: Union[Mapping[str, int], int, Tuple[int, int], None] = None,
    roads: bool = False,
    bitmap_gain: bool = True,
    missing_bitmaps: Literal["error", "zero"] = "error",
):
    """A terrain bake as a lazy ``xarray.Dataset`` backed by Dask.

    ``region`` (west, south, east, north, world metres; the whole map by default) and
    ``spacing`` place posts as ``trnbake bake --region … --spacing …`` does. ``variables``
    names maps ("height", "normals", "splat", "flora", "water", "env", "color", "exclude"),
    single arrays ("shader_id", "flora_radial_far_density", …), "auto" (the maps the
    command line bakes by default) or "all". ``chunks`` is ``{"y": 2048, "x": 2048}`` by
    default (an int or (y, x) also do); multiples of 128 match the surface passes' culling
    blocks. Dimensions ``y`` (north row first) and ``x`` carry world coordinates of the posts
    (pixel centres); normals, colour and splat weights have a leading dimension
    (``component``, ``rgb``, ``shader_family``). Attributes carry the CRS (WKT), the GDAL
    geotransform, legends and units; a ``spatial_ref`` coordinate lets rioxarray find both.
    """
    try:
        import dask.array as da
        import xarray as xr
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("trnbake.open_dataset needs xarray and dask: pip install 'trnbake[xarray]'") from e

    path = os.fspath(path)
    data_root = None if data_root is None else os.fspath(data_root)
    source = (os.path.abspath(path), None if data_root is None else os.path.abspath(data_root), bool(roads), bool(bitmap_gain), missing_bitmaps)
    t = _terrain(*source)
    if region is not None:
        region = tuple(float(v) for v in region)
        if len(region) != 4:
            raise ValueError(f"region must be (west, south, east, north), got {region!r}")
    g = _native._grid(t, region, float(spacing))
    grid = (g["x0"], g["z0"], g["spacing"], g["cols"], g["rows"])
    rows, cols = g["rows"], g["cols"]
    arrays = _arrays_of(variables, t)
    legends = _native._legends(t)
    splat_families = tuple(sorted(f[0] for f in legends["shader"])) if "splat_weights" in arrays else ()
    ychunks, xchunks = _chunks_of(chunks, rows, cols)

    # Deterministic names: the file's content, everything that changes a value, the chunking.
    sha = file_sha256(path)
    token = tokenize("trnbake", _native.__version__, sha, source[1:], grid, tuple(arrays), splat_families, ychunks, xchunks)
    window_name = f"trnbake-window-{token}"
    ystarts = np.cumsum((0,) + ychunks[:-1])
    xstarts = np.cumsum((0,) + xchunks[:-1])
    windows: Dict[Any, Any] = {}
    for i, (y0, ny) in enumerate(zip(ystarts, ychunks)):
        for j, (x0, nx) in enumerate(zip(xstarts, xchunks)):
            # y counts rows from the north, the grid from the south.
            window = (int(x0), int(rows - (y0 + ny)), int(nx), int(ny))
            windows[(window_name, i, j)] = (_compute_window, source, grid, window, tuple(arrays), splat_families)

    north = g["z0"] + (rows - 1) * g["spacing"]
    ys = north - np.arange(rows, dtype=np.float64) * g["spacing"]
    xs = g["x0"] + np.arange(cols, dtype=np.float64) * g["spacing"]
    transform = tuple(g["transform"])
    crs = g["crs"]
    spatial_ref = xr.Variable((), np.int32(0), attrs={"crs_wkt": crs, "spatial_ref": crs, "GeoTransform": " ".join(repr(v) for v in transform)})
    coords: Dict[str, Any] = {"y": ("y", ys, {"long_name": "z north (world metres, post centres)", "units": "m"}),
                              "x": ("x", xs, {"long_name": "x east (world metres, post centres)", "units": "m"}),
                              "spatial_ref": spatial_ref}
    channel_coords: Dict[str, Any] = {"component": ["x", "y", "z"], "rgb": ["r", "g", "b"], "shader_family": np.asarray(splat_families, dtype=np.int32)}

    data_vars = {}
    for name in arrays:
        d = _describe(name)
        ch = d.get("channels")
        dsk: Dict[Any, Any]
        shape_chunks: Tuple[Tuple[int, ...], ...]
        dims: Tuple[str, ...]
        layer = f"trnbake-{name.replace('_', '-')}-{token}"
        if ch:
            k = len(channel_coords[ch])
            dsk = {(layer, 0, i, j): (operator.getitem, (window_name, i, j), name) for i in range(len(ychunks)) for j in range(len(xchunks))}
            shape_chunks = ((k,), ychunks, xchunks)
            dims = (ch, "y", "x")
            coords[ch] = (ch, np.asarray(channel_coords[ch]))
        else:
            dsk = {(layer, i, j): (operator.getitem, (window_name, i, j), name) for i in range(len(ychunks)) for j in range(len(xchunks))}
            shape_chunks = (ychunks, xchunks)
            dims = ("y", "x")
        layers: Dict[str, Any] = {window_name: windows, layer: dsk}
        hlg = HighLevelGraph(layers, {window_name: set(), layer: {window_name}})
        arr = da.Array(hlg, layer, shape_chunks, dtype=d["dtype"], meta=np.empty((0,) * len(shape_chunks), dtype=d["dtype"]))
        attrs = dict(d["attrs"])
        attrs["grid_mapping"] = "spatial_ref"
        if d.get("legend"):
            fams = legends[d["legend"]]
            attrs["flag_values"] = [int(f[0]) for f in fams]
            attrs["flag_meanings"] = " ".join(f[1].replace(" ", "_") or f"family_{f[0]}" for f in fams)
            attrs["legend"] = json.dumps([{"id": f[0], "name": f[1], "color": list(f[2])} for f in fams])
        if name == "splat_weights":
            by_id = {f[0]: f for f in legends["shader"]}
            attrs["legend"] = json.dumps([{"id": f, "name": by_id[f][1], "color": list(by_id[f][2])} for f in splat_families])
        v = xr.Variable(dims, arr, attrs=attrs)
        v.encoding.update(d["encoding"])
        v.encoding["preferred_chunks"] = {"y": ychunks[0], "x": xchunks[0]}
        data_vars[name] = v

    ds = xr.Dataset(data_vars, coords=coords)
    ds.attrs.update({
        "title": f"trnbake bake of {os.path.basename(path)}",
        "source": os.path.basename(path),
        "source_sha256": sha,
        "trnbake_version": _native.__version__,
        "crs_wkt": crs,
        "geotransform": list(transform),
        "spacing": g["spacing"],
        "region": [g["x0"], g["z0"], g["x0"] + (cols - 1) * g["spacing"], north],
        "Conventions": "CF-1.8",
    })
    return ds
