//! Worked examples of the TCP sender's loss recovery, driven by hand: segments go into a
//! test "network" (a Vec), the test decides which arrive, and ACKs come back from the
//! real receiver. Each test states the expected sequence of events.

use cclab_cc::{Algorithm, CaState, LossRecovery};
use cclab_sim::tcp::{Ack, Segment, TcpReceiver, TcpSender};
use cclab_sim::{DelayedAck, TcpConfig};
use cclab_units::{Duration, Time};

struct Harness {
    s: TcpSender,
    r: TcpReceiver,
    now: Time,
    /// Segments sent and not yet delivered or dropped, in send order.
    wire: Vec<Segment>,
}

impl Harness {
    fn new(cc: &str, recovery: Option<LossRecovery>, init_cwnd: u32) -> Harness {
        Harness::with_tlp(cc, recovery, init_cwnd, true)
    }

    /// With the tail-loss probe on or off: a test of the RTO itself turns it off, as the
    /// probe would otherwise take the timer's first expiry (see tests/tlp.rs).
    fn with_tlp(cc: &str, recovery: Option<LossRecovery>, init_cwnd: u32, tlp: bool) -> Harness {
        let cfg = TcpConfig {
            init_cwnd,
            recovery,
            tlp,
            delayed_ack: DelayedAck { enabled: false, ..Default::default() },
            ..Default::default()
        };
        let mut s = TcpSender::new(0, Algorithm::new(cc).unwrap(), cfg, None);
        s.start(Time::ZERO);
        let r = TcpReceiver::new(
            0,
            1448,
            None,
            DelayedAck { enabled: false, ..Default::default() },
            LossRecovery::Sack,
        );
        let mut h = Harness { s, r, now: Time::ZERO, wire: vec![] };
        h.send();
        h
    }

    fn send(&mut self) -> Vec<u32> {
        let mut out = vec![];
        self.s.transmit(self.now, &mut |seg| out.push(seg));
        let seqs = out.iter().map(|s| s.seq).collect();
        self.wire.extend(out);
        seqs
    }

    fn tick(&mut self) {
        self.now += Duration::from_millis(1);
    }

    /// Delivers (or drops) every segment on the wire in order; returns the ACKs.
    fn deliver_all_but(&mut self, drop: &[u32]) -> Vec<Ack> {
        let segs: Vec<Segment> = std::mem::take(&mut self.wire);
        let mut acks = vec![];
        for seg in segs {
            if drop.contains(&seg.seq) {
                continue;
            }
            if let Some(a) = self.r.on_data(self.now, &seg) {
                acks.push(a);
            }
        }
        acks
    }

    /// Feeds one ACK to the sender and lets it transmit; returns what it sent.
    fn ack(&mut self, a: &Ack) -> Vec<u32> {
        self.tick();
        self.s.on_ack(self.now, a);
        self.s.check_invariants().unwrap();
        self.send()
    }

    fn cwnd(&self) -> u32 {
        self.s.tp().snd_cwnd
    }
}

/// Grows the window to 20 segments in flight with no loss (slow start from 10).
fn warm_up(h: &mut Harness) {
    let acks = h.deliver_all_but(&[]);
    for a in &acks {
        h.ack(a);
    }
    assert_eq!(h.cwnd(), 20, "slow start: 10 segments ACKed one by one add 10");
    assert_eq!(h.s.in_flight(), 20);
}

#[test]
fn tahoe_drops_cwnd_to_one_on_the_third_duplicate_ack_and_slow_starts() {
    let mut h = Harness::new("tahoe", None, 10);
    warm_up(&mut h);
    // Segments 10..30 are in flight; 12 is lost.
    let acks = h.deliver_all_but(&[12]);
    assert_eq!(acks.len(), 19);
    h.ack(&acks[0]);
    h.ack(&acks[1]); // cumulative: snd_una = 12
    assert_eq!(h.s.snd_una(), 12);
    h.ack(&acks[2]);
    h.ack(&acks[3]);
    assert_eq!(h.s.tp().ca_state, CaState::Disorder);
    let before = h.cwnd();
    let sent = h.ack(&acks[4]); // third duplicate ACK
    assert_eq!(h.s.tp().snd_ssthresh, before / 2, "ssthresh = cwnd/2 from the algorithm");
    assert_eq!(h.cwnd(), 1, "Tahoe: cwnd to one segment");
    assert_eq!(h.s.tp().ca_state, CaState::Loss);
    assert_eq!(sent, vec![12], "retransmits the hole and nothing else");
    // Later duplicates do not inflate the window (no fast recovery).
    for a in &acks[5..] {
        assert!(h.ack(a).is_empty());
        assert_eq!(h.cwnd(), 1);
    }
    // The retransmission fills the hole: everything sent so far is ACKed at once (the
    // two cumulative ACKs above had let slow start send 30..35).
    let acks = h.deliver_all_but(&[]);
    assert_eq!(acks.last().unwrap().ack, 36);
    h.ack(acks.last().unwrap());
    // That ACK reaches high_seq (36) and goes no further: without SACK, Linux holds the
    // state until an ACK goes past it (`tcp_try_undo_recovery`).
    assert_eq!(h.s.tp().ca_state, CaState::Loss);
    // Slow start counts ACKed segments (Linux tcp_slow_start): 1 + 24 reaches ssthresh,
    // and the 14 left over buy one more segment in congestion avoidance (w = 11).
    assert_eq!(h.s.tp().snd_ssthresh, 11);
    assert_eq!(h.cwnd(), 12);
}

#[test]
fn newreno_stays_in_recovery_across_partial_acks_and_retransmits_each_hole() {
    let mut h = Harness::new("newreno", None, 10);
    warm_up(&mut h);
    // In flight: 10..30. Lose 12 and 20.
    let acks = h.deliver_all_but(&[12, 20]);
    let mut retrans = vec![];
    let mut cwnd_at_loss = 0;
    for a in &acks {
        if h.s.tp().ca_state != CaState::Recovery {
            cwnd_at_loss = h.cwnd();
        }
        retrans.extend(h.ack(a).into_iter().filter(|&s| s < 30));
    }
    assert_eq!(h.s.tp().ca_state, CaState::Recovery);
    assert_eq!(retrans, vec![12], "NewReno ignores SACK: only the first hole is retransmitted");
    assert_eq!(h.s.tp().snd_ssthresh, cwnd_at_loss / 2);
    // The retransmission of 12 arrives: a partial ACK up to 20.
    let acks = h.deliver_all_but(&[]);
    let partial = acks.iter().find(|a| a.ack == 20).expect("partial ACK");
    let sent = h.ack(partial);
    assert_eq!(h.s.tp().ca_state, CaState::Recovery, "a partial ACK does not end recovery");
    assert!(sent.contains(&20), "the next hole is retransmitted at once: {sent:?}");
    // Deliver everything: the full ACK ends recovery with cwnd = ssthresh.
    let acks = h.deliver_all_but(&[]);
    for a in &acks {
        h.ack(a);
    }
    assert_eq!(h.s.tp().ca_state, CaState::Open);
    let ssthresh = h.s.tp().snd_ssthresh;
    assert!(
        h.cwnd() >= ssthresh && h.cwnd() <= ssthresh + 1,
        "cwnd {} after recovery, ssthresh {ssthresh}",
        h.cwnd()
    );
    assert_eq!(h.s.stats().timeouts, 0);
}

#[test]
fn newreno_partial_acks_take_no_rtt_sample_from_segments_sent_rounds_ago() {
    // Issue 8: a partial ACK covers one retransmitted hole and the segments above it, sent
    // one round earlier per hole before it. Linux (`tcp_clean_rtx_queue`) takes no
    // sequence sample once retransmitted data is acknowledged and uses the echoed
    // timestamp, which is the retransmission's: every sample stays one round trip.
    const ROUND: Duration = Duration::from_millis(100);
    let mut h = Harness::new("newreno", None, 10);
    warm_up(&mut h);
    // In flight: 10..30, sent in the first 10 ms. Three holes: three rounds of recovery.
    h.now += ROUND;
    let acks = h.deliver_all_but(&[12, 17, 22]);
    for a in &acks {
        h.ack(a);
    }
    assert_eq!(h.s.tp().ca_state, CaState::Recovery);
    // A round trip here is ROUND plus the harness's 1 ms per ACK processed (at most 20 ACKs
    // a round), so no real sample exceeds 120 ms; a sample from a segment sent a round
    // earlier would be over 200 ms.
    let longest_round_trip = ROUND + Duration::from_millis(20);
    let mut partial_acks = vec![];
    while h.s.tp().ca_state == CaState::Recovery {
        h.now += ROUND;
        let acks = h.deliver_all_but(&[]);
        partial_acks.push(acks.last().unwrap().ack);
        for a in &acks {
            h.ack(a);
            let srtt = Duration::from_micros(h.s.tp().srtt_us() as u64);
            assert!(srtt <= longest_round_trip, "srtt {srtt:?} after ACK {}", a.ack);
        }
    }
    assert_eq!(partial_acks.len(), 3, "one hole repaired per round: {partial_acks:?}");
    assert_eq!(&partial_acks[..2], &[17, 22]);
    let largest_sample_us = h.s.stats().rtt_us.quantile(1.0);
    assert!(
        largest_sample_us <= longest_round_trip.as_micros() as f64,
        "an RTT sample of {largest_sample_us} us"
    );
}

#[test]
fn sack_recovery_repairs_two_holes_in_one_round_with_prr() {
    let mut h = Harness::new("reno", None, 10);
    warm_up(&mut h);
    let acks = h.deliver_all_but(&[12, 20]);
    let mut sent_in_recovery = vec![];
    let mut delivered_in_recovery = 0;
    for a in &acks {
        let in_recovery = h.s.tp().ca_state == CaState::Recovery;
        let sent = h.ack(a);
        if in_recovery || h.s.tp().ca_state == CaState::Recovery {
            delivered_in_recovery += in_recovery as u32;
            sent_in_recovery.extend(sent);
        }
    }
    assert_eq!(h.s.tp().ca_state, CaState::Recovery);
    assert!(
        sent_in_recovery.contains(&12) && sent_in_recovery.contains(&20),
        "{sent_in_recovery:?}"
    );
    // PRR (RFC 6937): while in_flight > ssthresh, sending follows
    // ceil(prr_delivered * ssthresh / prior_cwnd), so about half of what is delivered
    // (ssthresh = prior_cwnd / 2), and at least the one forced fast retransmit.
    let ratio = h.s.tp().snd_ssthresh as f64 / h.s.tp().prior_cwnd as f64;
    let expected = ((delivered_in_recovery + 1) as f64 * ratio).ceil() as usize;
    assert!(
        sent_in_recovery.len().abs_diff(expected) <= 1,
        "PRR sent {} for {} delivered, expected {expected}",
        sent_in_recovery.len(),
        delivered_in_recovery + 1
    );
    let acks = h.deliver_all_but(&[]);
    for a in &acks {
        h.ack(a);
    }
    assert_eq!(h.s.tp().ca_state, CaState::Open);
    assert_eq!(h.s.stats().retransmits, 2);
    assert!(h.cwnd() >= 10, "cwnd = ssthresh at the end of recovery, then growth");
}

#[test]
fn rto_backs_off_exponentially_then_go_back_n() {
    let mut h = Harness::with_tlp("reno", None, 10, false);
    warm_up(&mut h);
    let rto0 = h.s.rto();
    // About srtt + rto_min (Linux: rttvar never below rto_min): 200 ms plus a few ms.
    assert!(rto0 >= Duration::from_millis(200) && rto0 < Duration::from_millis(260), "{rto0:?}");
    // Everything in flight is lost, three times in a row.
    let mut expected = rto0;
    for k in 1..=3 {
        h.wire.clear();
        let deadline = h.s.rto_deadline().unwrap();
        h.now = deadline;
        h.s.on_rto(h.now);
        h.s.check_invariants().unwrap();
        expected = expected.saturating_mul(2);
        assert_eq!(h.s.stats().timeouts, k);
        assert_eq!(h.s.rto(), expected, "backoff doubles");
        assert_eq!(h.cwnd(), 1);
        assert_eq!(h.s.tp().ca_state, CaState::Loss);
        assert_eq!(h.send(), vec![10], "go-back-N starts at snd_una");
    }
    assert_eq!(h.s.tp().snd_ssthresh, 10, "ssthresh set once, not halved again on repeated RTOs");
    // The retransmission gets through; slow start resends the rest.
    let acks = h.deliver_all_but(&[]);
    let sent = h.ack(&acks[0]);
    assert_eq!(h.cwnd(), 2);
    assert_eq!(sent, vec![11, 12]);
}

#[test]
fn spurious_rto_is_undone_when_the_original_ack_arrives() {
    let mut h = Harness::with_tlp("reno", None, 10, false);
    warm_up(&mut h);
    let cwnd = h.cwnd();
    // The ACKs are only late: RTO fires, then the original segments' ACKs arrive.
    let acks = h.deliver_all_but(&[]);
    h.now = h.s.rto_deadline().unwrap();
    h.s.on_rto(h.now);
    assert_eq!(h.cwnd(), 1);
    h.send();
    h.ack(&acks[0]);
    assert_eq!(h.s.stats().undos, 1);
    assert_eq!(h.s.tp().ca_state, CaState::Open);
    assert!(h.cwnd() >= cwnd, "cwnd restored: {} vs {cwnd}", h.cwnd());
}

#[test]
fn receiver_window_limits_what_is_outstanding() {
    let cfg = TcpConfig { rwnd: Some(5 * 1448), ..Default::default() };
    let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, None);
    s.start(Time::ZERO);
    let mut n = 0;
    s.transmit(Time::ZERO, &mut |_| n += 1);
    assert_eq!(n, 5);
}

#[test]
fn finite_transfer_sends_a_short_last_segment_and_completes() {
    let mut s =
        TcpSender::new(0, Algorithm::new("reno").unwrap(), TcpConfig::default(), Some(3000));
    s.start(Time::ZERO);
    let mut out = vec![];
    s.transmit(Time::ZERO, &mut |seg| out.push(seg));
    assert_eq!(out.iter().map(|s| s.payload).collect::<Vec<_>>(), vec![1448, 1448, 104]);
    let mut r = TcpReceiver::new(0, 1448, Some(3000), DelayedAck::default(), LossRecovery::Sack);
    let mut last = None;
    for seg in &out {
        last = r.on_data(Time(1), seg).or(last);
    }
    s.on_ack(Time(2_000_000), &last.unwrap());
    assert_eq!(r.delivered_bytes(), 3000);
    assert_eq!(s.stats().completed_at, Some(Time(2_000_000)));
    assert_eq!(s.rto_deadline(), None);
}
