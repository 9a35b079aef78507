//! Live parameter changes and their replay: a change made between two steps of a run
//! applies after every event up to the current instant `t`, before any later one. A
//! `[[changes]]` entry at `t + 1 ns` of a re-run falls in the same place, because a
//! scheduled change runs before every event of its instant that the run created; the
//! only events it cannot precede are those the configuration itself puts at that instant
//! (flow starts and stops, cross-traffic starts, other changes), so such instants are
//! stepped over. The lab UI (crates/web) and the Python package both follow this rule.

use super::Simulation;
use crate::config::SimConfig;
use crate::error::SimError;
use crate::output::Observer;
use cclab_units::Time;
use std::collections::BTreeSet;

/// The instants (ns) a configuration schedules something at, and its end.
pub struct LiveClock {
    scheduled: BTreeSet<u64>,
    end_ns: u64,
}

impl LiveClock {
    pub fn new(cfg: &SimConfig) -> LiveClock {
        let mut scheduled = BTreeSet::new();
        for f in &cfg.flows {
            scheduled.insert(f.start.as_nanos());
            scheduled.extend(f.stop.map(|s| s.as_nanos()));
        }
        scheduled.extend(cfg.cross.iter().map(|c| c.start.as_nanos()));
        scheduled.extend(cfg.changes.iter().map(|c| c.at.as_nanos()));
        LiveClock { scheduled, end_ns: cfg.duration.as_nanos() }
    }

    /// Sets `name` of flow `flow` to `value` now (running any event still due at the
    /// current instant first, and stepping over scheduled instants as the module doc
    /// says); returns the instant, in ns, of the `[[changes]]` entry that replays it.
    pub fn apply(
        &self,
        sim: &mut Simulation,
        obs: &mut dyn Observer,
        flow: usize,
        name: &str,
        value: f64,
    ) -> Result<u64, SimError> {
        // A refused change leaves the run where it was: checked before any step.
        sim.check_param(flow, name, value)?;
        let mut t = sim.now().as_nanos();
        sim.run_until(Time(t), obs);
        while self.scheduled.contains(&(t + 1)) && t + 1 < self.end_ns {
            sim.run_until(Time(t + 1), obs);
            t += 1;
        }
        if t + 1 > self.end_ns {
            return Err(SimError::new("run", "", "has reached its end; nothing left to change"));
        }
        sim.set_param(flow, name, value)?;
        Ok(t + 1)
    }
}
