//! One writer per golden folder: `--bless` holds an exclusive advisory lock on the folder from
//! reading `golden.json` to writing it back, and a check holds a shared one, so two blesses of
//! different fixtures both land (the second reads what the first wrote) and a check never
//! compares an image with the figures of another bless.
//!
//! The lock is on the folder itself (its directory handle) where the OS allows it (Unix), so a
//! golden folder under version control gets no extra file; elsewhere on a `.trnbake-golden.lock`
//! file inside it. The OS releases it when the process ends, however it ends.

use crate::{Error, Reporter, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// The lock file where a folder cannot be locked itself (not Unix).
pub const LOCK_FILE: &str = ".trnbake-golden.lock";

/// A held lock on a golden folder; dropping it releases the lock.
#[derive(Debug)]
pub struct GoldenLock {
    _file: File,
}

fn open(dir: &Path) -> std::io::Result<File> {
    if cfg!(unix) {
        File::open(dir)
    } else {
        OpenOptions::new().read(true).write(true).create(true).truncate(false).open(dir.join(LOCK_FILE))
    }
}

/// Lock `dir`: exclusively for `--bless`, shared for a check, waiting (with a note to
/// `reporter`) while another run holds it. `Ok(None)` when the folder cannot be opened (a missing
/// folder is reported by the manifest's reader) or, for a check, cannot be locked (a read-only
/// share: checks only read); a bless that cannot lock is an error.
pub fn lock(dir: &Path, exclusive: bool, reporter: &dyn Reporter) -> Result<Option<GoldenLock>> {
    let Ok(file) = open(dir) else { return Ok(None) };
    let tried = if exclusive { file.try_lock() } else { file.try_lock_shared() };
    let waited = match tried {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => {
            let who = if exclusive { "another trnbake check of" } else { "a trnbake check --bless of" };
            reporter.note(format!("waiting for {who} {} to finish", dir.display()));
            if exclusive {
                file.lock()
            } else {
                file.lock_shared()
            }
        }
        Err(TryLockError::Error(e)) => Err(e),
    };
    match waited {
        Ok(()) => Ok(Some(GoldenLock { _file: file })),
        Err(_) if !exclusive => Ok(None),
        Err(e) => Err(Error::Invalid(format!("cannot lock {} for --bless (two blesses at once would lose updates): {e}", dir.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnbake_swg::report::NullReporter;
    const Q: &NullReporter = &NullReporter;

    #[test]
    fn exclusive_excludes_and_shared_shares() {
        let dir = std::env::temp_dir().join(format!("trnbake-golden-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = lock(&dir, false, Q).unwrap().expect("a shared lock");
        let b = lock(&dir, false, Q).unwrap().expect("two shared locks at once");
        // An exclusive lock waits for both: try it on a fresh handle without blocking.
        assert!(matches!(open(&dir).unwrap().try_lock(), Err(TryLockError::WouldBlock)));
        drop((a, b));
        let x = lock(&dir, true, Q).unwrap().expect("an exclusive lock");
        assert!(matches!(open(&dir).unwrap().try_lock_shared(), Err(TryLockError::WouldBlock)));
        drop(x);
        assert!(lock(&dir.join("missing"), true, Q).unwrap().is_none(), "a missing folder is left to the manifest's reader");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
