//! The cclab simulator: a deterministic packet-level discrete-event simulator of a
//! dumbbell network (N TCP flows and UDP cross traffic through one bottleneck link).
//!
//! Inputs are plain data ([`config`]); outputs are typed samples delivered to an
//! [`Observer`] while the run goes on, and a [`Report`] at the end. The same stream
//! feeds result files, the live UI and tests (STYLE.md habit 6). A [`Simulation`] can be
//! advanced in steps and retuned between them (`set_param`), which is how the lab UI
//! moves sliders on a running flow.

pub mod bench;
pub mod config;
pub mod engine;
pub mod error;
pub mod output;
pub mod hist;
pub mod loss;
pub mod qdisc;
pub mod rng;
pub mod tcp;
pub mod trace;

pub use config::*;
pub use engine::Simulation;
pub use error::SimError;
pub use output::*;
