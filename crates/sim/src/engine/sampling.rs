//! The time series: at every sampling instant, each active flow's state goes into the
//! columns of [`FlowSamples`], handed to the observer once, and the bottleneck queue
//! (and the reverse one, where modelled) follows.

use super::net::Kind;
use super::prefetch;
use super::{Flow, Simulation};
use crate::output::Observer;
use cclab_cc::CongestionControl;
use cclab_units::Time;

impl Simulation {
    fn flow_active(fl: &Flow, now: Time) -> bool {
        fl.started && !fl.sender.is_complete() && fl.stop.is_none_or(|s| now < s)
    }

    // Kept out of the event loop (it runs once per sampling interval, not per packet),
    // so that the loop's hot code is compiled without it.
    #[cold]
    #[inline(never)]
    pub(super) fn take_samples(&mut self, obs: &mut dyn Observer) {
        let now = self.net.now;
        if obs.wants_flow_samples() {
            let with_cc = obs.wants_cc_values();
            let flows = &mut self.flows;
            let prefetch = self.prefetch;
            self.samples.fill(now, flows.len(), |rows| {
                for i in 0..flows.len() {
                    // Each flow's numbers lie in several cache lines of its state, which
                    // with many flows the packets since the last instant have pushed out
                    // of the nearer caches; loading the flows a few rows ahead overlaps
                    // those loads. With few flows they are still cached, and the hints
                    // cost more than they save (about a fifth of sampling's instructions
                    // with 100 flows).
                    if prefetch {
                        prefetch::flow(flows, i + prefetch::SAMPLE_AHEAD);
                    }
                    let fl = &mut flows[i];
                    if Self::flow_active(fl, now) {
                        let row = fl.sender.sample_row(i, fl.receiver.delivered_bytes());
                        rows.push(&row, |report| {
                            if with_cc {
                                fl.sender.ca_mut().inspect(report);
                            }
                        });
                    }
                }
            });
            obs.flow_samples(&self.samples);
        }
        obs.queue_sample(&self.net.fwd.sample(now));
        if let Some(rev) = &mut self.net.rev {
            obs.reverse_queue_sample(&rev.sample(now));
        }
        // The last instant is the run's end, also when the interval does not divide the
        // run (as the testbed samples), so the series reach what the summary counts.
        if now < self.end {
            self.net.schedule((now + self.cfg.sample_interval).min(self.end), Kind::Sample);
        }
    }
}
