//! Loading, tuning and unloading the struct_ops algorithms.
//!
//! Layout under the pin root (default `/sys/fs/bpf/cclab`), one directory per algorithm:
//! ```text
//! /sys/fs/bpf/cclab/cclab_tuner/link     the struct_ops link (BPF_F_LINK); while it is
//!                                         pinned the algorithm stays registered
//! /sys/fs/bpf/cclab/cclab_tuner/params   the tunables map (one entry)
//! /sys/fs/bpf/cclab/cclab_cubic_fit/stats CUBIC-FIT's exported N, alpha, RTT statistics
//! ```
//! The link is pinned last, so a directory without one is a load that has not finished.
//! Loads and unloads hold an exclusive `flock` on the pin root's parent directory (the
//! kernel releases it when its holder dies), so a directory without a link seen under that
//! lock is a load whose process died half-way. That is the one thing reaped on its own:
//! `cclab kernel load` removes such directories before it loads ([`Kernel::reap_half_made`])
//! and says so. Complete loads are left alone whatever became of the command that made
//! them: outliving it is what pins are for; only `unload` removes them (also half-made
//! ones). If no BPF filesystem is mounted, `load` mounts one (see [`crate::bpffs`]).
//!
//! The system default algorithm saved by `default` is kept in the state directory
//! (default `/run/cclab`), since bpffs holds only BPF objects.

use crate::algo::{Algo, FitStats};
use crate::bpffs;
use crate::error::Error;
use libbpf_rs::{MapCore, MapFlags, MapHandle, MapType, ObjectBuilder, PrintLevel};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
const DEFAULT_CC: &str = "/proc/sys/net/ipv4/tcp_congestion_control";
const ALLOWED: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
/// The mark of the saved default file's second line: the names cclab's defaults added to
/// the allowed list.
const ADDED: &str = "added:";

/// What [`Kernel::unload`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Unloaded {
    NotLoaded,
    /// Unregistered; `default_now` is set when the algorithm was the namespace's default.
    Done {
        default_now: Option<DefaultNow>,
    },
}

/// The default an unload put in place of the algorithm it removed.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultNow {
    pub name: String,
    /// Whether it is the default `cclab kernel default` saved (else cclab's fallback, cubic).
    pub was_saved: bool,
    /// What was done to the allowed list, in words, where cclab's defaults had widened it.
    pub allowed: Option<String>,
}

/// Where pins and saved state go. Tests use their own pin root.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub pin_root: PathBuf,
    pub state_dir: PathBuf,
}

impl Default for Kernel {
    fn default() -> Self {
        Kernel {
            pin_root: std::env::var_os("CCLAB_BPF_PIN_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/sys/fs/bpf/cclab".into()),
            state_dir: std::env::var_os("CCLAB_STATE_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/run/cclab".into()),
        }
    }
}

/// One algorithm as `list` shows it.
#[derive(Clone, Debug)]
pub struct Status {
    pub algo: Algo,
    /// Our link is pinned.
    pub pinned: bool,
    /// The name is in tcp_available_congestion_control.
    pub registered: bool,
    /// Current parameters (name, stored value), if the params map is pinned.
    pub params: Option<Vec<(&'static str, f64)>>,
    pub stats: Option<FitStats>,
}

static LIBBPF_LOG: Mutex<String> = Mutex::new(String::new());

fn capture_libbpf(_level: PrintLevel, msg: String) {
    if let Ok(mut log) = LIBBPF_LOG.lock() {
        if log.len() < 1 << 20 {
            log.push_str(&msg);
        }
    }
}

/// The end of the verifier log: the lines of the last program's load log, at most
/// `keep` of them from the end (where the verifier says why), plus libbpf's summary.
pub fn trim_verifier_log(log: &str, keep: usize) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let begin = lines.iter().rposition(|l| l.contains("BEGIN PROG LOAD LOG"));
    let end = lines.iter().rposition(|l| l.contains("END PROG LOAD LOG"));
    let body: Vec<&str> = match (begin, end) {
        (Some(b), Some(e)) if e > b => lines[b + 1..e].to_vec(),
        _ => lines.clone(),
    };
    let body: Vec<&str> = body.into_iter().filter(|l| !l.trim().is_empty()).collect();
    let from = body.len().saturating_sub(keep);
    let mut out: Vec<String> = body[from..].iter().map(|l| format!("  {l}")).collect();
    let failed = |l: &&&str| l.contains("failed to load") || l.contains("failed to attach");
    let summary = lines
        .iter()
        .rev()
        .find(|l| l.contains("prog '") && failed(l))
        .or_else(|| lines.iter().rev().find(failed));
    if let Some(summary) = summary {
        out.push(format!("  ({})", summary.trim()));
    }
    out.join("\n")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn need_root(what: &str) -> Result<(), Error> {
    if is_root() {
        Ok(())
    } else {
        Err(Error::NotRoot { what: what.to_string() })
    }
}

fn need_bpf() -> Result<(), Error> {
    if let Some(why) = crate::bpf_unavailable() {
        return Err(Error::BpfUnavailable { why: why.to_string() });
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(Error::NoBtf);
    }
    Ok(())
}

/// The algorithms in tcp_available_congestion_control.
pub fn available() -> Result<Vec<String>, Error> {
    let s = std::fs::read_to_string(AVAILABLE)
        .map_err(|e| Error::io(format!("reading {AVAILABLE}"), e))?;
    Ok(s.split_whitespace().map(str::to_string).collect())
}

/// The system default (net.ipv4.tcp_congestion_control, per network namespace).
pub fn current_default() -> Result<String, Error> {
    let s = std::fs::read_to_string(DEFAULT_CC)
        .map_err(|e| Error::io(format!("reading {DEFAULT_CC}"), e))?;
    Ok(s.trim().to_string())
}

/// Whether this thread is in the initial network namespace. Every kernel thread lives in
/// it, so kthreadd's namespace tells (pid 2, where it is kthreadd: in the initial pid
/// namespace); else init's (pid 1; in a container with its own pid namespace that is the
/// container's init, the best there is). Err says why neither could be read (a supervisor
/// running as pid 1 may forbid reading its own).
pub fn in_initial_netns() -> Result<bool, String> {
    let link = |path: &str| std::fs::read_link(path).map_err(|e| format!("reading {path}: {e}"));
    let ours = link("/proc/thread-self/ns/net")?;
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap_or_default();
    let kthreadd = if comm.trim() == "kthreadd" {
        link("/proc/2/ns/net")
    } else {
        Err("pid 2 is not the kernel's kthreadd".to_string())
    };
    initial_from(&ours, kthreadd, link("/proc/1/ns/net"))
}

/// [`in_initial_netns`]'s decision from the namespace links it could read.
fn initial_from(
    ours: &Path,
    kthreadd: Result<PathBuf, String>,
    init: Result<PathBuf, String>,
) -> Result<bool, String> {
    match (kthreadd, init) {
        (Ok(initial), _) | (Err(_), Ok(initial)) => Ok(ours == initial),
        (Err(a), Err(b)) => Err(format!("{a}; {b}")),
    }
}

/// Whether `name` is in net.ipv4.tcp_allowed_congestion_control.
pub fn allowed_to_all(name: &str) -> bool {
    std::fs::read_to_string(ALLOWED).is_ok_and(|l| l.split_whitespace().any(|n| n == name))
}

fn write_default(name: &str) -> Result<(), Error> {
    std::fs::write(DEFAULT_CC, name)
        .map_err(|e| Error::io(format!("setting {DEFAULT_CC} to \"{name}\""), e))
}

/// An exclusive `flock` on the directory that holds the pin root, held while pins are made
/// or removed. Under it, an algorithm directory without a link is a load whose process died
/// half-way, never one still in progress; the kernel drops the lock when its holder dies.
struct PinLock {
    _held: std::fs::File,
}

/// How long a command waits for another one's loads and unloads.
const LOCK_WAIT: Duration = Duration::from_secs(10);

impl Kernel {
    pub fn with_pin_root(pin_root: impl Into<PathBuf>) -> Kernel {
        Kernel { pin_root: pin_root.into(), ..Kernel::default() }
    }

    pub fn dir(&self, algo: Algo) -> PathBuf {
        self.pin_root.join(algo.name())
    }

    fn link_pin(&self, algo: Algo) -> PathBuf {
        self.dir(algo).join("link")
    }

    fn params_pin(&self, algo: Algo) -> PathBuf {
        self.dir(algo).join("params")
    }

    fn stats_pin(&self, algo: Algo) -> PathBuf {
        self.dir(algo).join("stats")
    }

    pub fn is_loaded(&self, algo: Algo) -> bool {
        self.link_pin(algo).exists()
    }

    /// Loads and registers `algo`, pinning it so it outlives this process.
    pub fn load(&self, algo: Algo) -> Result<(), Error> {
        need_root("cclab kernel load")?;
        need_bpf()?;
        bpffs::ensure(&self.pin_root)?;
        let _lock = self.lock()?;
        if self.is_loaded(algo) {
            return Err(Error::AlreadyLoaded {
                algo: algo.name().into(),
                pin: self.dir(algo).display().to_string(),
            });
        }
        if available()?.iter().any(|n| n == algo.name()) {
            let _ = std::fs::remove_dir(&self.pin_root); // made above; only if empty
            return Err(Error::NameTaken { algo: algo.name().into() });
        }
        // What a load of this algorithm that died half-way left goes first.
        self.remove_pins(algo)?;
        let _ = std::fs::remove_file(self.run_params_paths(algo).1);
        let result = self.load_and_pin(algo);
        if result.is_err() {
            let _ = self.remove_pins(algo);
            let _ = std::fs::remove_dir(&self.pin_root);
        }
        result
    }

    /// Takes the [`PinLock`], waiting up to [`LOCK_WAIT`] for another command's.
    fn lock(&self) -> Result<PinLock, Error> {
        let dir = self.pin_root.parent().unwrap_or(Path::new("/"));
        let file = std::fs::File::open(dir)
            .map_err(|e| Error::io(format!("opening {} to lock it", dir.display()), e))?;
        let deadline = Instant::now() + LOCK_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(PinLock { _held: file }),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::Other(format!(
                        "another cclab kernel command has held the lock on {} for {} s",
                        dir.display(),
                        LOCK_WAIT.as_secs()
                    )))
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(Error::io(format!("locking {}", dir.display()), e))
                }
            }
        }
    }

    /// Removes the half-made loads that commands which died left under the pin root and
    /// returns their directories. A load is half-made while its directory has no `link`
    /// pin: the link is pinned last, and a load that fails removes its pins itself. Loads
    /// hold the pin lock throughout, so under it such a directory belongs to a process
    /// that is gone. Complete loads (those with a link) are never touched: pins
    /// are meant to outlive the command that made them, and only `unload` removes them.
    pub fn reap_half_made(&self) -> Result<Vec<PathBuf>, Error> {
        need_root("cclab kernel load")?;
        if !self.pin_root.exists() {
            return Ok(Vec::new());
        }
        let _lock = self.lock()?;
        let mut reaped = Vec::new();
        for algo in Algo::ALL {
            if self.dir(algo).exists() && !self.is_loaded(algo) {
                self.remove_pins(algo)?;
                reaped.push(self.dir(algo));
            }
        }
        Ok(reaped)
    }

    fn load_and_pin(&self, algo: Algo) -> Result<(), Error> {
        LIBBPF_LOG.lock().map(|mut l| l.clear()).ok();
        let previous = libbpf_rs::set_print(Some((PrintLevel::Debug, capture_libbpf)));
        let loaded = ObjectBuilder::default()
            .name(algo.name())
            .and_then(|b| b.open_memory(algo.object()))
            .and_then(|open| open.load());
        libbpf_rs::set_print(previous);
        let log = LIBBPF_LOG.lock().map(|l| l.clone()).unwrap_or_default();
        let mut obj = loaded.map_err(|e| Error::Rejected {
            algo: algo.name().into(),
            message: e.to_string(),
            log: trim_verifier_log(&log, 12),
        })?;

        let dir = self.dir(algo);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let key = 0u32.to_ne_bytes();
        for mut map in obj.maps_mut() {
            let name = map.name().to_string_lossy().to_string();
            if name == algo.params_map() {
                map.update(&key, &Algo::to_bytes(&algo.default_words()), MapFlags::ANY).map_err(
                    |e| Error::Other(format!("writing default parameters of {}: {e}", algo.name())),
                )?;
                map.pin(self.params_pin(algo)).map_err(|e| {
                    Error::Other(format!("pinning {}: {e}", self.params_pin(algo).display()))
                })?;
            } else if Some(name.as_str()) == algo.stats_map() {
                map.pin(self.stats_pin(algo)).map_err(|e| {
                    Error::Other(format!("pinning {}: {e}", self.stats_pin(algo).display()))
                })?;
            }
        }
        for mut map in obj.maps_mut() {
            if map.map_type() != MapType::StructOps {
                continue;
            }
            let mut link = map.attach_struct_ops().map_err(|e| {
                if e.kind() == libbpf_rs::ErrorKind::AlreadyExists {
                    Error::NameTaken { algo: algo.name().into() }
                } else {
                    Error::Rejected {
                        algo: algo.name().into(),
                        message: format!("registering the struct_ops: {e}"),
                        log: String::new(),
                    }
                }
            })?;
            link.pin(self.link_pin(algo)).map_err(|e| {
                Error::Other(format!("pinning {}: {e}", self.link_pin(algo).display()))
            })?;
        }
        Ok(())
    }

    fn remove_pins(&self, algo: Algo) -> Result<(), Error> {
        let dir = self.dir(algo);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(format!("reading {}", dir.display()), e)),
        };
        for entry in entries.flatten() {
            let p = entry.path();
            std::fs::remove_file(&p)
                .map_err(|e| Error::io(format!("removing {}", p.display()), e))?;
        }
        std::fs::remove_dir(&dir).map_err(|e| Error::io(format!("removing {}", dir.display()), e))
    }

    /// Unregisters `algo` and removes its pins (also after a crashed load). If it is this
    /// network namespace's default, the default is first put back to the one `set_default`
    /// saved, else to cubic or reno (the first the allowed list holds), and the outcome
    /// says so.
    pub fn unload(&self, algo: Algo) -> Result<Unloaded, Error> {
        need_root("cclab kernel unload")?;
        if !self.dir(algo).exists() {
            return match self.hidden(algo) {
                Some(e) => Err(e),
                None => Ok(Unloaded::NotLoaded),
            };
        }
        let _lock = self.lock()?;
        if !self.dir(algo).exists() {
            return Ok(Unloaded::NotLoaded); // another command unloaded it while we waited
        }
        let mut default_now = None;
        if current_default().ok().as_deref() == Some(algo.name()) {
            let saved = self.saved_default()?;
            // With nothing saved, an algorithm the allowed list already holds: Linux adds
            // a new default to that list, and nothing would take it off again.
            let fallback = ["cubic", "reno"].into_iter().find(|n| allowed_to_all(n));
            let back = saved.clone().unwrap_or_else(|| fallback.unwrap_or("reno").to_string());
            let allowed = self.put_back_default(&back)?;
            default_now = Some(DefaultNow { name: back, was_saved: saved.is_some(), allowed });
        }
        self.remove_pins(algo)?;
        let _ = std::fs::remove_file(self.run_params_paths(algo).1);
        let _ = std::fs::remove_dir(&self.pin_root); // only if empty
                                                     // The kernel unregisters when the last link reference goes; wait for it.
        let deadline = Instant::now() + Duration::from_secs(3);
        while available()?.iter().any(|n| n == algo.name()) {
            if Instant::now() > deadline {
                return Err(Error::Other(format!(
                    "{} still registered 3 s after its pins were removed (a process may hold its link open)",
                    algo.name()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Unloaded::Done { default_now })
    }

    /// Where a testbed run keeps what it must put back in `algo`'s parameters at its end,
    /// and the lock by which runs of `algo` take turns (cclab_emu's `RunTunables`). A file
    /// left by a run killed outright is of the registration it ran with: `load` and
    /// `unload` remove it, so a later run does not put back values of an earlier load.
    pub fn run_params_paths(&self, algo: Algo) -> (PathBuf, PathBuf) {
        let base = self.state_dir.join(format!("run-params-{}", algo.name()));
        (base.with_extension("lock"), base.with_extension("saved"))
    }

    /// Why cclab's pins cannot be seen from here, when they cannot: an algorithm may then
    /// be registered by cclab with nothing pinned in sight.
    pub fn pins_hidden(&self) -> Option<String> {
        if !is_root() {
            return Some(format!("reading the pins in {} needs root", self.pin_root.display()));
        }
        (!bpffs::on_bpffs(&self.pin_root)).then(|| {
            format!(
                "no BPF file system holds {} in this mount namespace (as under `ip netns exec`, \
                 which remounts /sys); run this from the host's mount namespace",
                self.pin_root.display()
            )
        })
    }

    /// `algo` is registered while this mount namespace sees no pins of it: the error that
    /// says so (called where its pins are missing). Either our BPF file system is out of
    /// sight, or another one is mounted here (a shell under `unshare -m`) while the pins
    /// that hold the algorithm are on the host's; `unload` must not then say "not loaded".
    fn hidden(&self, algo: Algo) -> Option<Error> {
        let registered = available().is_ok_and(|a| a.iter().any(|n| n == algo.name()));
        if !registered {
            return None;
        }
        let why = self.pins_hidden().unwrap_or_else(|| {
            format!(
                "{} holds none in this mount namespace; it was loaded from another one (whose \
                 BPF file system holds its pins: run this there) or by another program (see \
                 `bpftool struct_ops list`)",
                self.pin_root.display()
            )
        });
        Some(Error::Other(format!(
            "{} is registered, but its pins cannot be seen: {why}",
            algo.name()
        )))
    }

    fn open_map(&self, algo: Algo, path: PathBuf) -> Result<MapHandle, Error> {
        if !self.is_loaded(algo) {
            return Err(self
                .hidden(algo)
                .unwrap_or_else(|| Error::NotLoaded { algo: algo.name().into() }));
        }
        MapHandle::from_pinned_path(&path).map_err(|e| {
            // Its link pinned and a map's pin gone: removed by hand, or by a tool that
            // cleaned /sys/fs/bpf. The registration is whole; the pins can be made again.
            let repair = if path.exists() {
                String::new()
            } else {
                format!(
                    " (the algorithm's pins are incomplete: run `cclab kernel unload {0}` and `cclab kernel load {0}` to make them again)",
                    algo.name()
                )
            };
            Error::Other(format!("opening {}: {e}{repair}", path.display()))
        })
    }

    /// The raw words of the params map.
    fn words(&self, algo: Algo) -> Result<Vec<u32>, Error> {
        need_root("cclab kernel get/set")?;
        let map = self.open_map(algo, self.params_pin(algo))?;
        let bytes = map
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| Error::Other(format!("reading {} parameters: {e}", algo.name())))?
            .unwrap_or_default();
        Ok(Algo::from_bytes(&bytes))
    }

    /// Current parameters of a loaded algorithm: (name, value as stored).
    pub fn get(&self, algo: Algo) -> Result<Vec<(&'static str, f64)>, Error> {
        Ok(algo.values(&self.words(algo)?))
    }

    /// CUBIC-FIT's exported N, alpha and RTT statistics.
    pub fn fit_stats(&self) -> Result<FitStats, Error> {
        let algo = Algo::CubicFit;
        let map = self.open_map(algo, self.stats_pin(algo))?;
        let bytes = map
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| Error::Other(format!("reading cclab_cubic_fit statistics: {e}")))?
            .unwrap_or_default();
        Ok(FitStats::decode(&bytes))
    }

    /// Sets parameters on a loaded algorithm; all are validated before any is written, and
    /// they are written together in one map update. Returns the stored values.
    pub fn set(
        &self,
        algo: Algo,
        changes: &[(String, f64)],
    ) -> Result<Vec<(&'static str, f64)>, Error> {
        need_root("cclab kernel set")?;
        let mut checked = Vec::new();
        for (name, value) in changes {
            let stored = algo.check(name, *value)?;
            checked.push((algo.spec(name)?.name, *value, stored));
        }
        let mut words = self.words(algo)?;
        for (name, value, _) in &checked {
            algo.put(&mut words, name, *value);
        }
        let map = self.open_map(algo, self.params_pin(algo))?;
        map.update(&0u32.to_ne_bytes(), &Algo::to_bytes(&words), MapFlags::ANY)
            .map_err(|e| Error::Other(format!("writing {} parameters: {e}", algo.name())))?;
        Ok(checked.iter().map(|(n, _, s)| (*n, *s)).collect())
    }

    pub fn status(&self, algo: Algo) -> Status {
        let pinned = self.is_loaded(algo);
        let registered = available().map(|a| a.iter().any(|n| n == algo.name())).unwrap_or(false);
        let params = if pinned { self.get(algo).ok() } else { None };
        let stats = if pinned && algo == Algo::CubicFit { self.fit_stats().ok() } else { None };
        Status { algo, pinned, registered, params, stats }
    }

    /// Where the default before `set_default` is kept: one file per network namespace
    /// (the default is per namespace), known by its cookie ([`crate::netns::key`]).
    fn saved_default_path(&self) -> Result<PathBuf, Error> {
        let key = crate::netns::key(None)?;
        Ok(self.state_dir.join(format!("default_congestion_control-{key}")))
    }

    /// The saved default (the file's first line) and, from the second (`added: NAME
    /// ...`), the names that cclab's defaults added to the allowed list. Files of earlier
    /// builds have only the first line, or a second without the mark (the whole list,
    /// once): nothing counts as added from those.
    fn saved(&self) -> Result<(Option<String>, Vec<String>), Error> {
        let text = std::fs::read_to_string(self.saved_default_path()?).unwrap_or_default();
        let mut lines = text.lines().map(str::trim);
        let default = lines.next().filter(|l| !l.is_empty()).map(String::from);
        let added = lines
            .next()
            .and_then(|l| l.strip_prefix(ADDED))
            .unwrap_or("")
            .split_whitespace()
            .map(String::from)
            .collect();
        Ok((default, added))
    }

    fn saved_default(&self) -> Result<Option<String>, Error> {
        Ok(self.saved()?.0)
    }

    fn write_saved(&self, default: &str, added: &[String]) -> Result<(), Error> {
        std::fs::create_dir_all(&self.state_dir)
            .map_err(|e| Error::io(format!("creating {}", self.state_dir.display()), e))?;
        let path = self.saved_default_path()?;
        std::fs::write(&path, format!("{default}\n{ADDED}{}\n", added.join(" ")))
            .map_err(|e| Error::io(format!("saving the old default to {}", path.display()), e))
    }

    /// Puts back `default`, and takes off the allowed list the names cclab's defaults
    /// added to it: Linux marks each algorithm made the default as allowed to every user
    /// (`tcp_set_default_congestion_control` sets TCP_CONG_NON_RESTRICTED) and never
    /// clears the mark. Only those names are taken off, so whatever else changed the list
    /// since stays. Returns what it did to the list, in words, if anything (a failure to
    /// write it is said, not raised: the default is back either way). Forgets what was
    /// saved.
    fn put_back_default(&self, default: &str) -> Result<Option<String>, Error> {
        write_default(default)?;
        let added = self.saved()?.1;
        let _ = std::fs::remove_file(self.saved_default_path()?);
        let now = std::fs::read_to_string(ALLOWED).unwrap_or_default();
        let (off, kept): (Vec<&str>, Vec<&str>) =
            now.split_whitespace().partition(|n| added.iter().any(|a| a == n));
        if off.is_empty() {
            return Ok(None);
        }
        Ok(Some(match std::fs::write(ALLOWED, kept.join(" ")) {
            Ok(()) => format!(
                "{} taken off net.ipv4.tcp_allowed_congestion_control again (now \"{}\")",
                off.join(", "),
                kept.join(" ")
            ),
            Err(e) => format!(
                "could not take {} off net.ipv4.tcp_allowed_congestion_control: {e}",
                off.join(", ")
            ),
        }))
    }

    /// Makes `name` the system default, remembering the previous default (the first one
    /// only: repeated calls keep the original for `restore_default`) and whether the
    /// kernel added `name` to the allowed list. Returns the old default, and whether it did;
    /// the old default is `name` when it was the default already, and nothing changed.
    pub fn set_default(&self, name: &str) -> Result<(String, bool), Error> {
        need_root("cclab kernel default")?;
        let avail = available()?;
        if !avail.iter().any(|n| n == name) {
            return Err(Error::Other(format!(
                "\"{name}\" is not an available congestion control (available: {}); load it first",
                avail.join(" ")
            )));
        }
        if current_default()? == name {
            // Nothing to change, so nothing to save (a restore file written now would name
            // `name` as the default to go back to), and nothing to refuse: the namespace
            // has it as its default already, allowed or not.
            return Ok((name.to_string(), false));
        }
        // Linux (tcp_set_default_congestion_control, still in 6.18) leaks a reference to
        // the algorithm when it refuses a restricted one outside the initial namespace
        // (-EPERM after bpf_try_module_get): for a BPF algorithm the struct_ops map then
        // stays in memory until reboot. So refuse here, before the kernel sees it.
        let allowed = std::fs::read_to_string(ALLOWED).unwrap_or_default();
        let already_allowed = allowed_to_all(name);
        if !already_allowed {
            match in_initial_netns() {
                Ok(true) => {}
                Ok(false) => {
                    return Err(Error::Other(format!(
                        "\"{name}\" cannot be the default of this network namespace: outside the initial \
                         namespace the kernel accepts only algorithms in net.ipv4.tcp_allowed_congestion_control \
                         ({}); add it there from the initial namespace",
                        allowed.trim()
                    )))
                }
                Err(why) => {
                    return Err(Error::Other(format!(
                        "\"{name}\" is not in net.ipv4.tcp_allowed_congestion_control ({}), which only the \
                         initial network namespace may go beyond, and cclab cannot tell whether this is that \
                         namespace ({why}); add it there, or run this where /proc/2/ns/net or /proc/1/ns/net can be read",
                        allowed.trim()
                    )))
                }
            }
        }
        // The saved file is read and written again below: one command at a time.
        let _lock = self.lock()?;
        let old = current_default()?;
        let (saved, mut added) = self.saved()?;
        if saved.is_none() {
            self.write_saved(&old, &added)?;
        }
        // Only the initial namespace can widen the allowed list (elsewhere the default
        // must be on it already).
        let widens = !already_allowed && in_initial_netns() == Ok(true);
        if let Err(e) = std::fs::write(DEFAULT_CC, name) {
            if e.raw_os_error() == Some(libc::EPERM) {
                return Err(Error::Other(format!(
                    "the kernel refused \"{name}\" as the default of this network namespace: outside the initial \
                     namespace only algorithms in net.ipv4.tcp_allowed_congestion_control may be the default \
                     (add it there from the initial namespace)"
                )));
            }
            return Err(Error::io(format!("setting {DEFAULT_CC} to \"{name}\""), e));
        }
        if widens {
            added.push(name.to_string());
            self.write_saved(saved.as_deref().unwrap_or(&old), &added).map_err(|e| {
                Error::Other(format!(
                    "the default is now {name}, which the kernel added to {ALLOWED}, but a restore will not take it off: {e}"
                ))
            })?;
        }
        Ok((old, widens))
    }

    /// Puts back the default saved by [`set_default`](Self::set_default), and takes off the
    /// allowed list what its defaults added; returns the default and, in words, what it
    /// did to the list.
    pub fn restore_default(&self) -> Result<(String, Option<String>), Error> {
        need_root("cclab kernel default --restore")?;
        let _lock = self.lock()?;
        let path = self.saved_default_path()?;
        let old = self.saved_default()?.ok_or_else(|| {
            Error::Other(format!(
                "nothing to restore: `cclab kernel default` has not changed this network \
                 namespace's default (no {})",
                path.display()
            ))
        })?;
        let allowed = self.put_back_default(&old)?;
        Ok((old, allowed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initial_namespace_is_kthreadds_else_inits() {
        let (ours, other) = (Path::new("net:[1]"), PathBuf::from("net:[2]"));
        let denied = || Err("Permission denied".to_string());
        assert_eq!(initial_from(ours, Ok(ours.into()), denied()), Ok(true));
        assert_eq!(initial_from(ours, Ok(other.clone()), Ok(ours.into())), Ok(false));
        assert_eq!(initial_from(ours, denied(), Ok(other)), Ok(false));
        assert_eq!(initial_from(ours, denied(), Ok(ours.into())), Ok(true));
        assert!(initial_from(ours, denied(), denied()).is_err());
    }

    #[test]
    fn verifier_log_keeps_the_end_of_the_last_program_log() {
        let log = "libbpf: prog 'x': BPF program load failed: Permission denied\n\
                   libbpf: prog 'x': -- BEGIN PROG LOAD LOG --\n0: (b7) r0 = 0\n1: (95) exit\n\
                   R0 !read_ok\nprocessed 2 insns\n-- END PROG LOAD LOG --\n\
                   libbpf: prog 'x': failed to load: -13\n";
        let t = trim_verifier_log(log, 2);
        assert!(
            t.contains("R0 !read_ok") && t.contains("processed 2 insns") && !t.contains("(b7)"),
            "{t}"
        );
        assert!(t.contains("failed to load: -13"), "{t}");
    }
}
