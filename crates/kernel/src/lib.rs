//! The real kernel: cclab's congestion control algorithms as eBPF `struct_ops` programs
//! in the running Linux kernel, tuned live, and TCPTuner's `ip route` parameters.
//!
//! What lives here:
//! - `bpf/*.bpf.c`: the programs, in C (one file per algorithm, `bpf/cclab_cubic.h` is the
//!   shared Linux CUBIC core), built by `build.rs` with clang against the kernel's BTF;
//! - [`algo`]: the algorithms this crate can load, their parameters ([`cclab_cc::ParamSpec`])
//!   and the fixed-point encoding their maps use;
//! - [`loader`]: `load`, `unload`, `list`, `get`, `set`, `default` (pins under
//!   `/sys/fs/bpf/cclab/`, so registrations survive the command and can be found again
//!   after a crash; half-made loads of commands that died are reaped by the next `load`);
//! - [`bpffs`]: the BPF file system the pins live on, mounted when it is missing;
//! - [`route`]: `rto_min` and `initcwnd` on routes, with restore;
//! - [`run_params`]: how runs and `cclab kernel set` take turns on an algorithm's
//!   parameters, and what a run killed before its end left to put back;
//! - [`netns`]: a network namespace's cookie, which keys what is saved for it;
//! - [`cli`]: the `cclab kernel` subcommand (clap), wired into the main binary by the CLI;
//! - [`host`]: FFI to the same C algorithm code compiled for the host, for the
//!   differential test against crates/cc.
//!
//! What must not live here: algorithm logic in Rust (that is crates/cc), emulation
//! (crates/emu).

pub mod algo;
pub mod bpffs;
pub mod cli;
pub mod error;
pub mod host;
pub mod loader;
pub mod netns;
pub mod route;
pub mod run_params;
pub mod socket;

pub use algo::Algo;
pub use error::Error;
pub use loader::Kernel;

/// Why the BPF programs were not built, or `None` when they were (set by build.rs).
pub fn bpf_unavailable() -> Option<&'static str> {
    let why = env!("CCLAB_BPF_UNAVAILABLE");
    if why.is_empty() {
        None
    } else {
        Some(why)
    }
}
