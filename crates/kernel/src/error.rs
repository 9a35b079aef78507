//! Errors of the kernel commands: each names what failed and what to do.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// The command needs root (CAP_BPF/CAP_NET_ADMIN and writes to /proc/sys).
    NotRoot { what: String },
    /// The crate was built without BPF programs (no BTF, clang or bpftool at build time).
    BpfUnavailable { why: String },
    /// The kernel has no BTF, so struct_ops cannot be loaded.
    NoBtf,
    /// No BPF filesystem where the pins go, and none could be mounted; `why` says why.
    NoBpffs { at: String, why: String },
    /// An algorithm name that this crate does not provide.
    UnknownAlgorithm { name: String },
    /// A parameter problem (unknown name, bad value, out of range), already worded.
    Param(String),
    /// The verifier (or libbpf) refused the program; `log` is the trimmed verifier log.
    Rejected { algo: String, message: String, log: String },
    /// Our pins show it is already loaded.
    AlreadyLoaded { algo: String, pin: String },
    /// Some other congestion control with this name is registered already.
    NameTaken { algo: String },
    /// Not loaded (no pins found).
    NotLoaded { algo: String },
    /// An I/O or system call failed.
    Io { what: String, err: std::io::Error },
    /// A testbed or fidelity run (or another `cclab kernel` command) holds the
    /// algorithm's parameters ([`crate::run_params`]), already worded.
    Busy(String),
    /// Anything else from libbpf or a helper command, already worded.
    Other(String),
}

impl Error {
    pub fn io(what: impl Into<String>, err: std::io::Error) -> Error {
        Error::Io { what: what.into(), err }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotRoot { what } => write!(f, "{what} needs root (BPF and /proc/sys/net writes); run it with sudo"),
            Error::BpfUnavailable { why } => write!(f, "this cclab was built without its BPF programs: {why}; install them and rebuild"),
            Error::NoBtf => write!(f, "the running kernel has no BTF (/sys/kernel/btf/vmlinux missing): struct_ops congestion control needs CONFIG_DEBUG_INFO_BTF=y"),
            Error::NoBpffs { at, why } => write!(f, "no BPF filesystem at {at}: {why}"),
            Error::UnknownAlgorithm { name } => {
                use crate::algo::Algo;
                let names = |of: fn(Algo) -> &'static str| Algo::ALL.map(of).join(", ");
                write!(f, "\"{name}\" is not one of cclab's BPF algorithms: {} (or by cclab's own names: {}); the kernel's built-in algorithms, such as cubic, are not cclab's to load, unload or tune (tuner is CUBIC with its parameters tunable)", names(Algo::name), names(Algo::reference))
            }
            Error::Param(msg) => write!(f, "{msg}"),
            Error::Rejected { algo, message, log } => {
                write!(f, "the kernel refused to load {algo}: {message}")?;
                if !log.is_empty() {
                    write!(f, "\nverifier log (end):\n{log}")?;
                }
                Ok(())
            }
            Error::AlreadyLoaded { algo, pin } => write!(f, "{algo} is already loaded (pinned at {pin}); `cclab kernel unload {algo}` first"),
            Error::NameTaken { algo } => write!(
                f,
                "a congestion control named \"{algo}\" is already registered by something other than cclab's pins (see `bpftool struct_ops list`); unregister it first"
            ),
            Error::NotLoaded { algo } => write!(f, "{algo} is not loaded (nothing pinned); `cclab kernel load {algo}`"),
            Error::Io { what, err } => write!(f, "{what}: {err}"),
            Error::Other(msg) | Error::Busy(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for Error {}
