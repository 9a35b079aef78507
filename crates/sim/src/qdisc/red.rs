//! RED (Floyd & Jacobson, "Random Early Detection Gateways for Congestion Avoidance",
//! 1993), gentle variant (Floyd 2000), thresholds in packets as ns-2 configures it.

use super::params::{Param, Range, Settings, Value};
use crate::error::SimError;
use crate::rng::Rng;
use cclab_units::{Duration, Time};

/// RED's configuration; thresholds in packets, as ns-2's RED is usually configured in the
/// seeds' study (`003_…`).
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Average queue (packets) below which nothing is dropped.
    pub min_th: f64,
    /// Average queue (packets) at which the drop probability reaches `max_p`.
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub weight: f64,
    /// Gentle RED: between max_th and 2*max_th the probability rises linearly to 1.
    pub gentle: bool,
}

/// ns-2's defaults (`queue/red.cc`, as the seeds' RED study `003_…` used them): min_th 5
/// and max_th 15 packets, max_p 0.1 (ns-2 `linterm_` 10), weight 0.002, gentle. They are
/// fixed rather than derived from the buffer so that a scenario means the same thing
/// whatever its buffer; set them explicitly for large BDPs.
impl Default for RedConfig {
    fn default() -> Self {
        RedConfig { min_th: 5.0, max_th: 15.0, max_p: 0.1, weight: 0.002, gentle: true }
    }
}

const THRESHOLD: f64 = 1e9;

impl Settings for RedConfig {
    const PARAMS: &'static [Param<Self>] = &[
        Param {
            name: "min_th",
            range: Range::Number { min: 0.0, min_open: false, max: THRESHOLD },
            meaning: "average queue (packets) below which nothing is dropped",
            get: |c| Value::Number(c.min_th),
            set: |c, v| c.min_th = v.number(),
        },
        Param {
            name: "max_th",
            range: Range::Number { min: 0.0, min_open: true, max: THRESHOLD },
            meaning: "average queue (packets) at which the drop probability reaches max_p",
            get: |c| Value::Number(c.max_th),
            set: |c, v| c.max_th = v.number(),
        },
        Param {
            name: "max_p",
            range: Range::Number { min: 0.0, min_open: true, max: 1.0 },
            meaning: "drop probability at max_th",
            get: |c| Value::Number(c.max_p),
            set: |c, v| c.max_p = v.number(),
        },
        Param {
            name: "weight",
            range: Range::Number { min: 0.0, min_open: true, max: 1.0 },
            meaning: "EWMA weight of the average queue",
            get: |c| Value::Number(c.weight),
            set: |c, v| c.weight = v.number(),
        },
        Param {
            name: "gentle",
            range: Range::Switch,
            meaning: "between max_th and 2 max_th the probability rises linearly to 1",
            get: |c| Value::Switch(c.gentle),
            set: |c, v| c.gentle = v.switch(),
        },
    ];

    fn check_together(&self) -> Result<(), SimError> {
        if self.max_th <= self.min_th {
            return Err(SimError::new(
                "max_th",
                self.max_th.to_string(),
                format!("must be greater than min_th = {}", self.min_th),
            ));
        }
        Ok(())
    }
}

/// RED's state at one queue.
#[derive(Clone, Debug)]
pub(super) struct Red {
    cfg: RedConfig,
    /// Average queue in packets (EWMA).
    pub(super) avg: f64,
    /// Packets since the last drop while avg is between the thresholds (-1: none yet).
    count: i64,
    /// When the queue went empty (for the idle-time correction of the average).
    idle_since: Option<Time>,
    mean_pkt_time: Duration,
}

impl Red {
    pub(super) fn new(cfg: RedConfig, mean_pkt_time: Duration) -> Red {
        Red { cfg, avg: 0.0, count: -1, idle_since: Some(Time::ZERO), mean_pkt_time }
    }

    /// The queue went empty at `now`: the average will age over the idle time.
    pub(super) fn went_idle(&mut self, now: Time) {
        self.idle_since = Some(now);
    }

    /// Updates the average and decides whether to drop the arriving packet; `qlen` is the
    /// number of packets waiting (not the one on the wire).
    pub(super) fn on_arrival(&mut self, now: Time, qlen: u64, rng: &mut Rng) -> bool {
        let w = self.cfg.weight;
        match self.idle_since.take() {
            // Idle: age the average as if m small packets had arrived to an empty queue.
            Some(since) if qlen == 0 => {
                let m = now.saturating_since(since).0 as f64 / self.mean_pkt_time.0.max(1) as f64;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * qlen as f64,
        }
        let (min_th, max_th, max_p) = (self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        // A packet that finds at most one packet waiting is never dropped, as in ns-2's
        // `REDQueue::enque` (queue/red.cc, ns-2.35): the average only ages while the queue
        // is idle, and an arrival dropped at an empty queue would end the idle period
        // without starting another, so that after a burst the average stayed high and a
        // flow sending one packet at a time could be refused for minutes.
        let pb = if self.avg < min_th || qlen <= 1 {
            self.count = -1;
            return false;
        } else if self.avg < max_th {
            max_p * (self.avg - min_th) / (max_th - min_th)
        } else if self.cfg.gentle && self.avg < 2.0 * max_th {
            max_p + (1.0 - max_p) * (self.avg - max_th) / max_th
        } else {
            self.count = 0;
            return true;
        };
        // Count-based spacing of drops: pa = pb / (1 - count * pb).
        self.count += 1;
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { (pb / denom).min(1.0) };
        if rng.chance(pa) {
            self.count = 0;
            true
        } else {
            false
        }
    }
}
