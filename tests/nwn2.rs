//! NWN2 `.trn`/`.trx`: real-file round trips, checks, export, pathing and CLI (spec nwn2.md).

mod common;

use std::path::PathBuf;

use trnbake::nwn2::{codec, model::*};

/// A real NWN2 file under `../shared/data/nwn2`, or `None` with a skip (CI: missing fails).
fn nwn2_file(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/nwn2").join(name);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("test data {} is missing (required in CI)", p.display());
    }
    eprintln!("skipping: test data {} is missing", p.display());
    None
}

const SAMPLES: [&str; 2] = ["TestImportExportTRN.trn", "TestImportExportTRN.trx"];

#[test]
fn real_files_rewrite_byte_exact() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let bytes = std::fs::read(&p).unwrap();
        let f = codec::read(&bytes).unwrap();
        assert_eq!(codec::write(&f).unwrap(), bytes, "{name}");
    }
}

#[test]
fn real_aswm_reencodes_byte_exact_when_decompressed() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let mut f = trnbake::nwn2::load(&p).unwrap();
        let Some(Packet::Aswm(a)) = f.packets.iter_mut().find(|p| matches!(p, Packet::Aswm(_))) else { panic!("no ASWM in {name}") };
        let orig = a.original.take().expect("the samples compress their ASWM");
        // The decompressed data, re-encoded from the model, equals what the stream held.
        let mut inflated = Vec::new();
        use std::io::Read;
        flate2::read::ZlibDecoder::new(&orig.stream[..]).read_to_end(&mut inflated).unwrap();
        assert_eq!(codec::write_aswm(&a.aswm).unwrap(), inflated, "{name}");
        // Without the original stream the file is recompressed, and reads back to the same walkmesh.
        let again = codec::read(&codec::write(&f).unwrap()).unwrap();
        assert_eq!(codec::write_aswm(again.aswm().unwrap()).unwrap(), inflated);
    }
}
