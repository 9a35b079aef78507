//! Which network namespace: the kernel's own number for one, so that state cclab keeps in
//! /run/cclab for a namespace (a saved default, saved route values) is never given to
//! another.

use crate::error::Error;
use std::os::fd::{AsRawFd, FromRawFd};

/// `SO_NETNS_COOKIE` (include/uapi/asm-generic/socket.h; Linux 5.14 and later).
const SO_NETNS_COOKIE: libc::c_int = 71;

/// The cookie of network namespace `name` (in /run/netns, as `ip -n` names it; this
/// process's own namespace for `None`). The kernel numbers each namespace once per boot
/// and never reuses the number (`net->net_cookie`), where the namespace file's inode
/// number can come back for a later namespace. A socket made in the namespace reports it,
/// so a thread enters the namespace to make one; the process stays where it was.
pub fn cookie(name: Option<&str>) -> Result<u64, Error> {
    let path = name.map(|n| if n.contains('/') { n.into() } else { format!("/run/netns/{n}") });
    let read = move || -> Result<u64, String> {
        if let Some(path) = &path {
            let file = std::fs::File::open(path)
                .map_err(|e| format!("no network namespace {path}: {e}"))?;
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
            return Err(format!(
                "reading the network namespace's cookie (Linux 5.14 or later): {e}"
            ));
        }
        Ok(cookie)
    };
    let cookie = match name {
        Some(_) => {
            std::thread::spawn(read).join().unwrap_or_else(|_| Err("the thread failed".into()))
        }
        None => read(),
    };
    cookie.map_err(Error::Other)
}
