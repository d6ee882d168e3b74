//! Arbitrary text through the JSON terrain path of `trnbake compile`:
//! `swg::json::terrain_from_json` (shape via serde, meaning via `Terrain::validate`), then
//! `to_bytes`, then the `.trn` reader. Asserts:
//! * never a panic;
//! * a terrain that `compile` accepts is written as a `.trn` that reads back to the same model
//!   (Debug text compared, so NaN fields count as equal) and writes the same bytes again;
//! * memory: parsing and validating holds at most 64 bytes per input byte + 16 MiB at once
//!   (a number list in JSON is 2 bytes a value at least, and the model holds 4-byte values in
//!   Vecs that may have doubled while growing; base64 payloads shrink by a quarter).

#![no_main]

#[path = "common/alloc.rs"]
mod alloc;

use libfuzzer_sys::fuzz_target;
use trnbake_swg::model::json::terrain_from_json;
use trnbake_swg::model::Terrain;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (parsed, peak) = alloc::peak_alloc(|| terrain_from_json(text, "fuzz.json"));
    alloc::assert_bound("terrain_from_json", peak, data.len(), 64, 16 << 20);
    let Ok(t) = parsed else { return };
    let bytes = t.to_bytes();
    let back = match Terrain::from_bytes(&bytes) {
        Ok(b) => b,
        Err(e) => panic!("a terrain that compile accepts does not read back: {e}"),
    };
    assert!(back == t || format!("{back:?}") == format!("{t:?}"), "read(compile(json)) != json's terrain");
    assert!(back.to_bytes() == bytes, "writing is not stable");
});
