//! cclab's real-time link emulator: real packets between two network namespaces, forwarded
//! in user space through TUN devices, with a bottleneck model per direction (constant rate
//! or a mahimahi trace, one-way delay, any of the simulator's queue disciplines that drop on
//! arrival, random loss) driven by the wall clock.
//!
//! ```text
//!  namespace A (198.18.0.1)                                     namespace B (198.18.0.2)
//!  programs ── tun cclab0 ──► [uplink: loss → queue → link → delay] ──► tun cclab0 ── programs
//!                         ◄── [downlink: delay ← link ← queue ← loss] ◄──
//! ```
//!
//! - [`model`]: binds the simulator's loss, queue and link-schedule models to real packets
//!   behind the small [`model::Link`] trait, plus the delay stage;
//! - [`forwarder`]: the wall-clock loop (epoll + timerfd, optional SCHED_FIFO, lateness of
//!   every departure, per-direction CSV logs, live gauges);
//! - [`netns`]: namespaces and TUN devices with Drop guards; [`netns::reap`], which every
//!   command that creates namespaces calls first, removes what killed runs left behind;
//! - [`spec`]: the `--uplink`/`--downlink` link descriptions;
//! - [`harness`]: an emulated path run in-process (benchmarks, tests, testbed);
//! - [`keep_awake`]: an idle-priority spinner that keeps the real-time emulator's processor
//!   from halting, whose wake-ups would make it late;
//! - [`testbed`]: a scenario's flows as real kernel TCP through the path, sampled with
//!   [`tcpinfo`] into the simulator's output types;
//! - [`steal`]: how much processor time the machine's host took from the guest during a
//!   run;
//! - [`udp`]: cclab's own sans-IO TCP (any Rust algorithm) over UDP through the path;
//! - [`cli`]: `cclab emu` (wrap a command like mm-link), `cleanup`, `bench`, `udp`;
//! - [`bench`](mod@bench): the timing, throughput and agreement figures.
//!
//! What must not live here: TCP or algorithm logic (that is `cclab-cc` / `cclab-sim`).

pub mod bench;
pub mod cli;
pub mod forwarder;
pub mod harness;
pub mod keep_awake;
pub mod kernel_algos;
pub mod model;
pub mod netns;
pub mod packet_log;
pub mod spec;
pub mod stats;
pub mod steal;
pub mod tcpinfo;
pub mod testbed;
pub mod udp;

use cclab_sim::{Buffer, LinkRate, LossModel, Qdisc};
use cclab_units::Duration;
use std::fmt;
use std::net::Ipv4Addr;
use std::os::fd::OwnedFd;

pub use forwarder::{Forwarder, StopHandle, DOWNLINK, UPLINK};
pub use netns::Netns;

/// Address of side A (where a wrapped command runs).
pub const ADDR_A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// Address of side B (the far end).
pub const ADDR_B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Name of the TUN device in each namespace.
pub const TUN_NAME: &str = "cclab0";

/// One direction of the emulated path.
#[derive(Clone, Debug)]
pub struct DirectionConfig {
    /// `None`: no rate limit.
    pub rate: Option<LinkRate>,
    /// One-way delay added after the link.
    pub delay: Duration,
    /// Other one-way delays for packets from these IPv4 sources (per-flow RTTs).
    pub per_source_delay: Vec<(Ipv4Addr, Duration)>,
    pub buffer: Buffer,
    pub qdisc: Qdisc,
    pub loss: LossModel,
}

impl Default for DirectionConfig {
    /// No rate limit, no delay, an unbounded DropTail queue, no loss (mahimahi's defaults).
    fn default() -> Self {
        DirectionConfig {
            rate: None,
            delay: Duration::ZERO,
            per_source_delay: Vec::new(),
            buffer: Buffer::Packets(u64::MAX),
            qdisc: Qdisc::DropTail,
            loss: LossModel::None,
        }
    }
}

/// Everything that can go wrong in the emulator; messages name the field or the step.
#[derive(Debug)]
pub enum EmuError {
    NotRoot {
        euid: u32,
    },
    NoTun,
    /// A bad option or link description (the message names the field, value and what is allowed).
    Config(String),
    /// Creating or driving namespaces, devices or the loop failed.
    Setup(String),
    /// Reading or writing files.
    Io(String),
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmuError::NotRoot { euid } => write!(
                f,
                "the emulator needs root (it creates network namespaces and TUN devices); running as uid {euid}"
            ),
            EmuError::NoTun => write!(f, "/dev/net/tun is missing: load the tun module (modprobe tun)"),
            EmuError::Config(m) | EmuError::Setup(m) | EmuError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for EmuError {}

/// The two namespaces of one emulated path; dropping it deletes them (and so the TUN
/// devices in them).
pub struct EmuNet {
    pub a: Netns,
    pub b: Netns,
}

impl EmuNet {
    /// Creates `cclab-<pid>-<n>-a` and `-b`, each with a TUN device `cclab0` addressed
    /// [`ADDR_A`]/30 and [`ADDR_B`]/30; returns the TUN descriptors of A and B.
    pub fn create() -> Result<(EmuNet, OwnedFd, OwnedFd), EmuError> {
        netns::preflight()?;
        let prefix = netns::unique_prefix();
        let a = Netns::create(&format!("{prefix}-a"))?;
        let b = Netns::create(&format!("{prefix}-b"))?;
        let tun_a = netns::create_tun(&a, TUN_NAME, &format!("{ADDR_A}/30"))?;
        let tun_b = netns::create_tun(&b, TUN_NAME, &format!("{ADDR_B}/30"))?;
        Ok((EmuNet { a, b }, tun_a, tun_b))
    }
}
