//! Network namespaces and TUN devices, each removed by a Drop guard.
//!
//! Namespaces are named `cclab-<pid>-<n>-<side>` so that `cclab emu cleanup` can tell a
//! stale one (its process is gone) from one a running emulator still uses. They are made
//! with iproute2's `ip netns add`, which bind-mounts them under /run/netns; the TUN
//! device is opened from a thread that has entered the namespace, so the device lives
//! there while its file descriptor stays with the forwarder.

use crate::EmuError;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// Prefix of every namespace cclab creates.
pub const NS_PREFIX: &str = "cclab-";
const NETNS_DIR: &str = "/run/netns";

/// Checks what creating namespaces and TUN devices needs: root and /dev/net/tun.
/// Split from [`preflight`] so the decision can be tested without being root.
pub fn check_privileges(euid: u32, tun_present: bool) -> Result<(), EmuError> {
    if euid != 0 {
        return Err(EmuError::NotRoot { euid });
    }
    if !tun_present {
        return Err(EmuError::NoTun);
    }
    Ok(())
}

/// [`check_privileges`] for this process.
pub fn preflight() -> Result<(), EmuError> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    check_privileges(euid, std::path::Path::new("/dev/net/tun").exists())
}

fn ip(args: &[&str]) -> Result<(), EmuError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| EmuError::Setup(format!("cannot run `ip` (iproute2): {e}")))?;
    if !out.status.success() {
        return Err(EmuError::Setup(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// A fresh name `cclab-<pid>-<n>` unique within this process (sides append `-a`, `-b`).
pub fn unique_prefix() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{NS_PREFIX}{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A named network namespace; deleted when dropped.
pub struct Netns {
    name: String,
    fd: OwnedFd,
}

impl Netns {
    pub fn create(name: &str) -> Result<Netns, EmuError> {
        ip(&["netns", "add", name])?;
        let path = format!("{NETNS_DIR}/{name}");
        let fd = match open_rdonly(&path) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = ip(&["netns", "del", name]);
                return Err(EmuError::Setup(format!("cannot open {path}: {e}")));
            }
        };
        let ns = Netns { name: name.to_string(), fd };
        ip(&["-n", name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
    /// Moves the calling thread into this namespace until the guard is dropped.
    pub fn enter(&self) -> Result<NsGuard, EmuError> {
        let back = open_rdonly("/proc/thread-self/ns/net")
            .map_err(|e| EmuError::Setup(format!("cannot open own netns: {e}")))?;
        setns(self.fd())?;
        Ok(NsGuard { back })
    }
    /// Runs `ip -n <ns> ARGS...`.
    pub fn ip(&self, args: &[&str]) -> Result<(), EmuError> {
        let mut all = vec!["-n", &self.name];
        all.extend_from_slice(args);
        ip(&all)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// Returns the thread to the namespace it was in before [`Netns::enter`].
pub struct NsGuard {
    back: OwnedFd,
}

impl Drop for NsGuard {
    fn drop(&mut self) {
        let _ = setns(self.back.as_raw_fd());
    }
}

/// Moves the calling thread into the network namespace `fd`.
pub fn setns(fd: RawFd) -> Result<(), EmuError> {
    // SAFETY: setns only reads the descriptor; a bad one is an error, not UB.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
        return Err(EmuError::Setup(format!("setns: {}", std::io::Error::last_os_error())));
    }
    Ok(())
}

fn open_rdonly(path: &str) -> std::io::Result<OwnedFd> {
    let c =
        CString::new(path).map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: c is a valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `struct ifreq` as TUNSETIFF reads it: the name and the flags (rest of the union).
#[repr(C)]
struct IfReqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca; // _IOW('T', 202, int)

/// Opens a non-blocking layer-3 TUN device (no packet-info header) named `ifname`
/// inside `ns`, gives it `addr` (e.g. "198.18.0.1/30") and brings it up.
pub fn create_tun(ns: &Netns, ifname: &str, addr: &str) -> Result<OwnedFd, EmuError> {
    if ifname.len() >= libc::IFNAMSIZ {
        return Err(EmuError::Setup(format!(
            "interface name {ifname} is longer than {} bytes",
            libc::IFNAMSIZ - 1
        )));
    }
    let fd = {
        let _inside = ns.enter()?;
        // No IPv6 on the emulated path: its autoconfiguration chatter (router
        // solicitations, MLD) would otherwise cross the link among the measured packets.
        // /proc/sys/net is resolved in the opening thread's namespace.
        for conf in ["all", "default"] {
            let p = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
            let _ = std::fs::write(p, "1");
        }
        // SAFETY: a constant path; the result is checked.
        let raw = unsafe {
            libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC)
        };
        if raw < 0 {
            return Err(EmuError::Setup(format!(
                "open /dev/net/tun: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: raw was just opened by us.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut req = IfReqFlags {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        req.name[..ifname.len()].copy_from_slice(ifname.as_bytes());
        // SAFETY: req is a properly sized ifreq for TUNSETIFF.
        if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
            return Err(EmuError::Setup(format!(
                "TUNSETIFF {ifname}: {}",
                std::io::Error::last_os_error()
            )));
        }
        fd
    };
    ns.ip(&["addr", "add", addr, "dev", ifname])?;
    ns.ip(&["link", "set", ifname, "up", "mtu", "1500", "txqueuelen", "1000"])?;
    Ok(fd)
}

/// The namespaces cclab has left in /run/netns whose creating process is gone (all of
/// them with `all`), in name order.
pub fn stale_namespaces(all: bool) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(NETNS_DIR)
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    // Only names of the emulator's own form: other tools may use the same prefix.
    names.retain(|n| owner_pid(n).is_some());
    names.retain(|n| all || !owner_alive(n));
    names.sort();
    names
}

/// The creating process of a namespace named by [`unique_prefix`] plus `-a`/`-b`
/// (`cclab-<pid>-<n>-<side>`); `None` for any other name.
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(NS_PREFIX)?;
    let parts: Vec<&str> = rest.split('-').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match parts[..] {
        [pid, n, "a" | "b"] if digits(pid) && digits(n) => pid.parse().ok(),
        _ => None,
    }
}

/// Whether the process that created namespace `name` (its pid is in the name) still runs.
fn owner_alive(name: &str) -> bool {
    match owner_pid(name) {
        // SAFETY: kill with signal 0 only checks existence.
        Some(pid) if pid > 0 => unsafe {
            libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM
        },
        _ => false,
    }
}

/// Deletes stale cclab namespaces (see [`stale_namespaces`]); returns the names removed.
pub fn cleanup(all: bool) -> Result<Vec<String>, EmuError> {
    let mut removed = vec![];
    for name in stale_namespaces(all) {
        ip(&["netns", "del", &name])?;
        removed.push(name);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn privileges_are_checked_before_anything_is_created() {
        assert!(check_privileges(0, true).is_ok());
        let e = check_privileges(1000, true).unwrap_err();
        assert!(e.to_string().contains("root"), "{e}");
        let e = check_privileges(0, false).unwrap_err();
        assert!(e.to_string().contains("/dev/net/tun"), "{e}");
    }

    #[test]
    fn a_namespace_of_a_dead_process_is_stale() {
        assert!(owner_alive(&format!("cclab-{}-0-a", std::process::id())));
        // pid_max is at most 2^22, so this pid cannot exist.
        assert!(!owner_alive("cclab-99999999-0-a"));
        assert!(!owner_alive("cclab-garbage"));
    }

    #[test]
    fn only_the_emulators_own_names_are_candidates_for_cleanup() {
        assert_eq!(owner_pid("cclab-123-0-a"), Some(123));
        assert_eq!(owner_pid("cclab-123-7-b"), Some(123));
        for other in [
            "cclab-kernel-test",
            "cclab-123-0-c",
            "cclab-123-a",
            "cclab--0-a",
            "other-123-0-a",
            "cclab-12x-0-a",
        ] {
            assert_eq!(owner_pid(other), None, "{other}");
        }
    }
}
