//! The one rule for where a command may write its folder (`--out`): a path that does not
//! exist yet, an empty folder, or a folder the same command wrote before, which holds that
//! command's marker file (`summary.json` for `run` and `testbed`, `sweep.json`,
//! `compare.json`, `fidelity.json`, `reproduce.json`). Anything else is refused before a
//! byte is written, so that `--out ~` or a mistyped path cannot replace or litter a
//! folder of the user's. The messages say "folder", not `--out`: the Python package and
//! the web lab give the same refusals for a folder named another way.

use std::path::Path;

/// Refuses `dir` when it exists and is not a folder, or is a folder that holds files and
/// no `marker`; `kind` names the folder in the message ("results", "sweep", ...).
pub fn check(dir: &Path, kind: &str, marker: &str) -> Result<(), String> {
    if !dir.exists() {
        return Ok(());
    }
    if !dir.is_dir() {
        return Err(format!("{} exists and is not a folder; choose another folder", dir.display()));
    }
    if is_empty(dir) {
        return Ok(());
    }
    if dir.join(marker).is_file() {
        return writable(dir, kind);
    }
    if let Some((other, its_marker)) = MARKERS.iter().find(|(_, m)| dir.join(m).is_file()) {
        return Err(format!(
            "{} is a cclab {other} folder (it has {its_marker}), not a {kind} folder (no {marker}); choose another folder",
            dir.display()
        ));
    }
    Err(format!(
        "{} exists and is not a cclab {kind} folder (no {marker}); choose another folder",
        dir.display()
    ))
}

/// Refuses a folder of earlier results that this user cannot write in (a read-only one,
/// or root's from a `sudo` run): its files could not be replaced or removed, and an
/// earlier copy moved aside could not be deleted, and would stay hidden beside it.
fn writable(dir: &Path, kind: &str) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return Ok(()) };
    // SAFETY: `path` is a NUL-terminated string that outlives the call, which only reads it.
    if unsafe { libc::access(path.as_ptr(), libc::W_OK) } == 0 {
        return Ok(());
    }
    Err(format!(
        "{} holds earlier {kind} that this user cannot write in ({}); make it writable (chmod u+w) or choose another folder",
        dir.display(),
        std::io::Error::last_os_error()
    ))
}

/// Every kind of folder cclab writes, by the marker file that makes it one.
const MARKERS: [(&str, &str); 5] = [
    ("results", "summary.json"),
    ("sweep", "sweep.json"),
    ("compare", "compare.json"),
    ("fidelity", "fidelity.json"),
    ("reproduce", "reproduce.json"),
];

/// Refuses a file (`flag` names it) that would lie inside the folder `dir` a command
/// writes: that folder is replaced whole, and the file would go with it.
pub fn check_outside(file: &Path, flag: &str, dir: &Path) -> Result<(), String> {
    if resolved(file).starts_with(resolved(dir)) {
        return Err(format!(
            "{flag} {} lies inside --out {}, which a run replaces whole; put it elsewhere",
            file.display(),
            dir.display()
        ));
    }
    Ok(())
}

/// Where `path` would be: its deepest existing ancestor with links and `..` resolved, then
/// the rest of it (`..` in the rest taken lexically), so that `a/../r1/p.csv` and a
/// link to `r1` both count as inside `r1`.
fn resolved(path: &Path) -> std::path::PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let base = abs.ancestors().find_map(|a| a.canonicalize().ok().map(|c| (a, c)));
    let (mut out, rest) = match base {
        Some((a, c)) => (c, abs.strip_prefix(a).unwrap_or(Path::new("")).to_path_buf()),
        None => (std::path::PathBuf::new(), abs.clone()),
    };
    for part in rest.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Creates the folder `parent` (and those above it), saying which of them is a file
/// when one is in the way.
pub fn create_parent(parent: &Path) -> Result<(), String> {
    std::fs::create_dir_all(parent).map_err(|e| match parent.ancestors().find(|a| a.exists()) {
        Some(a) if !a.is_dir() => {
            format!("{} is a file, not a folder; choose another folder", a.display())
        }
        _ => format!("cannot create {}: {e}", parent.display()),
    })
}

/// Whether `dir` is a folder with nothing in it (false if it cannot be read).
pub fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).map(|mut d| d.next().is_none()).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_an_empty_and_an_own_folder_pass_anything_else_is_refused() {
        let root = std::env::temp_dir().join(format!("cclab-out-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("empty")).unwrap();
        std::fs::create_dir_all(root.join("ours")).unwrap();
        std::fs::write(root.join("ours/sweep.json"), "{}").unwrap();
        std::fs::create_dir_all(root.join("theirs")).unwrap();
        std::fs::write(root.join("theirs/notes.txt"), "keep me").unwrap();
        std::fs::write(root.join("a-file"), "keep me").unwrap();

        assert_eq!(check(&root.join("new"), "sweep", "sweep.json"), Ok(()));
        assert_eq!(check(&root.join("empty"), "sweep", "sweep.json"), Ok(()));
        assert_eq!(check(&root.join("ours"), "sweep", "sweep.json"), Ok(()));
        let theirs = check(&root.join("theirs"), "sweep", "sweep.json").unwrap_err();
        let refused = "theirs exists and is not a cclab sweep folder (no sweep.json)";
        assert!(theirs.contains(refused), "{theirs}");
        // Another kind of cclab folder is named as such.
        let sweep = check(&root.join("ours"), "results", "summary.json").unwrap_err();
        let named = "ours is a cclab sweep folder (it has sweep.json), not a results folder (no summary.json)";
        assert!(sweep.contains(named), "{sweep}");
        let file = check(&root.join("a-file"), "sweep", "sweep.json").unwrap_err();
        assert!(
            file.ends_with("a-file exists and is not a folder; choose another folder"),
            "{file}"
        );
        // A file inside the folder a command replaces is refused, one beside it is not.
        let inside = check_outside(&root.join("ours/p.csv"), "--packet-log", &root.join("ours"));
        assert!(inside.unwrap_err().contains("lies inside --out"));
        let around =
            check_outside(&root.join("ours/p.csv"), "--packet-log", &root.join("x/../ours"));
        assert!(around.is_err(), "a way round through .. is the same folder");
        let new = check_outside(&root.join("new/p.csv"), "--packet-log", &root.join("new"));
        assert!(new.is_err(), "a folder not made yet too");
        assert_eq!(check_outside(&root.join("p.csv"), "--packet-log", &root.join("ours")), Ok(()));
        // A file where a folder must be made is named.
        let made = create_parent(&root.join("a-file/sub"));
        assert!(made
            .unwrap_err()
            .ends_with("a-file is a file, not a folder; choose another folder"));
        // The marker of another command does not make a folder ours.
        assert!(check(&root.join("ours"), "results", "summary.json").is_err());
        assert_eq!(std::fs::read_to_string(root.join("theirs/notes.txt")).unwrap(), "keep me");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
