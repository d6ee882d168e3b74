//! One owner per output folder, and a manifest that never lies.
//!
//! A bake or merge first claims its folder ([`OutputFolder::claim`]):
//! - an advisory lock on `.trnbake.lock` (held until the claim is dropped, released by the OS
//!   when the process dies), so a second bake into the same folder fails at once, naming the
//!   holder's PID. The owner unlinks the file when it is done, while still holding the lock;
//!   an opener that then locks the unlinked file sees that it is no longer the one at the path
//!   (device and inode differ, or the path is gone) and opens the path again, so two runs never
//!   both hold the folder and a finished folder keeps no lock file;
//! - temp files (`.NAME.PID.partial`) left by runs that died are swept;
//! - an existing `manifest.json` is rewritten as `"status": "in progress"` before any output is
//!   replaced, so a manifest on disk never describes files it does not match: it lists outputs
//!   only once they are all written (`"status": "complete"`, written last).
//!
//! Outputs of an earlier bake that this one does not write (a `.ter` of another run beside a new
//! heights-only bake) are removed when this one finishes ([`OutputFolder::remove_stale`]); the
//! earlier manifest's list is carried in the in-progress manifest, so a run killed in between
//! still removes them next time. As soon as a run knows what it will write, its in-progress
//! manifest names it too (`planned_outputs`: the catalogue's file patterns of its maps,
//! [`OutputFolder::plan`]), so the maps of a run killed before its manifest was complete are
//! outputs of a previous bake to the next run. Only files an earlier manifest listed or planned
//! are ever removed, never through a symbolic link nor outside the folder; files that look like
//! maps of the catalogue but that no manifest names are kept, and named in a note
//! ([`OutputFolder::note_unlisted`]).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use trnbake_raster::fsutil::{sweep_stale_temps, write_atomic};
use trnbake_raster::WrittenFile;

use crate::{Error, Reporter, Result};
use trnbake_swg::maps::{MapKind, MAPS};

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

/// A claimed output folder; dropping it releases the lock (and removes the lock file).
pub struct OutputFolder {
    dir: PathBuf,
    lock: Option<File>,
    /// Outputs an earlier manifest of this folder listed, or a killed run planned and left
    /// (relative paths).
    previous: Vec<String>,
}

/// What trnbake keeps under each of its own names in an output folder: a name taken by the
/// other kind (a file where the checkpoints' folder goes, a folder named `manifest.json`) is
/// refused before anything is written.
const OWN_NAMES: [(&str, bool, &str); 4] = [
    (crate::store::CHECKPOINT_DIR, true, "its checkpoints (a folder)"),
    (MANIFEST_FILE, false, "its manifest (a file)"),
    (crate::store::STATE_FILE, false, "its bake state (a file)"),
    (LOCK_FILE, false, "its lock (a file)"),
];

impl OutputFolder {
    /// Claims `dir` (creating it): lock, sweep, manifest in progress. `resume_note` is what an
    /// interrupted run keeps (printed by a signal handler), if anything. Temp files swept are
    /// a note to `reporter`. Another owner is [`Error::FolderInUse`]; a folder that cannot be
    /// created or locked is [`Error::FolderNotWritable`], a file or folder of the user's where
    /// trnbake keeps its own is [`Error::InTheWay`].
    pub fn claim(dir: &Path, resume_note: Option<String>, reporter: &dyn Reporter) -> Result<OutputFolder> {
        std::fs::create_dir_all(dir).map_err(|source| Error::FolderNotWritable { dir: dir.to_path_buf(), source })?;
        for (name, folder, what) in OWN_NAMES {
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() != folder) {
                return Err(Error::InTheWay { path, what });
            }
        }
        let lock = lock_folder(dir)?;

        let mut swept = sweep_stale_temps(dir)?;
        swept.extend(sweep_stale_temps(&dir.join(crate::store::CHECKPOINT_DIR))?);
        if !swept.is_empty() {
            reporter.note(format!("removed {} temporary file(s) left in {} by an interrupted run", swept.len(), dir.display()));
        }

        let previous = previous_outputs(dir);
        let folder = OutputFolder { dir: dir.to_path_buf(), lock: Some(lock), previous };
        if dir.join(MANIFEST_FILE).exists() {
            folder.write_in_progress(&[])?;
        }
        set_interrupt_note(resume_note);
        Ok(folder)
    }

    /// The manifest in progress: the outputs of earlier runs still to be removed, and the file
    /// patterns of what this run will write (`planned`).
    fn write_in_progress(&self, planned: &[&str]) -> Result<()> {
        let v = serde_json::json!({
            "trnbake_version": env!("CARGO_PKG_VERSION"),
            "status": "in progress",
            "previous_outputs": self.previous,
            "planned_outputs": planned,
        });
        let path = self.dir.join(MANIFEST_FILE);
        write_atomic(&path, serde_json::to_string_pretty(&v)?.as_bytes()).map_err(crate::error::writing(&path))
    }

    /// Records in the manifest in progress what this run will write: the catalogue's file
    /// patterns of `maps` ([`MAPS`]). A run killed after this leaves maps that the next run
    /// into the folder knows as outputs of a previous bake (and removes if it does not write
    /// them). Call once the maps are known, before any of them is written.
    pub fn plan(&self, maps: &[MapKind]) -> Result<()> {
        let planned: Vec<&str> = maps.iter().flat_map(|m| m.info().files.iter().copied()).collect();
        self.write_in_progress(&planned)
    }

    /// Files in the folder that the catalogue names as maps ([`MAPS`]) but that `written` does
    /// not list (no manifest of this folder names them: maps of an older trnbake, of a run killed
    /// before it planned them, or copied in), told in a note naming them; they are kept. Call
    /// after [`OutputFolder::remove_stale`]. Returns them.
    pub fn note_unlisted(&self, written: &[WrittenFile], reporter: &dyn Reporter) -> Vec<String> {
        let now: BTreeSet<&str> = written.iter().map(|w| w.path.as_str()).collect();
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut unlisted: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !now.contains(n.as_str()) && MAPS.iter().any(|m| m.files.iter().any(|p| pattern_matches(p, n))))
            .collect();
        unlisted.sort();
        if !unlisted.is_empty() {
            reporter.note(format!(
                "{} holds {} file(s) named like trnbake maps that no manifest lists (left by another run or tool, kept): {}",
                self.dir.display(),
                unlisted.len(),
                unlisted.join(", ")
            ));
        }
        unlisted
    }

    /// Removes the files an earlier manifest listed that `written` does not include; returns
    /// them (and tells `reporter`). Call after every output and before the final manifest.
    pub fn remove_stale(&self, written: &[WrittenFile], reporter: &dyn Reporter) -> Vec<PathBuf> {
        let now: BTreeSet<&str> = written.iter().map(|w| w.path.as_str()).collect();
        let mut removed = Vec::new();
        for rel in self.previous.iter().filter(|p| !now.contains(p.as_str())) {
            // A manifest is no licence to delete elsewhere: only regular files inside the
            // folder, reached through no symbolic link.
            let Some(p) = inside(&self.dir, rel) else { continue };
            if std::fs::remove_file(&p).is_ok() {
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
        if let Some(lock) = self.lock.take() {
            // The lock file goes while we still hold its lock (see the module notes: an opener
            // that locks the unlinked file opens the path again); only if it is still ours.
            let path = self.dir.join(LOCK_FILE);
            if cfg!(unix) && is_the_file_at(&lock, &path) {
                let _ = std::fs::remove_file(&path);
            }
            let _ = lock.unlock();
        }
    }
}

/// Opens and locks `dir`'s lock file: the file locked must still be the one at the path (an
/// owner that finished unlinks it while holding the lock), else the path is opened again.
fn lock_folder(dir: &Path) -> Result<File> {
    let lock_path = dir.join(LOCK_FILE);
    for _ in 0..64 {
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|source| Error::FolderNotWritable { dir: dir.to_path_buf(), source })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                return Err(Error::FolderInUse { dir: dir.to_path_buf(), pid: holder.trim().parse::<u32>().ok() });
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(Error::FolderNotWritable { dir: dir.to_path_buf(), source }),
        }
        if !is_the_file_at(&lock, &lock_path) {
            // Its owner finished and unlinked it between our open and our lock.
            continue;
        }
        // Our PID, for the message of the next one.
        let _ = lock.set_len(0).and_then(|()| lock.rewind()).and_then(|()| write!(lock, "{}", std::process::id()));
        return Ok(lock);
    }
    Err(Error::Invalid(format!("cannot lock {}: its lock file keeps being replaced", dir.display())))
}

/// Whether the open `file` is the file at `path` now (same device and inode; elsewhere than
/// Unix, where an open file cannot be unlinked, always).
fn is_the_file_at(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// `dir/rel` when it is a regular file inside `dir` reached through no symbolic link: `rel`
/// plain relative names only, every component of the path below `dir` a real folder (or, the
/// last, a regular file), and the canonical path under the canonical `dir`.
fn inside(dir: &Path, rel: &str) -> Option<PathBuf> {
    let rel = Path::new(rel);
    let n = rel.components().count();
    if n == 0 || !rel.components().all(|c| matches!(c, std::path::Component::Normal(_))) {
        return None;
    }
    let mut p = dir.to_path_buf();
    for (k, c) in rel.components().enumerate() {
        p.push(c);
        let m = std::fs::symlink_metadata(&p).ok()?;
        let ok = if k + 1 == n { m.file_type().is_file() } else { m.file_type().is_dir() };
        if !ok {
            return None;
        }
    }
    let (root, real) = (std::fs::canonicalize(dir).ok()?, std::fs::canonicalize(&p).ok()?);
    (real.starts_with(&root) && real != root).then_some(p)
}

/// The outputs a folder's manifest lists: a complete manifest's `outputs`; or an in-progress
/// one's `previous_outputs` and the files of the folder that match its `planned_outputs` (what
/// a killed run wrote).
fn previous_outputs(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join(MANIFEST_FILE)) else { return Vec::new() };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    let names = |list: &serde_json::Value| -> Vec<String> {
        list.as_array().map(|a| a.iter().filter_map(|o| o.get("path").and_then(|p| p.as_str()).or(o.as_str()).map(String::from)).collect()).unwrap_or_default()
    };
    if v["status"] != "in progress" {
        return names(&v["outputs"]);
    }
    let mut out = names(&v["previous_outputs"]);
    let planned = names(&v["planned_outputs"]);
    if !planned.is_empty() {
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut left: Vec<String> = entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| planned.iter().any(|p| pattern_matches(p, n)) && !out.contains(n))
                .collect();
            left.sort();
            out.extend(left);
        }
    }
    out
}

/// Whether file name `name` matches a catalogue pattern: literal text, and placeholders in
/// braces: `{k}`, `{i}`, `{j}` and `{family}` a whole number (`{family}` signed), others
/// (`{class}`, `{layer}`, `{ext}`) a run of letters, digits, `-` and `_`.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let Some(open) = pattern.find('{') else { return pattern == name };
    let Some(close) = pattern[open..].find('}').map(|c| open + c) else { return pattern == name };
    let (lit, key, rest) = (&pattern[..open], &pattern[open + 1..close], &pattern[close + 1..]);
    let Some(tail) = name.strip_prefix(lit) else { return false };
    let numeric = matches!(key, "k" | "i" | "j" | "family");
    let ok = |k: usize, c: char| {
        if numeric {
            c.is_ascii_digit() || (key == "family" && k == 0 && c == '-')
        } else {
            c.is_ascii_alphanumeric() || c == '-' || c == '_'
        }
    };
    // Every length of the placeholder's text that the rest of the pattern then matches.
    for (k, c) in tail.char_indices() {
        if !ok(k, c) {
            break;
        }
        let end = k + c.len_utf8();
        let text = &tail[..end];
        if (!numeric || text.chars().any(|c| c.is_ascii_digit())) && pattern_matches(rest, &tail[end..]) {
            return true;
        }
    }
    false
}

/// `trnbake_raster::fsutil::write_json`, its error naming `path` ([`Error::Write`]).
pub(crate) fn write_json(path: &Path, v: &serde_json::Value) -> crate::Result<WrittenFile> {
    trnbake_raster::fsutil::write_json(path, v).map_err(crate::error::writing(path))
}

#[cfg(test)]
mod tests {
    use super::pattern_matches;

    #[test]
    fn catalogue_patterns_match_the_files_they_name() {
        assert!(pattern_matches("splat_{k}.png", "splat_0.png"));
        assert!(pattern_matches("splat_{k}.png", "splat_12.png"));
        assert!(!pattern_matches("splat_{k}.png", "splat_mine.png"));
        assert!(!pattern_matches("splat_{k}.png", "splat_.png"));
        assert!(pattern_matches("flora_{class}_family_{family}.png", "flora_radial_family_-3.png"));
        assert!(pattern_matches("flora_{class}_family_{family}.pgw", "flora_far_family_12.pgw"));
        assert!(!pattern_matches("flora_{class}_density.png", "flora_a.b_density.png"));
        assert!(pattern_matches("height_x{i}_y{j}.{ext}", "height_x0_y3.tif"));
        assert!(pattern_matches("height.tif", "height.tif") && !pattern_matches("height.tif", "height.tiff"));
    }
}
