//! Network namespaces and TUN devices, each removed by a Drop guard.
//!
//! Namespaces are named `cclab-<pid>-<n>-<side>` so that [`reap`] (at the start of every
//! command that creates namespaces) and `cclab emu cleanup` can tell a stale one (its run
//! is gone) from one a running emulator still uses. They are made
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
    /// Kills what still runs inside (a wrapped command's children, a shell entered with
    /// `ip netns exec`), whose network ends here; deleting the name alone would leave
    /// them running in a namespace nothing can find, which `cclab emu cleanup` cannot
    /// reach either.
    fn drop(&mut self) {
        if let Some(ns) = NsId::at(format!("{NETNS_DIR}/{}", self.name)) {
            kill_processes_in(ns);
        }
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

/// The namespaces cclab has left in /run/netns whose run is gone (all of them with
/// `all`), in name order.
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

/// How long a new namespace may go without its creator holding it: [`Netns::create`]
/// opens it right after `ip netns add` returns.
const OPEN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether the run that made namespace `name` still runs. The pid in the name is not
/// enough: once that run is gone the kernel may give its pid to an unrelated process. A run
/// keeps its namespaces open for as long as it uses them ([`Netns`] holds a descriptor),
/// so a live pid owns the namespace only if it has it open or is inside it, or if the
/// namespace is too new to have been opened yet.
fn owner_alive(name: &str) -> bool {
    owned_by_live_run(name, OPEN_GRACE)
}

/// [`owner_alive`] with the grace period for new namespaces as a parameter.
fn owned_by_live_run(name: &str, grace: std::time::Duration) -> bool {
    let Some(pid) = owner_pid(name).filter(|&p| p > 0) else { return false };
    if !process_exists(pid) {
        return false;
    }
    let path = format!("{NETNS_DIR}/{name}");
    let Ok(meta) = std::fs::metadata(&path) else { return true }; // removed meanwhile
                                                                  // nsfs sets the times of a namespace's file when it is first opened: at `ip netns add`.
    let age = meta.modified().ok().and_then(|t| t.elapsed().ok());
    age.is_none_or(|a| a < grace) || holds(pid, NsId::of(&meta))
}

fn process_exists(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks existence.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM }
}

/// A namespace as the kernel knows it: the device and inode of its nsfs file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct NsId {
    dev: u64,
    ino: u64,
}

impl NsId {
    fn of(meta: &std::fs::Metadata) -> NsId {
        use std::os::unix::fs::MetadataExt;
        NsId { dev: meta.dev(), ino: meta.ino() }
    }
    /// The namespace (or other file) that `path` leads to, following /proc's links.
    fn at(path: impl AsRef<std::path::Path>) -> Option<NsId> {
        std::fs::metadata(path).ok().map(|m| NsId::of(&m))
    }
}

/// Whether process `pid` is in network namespace `ns` or has a descriptor open on it.
fn holds(pid: i32, ns: NsId) -> bool {
    let proc = format!("/proc/{pid}");
    NsId::at(format!("{proc}/ns/net")) == Some(ns)
        || std::fs::read_dir(format!("{proc}/fd"))
            .map(|fds| fds.flatten().any(|fd| NsId::at(fd.path()) == Some(ns)))
            .unwrap_or(false)
}

/// What [`cleanup`] removed.
#[derive(Debug, Default)]
pub struct Removed {
    /// The namespaces (with them the TUN devices that were still in them), in name order.
    pub namespaces: Vec<String>,
    /// Processes that were still inside them (pid, command name), ended with SIGKILL.
    pub processes: Vec<(i32, String)>,
    /// Namespaces that could not be removed, each with why.
    pub failed: Vec<String>,
}

impl Removed {
    /// One line saying what was removed, or `None` if there was nothing.
    pub fn line(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.namespaces.is_empty() {
            parts.push(format!("namespaces {}", self.namespaces.join(", ")));
        }
        if !self.processes.is_empty() {
            let p: Vec<String> =
                self.processes.iter().map(|(pid, c)| format!("{pid} ({c})")).collect();
            parts.push(format!("processes left inside them {}", p.join(", ")));
        }
        if !self.failed.is_empty() {
            parts.push(format!("could not remove {}", self.failed.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Deletes stale cclab namespaces (see [`stale_namespaces`]; every cclab namespace with
/// `all`). A process still inside one (a wrapped command that outlived its emulator, or
/// what it started) is killed first: its network went with the forwarder, and it would
/// keep the namespace alive.
pub fn cleanup(all: bool) -> Removed {
    let mut removed = Removed::default();
    for name in stale_namespaces(all) {
        let path = format!("{NETNS_DIR}/{name}");
        if let Some(ns) = NsId::at(&path) {
            removed.processes.extend(kill_processes_in(ns));
        }
        match ip(&["netns", "del", &name]) {
            Ok(()) => removed.namespaces.push(name),
            // Another command reaping at the same time was first: not ours to report.
            Err(_) if !std::path::Path::new(&path).exists() => {}
            Err(e) => removed.failed.push(format!("{name} ({e})")),
        }
    }
    removed
}

/// Removes what earlier runs that are gone left behind ([`cleanup`] of the stale ones)
/// and says so in one line on stderr. Every command that creates namespaces calls it
/// first; it does nothing without root (the command then stops with its own error).
pub fn reap() {
    if preflight().is_err() {
        return;
    }
    if let Some(line) = cleanup(false).line() {
        cclab_units::errln!("cclab: removed what runs that died left behind: {line}");
    }
}

/// Kills (SIGKILL) every process whose network namespace is `ns` and waits up to a
/// second for each to end; returns their pids and command names.
fn kill_processes_in(ns: NsId) -> Vec<(i32, String)> {
    let me = std::process::id() as i32;
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|rd| rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    let inside = |pid: i32| NsId::at(format!("/proc/{pid}/ns/net")) == Some(ns);
    let mut killed = Vec::new();
    for pid in pids.into_iter().filter(|&p| p != me && inside(p)) {
        // A pidfd stays with the process it was opened on: checked again once it is open,
        // the signal cannot reach another process that took over the pid in between.
        // SAFETY: pidfd_open takes a pid and flags; the result is checked.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
        if fd < 0 {
            continue;
        }
        // SAFETY: fd was just returned by pidfd_open and is owned here.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd) };
        if !inside(pid) {
            continue;
        }
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        // SAFETY: a valid pidfd, no siginfo, no flags.
        let sent = unsafe {
            libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), libc::SIGKILL, 0, 0)
        };
        if sent == 0 {
            let mut p = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd; a pidfd becomes readable when the process ends.
            unsafe { libc::poll(&mut p, 1, 1000) };
            killed.push((pid, comm.trim().to_string()));
        }
    }
    killed
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
        // (No such namespace: nothing to tell a reused pid by, so a live pid owns it.)
        assert!(owner_alive(&format!("cclab-{}-0-a", std::process::id())));
        // pid_max is at most 2^22, so this pid cannot exist.
        assert!(!owner_alive("cclab-99999999-0-a"));
        assert!(!owner_alive("cclab-garbage"));
    }

    #[test]
    fn a_live_pid_owns_a_namespace_only_if_it_holds_it_or_the_namespace_is_new() {
        if preflight().is_err() {
            cclab_units::errln!("skipped: needs root and /dev/net/tun");
            return;
        }
        let zero = std::time::Duration::ZERO;
        // A run holds its namespaces open: this process, through `Netns`.
        let mine = Netns::create(&format!("{}-a", unique_prefix())).unwrap();
        assert!(owned_by_live_run(mine.name(), zero));
        // A live process that never held the namespace named after it, as when the pid of a
        // dead run has been given to another process: not the owner, once the namespace is
        // too old to be still on its way to being opened.
        let mut other = Command::new("sleep").arg("30").spawn().unwrap();
        let reused = Netns::create(&format!("{NS_PREFIX}{}-0-a", other.id())).unwrap();
        assert!(owned_by_live_run(reused.name(), OPEN_GRACE), "new: not yet opened");
        assert!(!owned_by_live_run(reused.name(), zero), "a live pid that does not hold it");
        other.kill().unwrap();
        other.wait().unwrap();
        assert!(!owned_by_live_run(reused.name(), OPEN_GRACE), "its pid is gone");
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
