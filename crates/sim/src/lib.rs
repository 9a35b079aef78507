//! The cclab simulator: a deterministic packet-level discrete-event simulator of a
//! dumbbell network (N TCP flows and UDP cross traffic through one bottleneck link).
//!
//! Inputs are plain data ([`config`]); outputs are typed samples delivered to an
//! [`Observer`] while the run goes on, and a [`Report`] at the end. The same stream
//! feeds result files, the live UI and tests (STYLE.md habit 6). A [`Simulation`] can be
//! advanced in steps and retuned between them (`set_param`), which is how the lab UI
//! moves sliders on a running flow.
//!
//! # What lives here
//! - [`engine`]: the event loop and the dumbbell topology ([`Simulation`]); integer
//!   nanosecond time, events ordered by (time, insertion sequence) so ties are FIFO and
//!   runs reproducible (a binary heap, plus a calendar queue for per-flow timers). Its
//!   time series and its report are its submodules.
//! - [`config`] and [`validate`](mod@validate): what a run is made of, and the one set of rules it must
//!   follow (each part checks itself; errors name the field, the value and what is
//!   allowed).
//! - [`tcp`]: the Linux-like TCP sender and receiver, sans-IO (driven with `now` and
//!   packets; the tests drive them directly).
//! - Network pieces that do **not** depend on the event loop, so the wall-clock emulator
//!   and testbed (crates/emu) reuse them unchanged: [`qdisc::Queue`] (the queue
//!   disciplines, generic over any packet type implementing [`qdisc::QueuedPacket`]),
//!   [`trace::LinkSchedule`] (constant rate or mahimahi trace: "when does a packet of n
//!   bytes that starts now leave?"), [`loss::Loss`] (Bernoulli, Gilbert-Elliott),
//!   [`cross::CrossSource`] (when each UDP source sends). Every method takes
//!   `now: Time` and, where random, an explicit [`rng::Rng`].
//! - [`output`]: the samples and the report, with the formulas the testbed shares.
//! - [`rng`]: xoshiro256** with one independent stream per component, derived from the
//!   run's seed (no global or thread RNG). [`hist`]: a compact RTT histogram.
//! - [`bench`](mod@bench): the standard benchmark configurations of `cclab bench`.
//!
//! What must not live here: file formats, CLI parsing, plotting (crates/scenario and
//! crates/cli), and any wall clock inside the simulation.

pub mod bench;
pub mod config;
pub mod cross;
pub mod engine;
pub mod error;
mod fifo;
pub mod hist;
pub mod loss;
pub mod output;
pub mod qdisc;
pub mod rng;
mod small_queue;
pub mod tcp;
pub mod trace;
pub mod validate;
mod wheel;

pub use config::*;
pub use engine::{LiveClock, Simulation};
pub use error::SimError;
pub use output::*;
pub use validate::{validate, MAX_CROSS, MAX_FLOWS};
