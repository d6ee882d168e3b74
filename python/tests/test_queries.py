"""The server queries (slope, normal, height range, line of sight) on the real Tatooine terrain,
checked against their definitions over ``Terrain.sample`` (the exact heights, equal to
``trnbake sample``): the same numbers the Rust library and the C API give (their own tests
compare those with each other)."""

import warnings

import numpy as np
import pytest


def test_slope_and_normal_are_the_central_differences_of_the_heights(tatooine):
    rng = np.random.default_rng(40)
    xs = rng.uniform(-7000, 7000, 300).astype(np.float32)
    zs = rng.uniform(-7000, 7000, 300).astype(np.float32)
    h = lambda dx, dz: tatooine.sample(xs + np.float32(dx), zs + np.float32(dz))
    # 2 m either side (trnbake_swg::query::NORMAL_STEP): one post at the native spacing.
    n = np.stack([-(h(2, 0) - h(-2, 0)), np.full(xs.shape, 4.0, np.float32), -(h(0, 2) - h(0, -2))], axis=-1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    normals = tatooine.normal(xs, zs)
    assert normals.shape == (300, 3) and normals.dtype == np.float32
    np.testing.assert_allclose(normals, n, atol=1e-5)
    slopes = tatooine.slope(xs, zs)
    assert slopes.shape == (300,)
    np.testing.assert_allclose(slopes, np.degrees(np.arccos(np.clip(n[:, 1], -1, 1))), atol=1e-3)
    assert slopes.max() > 5.0, "Tatooine has hills"
    # A 2-D array keeps its shape; a scalar gives a 0-d array.
    assert tatooine.slope(xs.reshape(20, 15), zs.reshape(20, 15)).shape == (20, 15)
    assert float(tatooine.slope(100.0, 200.0)) == pytest.approx(float(tatooine.slope(np.array([100.0]), np.array([200.0]))[0]))


def test_off_the_map_is_a_value_error_single_and_nan_with_a_warning_in_batches(tatooine):
    with pytest.raises(ValueError, match="off the map"):
        tatooine.slope(9000.0, 0.0)
    with pytest.warns(RuntimeWarning, match="1 of 3 points are off the map"):
        s = tatooine.slope([0.0, 9000.0, 10.0], [0.0, 0.0, 10.0])
    assert np.isnan(s[1]) and not np.isnan(s[0]) and not np.isnan(s[2])
    with pytest.warns(RuntimeWarning):
        n = tatooine.normal([9000.0], [0.0])
    assert np.isnan(n).all()
    with pytest.raises(ValueError, match="off the map"):
        tatooine.height_range(0, 0, 9000, 10)
    with pytest.raises(ValueError, match="spacing"):
        tatooine.height_range(0, 0, 10, 10, spacing=0)
    with pytest.raises(ValueError, match="off the map"):
        tatooine.line_of_sight((0, 0, 0), (9000, 0, 0))
    segs = np.array([[0, 500, 0, 10, 500, 10], [0, 500, 0, 9000, 500, 0]], np.float32)
    with pytest.warns(RuntimeWarning, match="1 of 2 segments are refused"):
        r = tatooine.lines_of_sight(segs)
    assert r[0] == 1.0 and np.isnan(r[1])
    with pytest.raises(ValueError, match=r"\(N, 6\)"):
        tatooine.lines_of_sight(np.zeros((3, 5)))


def test_height_range_is_the_min_and_max_over_its_posts(tatooine):
    x0, z0, x1, z1, sp = 3000.0, -4900.0, 3203.0, -4750.5, 4.0
    gx = np.append(np.arange(x0, x1 + 1e-3, sp), x1).astype(np.float32)
    gz = np.append(np.arange(z0, z1 + 1e-3, sp), z1).astype(np.float32)
    X, Z = np.meshgrid(gx, gz)
    heights = tatooine.sample(X, Z)
    lo, hi = tatooine.height_range(x0, z0, x1, z1, spacing=sp)
    assert lo == pytest.approx(float(heights.min()), abs=1e-3)
    assert hi == pytest.approx(float(heights.max()), abs=1e-3)
    assert hi > lo


def test_line_of_sight_agrees_with_dense_sampling(tatooine):
    rng = np.random.default_rng(41)
    a = rng.uniform(-6000, 6000, (200, 2)).astype(np.float32)
    b = a + rng.uniform(-300, 300, (200, 2)).astype(np.float32)
    ha = tatooine.sample(a[:, 0], a[:, 1]) + 1.7
    hb = tatooine.sample(b[:, 0], b[:, 1]) + 1.7
    segs = np.column_stack([a[:, 0], ha, a[:, 1], b[:, 0], hb, b[:, 1]]).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batch = tatooine.lines_of_sight(segs, step=0.5)
    clear = 0
    for i, s in enumerate(segs):
        single = tatooine.line_of_sight(tuple(s[:3]), tuple(s[3:]), step=0.5)
        assert batch[i] == float(single)
        # The dense reference: the same rule at the same samples (0.5 m), from `sample`.
        length = float(np.hypot(s[3] - s[0], s[5] - s[2]))
        n = max(int(np.ceil(np.float32(length) / np.float32(0.5))), 1)
        t = np.arange(n + 1, dtype=np.float32) / np.float32(n)
        xs, ys, zs = s[0] + t * (s[3] - s[0]), s[1] + t * (s[4] - s[1]), s[2] + t * (s[5] - s[2])
        ground = tatooine.sample(xs, zs)
        assert single == bool((ground <= ys).all()), f"segment {i}"
        clear += single
    assert 0 < clear < len(segs), f"both answers occur: {clear} clear of {len(segs)}"
