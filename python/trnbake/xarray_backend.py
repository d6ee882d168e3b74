"""The xarray backend of trnbake: ``xr.open_dataset("tatooine.trn", engine="trnbake", …)``.

Registered through the ``xarray.backends`` entry point (``pyproject.toml``); it takes the
keyword arguments of ``trnbake.open_dataset`` and gives its Dataset, lazily backed by Dask.
xarray does not hand its own ``chunks=`` to a backend: the Dataset comes chunked as
``trnbake_chunks`` says (``{"y": 2048, "x": 2048}`` by default), and a different
``chunks=`` passed to ``xr.open_dataset`` re-chunks it (the same values; pass the same
chunks as ``trnbake_chunks`` to keep one task a chunk).
"""

from __future__ import annotations

import os

from xarray.backends import BackendEntrypoint

from ._dataset import open_dataset


class TrnbakeBackendEntrypoint(BackendEntrypoint):
    """Star Wars Galaxies terrain (.trn) baked lazily into maps by trnbake."""

    description = "Star Wars Galaxies terrain (.trn) as lazy height and surface maps, baked by trnbake"
    url = "https://github.com/trnbake/trnbake"
    open_dataset_parameters = (
        "filename_or_obj",
        "drop_variables",
        "data_root",
        "spacing",
        "region",
        "variables",
        "trnbake_chunks",
        "roads",
        "bitmap_gain",
        "missing_bitmaps",
    )

    def open_dataset(
        self,
        filename_or_obj,
        *,
        drop_variables=None,
        data_root=None,
        spacing=2.0,
        region=None,
        variables=("height",),
        trnbake_chunks=None,
        roads=False,
        bitmap_gain=True,
        missing_bitmaps="error",
    ):
        ds = open_dataset(
            filename_or_obj,
            data_root=data_root,
            spacing=spacing,
            region=region,
            variables=variables,
            chunks=trnbake_chunks,
            roads=roads,
            bitmap_gain=bitmap_gain,
            missing_bitmaps=missing_bitmaps,
        )
        if drop_variables:
            ds = ds.drop_vars([v for v in ([drop_variables] if isinstance(drop_variables, str) else drop_variables) if v in ds])
        return ds

    def guess_can_open(self, filename_or_obj) -> bool:
        try:
            return os.fspath(filename_or_obj).lower().endswith(".trn")
        except TypeError:
            return False
