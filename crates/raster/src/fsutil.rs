//! Atomic output: write to a temporary file beside the target, then rename, so a killed run
//! never leaves a truncated file that looks complete.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name used while `path` is being written.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

/// Write `bytes` to `path` atomically (temp file + fsync + rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Write `bytes` to `path` through a temp file and a rename, without the fsync: a killed run
/// never leaves a partial file under the final name, but a crash of the whole machine may
/// lose it. For scratch files that are recomputed when missing (a bake's tile checkpoints).
pub fn write_renamed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via_temp(path, false, |w| w.write_all(bytes))
}

/// Stream into `path` atomically: `fill` writes the content; on any error the temp file is removed.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_via_temp(path, true, fill)
}

/// Temp file beside `path`, `fill`, optionally fsync, rename; the temp file is removed on error.
fn write_via_temp(
    path: &Path,
    sync: bool,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temp_path_for(path);
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        if sync {
            file.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("trnbake-fsutil-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        let r = write_atomic_with(&target, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("killed"))
        });
        assert!(r.is_err());
        assert!(!target.exists());
        assert!(!temp_path_for(&target).exists());
        write_atomic(&target, b"whole").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
