"""trnbake: Star Wars Galaxies terrain (.trn) heights and surface maps as numpy arrays.

>>> import trnbake
>>> t = trnbake.Terrain("tatooine.trn")                      # doctest: +SKIP
>>> t.sample([3528.0], [-4804.0])                             # doctest: +SKIP
array([4.0399], dtype=float32)
>>> b = t.bake(region=(3000, -5000, 4000, -4000), spacing=4)  # doctest: +SKIP
>>> b.arrays["height"].shape, b.transform, b.crs              # doctest: +SKIP

The evaluation is trnbake's Rust CPU evaluator (the native module ``trnbake._native``):
heights equal ``trnbake sample`` and a ``trnbake bake --backend cpu`` value for value, and a
bake's transform and CRS are those of the command line's GeoTIFFs.
"""

from ._native import MAP_NAMES, Bake, Terrain, __version__

__all__ = ["Bake", "MAP_NAMES", "Terrain", "__version__"]
