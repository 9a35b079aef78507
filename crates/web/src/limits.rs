//! What one server accepts, so that no request can exhaust the machine: live runs are
//! smaller than what `cclab run` allows (it runs one scenario and exits; the server runs
//! several for as long as it lives). Each limit is named in its refusal and in the README.

use crate::error::ApiError;
use cclab_scenario::{Scenario, ScenarioError};
use cclab_sim::{Buffer, LinkRate};
use cclab_units::{Duration, Rate};

#[derive(Clone, Debug)]
pub struct Limits {
    /// Runs running or paused at once (each takes a thread and up to a core).
    pub max_active_runs: usize,
    /// Runs kept in memory at once, finished ones included (the oldest finished go first).
    pub max_kept_runs: usize,
    /// Flows after `count` is expanded.
    pub max_flows: usize,
    /// Cross-traffic sources after `count` is expanded.
    pub max_cross: usize,
    pub max_duration: Duration,
    pub max_rate: Rate,
    /// Bottleneck buffer in full-sized packets: bounds the packets a run holds.
    pub max_buffer_packets: u64,
    /// WebSocket clients watching one run.
    pub max_clients_per_run: usize,
    /// Request bodies (scenarios, parameter changes).
    pub max_body_bytes: usize,
    /// Uploaded trace files.
    pub max_trace_bytes: usize,
    /// The results folder (saved runs, comparisons, uploads): no save, comparison or
    /// upload starts once it would hold more.
    pub max_disk_bytes: u64,
    /// A run nobody watches (no WebSocket, no request about it) for this long is stopped,
    /// unless it is to be saved when it finishes.
    pub idle_stop: std::time::Duration,
    /// A finished run nobody asked about for this long is dropped from memory.
    pub keep_finished: std::time::Duration,
}

impl Limits {
    /// Runs kept in memory by default (going or finished and not yet dropped).
    pub const KEPT_RUNS: usize = 32;
    /// The results folder's size by default, in MB (`--max-disk-mb`).
    pub const DISK_MB: u64 = 4_000;
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_active_runs: 4,
            max_kept_runs: Limits::KEPT_RUNS,
            max_flows: 100,
            max_cross: 100,
            max_duration: Duration::from_secs(3600),
            max_rate: Rate(10_000_000_000),
            max_buffer_packets: 100_000,
            max_clients_per_run: 8,
            max_body_bytes: 1 << 20,
            max_trace_bytes: 16 << 20,
            max_disk_bytes: Limits::DISK_MB * 1_000_000,
            idle_stop: std::time::Duration::from_secs(15),
            keep_finished: std::time::Duration::from_secs(600),
        }
    }
}

/// A valid scenario refused as too big for the server, with the body of any scenario
/// error (file, line, field, value, message); the line is none: a limit is of the whole
/// run, which several lines may make up.
pub fn too_big(file: &str, field: &str, value: String, message: String) -> ApiError {
    ApiError::scenario(&ScenarioError {
        file: file.to_string(),
        line: None,
        from_override: false,
        field: field.to_string(),
        value: Some(value),
        message,
    })
}

impl Limits {
    /// Refuses a valid scenario that is too big for a live run, naming the field, the
    /// value and the limit.
    pub fn check(&self, scn: &Scenario, file: &str) -> Result<(), ApiError> {
        let cfg = &scn.config;
        let refuse = |field: &str, value: String, limit: String| {
            let message = format!(
                "a live run in cclab serve allows at most {limit} (cclab run takes bigger scenarios)"
            );
            too_big(file, field, value, message)
        };
        if cfg.flows.len() > self.max_flows {
            return Err(refuse(
                "flows",
                format!("{} flows in all (count and arrivals expanded)", cfg.flows.len()),
                format!("{} flows", self.max_flows),
            ));
        }
        if cfg.cross.len() > self.max_cross {
            return Err(refuse(
                "cross",
                format!("{} sources with count expanded", cfg.cross.len()),
                format!("{} sources", self.max_cross),
            ));
        }
        if cfg.duration > self.max_duration {
            return Err(refuse(
                "duration",
                cfg.duration.to_string(),
                self.max_duration.to_string(),
            ));
        }
        match &cfg.bottleneck.rate {
            LinkRate::Constant(r) if *r > self.max_rate => {
                return Err(refuse("bottleneck.rate", r.to_string(), self.max_rate.to_string()));
            }
            LinkRate::Trace(t) if t.mean_rate() > self.max_rate => {
                let value = format!("a mean of {}", t.mean_rate());
                return Err(refuse("bottleneck.trace", value, self.max_rate.to_string()));
            }
            _ => {}
        }
        if let Some(r) = cfg.bottleneck.reverse_rate.filter(|r| *r > self.max_rate) {
            let limit = self.max_rate.to_string();
            return Err(refuse("bottleneck.reverse_rate", r.to_string(), limit));
        }
        // Cross traffic's packets are work as the flows' are: its sources' mean rates in all.
        let cross_bps: u64 = cfg.cross.iter().map(|c| c.rate.0).sum();
        if cross_bps > self.max_rate.0 {
            return Err(refuse(
                "cross",
                format!("{} of cross traffic in all (count expanded)", Rate(cross_bps)),
                self.max_rate.to_string(),
            ));
        }
        let (packets, smallest) = cclab_sim::validate::most_queued_packets(cfg);
        let value = match (cfg.bottleneck.buffer, smallest) {
            (Buffer::Bytes(b), Some(size)) => {
                format!("{b} bytes (up to {packets} packets of {size} bytes, the smallest this run queues)")
            }
            _ => format!("{packets} packets"),
        };
        if packets > self.max_buffer_packets {
            let limit = format!("{} packets", self.max_buffer_packets);
            return Err(refuse("bottleneck.buffer", value, limit));
        }
        Ok(())
    }
}
