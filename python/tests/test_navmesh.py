"""trnbake.Navmesh against the command line, on a navmesh of real Tatooine: the set is built
by ``trnbake navmesh`` (256 m, 2 x 2 tiles), and ``Navmesh.path`` gives the corners that
``trnbake navmesh path`` prints; an end off the mesh is a ValueError naming the point, ends the
mesh does not connect give None, a missing file is FileNotFoundError."""

import subprocess
import threading

import numpy as np
import pytest

import trnbake

from conftest import DATA_ROOT

REGION = "0,0,256,256"
# Two dry points of the region that the mesh connects (a path of several corners).
A, B = (50.0, 200.0), (200.0, 50.0)


@pytest.fixture(scope="module")
def navmesh_set(cli, tatooine_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("navmesh")
    subprocess.run([str(cli), "navmesh", str(tatooine_path), "--data-root", str(DATA_ROOT), "-o", str(out), "--region", REGION, "-q"],
                   check=True)
    return out / "navmesh.bin"


def cli_path(cli, navmesh_set, a, b, wade=False):
    args = [str(cli), "navmesh", "path", str(navmesh_set), f"{a[0]:g},{a[1]:g}", f"{b[0]:g},{b[1]:g}"] + (["--wade"] if wade else [])
    return subprocess.run(args, capture_output=True, text=True)


def test_path_equals_the_command_line(cli, navmesh_set):
    nav = trnbake.Navmesh(navmesh_set)
    assert nav.tiles == 4 and nav.file == navmesh_set
    for wade in (False, True):
        path = nav.path(A, B, wade=wade)
        assert isinstance(path, np.ndarray) and path.dtype == np.float32 and path.ndim == 2 and path.shape[1] == 3
        assert len(path) > 2, path
        out = cli_path(cli, navmesh_set, A, B, wade)
        assert out.returncode == 0, out.stderr
        # The command line prints 3 decimals of the same float32 corners.
        expected = [line.split(",") for line in out.stdout.splitlines()]
        assert [[f"{v:.3f}" for v in row] for row in path.tolist()] == expected
        assert (path[0, 0], path[0, 2]) == A and (path[-1, 0], path[-1, 2]) == B


def test_off_mesh_is_a_value_error_and_unconnected_ends_are_none(cli, navmesh_set):
    nav = trnbake.Navmesh(navmesh_set)
    with pytest.raises(ValueError, match="the point 1000,1000 is off the navmesh"):
        nav.path(A, (1000.0, 1000.0))
    # 40,40 stands on the mesh but apart from 220,200 (the command line says so too).
    unconnected = ((40.0, 40.0), (220.0, 200.0))
    assert nav.path(*unconnected) is None
    out = cli_path(cli, navmesh_set, *unconnected)
    assert out.returncode == 1 and "they are not connected on the mesh" in out.stderr, out.stderr
    with pytest.raises(FileNotFoundError):
        trnbake.Navmesh(navmesh_set.parent / "no-such.bin")
    with pytest.raises(ValueError, match="not a navmesh set"):
        trnbake.Navmesh(navmesh_set.parent / "navmesh.json")


def test_threads_share_one_navmesh(navmesh_set):
    nav = trnbake.Navmesh(navmesh_set)
    want = nav.path(A, B)
    results = []

    def work():
        results.extend(np.array_equal(nav.path(A, B), want) for _ in range(20))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 80
