//! Arbitrary bytes through the NWN2 `.trn`/`.trx` reader: never a panic; an accepted input
//! is rewritten, the rewrite reads back and rewrites to the same bytes (the first rewrite may
//! differ from the input: packets are laid out contiguously), and the checks and the summary
//! run without panicking.
//!
//! Run from the crate root: `cargo +nightly fuzz run parse_nwn2 -- -max_total_time=60`
//! (seed it with small exports, e.g. `trnbake nwn2 export … --megatiles 1x1`, copied to a
//! corpus folder outside the repository).

#![no_main]

use libfuzzer_sys::fuzz_target;
use trnbake_nwn2::{check, codec, info};

fuzz_target!(|data: &[u8]| {
    let Ok(f) = codec::read(data) else { return };
    let _ = check::check(&f, true);
    let _ = info::info(&f).text();
    let Ok(out) = codec::write(&f) else { return };
    let back = codec::read(&out).expect("the written bytes read back");
    assert!(codec::write(&back).expect("writes again") == out, "read(write(f)) does not rewrite equal");
});
