//! The sender's side of `TcpConfig::psh`: new data goes out in GSO packets of at most
//! `tso_segs` segments, and each packet of more than one segment ends with PSH, as
//! Linux's `__tcp_transmit_skb` marks it; a segment sent alone carries none unless it
//! ends a send-queue buffer that the application's writes pushed (`tcp_mark_push`). A
//! packet the window would cut short waits for the next ACK when that is due within a
//! millisecond, as `tcp_tso_should_defer` decides.

use cclab_cc::{tcp::tso_segs, Algorithm, LossRecovery};
use cclab_sim::tcp::{Ack, Segment, TcpReceiver, TcpSender, MAX_SACK_BLOCKS};
use cclab_sim::{DelayedAck, TcpConfig};
use cclab_units::{Duration, Time};

/// One pass of the sender: what it sent, the segments below the highest sent before
/// it, and the packet size the pacing rate allowed.
struct Burst {
    segs: Vec<Segment>,
    first_new: u32,
    max_segs: u32,
}

/// Every burst of a Reno flow over 12 round trips, its segment 40 lost once, segments
/// 100 us apart and every second ACK lost on the way back (so that bursts of one, of two
/// and of more all occur; the short RTT makes the GSO packets long once it is known).
fn bursts(psh: bool) -> Vec<Burst> {
    let no_delay = DelayedAck { enabled: false, ..Default::default() };
    let cfg = TcpConfig { psh, handshake: false, delayed_ack: no_delay, ..Default::default() };
    let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, None);
    let mut r = TcpReceiver::new(0, 1448, None, no_delay, LossRecovery::Sack);
    let mut now = Time::ZERO;
    s.start(now);
    let mut all = vec![];
    let send = |s: &mut TcpSender, now: Time, all: &mut Vec<Burst>| {
        let mut tp = s.tp().clone();
        tp.packets_in_flight = s.in_flight();
        let (first_new, max_segs) = (s.snd_nxt(), tso_segs(&tp));
        let mut segs = vec![];
        s.transmit(now, &mut |seg| segs.push(seg));
        if !segs.is_empty() {
            all.push(Burst { segs: segs.clone(), first_new, max_segs });
        }
        segs
    };
    let mut wire = send(&mut s, now, &mut all);
    let mut dropped = false;
    let mut acks = 0;
    for _round in 0..12 {
        let mut next = vec![];
        for seg in std::mem::take(&mut wire) {
            now += Duration::from_micros(100);
            if seg.seq == 40 && !dropped {
                dropped = true;
                continue;
            }
            if let Some(a) = r.on_data(now, &seg) {
                acks += 1;
                if acks % 2 == 1 {
                    continue;
                }
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

/// The send queue's buffers here: no window is offered, so each holds 64 KiB, 45
/// segments, and each is pushed as it fills (`forced_push`: more than half of a zero
/// window past the last push).
const BUFFER_SEGS: u32 = 45;

/// Where PSH belongs in a burst: no retransmission carries it, and the new segments,
/// cut into packets of `max_segs`, carry it on the last of each packet of two or more,
/// and on a segment sent alone that ends a buffer.
fn expected_marks(b: &Burst) -> Vec<bool> {
    let resent = b.segs.iter().filter(|s| s.seq < b.first_new).count();
    let new = b.segs.len() - resent;
    let mut marks = vec![false; resent];
    let mut left = new as u32;
    let mut seq = b.first_new;
    while left > 0 {
        let len = left.min(b.max_segs);
        let ends_buffer = (seq + len).is_multiple_of(BUFFER_SEGS);
        marks.extend((1..=len).map(|k| k == len && (len > 1 || ends_buffer)));
        left -= len;
        seq += len;
    }
    marks
}

#[test]
fn each_gso_packet_of_two_or_more_segments_ends_with_psh() {
    let all = bursts(true);
    for b in &all {
        let marks: Vec<bool> = b.segs.iter().map(|s| s.psh).collect();
        assert_eq!(marks, expected_marks(b), "max_segs {}: {:?}", b.max_segs, b.segs);
    }
    let new_segs = |b: &Burst| b.segs.iter().filter(|s| s.seq >= b.first_new).count() as u32;
    // Before the first RTT sample the pacing rate is zero, so the initial window goes
    // out in pairs; once the 100 us RTT is known, a packet can hold all of a burst.
    assert_eq!(all[0].max_segs, 2);
    assert!(all[0].segs.len() >= 4 && all[0].segs.iter().filter(|s| s.psh).count() >= 2);
    assert!(
        all.iter().any(|b| b.max_segs > 2 && new_segs(b) > 2),
        "a burst of three or more in one packet"
    );
    assert!(all.iter().any(|b| b.segs.len() == 1), "a segment sent alone");
    assert!(all.iter().any(|b| b.segs.iter().any(|s| s.seq < b.first_new)), "a retransmission");
    assert!(bursts(false).iter().flat_map(|b| &b.segs).all(|s| !s.psh), "off: no PSH at all");
}

/// A Reno sender with a receive window of `rwnd` segments and `segs` segments to send
/// (None: a bulk sender), and a 100 ms RTT.
struct Flow {
    psh: bool,
    rwnd: u32,
    segs: Option<u64>,
}

/// What `p`'s sender sends at 0, then in answer to each of a series of cumulative ACKs
/// (time in us, next expected segment), each ACK echoing the send time of the segment it
/// acknowledges last.
fn answers(p: Flow, acks: &[(u64, u32)]) -> Vec<Vec<Segment>> {
    let rwnd = Some(u64::from(p.rwnd) * 1448);
    let cfg = TcpConfig { psh: p.psh, handshake: false, rwnd, ..Default::default() };
    let bytes = p.segs.map(|n| n * 1448);
    let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, bytes);
    s.start(Time::ZERO);
    let send = |s: &mut TcpSender, now: Time| {
        let mut segs = vec![];
        s.transmit(now, &mut |seg| segs.push(seg));
        segs
    };
    let mut sent = send(&mut s, Time::ZERO);
    let mut out = vec![sent.clone()];
    for &(at_us, ack) in acks {
        let now = Time::ZERO + Duration::from_micros(at_us);
        let tsecr = sent[ack as usize - 1].tsval;
        let sacks = [(0, 0); MAX_SACK_BLOCKS];
        s.on_ack(now, &Ack { flow: 0, ack, sacks, n_sacks: 0, window: 0, tsecr, tsval: now });
        assert_eq!(tso_segs(s.tp()), 2, "packets of two at this rate");
        let answer = send(&mut s, now);
        sent.extend(answer.iter().copied());
        out.push(answer);
    }
    out
}

#[test]
fn a_packet_the_window_cuts_short_waits_for_an_ack_due_within_a_millisecond() {
    // The first ACK comes 100 ms after the last send, the next two 0.3 ms apart while the
    // oldest outstanding segment (sent at 0) is due, the fourth acknowledges everything
    // sent at 0, so that the oldest left was sent at 100 ms and is due 100 ms later.
    let acks = [(100_000, 1), (100_300, 2), (100_600, 3), (100_900, 10)];
    let bulk = |psh| answers(Flow { psh, rwnd: 10, segs: None }, &acks);
    let answered = bulk(true);
    assert_eq!(answered[0].len(), 10, "the initial window");
    assert_eq!(
        shape(&answered[1..]),
        vec![
            // The last send was 100 ms ago: no holding back after a pause.
            vec![(10, false)],
            // One segment's room, the last send 0.3 ms ago and the next ACK due now: wait.
            vec![],
            // Room for two: the pair goes.
            vec![(11, false), (12, true)],
            // Room for seven: three pairs, then the last one alone, since the next ACK
            // (of segment 10, sent at 100 ms) is due about 100 ms from now.
            vec![(13, false), (14, true), (15, false), (16, true), (17, false), (18, true)]
                .into_iter()
                .chain([(19, false)])
                .collect(),
        ]
    );
    // Without GSO sending every ACK's room is used at once.
    let plain: Vec<usize> = bulk(false)[1..].iter().map(Vec::len).collect();
    assert_eq!(plain, vec![1, 1, 1, 7]);
}

/// Each answer as (segment, PSH) pairs.
fn shape(answers: &[Vec<Segment>]) -> Vec<Vec<(u32, bool)>> {
    answers.iter().map(|a| a.iter().map(|seg| (seg.seq, seg.psh)).collect()).collect()
}

#[test]
fn a_segment_goes_at_once_when_it_is_the_rest_of_the_data_or_a_third_of_the_window() {
    // The second ACK of the test above, which waits with a bulk sender and room for 10.
    let acks = [(100_000, 1), (100_300, 2)];
    // The segment it would hold back is the application's last, which its last write
    // pushed (`tcp_push` at the end of `sendmsg`).
    let finite = answers(Flow { psh: true, rwnd: 10, segs: Some(12) }, &acks);
    assert_eq!(shape(&finite[1..]), vec![vec![(10, false)], vec![(11, true)]]);
    // One segment is a third of a 3-segment window (`tcp_tso_win_divisor`).
    let narrow = answers(Flow { psh: true, rwnd: 3, segs: None }, &acks);
    assert_eq!(
        shape(&narrow),
        vec![vec![(0, false), (1, true), (2, false)], vec![(3, false)], vec![(4, false)]]
    );
}

/// The send queue's buffers (`send_buffers.rs`): with no window offered yet they hold
/// 64 KiB, 45 segments, so the first buffer's last segment, 44, goes out alone and the
/// pairs start again at 45 (`tcp_mss_split_point` never sends across a buffer's end).
/// The buffer was pushed as it filled, so 44 carries PSH.
#[test]
fn a_gso_packet_never_spans_two_send_buffers() {
    let no_delay = DelayedAck { enabled: false, ..Default::default() };
    let cfg =
        TcpConfig { psh: true, handshake: false, delayed_ack: no_delay, ..Default::default() };
    let mut s = TcpSender::new(0, Algorithm::new("reno").unwrap(), cfg, None);
    s.start(Time::ZERO);
    let mut sent: Vec<Segment> = vec![];
    s.transmit(Time::ZERO, &mut |seg| sent.push(seg));
    // Two rounds: every segment out is acknowledged 60 ms after it left, all at once.
    for round in 1..=2u64 {
        let now = Time::ZERO + Duration::from_millis(60 * round);
        let (ack, tsecr) = (s.snd_nxt(), sent.last().unwrap().tsval);
        let sacks = [(0, 0); MAX_SACK_BLOCKS];
        s.on_ack(now, &Ack { flow: 0, ack, sacks, n_sacks: 0, window: 0, tsecr, tsval: now });
        assert_eq!(tso_segs(s.tp()), 2, "packets of two once the RTT is known");
        s.transmit(now, &mut |seg| sent.push(seg));
    }
    assert!(sent.len() > 60, "the second round reaches past the first buffer: {}", sent.len());
    let pushed: Vec<u32> = sent[30..60].iter().filter(|g| g.psh).map(|g| g.seq).collect();
    let want: Vec<u32> = (31..44).step_by(2).chain([44]).chain((46..60).step_by(2)).collect();
    assert_eq!(pushed, want, "pairs up to segment 43, 44 alone, pairs again from 45");
}
