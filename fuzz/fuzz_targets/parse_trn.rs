//! Arbitrary bytes through the `.trn` reader. Asserts:
//! * never a panic (overflow checks on: build with `cargo fuzz build -O -a`);
//! * an accepted input is written back byte for byte, the written bytes read back to the same
//!   model, and writing is stable; `validate` and `info` run on it without a panic;
//! * memory: the parse holds at most 64 bytes per input byte + 16 MiB at once (the bound of
//!   tests/robustness.rs: every payload is a copy of bytes that exist, every count is checked
//!   against the bytes left before allocating).
//!
//! The JSON serialisation is checked for inputs up to 4 KiB only: it is the slowest step and
//! the JSON path has its own target (`compile_json`); this keeps the runs/s up.
//!
//! Run with `scripts/fuzz.sh`, or `cargo +nightly fuzz run -O -a parse_trn CORPUS`.

#![no_main]

#[path = "common/alloc.rs"]
mod alloc;

use libfuzzer_sys::fuzz_target;
use trnbake_swg::model::Terrain;

/// Inputs above this size skip the JSON step.
const JSON_MAX_INPUT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let (parsed, peak) = alloc::peak_alloc(|| Terrain::from_bytes(data));
    alloc::assert_bound("Terrain::from_bytes", peak, data.len(), 64, 16 << 20);
    let Ok(t) = parsed else { return };
    let out = t.to_bytes();
    assert!(out == data, "write(read(b)) != b");
    let back = Terrain::from_bytes(&out).expect("the written bytes read back");
    // NaN fields make `==` false; the Debug text (and the bytes above) still compare them.
    assert!(back == t || format!("{back:?}") == format!("{t:?}"), "read(write(t)) != t");
    assert!(back.to_bytes() == out, "writing is not stable");
    if data.len() <= JSON_MAX_INPUT {
        let _ = serde_json::to_string(&t).expect("JSON serialisation");
    }
    let _ = t.validate();
    let _ = t.info();
});
