//! CoDel (RFC 8289): drop at dequeue when packets have sat longer than `target` for at
//! least `interval`, at a rate growing with the square root of the drop count. FQ-CoDel
//! runs one of these per bucket.

use super::params::{Param, Settings, Value, TIME};
use super::{Entry, QueuedPacket, MTU};
use cclab_units::{Duration, Time};
use std::collections::VecDeque;

/// CoDel's configuration (also FQ-CoDel's, for every bucket).
#[derive(Clone, Debug, PartialEq)]
pub struct CodelConfig {
    pub target: Duration,
    pub interval: Duration,
}

/// RFC 8289 section 4.2 defaults.
impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig { target: Duration::from_millis(5), interval: Duration::from_millis(100) }
    }
}

impl Settings for CodelConfig {
    const PARAMS: &'static [Param<Self>] = &[
        Param {
            name: "target",
            range: TIME,
            meaning: "acceptable standing queue delay",
            get: |c| Value::Time(c.target),
            set: |c, v| c.target = v.time(),
        },
        Param {
            name: "interval",
            range: TIME,
            meaning: "how long the delay may stay above target before dropping starts",
            get: |c| Value::Time(c.interval),
            set: |c, v| c.interval = v.time(),
        },
    ];
}

/// CoDel's state at one queue (or one FQ-CoDel bucket).
#[derive(Clone, Debug)]
pub(super) struct Codel {
    target: Duration,
    interval: Duration,
    first_above: Option<Time>,
    dropping: bool,
    drop_next: Time,
    count: u32,
    last_count: u32,
}

impl Codel {
    pub(super) fn new(c: &CodelConfig) -> Codel {
        Codel {
            target: c.target,
            interval: c.interval,
            first_above: None,
            dropping: false,
            drop_next: Time::ZERO,
            count: 0,
            last_count: 0,
        }
    }

    fn control_law(&self, t: Time) -> Time {
        t + Duration((self.interval.0 as f64 / (self.count.max(1) as f64).sqrt()) as u64)
    }

    /// RFC 8289 `dodequeue`: pops the head and says whether it may be dropped.
    fn pop<P: QueuedPacket>(
        &mut self,
        q: &mut VecDeque<Entry<P>>,
        bytes: &mut u64,
        now: Time,
    ) -> (Option<Entry<P>>, bool) {
        let Some(e) = q.pop_front() else {
            self.first_above = None;
            return (None, false);
        };
        *bytes -= e.pkt.size_bytes() as u64;
        let sojourn = now.saturating_since(e.enqueued);
        let mut ok_to_drop = false;
        if sojourn < self.target || *bytes <= MTU {
            self.first_above = None;
        } else {
            match self.first_above {
                None => self.first_above = Some(now + self.interval),
                Some(t) if now >= t => ok_to_drop = true,
                _ => {}
            }
        }
        (Some(e), ok_to_drop)
    }

    pub(super) fn dequeue<P: QueuedPacket>(
        &mut self,
        q: &mut VecDeque<Entry<P>>,
        bytes: &mut u64,
        now: Time,
        dropped: &mut Vec<P>,
    ) -> Option<Entry<P>> {
        let (mut e, mut ok) = self.pop(q, bytes, now);
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next && e.is_some() {
                dropped.extend(e.take().map(|d| d.pkt));
                self.count += 1;
                (e, ok) = self.pop(q, bytes, now);
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = self.control_law(self.drop_next);
                }
            }
        } else if ok && e.is_some() {
            dropped.extend(e.take().map(|d| d.pkt));
            (e, _) = self.pop(q, bytes, now);
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1
                && now.saturating_since(self.drop_next) < self.interval.saturating_mul(16)
            {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now);
            self.last_count = self.count;
        }
        e
    }
}
