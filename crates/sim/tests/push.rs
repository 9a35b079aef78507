//! The sender's side of `TcpConfig::psh`: every second segment of a burst carries PSH,
//! so a pair ends with it and a segment sent alone carries none.

use cclab_cc::{Algorithm, LossRecovery};
use cclab_sim::tcp::{Segment, TcpReceiver, TcpSender};
use cclab_sim::{DelayedAck, TcpConfig};
use cclab_units::{Duration, Time};

/// Every burst of a Reno flow over 12 round trips, its segment 40 lost once, each
/// segment ACKed on its own (so that bursts of one, of two and of more all occur).
fn bursts(psh: bool) -> Vec<Vec<Segment>> {
    let no_delay = DelayedAck { enabled: false, ..Default::default() };
    let cfg = TcpConfig { psh, handshake: false, delayed_ack: no_delay, ..Default::default() };
    let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, None);
    let mut r = TcpReceiver::new(0, 1448, None, no_delay, LossRecovery::Sack);
    let mut now = Time::ZERO;
    s.start(now);
    let mut all = vec![];
    let send = |s: &mut TcpSender, now: Time, all: &mut Vec<Vec<Segment>>| {
        let mut out = vec![];
        s.transmit(now, &mut |seg| out.push(seg));
        if !out.is_empty() {
            all.push(out.clone());
        }
        out
    };
    let mut wire = send(&mut s, now, &mut all);
    let mut dropped = false;
    for _round in 0..12 {
        let mut next = vec![];
        for seg in std::mem::take(&mut wire) {
            now += Duration::from_micros(100);
            if seg.seq == 40 && !dropped {
                dropped = true;
                continue;
            }
            if let Some(a) = r.on_data(now, &seg) {
                s.on_ack(now, &a);
                next.extend(send(&mut s, now, &mut all));
            }
        }
        if next.is_empty() {
            // A stall (the lost segment's tail): whichever timer is due fires.
            if let Some(at) = s.rto_deadline() {
                now = now.max(at);
                s.on_rto(now);
                next.extend(send(&mut s, now, &mut all));
            }
        }
        wire = next;
    }
    all
}

#[test]
fn every_second_segment_of_a_burst_carries_psh() {
    let all = bursts(true);
    for b in &all {
        let marks: Vec<bool> = b.iter().map(|s| s.psh).collect();
        let pairs: Vec<bool> = (1..=b.len()).map(|k| k % 2 == 0).collect();
        assert_eq!(marks, pairs, "{b:?}");
    }
    let singles = all.iter().filter(|b| b.len() == 1).count();
    assert!(singles > 0 && singles < all.len(), "{singles} of {} bursts alone", all.len());
    assert!(all.iter().any(|b| b.len() >= 3), "a burst of three or more");
    assert!(bursts(false).iter().flatten().all(|s| !s.psh), "off: no PSH at all");
}
