//! RACK loss detection (`TcpConfig::rack`, on by default) against RFC 6675 DupThresh, on
//! a hand-driven path: a sender and a receiver joined by 25 ms each way, where the test
//! decides the fate of each transmission of each segment (delivered, dropped or held
//! back). Each case runs both ways and states what each does.

mod common;

use cclab_sim::TcpConfig;
use cclab_units::Duration;
use common::path::{at_ms as ms, Fate, Path};

fn with_rack(on: bool) -> TcpConfig {
    TcpConfig { rack: on, ..TcpConfig::default() }
}

#[test]
fn a_lost_retransmission_is_found_without_waiting_for_the_rto() {
    // Segment 30 is lost, and so is its first retransmission; the second gets through.
    let fate = |seq, n| if seq == 30 && n <= 2 { Fate::Drop } else { Fate::Deliver };
    let mut rack = Path::new(with_rack(true), None, fate);
    rack.run_until(ms(1000));
    // RACK: the segments sent after the retransmission are SACKed one RTT later, which
    // shows it lost; it goes again at once.
    assert_eq!(rack.sends[30], 3);
    assert_eq!(rack.s.stats().timeouts, 0);
    assert_eq!(rack.s.stats().retransmits, 2);
    assert!(rack.s.snd_una() > 30);

    // DupThresh cannot see a lost retransmission: the flow stalls on segment 30 until
    // the RTO.
    let mut dupthresh = Path::new(with_rack(false), None, fate);
    dupthresh.run_until(ms(1000));
    assert_eq!(dupthresh.s.stats().timeouts, 1);
    assert_eq!(dupthresh.sends[30], 3);
}

#[test]
fn reordering_within_the_window_is_not_called_loss() {
    // Segment 8 of the first flight comes 3 ms late, behind segment 9: that is
    // reordering (a segment never retransmitted delivered below one SACKed). Later,
    // segment 40 comes 8 ms late, behind many segments sent with it: with reordering
    // seen, RACK waits min_rtt/4 = 12.5 ms for it, which is enough.
    let fate = |seq, n| match (seq, n) {
        (8, 1) => Fate::Late(Duration::from_millis(3)),
        (40, 1) => Fate::Late(Duration::from_millis(8)),
        _ => Fate::Deliver,
    };
    let mut rack = Path::new(with_rack(true), None, fate);
    rack.run_until(ms(500));
    assert!(rack.s.snd_una() > 100);
    assert_eq!(rack.s.stats().retransmits, 0);
    assert_eq!(rack.s.stats().fast_recoveries, 0);

    // DupThresh calls segment 40 lost on the third SACK above it and resends it for
    // nothing.
    let mut dupthresh = Path::new(with_rack(false), None, fate);
    dupthresh.run_until(ms(500));
    assert_eq!(dupthresh.sends[40], 2);
    assert_eq!(dupthresh.s.stats().fast_recoveries, 1);
}

#[test]
fn without_reordering_seen_three_sacks_above_a_hole_make_it_lost_at_once() {
    // As DupThresh, RACK does not wait once three segments above a hole are SACKed
    // while no reordering has been seen (`tcp_rack_reo_wnd` returns 0).
    let fate = |seq, n| if (seq, n) == (40, 1) { Fate::Drop } else { Fate::Deliver };
    let mut p = Path::new(with_rack(true), None, fate);
    p.run_until(ms(500));
    assert_eq!((p.sends[40], p.s.stats().fast_recoveries, p.s.stats().timeouts), (2, 1, 0));
}

#[test]
fn a_loss_with_too_few_segments_after_it_is_recovered_by_the_reorder_timer() {
    // A 20-segment transfer whose segment 18 is lost: only segment 19 comes after it, so
    // DupThresh never fires. RACK's reorder timer does, min_rtt/4 + 2 ms after the SACK
    // of 19 would have been due.
    let fate = |seq, n| if (seq, n) == (18, 1) { Fate::Drop } else { Fate::Deliver };
    let bytes = Some(20 * 1448);
    let mut rack = Path::new(with_rack(true), bytes, fate);
    rack.run_until(ms(2000));
    let done = rack.s.stats().completed_at.expect("transfer completes");
    assert_eq!((rack.sends[18], rack.s.stats().timeouts), (2, 0));
    // 20 segments take two round trips (initcwnd 10); the SACK of 19 comes at about
    // 100 ms, the retransmission goes 12.5 + 2 ms later (rounded to jiffies) and is
    // ACKed one RTT after that.
    assert!(done > ms(160) && done < ms(170), "{done:?}");

    let mut dupthresh = Path::new(with_rack(false), bytes, fate);
    dupthresh.run_until(ms(2000));
    assert_eq!(dupthresh.s.stats().timeouts, 1);
    assert!(dupthresh.s.stats().completed_at.unwrap() > ms(300));
}

#[test]
fn each_resend_of_the_oldest_segment_restarts_the_rto() {
    // Segment 30 and its first six retransmissions are lost. RACK finds each lost
    // retransmission about an RTT after it went and sends segment 30 again; Linux restarts
    // the RTO whenever it resends the oldest outstanding segment
    // (`tcp_xmit_retransmit_queue`), so the timer counts from the latest resend, not from
    // the last ACK that advanced. The seventh retransmission, about 300 ms after the
    // first (the RTO here is about 250 ms: srtt 50 ms plus rto_min), repairs the hole
    // without a timeout.
    let fate = |seq, n| if seq == 30 && n <= 7 { Fate::Drop } else { Fate::Deliver };
    let mut p = Path::new(with_rack(true), None, fate);
    let mut resends = vec![];
    let mut t = ms(0);
    while p.s.snd_una() <= 30 && t < ms(2000) {
        t += Duration::from_micros(100);
        let before = p.sends.get(30).copied().unwrap_or(0);
        p.run_until(t);
        if p.sends.get(30).copied().unwrap_or(0) > before {
            resends.push((p.now, p.s.rto_deadline().unwrap(), p.s.rto()));
        }
    }
    assert_eq!(p.sends[30], 8, "the original and seven retransmissions");
    assert_eq!(p.s.stats().timeouts, 0);
    let first = resends[1].0;
    let last = resends.last().unwrap().0;
    assert!(last - first > resends[1].2, "the resends span more than one RTO");
    // From the second retransmission on, each moved the RTO to its own send time plus
    // the RTO. (The first went while RACK's reorder timer held the timer, which Linux
    // leaves alone.)
    for &(sent, deadline, rto) in &resends[2..] {
        assert_eq!(deadline, sent + rto, "resent at {sent:?}");
    }
}
