//! The time series: at every sampling instant, each active flow's state and the
//! bottleneck queue (and the reverse one, where modelled) go to the observer.

use super::net::Kind;
use super::{Flow, Simulation};
use crate::output::Observer;
use cclab_units::Time;

impl Simulation {
    fn flow_active(fl: &Flow, now: Time) -> bool {
        fl.started && !fl.sender.is_complete() && fl.stop.is_none_or(|s| now < s)
    }

    pub(super) fn take_samples(&mut self, obs: &mut dyn Observer) {
        let now = self.net.now;
        if obs.wants_flow_samples() {
            for (i, fl) in self.flows.iter().enumerate() {
                if !Self::flow_active(fl, now) {
                    continue;
                }
                let s = &mut self.sample;
                s.time = now;
                s.flow = i;
                s.delivered_bytes = fl.receiver.delivered_bytes();
                fl.sender.fill_sample(s);
                obs.flow_sample(s);
            }
        }
        obs.queue_sample(&self.net.fwd.sample(now));
        if let Some(rev) = &mut self.net.rev {
            obs.reverse_queue_sample(&rev.sample(now));
        }
        let next = now + self.cfg.sample_interval;
        if next <= self.end {
            self.net.schedule(next, Kind::Sample);
        }
    }
}
