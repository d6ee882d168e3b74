//! Where a map lies on the web's map: spherical Web Mercator (EPSG:3857) with the planet's
//! centre at longitude/latitude 0,0 and one world metre = one Mercator metre: world x (east)
//! is the easting, world z (north) the northing. XYZ tiles count columns from the
//! antimeridian eastwards and rows from the north edge southwards (docs/src/viewer.md).

use trnbake_swg::rounding::round_clamped_f64;

/// The sphere's radius of Web Mercator (WGS 84's semi-major axis), metres.
pub const RADIUS: f64 = 6_378_137.0;
/// Half the width of the Mercator square: easting and northing run over ±HALF_WORLD.
pub const HALF_WORLD: f64 = std::f64::consts::PI * RADIUS;
/// Pixels a tile side.
pub const TILE_PX: u32 = 512;

/// The side of one tile at zoom `z`, metres.
pub fn tile_metres(z: u8) -> f64 {
    2.0 * HALF_WORLD / f64::from(1u32 << z)
}

/// The side of one pixel at zoom `z`, metres.
pub fn pixel_metres(z: u8) -> f64 {
    tile_metres(z) / f64::from(TILE_PX)
}

/// The least zoom whose pixels are no wider than `spacing` metres (so the tiles keep every
/// post), at most 24.
pub fn max_zoom_for(spacing: f64) -> u8 {
    (0..24).find(|&z| pixel_metres(z) <= spacing).unwrap_or(24)
}

/// Longitude, latitude (degrees) of world `x`, `z` (metres).
pub fn to_lon_lat(x: f64, z: f64) -> (f64, f64) {
    let lon = (x / RADIUS).to_degrees();
    let lat = (2.0 * (z / RADIUS).exp().atan() - std::f64::consts::FRAC_PI_2).to_degrees();
    (lon, lat)
}

/// World `x`, `z` (metres) of a longitude, latitude (degrees).
pub fn from_lon_lat(lon: f64, lat: f64) -> (f64, f64) {
    let x = lon.to_radians() * RADIUS;
    let z = (std::f64::consts::FRAC_PI_4 + lat.to_radians() / 2.0).tan().ln() * RADIUS;
    (x, z)
}

/// The inclusive tile range (columns x0..=x1, rows y0..=y1) at zoom `z` covering world
/// `[west, east] × [south, north]`.
pub fn tile_range(z: u8, west: f64, south: f64, east: f64, north: f64) -> [u32; 4] {
    let t = tile_metres(z);
    let n = (1u32 << z) - 1;
    let col = |x: f64| (((x + HALF_WORLD) / t).floor().max(0.0) as u32).min(n);
    let row = |zz: f64| (((HALF_WORLD - zz) / t).floor().max(0.0) as u32).min(n);
    [col(west), row(north), col(east), row(south)]
}

/// World x of the centre of absolute pixel column `px` at zoom `z`.
pub fn pixel_x(z: u8, px: f64) -> f64 {
    -HALF_WORLD + (px + 0.5) * pixel_metres(z)
}

/// World z of the centre of absolute pixel row `py` at zoom `z`.
pub fn pixel_z(z: u8, py: f64) -> f64 {
    HALF_WORLD - (py + 0.5) * pixel_metres(z)
}

/// Encode a height as Terrarium RGB: height + 32768 = R·256 + G + B/256 (steps of 1/256 m,
/// rounded to the nearest), clamped to the encodable range.
pub fn terrarium(h: f32) -> [u8; 3] {
    // `round().clamp(0, 2^24 − 1)` without libm's `round` (a call per pixel).
    let q = round_clamped_f64((f64::from(h) + 32768.0) * 256.0, (1 << 24) - 1);
    [(q >> 16) as u8, (q >> 8) as u8, q as u8]
}

/// The height a Terrarium pixel encodes.
pub fn terrarium_decode(rgb: [u8; 3]) -> f64 {
    f64::from(rgb[0]) * 256.0 + f64::from(rgb[1]) + f64::from(rgb[2]) / 256.0 - 32768.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lon_lat_round_trip_and_origin() {
        assert_eq!(to_lon_lat(0.0, 0.0), (0.0, 0.0));
        for (x, z) in [(8000.0, -8000.0), (-3528.5, 4804.25), (1.0, 1.0)] {
            let (lon, lat) = to_lon_lat(x, z);
            let (x2, z2) = from_lon_lat(lon, lat);
            assert!((x2 - x).abs() < 1e-6 && (z2 - z).abs() < 1e-6, "{x},{z} -> {x2},{z2}");
        }
        // East is positive longitude, north positive latitude.
        let (lon, lat) = to_lon_lat(1000.0, 1000.0);
        assert!(lon > 0.0 && lat > 0.0);
    }

    #[test]
    fn terrarium_steps_are_1_256_metre() {
        for h in [-32768.0f32, -2.47, 0.0, 0.001, 58.22, 1234.5678, 8000.0] {
            let d = terrarium_decode(terrarium(h));
            assert!((d - f64::from(h)).abs() <= 0.5 / 256.0 + 1e-9, "{h} -> {d}");
        }
    }

    /// The rounding of `terrarium` equals `round` then `clamp` (its former body) on every
    /// f32 bit pattern of a stride through all of them and on every one within 8 ulps of
    /// each half step (where rounding turns) from -2000 m to 10000 m, and of every 37th half
    /// step past those out to both ends of the encoding.
    #[test]
    fn terrarium_rounds_as_round_does() {
        let old = |h: f32| {
            let q = ((f64::from(h) + 32768.0) * 256.0).round().clamp(0.0, f64::from((1u32 << 24) - 1)) as u32;
            [(q >> 16) as u8, (q >> 8) as u8, q as u8]
        };
        for bits in (0..=u32::MAX).step_by(9973) {
            let h = f32::from_bits(bits);
            assert_eq!(terrarium(h), old(h), "{h:e} ({bits:#x})");
        }
        let mut k = -32770.0 * 256.0;
        while k < 33000.0 * 256.0 {
            // Height k/256 + 1/512 - 32768: a half step of the encoding.
            let half = ((k + 0.5) / 256.0 - 32768.0) as f32;
            for d in -8i32..=8 {
                let h = f32::from_bits(half.to_bits().wrapping_add_signed(d));
                assert_eq!(terrarium(h), old(h), "{h:e}");
            }
            k += if (-2000.0 * 256.0..10000.0 * 256.0).contains(&k) { 1.0 } else { 37.0 };
        }
    }

    #[test]
    fn zooms_and_tiles() {
        assert_eq!(max_zoom_for(2.0), 16);
        assert_eq!(max_zoom_for(1.0), 17);
        assert!(pixel_metres(max_zoom_for(3.0)) <= 3.0 && pixel_metres(max_zoom_for(3.0) - 1) > 3.0);
        // The origin is a tile corner at every zoom above 0.
        assert_eq!(tile_range(5, 1.0, 1.0, 2.0, 2.0), [16, 15, 16, 15]);
        assert_eq!(tile_range(5, -2.0, -2.0, -1.0, -1.0), [15, 16, 15, 16]);
        assert!((pixel_x(3, 0.0) + HALF_WORLD - pixel_metres(3) / 2.0).abs() < 1e-6);
    }
}
