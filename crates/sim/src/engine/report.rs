//! The totals of a run so far (final after `run`), measured the way the testbed measures
//! a real run (the formulas are on the report types, [`crate::output`]).

use super::link::Bottleneck;
use super::Simulation;
use crate::config::LinkRate;
use crate::output::{CrossReport, FlowReport, LinkReport, Report, RttSummary};
use crate::trace::LinkSchedule;
use cclab_units::{Duration, Time};

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
        let link = link_report(&net.fwd, rate, capacity_bytes, now);
        let reverse_link = net.rev.as_ref().map(|rev| {
            let rate = self.cfg.bottleneck.reverse_link_rate();
            let capacity_bytes = LinkSchedule::capacity_bytes(&rate, now);
            link_report(rev, &rate, capacity_bytes, now)
        });
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
                        self.by_stop[i].map_or(delivered, |(by_stop, _)| by_stop),
                        fl.start,
                        [fl.stop, st.completed_at],
                        now,
                    ),
                    retransmits: st.retransmits,
                    timeouts: st.timeouts,
                    probes: Some(st.probes),
                    drops: net.fwd.flow_drops[i]
                        + net.rev.as_ref().map_or(0, |rev| rev.flow_drops[i]),
                    rtt: RttSummary::of(&st.rtt_us),
                    completed_at: st.completed_at,
                }
            })
            .collect();
        let n_flows = self.flows.len();
        let cross = (0..self.cross.len())
            .map(|i| {
                let id = n_flows + i;
                CrossReport {
                    source: i,
                    sent_packets: net.cross_sent[i].0,
                    sent_bytes: net.cross_sent[i].1,
                    delivered_packets: net.cross_delivered[i].0,
                    delivered_bytes: net.cross_delivered[i].1,
                    drops: Some(
                        net.fwd.flow_drops[id]
                            + net.rev.as_ref().map_or(0, |rev| rev.flow_drops[id]),
                    ),
                }
            })
            .collect();
        Report { duration: elapsed, link, reverse_link, flows, cross, events: net.events }
    }
}

/// One bottleneck's totals up to `now`, against the `capacity_bytes` its `rate` offered.
fn link_report(b: &Bottleneck, rate: &LinkRate, capacity_bytes: u64, now: Time) -> LinkReport {
    LinkReport {
        capacity_bps: LinkReport::capacity_bps(rate, Duration(now.0), capacity_bytes),
        utilization: LinkReport::utilization(b.delivered_bytes, capacity_bytes),
        delivered_packets: b.delivered_packets,
        delivered_bytes: b.delivered_bytes,
        queue_drops: b.queue.drops(),
        random_losses: b.random_losses,
        mean_queue_packets: b.queue_area(now) as f64 / now.0.max(1) as f64,
    }
}
