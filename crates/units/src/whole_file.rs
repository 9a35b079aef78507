//! Writing a file whole or not at all, for results and state files that a crash or a full
//! disk must not leave half-written (a reader would take a torn file for a real one).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to a temporary sibling of `path` and renames it into place, so `path`
/// holds either its old contents or all of the new ones. The temporary file's name
/// carries the process id and a count, so no two writers share it; it is removed if the
/// write or the rename fails. (One killed between the two leaves it behind, hidden by its
/// leading dot; an interrupt with [`crate::interrupt`] does not.)
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = temporary_sibling(path);
    crate::interrupt::create_staged(&tmp, || std::fs::File::create(&tmp))
        .and_then(|(on_interrupt, mut file)| {
            file.write_all(bytes)?;
            drop(file);
            on_interrupt.settle(|| std::fs::rename(&tmp, path))
        })
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// `path`, or where it leads if it is a symbolic link. What is written beside a path and
/// renamed into place (a results folder, a packet log) must go beside the link's target:
/// renamed onto the link, it would replace the link itself and leave the old contents
/// where the link pointed.
pub fn through_link(path: &Path) -> Result<PathBuf, String> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(path.to_path_buf());
    }
    path.canonicalize().map_err(|e| {
        let to = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_default();
        format!("{} is a symbolic link to {to}, which cannot be followed ({e})", path.display())
    })
}

/// Whether the process `pid`, whose id a staging file or folder carries in its name, is
/// gone, so that what it left may be removed: not this process, and no `/proc/PID`. (A
/// process of another PID namespace writing into the same folder counts as gone.)
pub fn writer_is_gone(pid: u32) -> bool {
    pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
}

fn temporary_sibling(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or("file".as_ref()));
    name.push(format!("{TEMPORARY}{}-{n}", std::process::id()));
    path.with_file_name(name)
}

/// What a temporary file's name has after the name of the file it stands for.
const TEMPORARY: &str = ".tmp-";

/// Whether `name` is the temporary file of a write that did not finish (a process killed
/// between writing and renaming): ".NAME.tmp-PID-N". A folder that is replaced whole may
/// hold one; nobody reads it.
pub fn is_temporary(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else { return false };
    let Some((_, tail)) = rest.rsplit_once(TEMPORARY) else { return false };
    let mut parts = tail.split('-');
    let digits =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("cclab-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        write(&path, b"old").unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        // The rename fails (a folder that is not empty is in the way): an error, the
        // temporary removed, the folder untouched.
        let blocked = dir.join("blocked");
        std::fs::create_dir_all(blocked.join("inside")).unwrap();
        assert!(write(&blocked, b"x").is_err());
        let names: Vec<_> =
            std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(blocked.join("inside").is_dir());
        assert!(is_temporary(temporary_sibling(&path).file_name().unwrap().to_str().unwrap()));
        assert!(!is_temporary("state.json") && !is_temporary(".state.json.tmp-12"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_a_process_that_is_gone_counts_as_gone() {
        assert!(!writer_is_gone(std::process::id()));
        assert!(!writer_is_gone(1), "init runs as long as the machine");
        // Above the kernel's largest process id (pid_max is at most 2^22).
        assert!(writer_is_gone(4_194_305));
    }
}
