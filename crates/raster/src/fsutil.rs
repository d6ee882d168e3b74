//! Atomic output: write to a temporary file beside the target, then rename, so a killed run
//! never leaves a truncated file that looks complete.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary name used while `path` is being written: `.NAME.PID.partial` beside it.
pub fn temp_path_for(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

/// The process that wrote `name` when it is one of our temp files (`.NAME.PID.partial`).
pub fn temp_file_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".partial")?;
    let (stem, pid) = inner.rsplit_once('.')?;
    if stem.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// Temp files this process is writing now, so an interrupted run can remove them
/// ([`interrupt`]) instead of leaving them beside the outputs.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Set once the process is being interrupted: no new temp file is started after that.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a SIGINT/SIGTERM handler: refuses new temp files from now on and removes every temp
/// file this process is still writing; returns how many were removed.
pub fn interrupt() -> usize {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    pending().drain(..).filter(|p| std::fs::remove_file(p).is_ok()).count()
}

/// Removes our temp files (`.NAME.PID.partial`) left in `dir` by runs that are no longer
/// running (a kill -9, a power loss). Only this naming pattern is touched, and only files of
/// processes that are gone (on Linux, no `/proc/PID`; elsewhere any other PID). Returns the
/// paths removed.
pub fn sweep_stale_temps(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(e),
    };
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_file_pid(&name) else { continue };
        let alive = pid == std::process::id() || (cfg!(target_os = "linux") && running(pid));
        if !alive && e.file_type()?.is_file() {
            std::fs::remove_file(e.path())?;
            removed.push(e.path());
        }
    }
    Ok(removed)
}

/// Whether process `pid` still runs (Linux): `/proc/PID` exists and is not a zombie (`Z`) or
/// dead (`X`, `x`). A killed run whose parent has not reaped it yet keeps its `/proc` entry
/// but writes nothing more, so its temp files are swept as a dead run's.
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `PID (COMM) STATE …`: COMM may hold spaces and parentheses, the state follows the last `)`.
        Ok(stat) => !matches!(stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next()), Some('Z' | 'X' | 'x')),
        Err(_) => Path::new(&format!("/proc/{pid}")).exists(),
    }
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
pub fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>) -> std::io::Result<()> {
    write_via_temp(path, true, fill)
}

/// Temp file beside `path`, `fill`, optionally fsync, rename; the temp file is removed on error.
fn write_via_temp(path: &Path, sync: bool, fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    fill(f.writer())?;
    f.commit(sync)
}

/// Registers `tmp` as a temp file of this process (refused once the process is interrupted).
fn register(tmp: &Path) -> std::io::Result<()> {
    let mut pending = pending();
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
    }
    pending.push(tmp.to_path_buf());
    Ok(())
}

fn unregister(tmp: &Path) {
    pending().retain(|p| p != tmp);
}

/// A file written under its temporary name ([`temp_path_for`]) and renamed onto its target by
/// [`AtomicFile::commit`]; dropped uncommitted (an error, a panic), the temp file is removed.
/// For writers that fill a file over many calls ([`write_atomic_with`] is the one-closure form).
pub struct AtomicFile {
    tmp: PathBuf,
    target: PathBuf,
    w: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    /// Creates the temp file beside `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let tmp = temp_path_for(path);
        register(&tmp)?;
        match std::fs::File::create(&tmp) {
            Ok(file) => Ok(Self { tmp, target: path.to_path_buf(), w: Some(std::io::BufWriter::with_capacity(1 << 20, file)) }),
            Err(e) => {
                unregister(&tmp);
                Err(e)
            }
        }
    }

    /// The (buffered) writer of the temp file.
    pub fn writer(&mut self) -> &mut std::io::BufWriter<std::fs::File> {
        self.w.as_mut().expect("an AtomicFile is written until it is committed")
    }

    /// Flushes, optionally fsyncs, and renames the temp file onto the target.
    pub fn commit(mut self, sync: bool) -> std::io::Result<()> {
        let w = self.w.take().expect("committed once");
        let file = w.into_inner().map_err(|e| e.into_error())?;
        if sync {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&self.tmp, &self.target)?;
        unregister(&self.tmp);
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.w.take().is_some() || self.tmp.exists() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        unregister(&self.tmp);
    }
}

/// A scratch file beside an output (`.NAME.TAG.PID.partial`, so [`sweep_stale_temps`] and
/// [`interrupt`] know it), appended to and read back at positions, removed when dropped.
pub struct ScratchFile {
    path: PathBuf,
    w: std::io::BufWriter<std::fs::File>,
    len: u64,
}

impl ScratchFile {
    /// Creates the scratch file `TAG` of the output `beside`.
    pub fn create(beside: &Path, tag: &str) -> std::io::Result<Self> {
        let name = beside.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = beside.with_file_name(format!(".{name}.{tag}.{}.partial", std::process::id()));
        register(&path)?;
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path);
        match file {
            Ok(file) => Ok(Self { path, w: std::io::BufWriter::with_capacity(1 << 20, file), len: 0 }),
            Err(e) => {
                unregister(&path);
                Err(e)
            }
        }
    }

    /// Appends `bytes`; returns the position they start at.
    pub fn append(&mut self, bytes: &[u8]) -> std::io::Result<u64> {
        let at = self.len;
        self.w.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Reads `buf.len()` bytes at `pos` (anything appended so far).
    pub fn read_at(&mut self, pos: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.w.flush()?;
        crate::source::read_exact_at(self.w.get_ref(), buf, pos)
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        unregister(&self.path);
    }
}

/// Writes `v` as pretty JSON to `path` atomically (temp + rename) and returns its manifest
/// entry (format `json`).
pub fn write_json(path: &Path, v: &serde_json::Value) -> std::io::Result<crate::WrittenFile> {
    write_atomic(path, serde_json::to_string_pretty(v).map_err(std::io::Error::other)?.as_bytes())?;
    crate::WrittenFile::of_file(path, "json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_temps_of_gone_processes_are_swept_and_nothing_else() {
        let d = std::env::temp_dir().join(format!("trnbake-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let gone = d.join(".height.tif.4000000000.partial"); // beyond any pid_max
        let mine = temp_path_for(&d.join("height.png"));
        let others = [d.join("height.tif"), d.join(".hidden"), d.join(".x.partial"), d.join(".y.12.partial.bak")];
        for p in others.iter().chain([&gone, &mine]) {
            std::fs::write(p, b"x").unwrap();
        }
        assert_eq!(temp_file_pid(".height.tif.4000000000.partial"), Some(4_000_000_000));
        assert_eq!(temp_file_pid(".x.partial"), None);
        let removed = sweep_stale_temps(&d).unwrap();
        assert_eq!(removed, vec![gone.clone()]);
        assert!(!gone.exists() && mine.exists());
        assert!(others.iter().all(|p| p.exists()));
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A run killed but not yet reaped (a zombie, still in `/proc`) writes nothing more: its
    /// temp files are swept.
    #[cfg(target_os = "linux")]
    #[test]
    fn stale_temps_of_an_unreaped_killed_process_are_swept() {
        let d = std::env::temp_dir().join(format!("trnbake-sweep-zombie-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let (pid, live) = (child.id(), d.join(format!(".a.png.{}.partial", child.id())));
        std::fs::write(&live, b"x").unwrap();
        assert!(sweep_stale_temps(&d).unwrap().is_empty(), "the temp file of a running process was swept");
        child.kill().unwrap();
        // Killed, not waited for: a zombie once the kernel is done with it.
        let start = std::time::Instant::now();
        while !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap().contains(") Z") {
            assert!(start.elapsed().as_secs() < 10, "the killed child never became a zombie");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(sweep_stale_temps(&d).unwrap(), vec![live]);
        child.wait().unwrap();
        std::fs::remove_dir_all(&d).unwrap();
    }

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
