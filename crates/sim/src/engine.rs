//! The event loop (stub: filled in next).
use crate::config::*;
use crate::error::SimError;
use crate::output::*;
use cclab_units::{Duration, Time};

pub struct Simulation {
    cfg: SimConfig,
    now: Time,
    events: u64,
}

impl Simulation {
    pub fn new(cfg: SimConfig) -> Result<Simulation, SimError> {
        Ok(Simulation { cfg, now: Time::ZERO, events: 0 })
    }
    pub fn run(&mut self, obs: &mut dyn Observer) -> Report {
        let end = Time(self.cfg.duration.0);
        self.run_until(end, obs);
        self.report()
    }
    pub fn run_until(&mut self, t: Time, _obs: &mut dyn Observer) -> bool {
        let end = Time(self.cfg.duration.0);
        self.now = t.min(end);
        self.now >= end
    }
    pub fn now(&self) -> Time {
        self.now
    }
    pub fn set_param(&mut self, flow: usize, _name: &str, _value: f64) -> Result<(), SimError> {
        if flow >= self.cfg.flows.len() {
            return Err(SimError::new("flow", format!("no flow {flow}")));
        }
        Ok(())
    }
    pub fn report(&self) -> Report {
        Report {
            duration: Duration(self.now.0),
            link: LinkReport { capacity_bps: 0.0, utilization: 0.0, delivered_packets: 0, delivered_bytes: 0, queue_drops: 0, random_losses: 0, mean_queue_packets: 0.0 },
            flows: vec![],
            events: self.events,
        }
    }
    pub fn events(&self) -> u64 {
        self.events
    }
}
