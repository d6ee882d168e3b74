//! JSON shapes for `nwn2 decompile/compile`: large arrays as base64 of their file bytes (so
//! floats, NaN included, round-trip exactly and the JSON stays a few times the file size),
//! fixed-size names as plain text when they are text + NUL padding, else `base64:…`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};

pub mod b64 {
    use super::*;
    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(v))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        STANDARD.decode(s.as_bytes()).map_err(D::Error::custom)
    }
}

pub mod b64pod {
    use super::*;
    pub fn serialize<S: Serializer, T: bytemuck::Pod>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytemuck::cast_slice::<T, u8>(v)))
    }
    pub fn deserialize<'de, D: Deserializer<'de>, T: bytemuck::Pod>(d: D) -> Result<Vec<T>, D::Error> {
        let s = String::deserialize(d)?;
        let bytes = STANDARD.decode(s.as_bytes()).map_err(D::Error::custom)?;
        let size = std::mem::size_of::<T>();
        if bytes.len() % size != 0 {
            return Err(D::Error::custom(format!("{} bytes is not a whole number of {size}-byte records", bytes.len())));
        }
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }
}

/// Text form of a fixed name, or `None` when it needs base64.
fn as_text(b: &[u8]) -> Option<&str> {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    if b[end..].iter().any(|&c| c != 0) {
        return None;
    }
    let s = std::str::from_utf8(&b[..end]).ok()?;
    (!s.starts_with("base64:") && !s.chars().any(|c| c.is_control())).then_some(s)
}

fn encode_fixed(b: &[u8]) -> String {
    match as_text(b) {
        Some(s) => s.to_string(),
        None => format!("base64:{}", STANDARD.encode(b)),
    }
}

fn decode_fixed<const N: usize>(s: &str) -> Result<[u8; N], String> {
    let mut out = [0u8; N];
    if let Some(b) = s.strip_prefix("base64:") {
        let v = STANDARD.decode(b.as_bytes()).map_err(|e| e.to_string())?;
        if v.len() != N {
            return Err(format!("base64 name holds {} bytes, the field has {N}", v.len()));
        }
        out.copy_from_slice(&v);
    } else {
        if s.len() > N {
            return Err(format!("`{s}` is longer than the field's {N} bytes"));
        }
        out[..s.len()].copy_from_slice(s.as_bytes());
    }
    Ok(out)
}

pub mod fixed {
    use super::*;
    pub fn serialize<S: Serializer, const N: usize>(b: &[u8; N], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode_fixed(b))
    }
    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[u8; N], D::Error> {
        let s = String::deserialize(d)?;
        decode_fixed(&s).map_err(D::Error::custom)
    }
}

pub mod fixed_arr {
    use super::*;
    use serde::ser::SerializeSeq;
    pub fn serialize<S: Serializer, const N: usize, const M: usize>(b: &[[u8; N]; M], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(M))?;
        for x in b {
            seq.serialize_element(&encode_fixed(x))?;
        }
        seq.end()
    }
    pub fn deserialize<'de, D: Deserializer<'de>, const N: usize, const M: usize>(d: D) -> Result<[[u8; N]; M], D::Error> {
        let v = Vec::<String>::deserialize(d)?;
        if v.len() != M {
            return Err(D::Error::custom(format!("{} names, expected {M}", v.len())));
        }
        let mut out = [[0u8; N]; M];
        for (o, s) in out.iter_mut().zip(&v) {
            *o = decode_fixed(s).map_err(D::Error::custom)?;
        }
        Ok(out)
    }
}
