"""Type stubs of the native module ``trnbake._native`` (Rust, pyo3); ``trnbake`` re-exports it."""

import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__all__ = ["Terrain", "Bake", "Navmesh", "MAP_NAMES", "MAP_ARRAYS", "__version__", "_grid", "_default_maps", "_legends", "_window"]

__version__: str

MAP_NAMES: List[str]
"""The map names ``Terrain.bake(maps=...)`` takes: height, normals, splat, flora, water, env,
color, exclude."""

MAP_ARRAYS: Dict[str, List[str]]
"""The arrays (``open_dataset`` variables) each map gives, by map name."""

_Path = Union[str, "os.PathLike[str]"]

@final
class Terrain:
    """A Star Wars Galaxies terrain file (``.trn``), loaded and ready to evaluate.

    ``data_root`` is the folder in which the file's bitmap paths (``terrain/x.tga``) resolve;
    by default the folder above the file's ``terrain/`` folder (the client data layout), as
    ``trnbake --data-root``. ``roads``, ``bitmap_gain`` and ``missing_bitmaps`` ("error" or
    "zero") are the command line's height options of the same names, with the same defaults.

    Raises ``OSError`` (``FileNotFoundError``, ...) when the file or a bitmap it needs cannot be
    read, ``ValueError`` when the file is not a valid terrain (the message names the file, the
    chunk and the byte offset). The plan's warnings (with ``missing_bitmaps="zero"``, each
    bitmap read as black) are ``RuntimeWarning`` (``warnings.warn``). A ``Terrain`` is immutable
    and may be shared between threads.
    """

    def __new__(
        cls,
        path: _Path,
        data_root: Optional[_Path] = None,
        *,
        roads: bool = False,
        bitmap_gain: bool = True,
        missing_bitmaps: Literal["error", "zero"] = "error",
    ) -> Terrain: ...
    @property
    def path(self) -> Path:
        """The path the terrain was loaded from."""
    @property
    def data_root(self) -> Optional[Path]:
        """The folder bitmap paths resolve in, or None."""
    @property
    def map_width(self) -> float:
        """Width of the square map in metres (the map spans +-map_width/2 on both axes)."""
    @property
    def pole_spacing(self) -> float:
        """The file's post spacing in metres: the default spacing of a bake."""
    def sample(self, xs: npt.ArrayLike, zs: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Exact ground heights at world points (x east, z north, metres, origin at the map
        centre), as ``trnbake sample`` computes them.

        ``xs`` and ``zs`` are array-likes of the same shape (converted to float32, as the
        command line reads coordinates); returns a float32 array of that shape. Evaluated in
        parallel with the GIL released. Raises ``ValueError`` for shapes that differ or
        coordinates that are not finite.

        A point off the map (outside +-map_width/2 on either axis) has no height: a single point
        (scalar ``xs`` and ``zs``) raises ``ValueError`` naming it and the map's extent; in an
        array it gets NaN, and one ``RuntimeWarning`` says how many points are off the map.
        """
    def slope(self, xs: npt.ArrayLike, zs: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Ground slopes in degrees (0 flat, 90 vertical) at world points, from central
        differences of the exact heights 2 m either side (the C API's ``trnbake_slope_at``).
        Off-map points as in ``sample``: ``ValueError`` for a single point, NaN and one
        ``RuntimeWarning`` in an array."""
    def normal(self, xs: npt.ArrayLike, zs: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Unit ground normals (x east, y up, z north) at world points: the points' shape plus
        a last axis of 3. Off-map points as in ``slope``."""
    def height_range(self, x0: float, z0: float, x1: float, z1: float, spacing: float = 1.0) -> Tuple[float, float]:
        """The lowest and highest ground ``(min, max)`` over the box, exact at the posts
        (x0 + i*spacing, z0 + j*spacing) and along its east and north edges. ``ValueError``
        for a box not wholly on the map or a spacing that is not positive."""
    def line_of_sight(self, a: Tuple[float, float, float], b: Tuple[float, float, float], step: float = 0.5) -> bool:
        """Whether the segment from ``a`` to ``b`` ((x, y, z), y up) clears the terrain,
        sampled at both ends and at most ``step`` m apart between. ``ValueError`` for an end
        off the map, a height that is not finite or a step that is not positive."""
    def lines_of_sight(self, segments: npt.ArrayLike, step: float = 0.5) -> npt.NDArray[np.float32]:
        """``line_of_sight`` of an (N, 6) array of rows ax, ay, az, bx, by, bz: 1.0 clear,
        0.0 blocked, NaN for a refused segment (with one ``RuntimeWarning``)."""
    def bake(
        self,
        region: Optional[Tuple[float, float, float, float]] = None,
        spacing: Optional[float] = None,
        maps: Optional[Sequence[str]] = None,
        backend: Literal["cpu"] = "cpu",
        progress: Optional[Callable[[int, int, str], Any]] = None,
    ) -> Bake:
        """Bakes a grid of posts, as ``trnbake bake --backend cpu`` does, into numpy arrays.

        ``region`` is (west, south, east, north) in world metres, the whole map by default;
        ``spacing`` the metres between posts, the file's pole spacing by default. Posts start at
        the south-west corner and stop at or before the east and north bounds (the command
        line's post count). ``maps`` names what to compute (``MAP_NAMES``; ``["height"]`` by
        default); an unknown name is a ``ValueError`` listing the known ones. ``backend`` must be
        "cpu": "gpu" and "auto" are a ``ValueError`` (this package bakes on the CPU).
        ``progress``, if given, is called as ``progress(done, total, label)`` while the bake
        runs: label "height" counts posts, "surface maps" steps. Notes and warnings of the bake
        are ``RuntimeWarning`` (``warnings.warn``); the library never prints.

        A region wholly off the map, or whose posts are not finite single-precision numbers, is a
        ``ValueError``; one reaching past the map's edge is baked as the command line bakes it
        (the posts outside hold what the rules give there), with a ``RuntimeWarning``.

        Returns a ``Bake``; its arrays have the north row first. Computed with the GIL released.
        """
    def info(self) -> Dict[str, Any]:
        """A summary of the file as ``trnbake info --json`` gives it: version, source_file,
        map_width, chunk_width, tiles_per_chunk, pole_spacing, posts_per_side, global_water,
        families (count by kind), layers, enabled_layers, max_depth, rules, the referenced
        fractal and bitmap families, bitmap_files, has_baked_maps, has_flora_maps, warnings;
        plus path and data_root."""

@final
class Bake:
    """The result of ``Terrain.bake``: arrays of posts, north row first, and their
    georeferencing.

    ``arrays`` maps names to numpy arrays: "height" (float32, metres), "normals" (float32,
    rows x cols x 3: x east, y up, z north), "shader_id" (int32) and "splat_weights" (float32,
    rows x cols x len(splat_families), summing to 1 where a shader applies), per flora class C
    in collidable, noncollidable, radial_near, radial_far "flora_C_id" (int32) and
    "flora_C_density" (float32, the placement probability of that family), "water_height"
    (float32, NaN where there is no water) and "water_mask" (bool, ground below the water),
    "env_id" (int32), "color" (uint8, rows x cols x 3), "exclude" and "passable" (bool). Family
    ids are 0 where no family applies, as in the command line's files.
    """

    @property
    def arrays(self) -> Dict[str, npt.NDArray[Any]]:
        """The arrays by name (see the class docstring)."""
    @property
    def transform(self) -> Tuple[float, float, float, float, float, float]:
        """The GDAL geotransform (x of the west edge, pixel width, 0, z of the north edge, 0,
        -pixel height): posts are pixel centres, as GDAL reads the command line's GeoTIFFs."""
    @property
    def crs(self) -> str:
        """The CRS as WKT: the local metric CRS ``SWG <file stem> local metres`` of the
        command line's files."""
    @property
    def spacing(self) -> float:
        """Metres between posts."""
    @property
    def region(self) -> Tuple[float, float, float, float]:
        """(west, south, east, north): world positions of the outermost posts."""
    @property
    def shape(self) -> Tuple[int, int]:
        """(rows, cols)."""
    @property
    def splat_families(self) -> List[int]:
        """The shader family ids of the channels of "splat_weights", in order."""

@final
class Navmesh:
    """A navmesh set (``navmesh.bin``, or one ``navmesh_COL_ROW.bin``, as ``trnbake navmesh``
    writes them) with every tile loaded into Detour.

    Raises ``OSError`` (``FileNotFoundError``, ...) when the file cannot be read, ``ValueError``
    when it is not a set or Detour refuses a tile. A ``Navmesh`` may be shared between threads
    (their paths take turns on Detour's query object).
    """

    def __new__(cls, path: _Path) -> Navmesh: ...
    @property
    def file(self) -> Path:
        """The file the set was loaded from (``path`` is the method that finds paths)."""
    @property
    def tiles(self) -> int:
        """Tiles loaded."""
    def path(self, a: Tuple[float, float], b: Tuple[float, float], wade: bool = False) -> Optional[npt.NDArray[np.float32]]:
        """The straight path from ``a`` to ``b``, each ``(x, z)`` in world metres (x east, z
        north): each end is put on the polygon under it, at any height, and Detour's path joins
        them. Only walkable polygons are used, shallow water too when ``wade``.

        Returns the corners as a float32 array of shape (n, 3), rows x, y, z (y up: the mesh's
        height) from ``a`` to ``b``, the same as ``trnbake navmesh path`` prints; None when the
        navmesh does not connect the ends. Raises ``ValueError`` for an end with no walkable
        polygon under it (outside the set's region, too steep, in water). GIL released.
        """

# The native half of ``trnbake.open_dataset`` (``trnbake._dataset``).
def _grid(terrain: Terrain, region: Optional[Tuple[float, float, float, float]] = None, spacing: Optional[float] = None) -> Dict[str, Any]: ...
def _default_maps(terrain: Terrain) -> List[str]: ...
def _legends(terrain: Terrain) -> Dict[str, List[Tuple[int, str, Tuple[int, int, int]]]]: ...
def _window(
    terrain: Terrain,
    grid: Tuple[float, float, float, int, int],
    window: Tuple[int, int, int, int],
    arrays: Sequence[str],
    splat_families: Sequence[int] = ...,
) -> Dict[str, npt.NDArray[Any]]: ...
