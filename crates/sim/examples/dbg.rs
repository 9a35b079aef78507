use cclab_sim::*;
use cclab_units::{Duration, Rate, Time};
struct P(u64, Vec<String>);
impl Observer for P {
    fn flow_sample(&mut self, s: &FlowSample) {
        self.1.push(format!("{} cwnd {} ssth {} infl {} deliv {} rtx {}", s.time, s.cwnd_pkts, s.ssthresh_pkts, s.inflight_pkts, s.delivered_bytes, s.retransmits));
        if self.1.len() > 30 { self.1.remove(0); }
    }
    fn queue_sample(&mut self, q: &QueueSample) {
        if q.drops > self.0 && q.time.0 > 2_000_000_000 && q.time.0 < 3_000_000_000 {
            for l in &self.1 { println!("{l}"); }
            println!("DROP at {} q {}", q.time, q.packets);
        }
        self.0 = q.drops;
    }
}
fn main() {
    let rate = Rate::from_mbps(30);
    let cfg = SimConfig {
        duration: Duration::from_secs(10),
        seed: 1,
        bottleneck: LinkConfig { rate: LinkRate::Constant(rate), delay: Duration::from_millis(10), buffer: Buffer::Packets(2), qdisc: Qdisc::DropTail, loss: LossModel::None },
        flows: vec![FlowConfig { name: "r".into(), cc: "reno".into(), params: vec![], rtt: Duration::from_millis(40), start: Time::ZERO, stop: None, bytes: None, tcp: TcpConfig::default() }],
        cross: vec![],
        sample_interval: Duration::from_micros(200),
        changes: vec![],
    };
    let mut sim = Simulation::new(cfg).unwrap();
    let r = sim.run(&mut P(0, vec![]));
    println!("{:?}", r.flows[0]);
    println!("{:?}", r.link);
}
