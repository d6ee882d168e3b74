//! One owner per output folder, and a manifest that never lies.
//!
//! A bake or merge first claims its folder ([`OutputFolder::claim`]):
//! - an advisory lock on `.trnbake.lock` (held until the claim is dropped, released by the OS
//!   when the process dies; the small file stays), so a second bake into the same folder fails
//!   at once, naming the holder's PID;
//! - temp files (`.NAME.PID.partial`) left by runs that died are swept;
//! - an existing `manifest.json` is rewritten as `"status": "in progress"` before any output is
//!   replaced, so a manifest on disk never describes files it does not match: it lists outputs
//!   only once they are all written (`"status": "complete"`, written last).
//!
//! Outputs of an earlier bake that this one does not write (a `.ter` of another run beside a new
//! heights-only bake) are removed when this one finishes ([`OutputFolder::remove_stale`]); the
//! earlier manifest's list is carried in the in-progress manifest, so a run killed in between
//! still removes them next time. Only files an earlier manifest listed are ever removed.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use trnbake_raster::fsutil::{sweep_stale_temps, write_atomic};
use trnbake_raster::WrittenFile;

use crate::{Error, Reporter, Result};

/// The lock file in an output folder.
pub const LOCK_FILE: &str = ".trnbake.lock";
/// The manifest of an output folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// What an interrupted run should tell its user (what is kept for a resume), set while a
/// folder is claimed; read by the command line's signal handler.
static INTERRUPT_NOTE: Mutex<Option<String>> = Mutex::new(None);

/// The note for an interrupted run, if a bake is under way.
pub fn interrupt_note() -> Option<String> {
    INTERRUPT_NOTE.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn set_interrupt_note(note: Option<String>) {
    *INTERRUPT_NOTE.lock().unwrap_or_else(|e| e.into_inner()) = note;
}

/// A claimed output folder; dropping it releases the lock.
pub struct OutputFolder {
    dir: PathBuf,
    lock: Option<File>,
    /// Outputs an earlier manifest of this folder listed (relative paths).
    previous: Vec<String>,
}

impl OutputFolder {
    /// Claims `dir` (creating it): lock, sweep, manifest in progress. `resume_note` is what an
    /// interrupted run keeps (printed by a signal handler), if anything. Temp files swept are
    /// a note to `reporter`. Another owner is [`Error::FolderInUse`].
    pub fn claim(dir: &Path, resume_note: Option<String>, reporter: &dyn Reporter) -> Result<OutputFolder> {
        std::fs::create_dir_all(dir).map_err(|e| Error::Invalid(format!("cannot create {}: {e}", dir.display())))?;
        let lock_path = dir.join(LOCK_FILE);
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| Error::Invalid(format!("cannot open {}: {e}", lock_path.display())))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                return Err(Error::FolderInUse { dir: dir.to_path_buf(), pid: holder.trim().parse::<u32>().ok() });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::Invalid(format!("cannot lock {}: {e}", lock_path.display()))),
        }
        // Our PID, for the message of the next one.
        let _ = lock.set_len(0).and_then(|()| lock.rewind()).and_then(|()| write!(lock, "{}", std::process::id()));

        let mut swept = sweep_stale_temps(dir)?;
        swept.extend(sweep_stale_temps(&dir.join(crate::store::CHECKPOINT_DIR))?);
        if !swept.is_empty() {
            reporter.note(format!("removed {} temporary file(s) left in {} by an interrupted run", swept.len(), dir.display()));
        }

        let previous = previous_outputs(&dir.join(MANIFEST_FILE));
        if dir.join(MANIFEST_FILE).exists() {
            let v = serde_json::json!({
                "trnbake_version": env!("CARGO_PKG_VERSION"),
                "status": "in progress",
                "previous_outputs": previous,
            });
            write_atomic(&dir.join(MANIFEST_FILE), serde_json::to_string_pretty(&v)?.as_bytes())?;
        }
        set_interrupt_note(resume_note);
        Ok(OutputFolder { dir: dir.to_path_buf(), lock: Some(lock), previous })
    }

    /// Removes the files an earlier manifest listed that `written` does not include; returns
    /// them (and tells `reporter`). Call after every output and before the final manifest.
    pub fn remove_stale(&self, written: &[WrittenFile], reporter: &dyn Reporter) -> Vec<PathBuf> {
        let now: BTreeSet<&str> = written.iter().map(|w| w.path.as_str()).collect();
        let mut removed = Vec::new();
        for rel in self.previous.iter().filter(|p| !now.contains(p.as_str())) {
            // Only plain relative names inside the folder: a manifest is no licence to delete elsewhere.
            let safe = Path::new(rel).components().all(|c| matches!(c, std::path::Component::Normal(_)));
            let p = self.dir.join(rel);
            if safe && p.is_file() && std::fs::remove_file(&p).is_ok() {
                removed.push(p);
            }
        }
        if !removed.is_empty() {
            reporter.note(format!("removed {} file(s) of the previous bake in {} that this one does not write", removed.len(), self.dir.display()));
        }
        removed
    }
}

impl Drop for OutputFolder {
    fn drop(&mut self) {
        set_interrupt_note(None);
        // The lock file stays (removing it would let a waiting opener and a new creator both
        // lock); the OS releases the lock with the file handle.
        if let Some(lock) = self.lock.take() {
            let _ = lock.unlock();
        }
    }
}

/// The outputs a folder's manifest lists: a complete manifest's `outputs`, or the
/// `previous_outputs` an in-progress one carries.
fn previous_outputs(manifest: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(manifest) else { return Vec::new() };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    let list = if v["status"] == "in progress" { &v["previous_outputs"] } else { &v["outputs"] };
    let names =
        list.as_array().map(|a| a.iter().filter_map(|o| o.get("path").and_then(|p| p.as_str()).or(o.as_str()).map(String::from)).collect()).unwrap_or_default();
    names
}
