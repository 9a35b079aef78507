//! Which network namespace: the kernel's own number for one, so that state cclab keeps in
//! /run/cclab for a namespace (a saved default, saved route values) is never given to
//! another.

use crate::error::Error;
use std::os::fd::{AsRawFd, FromRawFd};

/// `SO_NETNS_COOKIE` (Linux 5.14 and later): include/uapi/asm-generic/socket.h, which
/// x86, arm, riscv and mips share; sparc numbers it apart.
#[cfg(not(any(target_arch = "sparc", target_arch = "sparc64")))]
const SO_NETNS_COOKIE: libc::c_int = 71;
#[cfg(any(target_arch = "sparc", target_arch = "sparc64"))]
const SO_NETNS_COOKIE: libc::c_int = 0x50;

/// What names network namespace `name` (as [`cookie`] takes it) in the file names of
/// saved state: `ns<cookie>`, or on a kernel before 5.14, which has no cookies,
/// `ino<inode>` of the namespace (an inode number a later namespace may get again).
pub fn key(name: Option<&str>) -> Result<String, Error> {
    use std::os::unix::fs::MetadataExt;
    if let Some(c) = cookie(name)? {
        return Ok(format!("ns{c}"));
    }
    let path = name.map_or("/proc/thread-self/ns/net".into(), path_of);
    let meta = std::fs::metadata(&path).map_err(|e| Error::io(format!("opening {path}"), e))?;
    Ok(format!("ino{}", meta.ino()))
}

/// Whether `text` is a [`key`] (so that a file named with one is told from a name that
/// merely ends alike).
pub fn is_key(text: &str) -> bool {
    let digits = text.strip_prefix("ns").or_else(|| text.strip_prefix("ino"));
    digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// The file of namespace `name`: a path as it is, else a name in /run/netns.
fn path_of(name: &str) -> String {
    if name.contains('/') {
        name.into()
    } else {
        format!("/run/netns/{name}")
    }
}

/// The cookie of network namespace `name` (in /run/netns, as `ip -n` names it; this
/// process's own namespace for `None`). The kernel numbers each namespace once per boot
/// and never reuses the number (`net->net_cookie`), where the namespace file's inode
/// number can come back for a later namespace. A socket made in the namespace reports it,
/// so a thread enters the namespace to make one; the process stays where it was. `None`:
/// this kernel gives no cookies (before Linux 5.14).
pub fn cookie(name: Option<&str>) -> Result<Option<u64>, Error> {
    let path = name.map(path_of);
    let read = move || -> Result<Option<u64>, String> {
        if let Some(path) = &path {
            let file = std::fs::File::open(path)
                .map_err(|e| format!("opening network namespace {path}: {e}"))?;
            // SAFETY: setns only reads the descriptor, and changes this thread alone.
            if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(format!("entering network namespace {path}: {e}"));
            }
        }
        // SAFETY: a plain socket call; the descriptor is owned by `socket` from here on.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(format!("making a socket: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let socket = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let mut cookie = 0u64;
        let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
        // SAFETY: `cookie` and `len` are valid for the kernel to write 8 bytes and a length.
        let rc = unsafe {
            libc::getsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_NETNS_COOKIE,
                (&mut cookie as *mut u64).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
                return Ok(None);
            }
            return Err(format!("reading the network namespace's cookie: {e}"));
        }
        Ok(Some(cookie))
    };
    let cookie = match name {
        Some(_) => {
            std::thread::spawn(read).join().unwrap_or_else(|_| Err("the thread failed".into()))
        }
        None => read(),
    };
    cookie.map_err(Error::Other)
}
