//! Arbitrary bytes through the SCS readers (sector `.base`/`.aux`/`.snd`, `.mbd`, `.desc`,
//! `.data`/`.layer`): never a panic, never an allocation sized by an unchecked count; an
//! accepted input is written back byte for byte, and the written bytes read back equal.
//!
//! Run from the crate root: `cargo +nightly fuzz run parse_scs -- -max_total_time=60`
//! (seed it with the files of `../shared/data/scs/modeltest` copied to a corpus folder
//! outside the repository, and with maps written by `trnbake scs export`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use trnbake_scs::codec::{Desc, Mbd, RawSectorFile, SectorFile};

fn same<T: PartialEq + std::fmt::Debug>(a: &T, b: &T) -> bool {
    // NaN fields make `==` false; the Debug text (and the bytes) still compare them.
    a == b || format!("{a:?}") == format!("{b:?}")
}

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = SectorFile::read(data, "fuzz.aux") {
        let out = f.to_bytes();
        assert!(out == data, "write(read(b)) != b");
        let back = SectorFile::read(&out, "fuzz.aux").expect("the written bytes read back");
        assert!(same(&back, &f), "read(write(f)) != f");
        let _ = serde_json::to_string(&f);
    }
    if let Ok(m) = Mbd::read(data, "fuzz.mbd") {
        assert!(m.to_bytes() == data);
        assert!(same(&Mbd::read(&m.to_bytes(), "fuzz.mbd").unwrap(), &m));
    }
    if let Ok(d) = Desc::read(data, "fuzz.desc") {
        assert!(d.to_bytes() == data);
    }
    if let Ok(r) = RawSectorFile::read(data, "fuzz.data") {
        assert!(r.to_bytes() == data);
    }
});
