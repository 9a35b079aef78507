//! Writing a file whole or not at all, for results and state files that a crash or a full
//! disk must not leave half-written (a reader would take a torn file for a real one).

use std::path::{Path, PathBuf};

/// Writes `bytes` to a temporary sibling of `path` and renames it into place, so `path`
/// holds either its old contents or all of the new ones. The temporary file's name
/// carries the process id, so two processes writing one path do not share it; it is
/// removed if the write fails.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temporary_sibling(path);
    std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn temporary_sibling(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    path.with_file_name(format!(".{name}.partial-{}", std::process::id()))
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
        // A folder that does not exist: an error, and nothing made.
        let missing = dir.join("no-such-folder").join("x");
        assert!(write(&missing, b"x").is_err());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
