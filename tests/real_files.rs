//! Every real `.trn` parses and round-trips byte for byte, through the typed model and
//! through JSON (issue: Foundation).

mod common;
use trnbake_swg::model::Terrain;

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn every_real_file_round_trips_through_model_and_json() {
    let files = common::all_trn_files();
    if files.is_empty() {
        return;
    }
    assert_eq!(files.len(), 29, "expected 27 + 2 real files");
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let t = Terrain::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(t.to_bytes() == bytes, "{}: write(read(f)) != f", path.display());
        let json = serde_json::to_string(&t).unwrap();
        let back: Terrain = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(back.validate().is_empty(), "{}: {:?}", path.display(), back.validate());
        assert!(back.to_bytes() == bytes, "{}: compile(decompile(f)) != f", path.display());
        let info = t.info();
        assert!(info.layers > 0 || path.ends_with("space_env.trn") || info.layers == 0);
    }
}
