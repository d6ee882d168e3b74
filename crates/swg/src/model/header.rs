//! The PTAT header (swg-trn §2.2), the baked water/slope maps (§2.3) and the packed maps of
//! 0015 files (§2.4–§2.6).

use super::codec::{chunk, chunk_of, form, payload_struct, version_form, Bool32, Codec, FormReader, PayloadReader};
use crate::iff::{FormatError, Node};
use serde::{Deserialize, Serialize};

payload_struct! {
    /// Flora placement parameters of one class (swg-trn §2.2 fields 10–29).
    pub struct FloraParams {
        pub min_distance: f32,
        pub max_distance: f32,
        pub tile_size: f32,
        pub tile_border: f32,
        pub seed: u32,
    }
}

payload_struct! {
    /// The extra block of 0013 headers; its meaning is unknown, it is kept as read (§2.2).
    pub struct Header0013Extra {
        pub s1: String, pub s2: String, pub f1: f32, pub s3: String, pub f2: f32,
        pub s4: String, pub f3: f32, pub s5: String, pub f4: f32, pub i1: i32, pub s6: String,
    }
}

/// PTAT `DATA` (swg-trn §2.2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub source_file: String,
    pub map_width: f32,
    pub chunk_width: f32,
    pub tiles_per_chunk: i32,
    pub use_global_water_table: Bool32,
    pub global_water_height: f32,
    pub global_water_shader_size: f32,
    pub global_water_shader: String,
    pub environment_cycle_time: f32,
    /// Present in version 0013 files only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_0013: Option<Header0013Extra>,
    pub collidable_flora: FloraParams,
    pub noncollidable_flora: FloraParams,
    pub radial_flora: FloraParams,
    pub far_radial_flora: FloraParams,
    /// The trailing "legacyMap" byte: read whenever bytes remain, whatever the version (§2.2 quirk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_map: Option<u8>,
}

impl Header {
    pub fn decode(r: &mut PayloadReader, version: u16) -> Result<Self, FormatError> {
        let h = Header {
            source_file: r.read()?,
            map_width: r.read()?,
            chunk_width: r.read()?,
            tiles_per_chunk: r.read()?,
            use_global_water_table: r.read()?,
            global_water_height: r.read()?,
            global_water_shader_size: r.read()?,
            global_water_shader: r.read()?,
            environment_cycle_time: r.read()?,
            extra_0013: if version == 13 { Some(r.read()?) } else { None },
            collidable_flora: r.read()?,
            noncollidable_flora: r.read()?,
            radial_flora: r.read()?,
            far_radial_flora: r.read()?,
            legacy_map: if r.remaining() > 0 { Some(r.read()?) } else { None },
        };
        r.end()?;
        Ok(h)
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        self.source_file.encode(out);
        self.map_width.encode(out);
        self.chunk_width.encode(out);
        self.tiles_per_chunk.encode(out);
        self.use_global_water_table.encode(out);
        self.global_water_height.encode(out);
        self.global_water_shader_size.encode(out);
        self.global_water_shader.encode(out);
        self.environment_cycle_time.encode(out);
        if let Some(e) = &self.extra_0013 {
            e.encode(out);
        }
        self.collidable_flora.encode(out);
        self.noncollidable_flora.encode(out);
        self.radial_flora.encode(out);
        self.far_radial_flora.encode(out);
        if let Some(b) = self.legacy_map {
            b.encode(out);
        }
    }

    /// Half the map's width: the map spans −h..h metres in x and in z, centred on 0,0.
    pub fn half_width(&self) -> f64 {
        f64::from(self.map_width) / 2.0
    }

    /// Whether world position (x, z) lies on the map (its edges included).
    pub fn on_map(&self, x: f64, z: f64) -> bool {
        let h = self.half_width();
        (-h..=h).contains(&x) && (-h..=h).contains(&z)
    }

    /// The map's extent in words, for messages: `x and z from -8192 to 8192 m`.
    pub fn extent_text(&self) -> String {
        let h = self.half_width();
        format!("x and z from {} to {h} m", -h)
    }

    /// Distance between height poles: chunkWidth / (2 × tilesPerChunk) (swg-trn §5.1).
    pub fn pole_spacing(&self) -> f32 {
        if self.tiles_per_chunk > 0 && self.chunk_width > 0.0 {
            self.chunk_width / (2.0 * self.tiles_per_chunk as f32)
        } else {
            2.0
        }
    }
}

/// Raw bytes, shown as base64 in JSON.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Bytes(pub Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use base64::Engine;
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}
impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use base64::Engine;
        let s = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD.decode(s.as_bytes()).map(Bytes).map_err(|e| serde::de::Error::custom(format!("invalid base64: {e}")))
    }
}

payload_struct! {
    /// `FORM 0001/DATA` of the baked maps.
    pub struct BakedMapsInfo { pub map_width: f32, pub chunk_width: f32, pub bytes_per_row: i32, pub rows: i32 }
}

/// Baked water (WMAP) and slope (SMAP) bitmaps, one bit per chunk (swg-trn §2.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "version", rename_all = "snake_case")]
pub enum BakedMaps {
    /// `FORM 0000` (0013 files): a 12-byte DATA of unknown layout and, in the real files,
    /// empty maps. (The spec says this form has no children; the real files disagree.)
    #[serde(rename = "0000")]
    Legacy { info: Bytes, water: Bytes, slope: Bytes },
    #[serde(rename = "0001")]
    Maps { info: BakedMapsInfo, water: Bytes, slope: Bytes },
}

impl BakedMaps {
    pub fn read(f: &mut FormReader) -> Result<Self, FormatError> {
        let v = match f.tag().version() {
            Some(0) => BakedMaps::Legacy {
                info: Bytes(f.chunk(b"DATA")?.bytes_all()),
                water: Bytes(f.chunk(b"WMAP")?.bytes_all()),
                slope: Bytes(f.chunk(b"SMAP")?.bytes_all()),
            },
            Some(1) => BakedMaps::Maps { info: f.chunk_as(b"DATA")?, water: Bytes(f.chunk(b"WMAP")?.bytes_all()), slope: Bytes(f.chunk(b"SMAP")?.bytes_all()) },
            _ => return Err(f.error(format!("unknown baked-map version {}", f.tag()))),
        };
        f.end()?;
        Ok(v)
    }

    pub fn to_node(&self) -> Node {
        match self {
            BakedMaps::Legacy { info, water, slope } => {
                version_form(0, vec![chunk(b"DATA", info.0.clone()), chunk(b"WMAP", water.0.clone()), chunk(b"SMAP", slope.0.clone())])
            }
            BakedMaps::Maps { info, water, slope } => {
                version_form(1, vec![chunk_of(b"DATA", info), chunk(b"WMAP", water.0.clone()), chunk(b"SMAP", slope.0.clone())])
            }
        }
    }

    /// Bit of chunk (col, row), row 0 = south, LSB first (swg-trn §2.3).
    pub fn bit(bits: &Bytes, info: &BakedMapsInfo, col: usize, row: usize) -> Option<bool> {
        let bpr = usize::try_from(info.bytes_per_row).ok()?;
        // bytes_per_row comes from the file: checked, so a hostile row stride is `None`, not a
        // wrapped index into the wrong byte.
        let byte = *bits.0.get(row.checked_mul(bpr)?.checked_add(col / 8)?)?;
        Some(byte >> (col % 8) & 1 == 1)
    }
}

impl PayloadReader<'_> {
    /// The rest of the payload, copied.
    pub fn bytes_all(&mut self) -> Vec<u8> {
        let n = self.remaining();
        self.bytes(n, "payload").map(<[u8]>::to_vec).unwrap_or_default()
    }
}

payload_struct! {
    /// PIMP `CNTL` (swg-trn §2.4).
    pub struct PackedMapControl { pub width: u32, pub height: u32, pub bits_per_element: u32, pub minimum_value: i32 }
}

/// A packed integer map (swg-trn §2.4): `FORM PIMP { FORM 0000 { CNTL, DATA } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackedIntMap {
    pub control: PackedMapControl,
    pub data: Bytes,
}

impl PackedIntMap {
    pub fn read(f: &mut FormReader) -> Result<Self, FormatError> {
        let mut v = f.form(Some(b"0000"))?;
        let control: PackedMapControl = v.chunk_as(b"CNTL")?;
        let data = Bytes(v.chunk(b"DATA")?.bytes_all());
        v.end()?;
        f.end()?;
        Ok(PackedIntMap { control, data })
    }

    pub fn to_node(&self) -> Node {
        form(b"PIMP", vec![version_form(0, vec![chunk_of(b"CNTL", &self.control), chunk(b"DATA", self.data.0.clone())])])
    }

    /// Element at (col, row); row 0 is south (swg-trn §2.6). `None` outside the map or data.
    pub fn get(&self, col: u32, row: u32) -> Option<i32> {
        let c = &self.control;
        if col >= c.width || row >= c.height {
            return None;
        }
        let bits = c.bits_per_element as u64;
        if bits == 0 {
            return Some(c.minimum_value);
        }
        if bits > 32 {
            return None;
        }
        // Below 2^64 (row < height, col < width), but · bits can exceed it for hostile control
        // blocks (swg-trn §2.4): checked, `None` like any element past the data.
        let i = u64::from(row) * u64::from(c.width) + u64::from(col);
        let first = i.checked_mul(bits)?;
        let mut v: u64 = 0;
        for k in 0..bits {
            let b = first + k;
            let byte = *self.data.0.get((b / 8) as usize)?;
            v |= u64::from(byte >> (b % 8) & 1) << k;
        }
        Some((v as i64 + i64::from(c.minimum_value)) as i32)
    }
}

/// A packed float map (swg-trn §2.5): `FORM PFPM { FORM PIMP {…}, FORM 0000 { CNTL: f32 resolution } }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackedFloatMap {
    pub values: PackedIntMap,
    pub resolution: f32,
}

impl PackedFloatMap {
    pub fn read(f: &mut FormReader) -> Result<Self, FormatError> {
        let values = PackedIntMap::read(&mut f.form(Some(b"PIMP"))?)?;
        let mut v = f.form(Some(b"0000"))?;
        let resolution = v.chunk_as(b"CNTL")?;
        v.end()?;
        f.end()?;
        Ok(PackedFloatMap { values, resolution })
    }

    pub fn to_node(&self) -> Node {
        form(b"PFPM", vec![self.values.to_node(), version_form(0, vec![chunk_of(b"CNTL", &self.resolution)])])
    }

    pub fn get(&self, col: u32, row: u32) -> Option<f32> {
        self.values.get(col, row).map(|v| v as f32 * self.resolution)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_int_map_bits_are_lsb_first() {
        // 3 elements of 5 bits, min -2: values 1, 31, 7 packed LSB first.
        let raw = [1u64, 31, 7];
        let mut bits = 0u64;
        for (i, v) in raw.iter().enumerate() {
            bits |= v << (5 * i);
        }
        let data = bits.to_le_bytes()[..2].to_vec();
        let m = PackedIntMap { control: PackedMapControl { width: 3, height: 1, bits_per_element: 5, minimum_value: -2 }, data: Bytes(data) };
        assert_eq!(m.get(0, 0), Some(-1));
        assert_eq!(m.get(1, 0), Some(29));
        assert_eq!(m.get(2, 0), Some(5));
        assert_eq!(m.get(3, 0), None);
        let zero = PackedIntMap { control: PackedMapControl { width: 2, height: 2, bits_per_element: 0, minimum_value: 4 }, data: Bytes(vec![0]) };
        assert_eq!(zero.get(1, 1), Some(4));
    }

    /// Control blocks near 2^32 (hostile or fuzzed files): element (0, 2^28) of a 2^31-wide
    /// map of 32-bit elements starts at bit 2^64, which wraps to bit 0. A wrapped index would
    /// read byte 0 and return a value; it must be `None`. Likewise a baked-map row stride of
    /// 2^30 at row 2^34 (byte 2^64, wrapping to byte 0).
    #[test]
    fn huge_indices_are_none_not_wrapped() {
        let m = PackedIntMap {
            control: PackedMapControl { width: 1 << 31, height: u32::MAX, bits_per_element: 32, minimum_value: 0 },
            data: Bytes(vec![0xff; 64]),
        };
        assert_eq!(m.get(0, 0), Some(-1));
        assert_eq!(m.get(0, 1 << 28), None);
        let info = BakedMapsInfo { map_width: 1.0, chunk_width: 1.0, bytes_per_row: 1 << 30, rows: 1 };
        let bits = Bytes(vec![0xff; 8]);
        assert_eq!(BakedMaps::bit(&bits, &info, 0, 0), Some(true));
        assert_eq!(BakedMaps::bit(&bits, &info, 0, 1 << 34), None);
    }

    #[test]
    fn header_0015_with_trailing_byte_round_trips() {
        let h = Header {
            source_file: "C:\\x.trn".into(),
            map_width: 16384.0,
            chunk_width: 8.0,
            tiles_per_chunk: 2,
            use_global_water_table: Bool32(1),
            global_water_height: 8.0,
            global_water_shader_size: 2.0,
            global_water_shader: "wter".into(),
            environment_cycle_time: 3600.0,
            extra_0013: None,
            collidable_flora: FloraParams { min_distance: 0.0, max_distance: 50.0, tile_size: 16.0, tile_border: 4.0, seed: 0 },
            noncollidable_flora: FloraParams { min_distance: 0.0, max_distance: 50.0, tile_size: 4.0, tile_border: 1.5, seed: 0 },
            radial_flora: FloraParams { min_distance: 0.0, max_distance: 28.0, tile_size: 1.0, tile_border: 0.48, seed: 0 },
            far_radial_flora: FloraParams { min_distance: 120.0, max_distance: 500.0, tile_size: 32.0, tile_border: 12.0, seed: 0 },
            legacy_map: Some(1),
        };
        let mut bytes = Vec::new();
        h.encode(&mut bytes);
        // 9 + 4*4 + 4 + 4 + 5 + 4 (strings and scalars before the flora block) + 4*20 + 1
        assert_eq!(bytes.len(), 9 + 12 + 4 + 4 + 4 + 5 + 4 + 80 + 1);
        let mut r = PayloadReader::new(&bytes, 0, "PTAT/0015/DATA".into());
        assert_eq!(Header::decode(&mut r, 15).unwrap(), h);
        assert_eq!(h.pole_spacing(), 2.0);
    }
}
