//! The BPF file system the pins live on, mounted at `/sys/fs/bpf` when it is missing.
//!
//! Pins are files on a bpffs; a fresh machine may have the directory `/sys/fs/bpf` with
//! nothing mounted on it. Like `bpftool` (`mount_bpffs_for_pin` in tools/bpf/bpftool/
//! common.c), we then mount one there ourselves: `mount("bpf", "/sys/fs/bpf", "bpf", 0,
//! "mode=0700")`. That is only useful where the mount outlasts this command: a bpffs
//! instance is freed with the last mount namespace that has it mounted, and every pin on it
//! with it (our struct_ops link among them, which unregisters the algorithm). So we mount
//! only when some other process shares our mount namespace (the host's, or a shell under
//! `unshare -m`); in a namespace made for this one command (`ip netns exec` makes a
//! private one and remounts /sys, hiding the host's bpffs) we refuse and say why.

use crate::error::Error;
use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where bpffs is mounted by convention, and where we mount it.
pub const DEFAULT_MOUNT: &str = "/sys/fs/bpf";

/// Makes sure `dir` can hold pins: creates it (and its parents) on a bpffs, first
/// mounting one at [`DEFAULT_MOUNT`] if `dir` is below it and nothing is mounted there.
pub fn ensure(dir: &Path) -> Result<(), Error> {
    if !on_bpffs(dir) {
        if !dir.starts_with(DEFAULT_MOUNT) {
            return Err(Error::NoBpffs {
                at: dir.display().to_string(),
                why: "it is not on a BPF filesystem; mount one there (mount -t bpf bpf DIR) \
                      or pin below /sys/fs/bpf"
                    .into(),
            });
        }
        mount_default()?;
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}

/// Whether the nearest existing ancestor of `path` (or `path` itself) is on a bpffs.
pub fn on_bpffs(path: &Path) -> bool {
    let Some(existing) = path.ancestors().find(|p| p.exists()) else { return false };
    let Ok(c) = CString::new(existing.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: c is a valid NUL-terminated path and st a properly sized statfs buffer.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statfs(c.as_ptr(), &mut st) };
    rc == 0 && st.f_type as u32 == libc::BPF_FS_MAGIC as u32
}

/// Mounts bpffs at [`DEFAULT_MOUNT`], if a mount there outlasts this process.
fn mount_default() -> Result<(), Error> {
    let missing = |why: String| Error::NoBpffs { at: DEFAULT_MOUNT.into(), why };
    if let Some(ns) = unshared_mount_namespace() {
        return Err(missing(format!(
            "nothing is mounted there, and no other process shares this mount namespace \
             ({ns}; made for this command alone, as by `ip netns exec` or `unshare -m`), so a \
             BPF filesystem mounted here would vanish when cclab exits, taking the pins and \
             the registration with it; run cclab kernel from the host's mount namespace, or \
             mount one first (mount -t bpf -o mode=0700 bpf /sys/fs/bpf)"
        )));
    }
    let c = |s: &str| CString::new(s).expect("no NUL in a constant");
    let (source, target, fstype, options) = (c("bpf"), c(DEFAULT_MOUNT), c("bpf"), c("mode=0700"));
    // SAFETY: valid NUL-terminated strings; bpffs reads `options` as a string.
    let rc = unsafe {
        libc::mount(source.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, options.as_ptr().cast())
    };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        let hint = match err.raw_os_error() {
            Some(libc::EPERM) => "; mounting needs CAP_SYS_ADMIN (root outside a container)",
            Some(libc::ENOENT) => "; the kernel has no /sys/fs/bpf (is /sys mounted?)",
            Some(libc::ENODEV) => "; the kernel has no BPF filesystem (CONFIG_BPF_SYSCALL)",
            _ => "",
        };
        return Err(missing(format!(
            "nothing is mounted there and mounting one failed (mount -t bpf -o mode=0700 bpf \
             /sys/fs/bpf): {err}{hint}"
        )));
    }
    Ok(())
}

/// This process's mount namespace (as `mnt:[inode]`) if no other process is in it, so
/// that a mount made in it would go when this process does; `None` if it is shared.
fn unshared_mount_namespace() -> Option<String> {
    let ours = std::fs::metadata("/proc/self/ns/mnt").ok()?;
    let me = std::process::id().to_string();
    let shared = std::fs::read_dir("/proc").ok()?.flatten().any(|entry| {
        let name = entry.file_name();
        let pid = name.to_string_lossy();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        // A process whose namespace we may not read (a sandbox's init) does not count.
        let ns: PathBuf = entry.path().join("ns/mnt");
        std::fs::metadata(ns).is_ok_and(|m| m.dev() == ours.dev() && m.ino() == ours.ino())
    });
    (!shared).then(|| format!("mnt:[{}]", ours.ino()))
}
