//! RACK loss detection (`TcpConfig::rack`, on by default) against RFC 6675 DupThresh, on
//! a hand-driven path: a sender and a receiver joined by 25 ms each way, where the test
//! decides the fate of each transmission of each segment (delivered, dropped or held
//! back). Each case runs both ways and states what each does.

use cclab_cc::Algorithm;
use cclab_sim::tcp::{Ack, Segment, TcpReceiver, TcpSender};
use cclab_sim::{DelayedAck, TcpConfig};
use cclab_units::{Duration, Time};

const ONE_WAY: Duration = Duration::from_millis(25);
/// Each segment takes the sender's link 100 us (116 Mbit/s): ACKs come back spaced, so
/// no two are handled at the same instant (RACK tells apart segments sent at the same
/// microsecond by sequence, as Linux does, which holds within one transmission burst).
const SEND_TIME: Duration = Duration::from_micros(100);

/// What happens to one transmission of a segment.
#[derive(Clone, Copy, PartialEq)]
enum Fate {
    Deliver,
    Drop,
    /// Delivered this much later than the path's delay (overtaken by what follows).
    Late(Duration),
}

/// A sender and a receiver on a path with no queue but the sender's link: segments
/// arrive 100 us apart and 25 ms after they leave.
struct Path<F: Fn(u32, u32) -> Fate> {
    s: TcpSender,
    r: TcpReceiver,
    now: Time,
    /// Segments and ACKs on the way, with their arrival times, in arrival order.
    to_receiver: Vec<(Time, Segment)>,
    to_sender: Vec<(Time, Ack)>,
    /// When the sender's link is free.
    link_free: Time,
    /// How many times each segment was sent.
    sends: Vec<u32>,
    /// The fate of the `n`th transmission (1: the original) of segment `seq`.
    fate: F,
}

impl<F: Fn(u32, u32) -> Fate> Path<F> {
    fn new(rack: bool, bytes: Option<u64>, fate: F) -> Path<F> {
        let no_delack = DelayedAck { enabled: false, ..Default::default() };
        let cfg =
            TcpConfig { rack, handshake: false, delayed_ack: no_delack, ..Default::default() };
        let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, bytes);
        s.start(Time::ZERO);
        let r = TcpReceiver::new(0, 1448, bytes, no_delack);
        let mut p = Path {
            s,
            r,
            now: Time::ZERO,
            to_receiver: vec![],
            to_sender: vec![],
            link_free: Time::ZERO,
            sends: vec![],
            fate,
        };
        p.transmit();
        p
    }

    fn transmit(&mut self) {
        let mut out = vec![];
        self.s.transmit(self.now, &mut |seg| out.push(seg));
        for seg in out {
            let i = seg.seq as usize;
            if self.sends.len() <= i {
                self.sends.resize(i + 1, 0);
            }
            self.sends[i] += 1;
            let leaves = self.now.max(self.link_free);
            self.link_free = leaves + SEND_TIME;
            let at = match (self.fate)(seg.seq, self.sends[i]) {
                Fate::Drop => continue,
                Fate::Deliver => leaves + ONE_WAY,
                Fate::Late(d) => leaves + ONE_WAY + d,
            };
            let k = self.to_receiver.partition_point(|&(t, _)| t <= at);
            self.to_receiver.insert(k, (at, seg));
        }
    }

    /// Runs events in time order until `end`: arrivals at either end and the sender's
    /// timer (RTO or RACK's reorder timer).
    fn run_until(&mut self, end: Time) {
        loop {
            let seg = self.to_receiver.first().map(|e| e.0);
            let ack = self.to_sender.first().map(|e| e.0);
            let timer = self.s.rto_deadline();
            let Some(next) = [seg, ack, timer].into_iter().flatten().min() else { return };
            if next > end || self.s.is_complete() {
                return;
            }
            self.now = next;
            if seg == Some(next) {
                let (_, seg) = self.to_receiver.remove(0);
                if let Some(a) = self.r.on_data(self.now, &seg) {
                    self.to_sender.push((self.now + ONE_WAY, a));
                }
            } else if ack == Some(next) {
                let (_, a) = self.to_sender.remove(0);
                self.s.on_ack(self.now, &a);
                self.transmit();
            } else {
                self.s.on_rto(self.now);
                self.transmit();
            }
            self.s.check_invariants().unwrap();
        }
    }
}

fn ms(x: u64) -> Time {
    Time::ZERO + Duration::from_millis(x)
}

#[test]
fn a_lost_retransmission_is_found_without_waiting_for_the_rto() {
    // Segment 30 is lost, and so is its first retransmission; the second gets through.
    let fate = |seq, n| if seq == 30 && n <= 2 { Fate::Drop } else { Fate::Deliver };
    let mut rack = Path::new(true, None, fate);
    rack.run_until(ms(1000));
    // RACK: the segments sent after the retransmission are SACKed one RTT later, which
    // shows it lost; it goes again at once.
    assert_eq!(rack.sends[30], 3);
    assert_eq!(rack.s.stats().timeouts, 0);
    assert_eq!(rack.s.stats().retransmits, 2);
    assert!(rack.s.snd_una() > 30);

    // DupThresh cannot see a lost retransmission: the flow stalls on segment 30 until
    // the RTO.
    let mut dupthresh = Path::new(false, None, fate);
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
    let mut rack = Path::new(true, None, fate);
    rack.run_until(ms(500));
    assert!(rack.s.snd_una() > 100);
    assert_eq!(rack.s.stats().retransmits, 0);
    assert_eq!(rack.s.stats().fast_recoveries, 0);

    // DupThresh calls segment 40 lost on the third SACK above it and resends it for
    // nothing.
    let mut dupthresh = Path::new(false, None, fate);
    dupthresh.run_until(ms(500));
    assert_eq!(dupthresh.sends[40], 2);
    assert_eq!(dupthresh.s.stats().fast_recoveries, 1);
}

#[test]
fn without_reordering_seen_three_sacks_above_a_hole_make_it_lost_at_once() {
    // As DupThresh, RACK does not wait once three segments above a hole are SACKed
    // while no reordering has been seen (`tcp_rack_reo_wnd` returns 0).
    let fate = |seq, n| if (seq, n) == (40, 1) { Fate::Drop } else { Fate::Deliver };
    let mut p = Path::new(true, None, fate);
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
    let mut rack = Path::new(true, bytes, fate);
    rack.run_until(ms(2000));
    let done = rack.s.stats().completed_at.expect("transfer completes");
    assert_eq!((rack.sends[18], rack.s.stats().timeouts), (2, 0));
    // 20 segments take two round trips (initcwnd 10); the SACK of 19 comes at about
    // 100 ms, the retransmission goes 12.5 + 2 ms later (rounded to jiffies) and is
    // ACKed one RTT after that.
    assert!(done > ms(160) && done < ms(170), "{done:?}");

    let mut dupthresh = Path::new(false, bytes, fate);
    dupthresh.run_until(ms(2000));
    assert_eq!(dupthresh.s.stats().timeouts, 1);
    assert!(dupthresh.s.stats().completed_at.unwrap() > ms(300));
}
