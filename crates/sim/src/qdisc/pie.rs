//! PIE (RFC 8033): a drop probability steered by a PI controller on the queueing delay,
//! updated every `tupdate` (lazily, on the next packet after each update time), with the
//! RFC's auto-tuning of the gains and a 150 ms burst allowance.

use super::params::{Param, Range, Settings, Value, TIME};
use super::MTU;
use crate::rng::Rng;
use cclab_units::{Duration, Time};

/// PIE's configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    pub target: Duration,
    pub tupdate: Duration,
    pub alpha: f64,
    pub beta: f64,
}

/// RFC 8033's defaults: target 15 ms, an update every 15 ms, alpha 1/8, beta 1.25.
impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target: Duration::from_millis(15),
            tupdate: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
        }
    }
}

/// The gains' range: RFC 8033 uses 0.125 and 1.25; far larger makes the controller
/// oscillate, and a negative gain steers the wrong way.
const GAIN: Range = Range::Number { min: 0.0, min_open: false, max: 100.0 };

impl Settings for PieConfig {
    const PARAMS: &'static [Param<Self>] = &[
        Param {
            name: "target",
            range: TIME,
            meaning: "queueing delay the controller steers towards",
            get: |c| Value::Time(c.target),
            set: |c, v| c.target = v.time(),
        },
        Param {
            name: "tupdate",
            range: TIME,
            meaning: "interval between drop-probability updates",
            get: |c| Value::Time(c.tupdate),
            set: |c, v| c.tupdate = v.time(),
        },
        Param {
            name: "alpha",
            range: GAIN,
            meaning: "gain on the delay's distance from target, per second",
            get: |c| Value::Number(c.alpha),
            set: |c, v| c.alpha = v.number(),
        },
        Param {
            name: "beta",
            range: GAIN,
            meaning: "gain on the delay's change since the last update, per second",
            get: |c| Value::Number(c.beta),
            set: |c, v| c.beta = v.number(),
        },
    ];
}

/// PIE's state at one queue.
#[derive(Clone, Debug)]
pub(super) struct Pie {
    cfg: PieConfig,
    pub(super) drop_prob: f64,
    qdelay: Duration,
    qdelay_old: Duration,
    burst_allowance: Duration,
    next_update: Time,
}

const PIE_MAX_BURST: Duration = Duration::from_millis(150);

impl Pie {
    pub(super) fn new(cfg: PieConfig) -> Pie {
        Pie {
            next_update: Time::ZERO + cfg.tupdate,
            cfg,
            drop_prob: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: PIE_MAX_BURST,
        }
    }

    fn update(&mut self, now: Time) {
        while now >= self.next_update {
            let target = self.cfg.target.as_secs_f64();
            let (q, q_old) = (self.qdelay.as_secs_f64(), self.qdelay_old.as_secs_f64());
            let mut p = self.cfg.alpha * (q - target) + self.cfg.beta * (q - q_old);
            let scale = match self.drop_prob {
                d if d < 0.000_001 => 1.0 / 2048.0,
                d if d < 0.000_01 => 1.0 / 512.0,
                d if d < 0.000_1 => 1.0 / 128.0,
                d if d < 0.001 => 1.0 / 32.0,
                d if d < 0.01 => 1.0 / 8.0,
                d if d < 0.1 => 1.0 / 2.0,
                _ => 1.0,
            };
            p *= scale;
            self.drop_prob = (self.drop_prob + p).clamp(0.0, 1.0);
            if q == 0.0 && q_old == 0.0 {
                self.drop_prob *= 0.98;
            }
            self.qdelay_old = self.qdelay;
            self.burst_allowance = self.burst_allowance.saturating_sub(self.cfg.tupdate);
            if self.drop_prob == 0.0 && q < target / 2.0 && q_old < target / 2.0 {
                self.burst_allowance = PIE_MAX_BURST;
            }
            self.next_update += self.cfg.tupdate;
            // After a long idle period, catch up in one step.
            if now.saturating_since(self.next_update) > self.cfg.tupdate.saturating_mul(100) {
                self.qdelay = Duration::ZERO;
                self.next_update = now + self.cfg.tupdate;
            }
        }
    }

    pub(super) fn on_arrival(&mut self, now: Time, bytes: u64, rng: &mut Rng) -> bool {
        self.update(now);
        if self.burst_allowance > Duration::ZERO {
            return false;
        }
        let half = self.cfg.target.0 / 2;
        if (self.qdelay_old.0 < half && self.drop_prob < 0.2) || bytes <= 2 * MTU {
            return false;
        }
        rng.chance(self.drop_prob)
    }

    pub(super) fn on_departure(&mut self, now: Time, sojourn: Duration) {
        self.update(now);
        self.qdelay = sojourn;
    }
}
