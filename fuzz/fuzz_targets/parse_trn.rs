//! Arbitrary bytes through the `.trn` reader: never a panic; an accepted input is written
//! back byte for byte, and the written bytes read back to the same model.
//!
//! Run from the crate root: `cargo +nightly fuzz run parse_trn -- -max_total_time=60`
//! (seed it with small real files copied to a corpus folder outside the repository).

#![no_main]

use libfuzzer_sys::fuzz_target;
use trnbake::swg::Terrain;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = Terrain::from_bytes(data) else { return };
    let out = t.to_bytes();
    assert!(out == data, "write(read(b)) != b");
    let back = Terrain::from_bytes(&out).expect("the written bytes read back");
    // NaN fields make `==` false; the Debug text (and the bytes above) still compare them.
    assert!(back == t || format!("{back:?}") == format!("{t:?}"), "read(write(t)) != t");
    assert!(back.to_bytes() == out, "writing is not stable");
    let _ = serde_json::to_string(&t).expect("JSON serialisation");
    let _ = t.validate();
    let _ = t.info();
});
