//! The totals of a run so far (final after `run`), measured the way the testbed measures
//! a real run (the formulas are on the report types, [`crate::output`]).

use super::Simulation;
use crate::output::{FlowReport, LinkReport, Report, RttSummary};
use crate::trace::LinkSchedule;
use cclab_units::Duration;

impl Simulation {
    /// The report as of now (final after `run`).
    pub fn report(&self) -> Report {
        let now = self.net.now;
        let elapsed = Duration(now.0);
        let rate = &self.cfg.bottleneck.rate;
        let capacity_bytes = if now >= self.end {
            self.capacity_bytes
        } else {
            LinkSchedule::capacity_bytes(rate, now)
        };
        let net = &self.net;
        let area = net.queue_area
            + net.queue.len_packets() as u128 * (now.0 - net.queue_area_since.0) as u128;
        let link = LinkReport {
            capacity_bps: LinkReport::capacity_bps(rate, elapsed, capacity_bytes),
            utilization: LinkReport::utilization(net.delivered_bytes, capacity_bytes),
            delivered_packets: net.delivered_packets,
            delivered_bytes: net.delivered_bytes,
            queue_drops: net.queue.drops(),
            random_losses: net.random_losses,
            mean_queue_packets: area as f64 / now.0.max(1) as f64,
        };
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let delivered = fl.receiver.delivered_bytes();
                let st = fl.sender.stats();
                FlowReport {
                    flow: i,
                    delivered_bytes: delivered,
                    goodput_bps: FlowReport::goodput_bps(
                        delivered,
                        fl.start,
                        [fl.stop, st.completed_at],
                        now,
                    ),
                    retransmits: st.retransmits,
                    timeouts: st.timeouts,
                    rtt: RttSummary::of(&st.rtt_us),
                    completed_at: st.completed_at,
                }
            })
            .collect();
        Report { duration: elapsed, link, flows, events: net.events }
    }
}
