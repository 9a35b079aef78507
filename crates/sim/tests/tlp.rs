//! The tail-loss probe (`TcpConfig::tlp`, on by default with RACK) against waiting for
//! the RTO, on the hand-driven path of `common/path.rs` (25 ms each way).

mod common;

use cclab_sim::TcpConfig;
use cclab_units::Duration;
use common::path::{at_ms as ms, Fate, Path};

fn tlp(on: bool) -> TcpConfig {
    TcpConfig { tlp: on, ..TcpConfig::default() }
}

#[test]
fn a_lost_tail_is_recovered_by_a_probe_about_two_rtts_later_without_a_timeout() {
    // A 20-segment transfer whose last two segments are lost: nothing is sent after
    // them, so no SACK can show the loss. The second flight (10..20) leaves at about
    // 50 ms; the ACKs of 10..18 are back by about 101 ms.
    let fate = |seq, n| if seq >= 18 && n == 1 { Fate::Drop } else { Fate::Deliver };
    let bytes = Some(20 * 1448);
    let mut p = Path::new(tlp(true), bytes, fate);
    p.run_until(ms(150));
    let srtt = Duration::from_micros(p.s.tp().srtt_us() as u64);
    assert!(srtt >= Duration::from_millis(50) && srtt < Duration::from_millis(52), "{srtt}");
    // The probe timer: 2 srtt + 2 jiffies after the last ACK, well before the RTO
    // (srtt + 200 ms).
    let probe_at = p.s.rto_deadline().unwrap();
    assert!(probe_at > ms(200) && probe_at < ms(210), "{probe_at:?}");
    p.run_until(probe_at);
    assert_eq!((p.sends[18], p.sends[19]), (1, 2), "the probe resends the last segment");
    // Its SACK shows 18 lost to RACK; 18 goes again at once and is ACKed an RTT later.
    p.run_until(ms(2000));
    let done = p.s.stats().completed_at.expect("transfer completes");
    let st = p.s.stats();
    assert_eq!((st.probes, st.timeouts, st.fast_recoveries, p.sends[18]), (1, 0, 1, 2));
    assert!(done > ms(300) && done < ms(315), "{done:?}");

    // Without the probe the tail waits for the RTO, then goes back to the head with
    // cwnd 1: two more round trips.
    let mut rto = Path::new(tlp(false), bytes, fate);
    rto.run_until(ms(2000));
    let st = rto.s.stats();
    assert_eq!((st.probes, st.timeouts), (0, 1));
    let late = st.completed_at.expect("transfer completes");
    assert!(late > ms(440) && late < ms(470), "{late:?}");
}

#[test]
fn a_bulk_flow_with_no_tail_loss_sends_no_probe() {
    // ACKs come back every 100 us while data flows: the probe timer, moved by each, never
    // fires; nor while a loss in the middle is recovered (Recovery does not probe).
    let clean = |_, _| Fate::Deliver;
    let mut p = Path::new(tlp(true), None, clean);
    p.run_until(ms(3000));
    assert!(p.s.snd_una() > 10_000);
    assert_eq!((p.s.stats().probes, p.s.stats().retransmits), (0, 0));

    let one_loss = |seq, n| if (seq, n) == (500, 1) { Fate::Drop } else { Fate::Deliver };
    let mut p = Path::new(tlp(true), None, one_loss);
    p.run_until(ms(3000));
    let st = p.s.stats();
    assert_eq!((st.probes, st.timeouts, st.fast_recoveries, st.retransmits), (0, 0, 1, 1));
}

#[test]
fn with_one_segment_out_the_probe_allows_for_a_delayed_ack_but_not_beyond_the_rto() {
    // An 11-segment transfer whose last segment, alone in the second flight, is lost.
    // With one segment out the probe timeout is 2 srtt + TCP_RTO_MIN (the receiver may be
    // delaying its ACK), about 300 ms here, beyond the RTO (about 250 ms): the probe goes
    // when the RTO would have fired, in its place.
    let fate = |seq, n| if (seq, n) == (10, 1) { Fate::Drop } else { Fate::Deliver };
    let mut p = Path::new(tlp(true), Some(11 * 1448), fate);
    p.run_until(ms(60));
    let (probe_at, rto) = (p.s.rto_deadline().unwrap(), p.s.rto());
    let srtt = Duration::from_micros(p.s.tp().srtt_us() as u64);
    assert!(srtt.saturating_mul(2) + Duration::from_millis(200) > rto);
    assert!(probe_at > ms(50) + rto && probe_at < ms(52) + rto, "{probe_at:?} {rto}");
    p.run_until(ms(3000));
    let st = p.s.stats();
    assert_eq!((st.probes, st.timeouts, p.sends[10]), (1, 0, 2));
    assert!(st.completed_at.is_some());
}
