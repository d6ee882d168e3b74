"""trnbake: Star Wars Galaxies terrain (.trn) heights and surface maps as numpy arrays.

>>> import trnbake
>>> t = trnbake.Terrain("tatooine.trn")                      # doctest: +SKIP
>>> t.sample([3528.0], [-4804.0])                             # doctest: +SKIP
array([4.0399], dtype=float32)
>>> b = t.bake(region=(3000, -5000, 4000, -4000), spacing=4)  # doctest: +SKIP
>>> b.arrays["height"].shape, b.transform, b.crs              # doctest: +SKIP
>>> ds = trnbake.open_dataset("tatooine.trn", spacing=8, variables="auto")  # doctest: +SKIP
>>> trnbake.Navmesh("tatooine-nav/navmesh.bin").path((128, 128), (230, 30))  # doctest: +SKIP

The evaluation is trnbake's Rust CPU evaluator (the native module ``trnbake._native``):
heights equal ``trnbake sample`` and a ``trnbake bake --backend cpu`` value for value, and a
bake's transform and CRS are those of the command line's GeoTIFFs. ``open_dataset`` gives a
bake as a lazy, chunked ``xarray.Dataset`` that Dask computes (``pip install trnbake[xarray]``).
"""

from ._dataset import open_dataset
from ._native import MAP_ARRAYS, MAP_NAMES, Bake, Navmesh, Terrain, __version__

__all__ = ["Bake", "MAP_ARRAYS", "MAP_NAMES", "Navmesh", "Terrain", "open_dataset", "__version__"]
