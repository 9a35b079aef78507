//! The TCP receiver: cumulative ACKs with SACK blocks, delayed ACKs as Linux sends them
//! (an ACK for every second full segment, a 40 ms timer otherwise, quick ACKs for the
//! first 16 segments of a connection and whenever data arrives out of order or fills a
//! hole: `tcp_ack_snd_check`, `tcp_incr_quickack` in net/ipv4/tcp_input.c), and the
//! RFC 7323 rule for which timestamp to echo.

use super::{release_if_empty, Ack, Segment, MAX_SACK_BLOCKS};
use crate::config::DelayedAck;
use cclab_units::Time;

/// Linux `TCP_MAX_QUICKACKS`: segments ACKed at once at the start of a connection.
const QUICKACKS: u32 = 16;

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    flow: u32,
    mss: u32,
    /// Total bytes of a finite transfer (to count the short last segment right).
    total_bytes: Option<u64>,
    delack: DelayedAck,
    /// Next segment expected.
    rcv_nxt: u32,
    /// Out-of-order segments held, as sorted disjoint ranges `[start, end)`.
    ooo: Vec<(u32, u32)>,
    /// The range holding the most recently received out-of-order segment (first SACK block).
    last_ooo: Option<u32>,
    /// Full segments received since the last ACK sent.
    unacked: u32,
    quick: u32,
    delack_deadline: Option<Time>,
    ts_recent: Time,
}

impl TcpReceiver {
    pub fn new(flow: u32, mss: u32, total_bytes: Option<u64>, delack: DelayedAck) -> TcpReceiver {
        TcpReceiver {
            flow,
            mss,
            total_bytes,
            delack,
            rcv_nxt: 0,
            ooo: Vec::new(),
            last_ooo: None,
            unacked: 0,
            quick: QUICKACKS,
            delack_deadline: None,
            ts_recent: Time::ZERO,
        }
    }

    /// Bytes delivered in order to the application.
    pub fn delivered_bytes(&self) -> u64 {
        let b = self.rcv_nxt as u64 * self.mss as u64;
        match self.total_bytes {
            Some(t) => b.min(t),
            None => b,
        }
    }

    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    /// When the delayed-ACK timer fires, if armed.
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// A data segment arrived; returns the ACK to send now, if any (otherwise the
    /// delayed-ACK timer may have been armed). A SYN is answered at once with a SYN-ACK
    /// echoing its timestamp, as a listening Linux socket does (`tcp_conn_request`), and
    /// changes nothing else.
    pub fn on_data(&mut self, now: Time, seg: &Segment) -> Option<Ack> {
        if seg.is_syn() {
            return Some(Ack::syn_ack(self.flow, seg.tsval));
        }
        let had_ooo = !self.ooo.is_empty();
        let s = seg.seq;
        if s < self.rcv_nxt {
            // Old duplicate (a spurious retransmission): ACK at once, as Linux does.
            return Some(self.make_ack());
        }
        if s == self.rcv_nxt {
            // RFC 7323: remember the timestamp of the segment at the left edge.
            self.ts_recent = seg.tsval;
            self.rcv_nxt += 1;
            // Absorb the held ranges the new edge reaches, shifting the rest only once.
            let mut merged = 0;
            for &(a, b) in &self.ooo {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                merged += 1;
            }
            if merged > 0 {
                self.ooo.drain(..merged);
                release_if_empty(&mut self.ooo);
            }
        } else {
            self.insert_ooo(s);
        }
        self.unacked += 1;
        let now_ack = !self.delack.enabled
            || had_ooo
            || !self.ooo.is_empty()
            || self.quick > 0
            || self.unacked >= self.delack.every.max(1);
        if now_ack {
            self.quick = self.quick.saturating_sub(1);
            Some(self.make_ack())
        } else {
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delack.timeout);
            }
            None
        }
    }

    /// The delayed-ACK timer fired at `now`.
    pub fn on_delack_timer(&mut self, now: Time) -> Option<Ack> {
        match self.delack_deadline {
            Some(d) if d <= now && self.unacked > 0 => Some(self.make_ack()),
            Some(d) if d <= now => {
                self.delack_deadline = None;
                None
            }
            _ => None,
        }
    }

    fn insert_ooo(&mut self, s: u32) {
        // Find the first range ending at or after s.
        let i = self.ooo.partition_point(|&(_, b)| b < s);
        if i < self.ooo.len() && self.ooo[i].0 <= s && s < self.ooo[i].1 {
            self.last_ooo = Some(self.ooo[i].0);
            return; // duplicate
        }
        if i < self.ooo.len() && self.ooo[i].1 == s {
            self.ooo[i].1 = s + 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].0 == s + 1 {
                self.ooo[i].1 = self.ooo[i + 1].1;
                self.ooo.remove(i + 1);
            }
            self.last_ooo = Some(self.ooo[i].0);
        } else if i < self.ooo.len() && self.ooo[i].0 == s + 1 {
            self.ooo[i].0 = s;
            self.last_ooo = Some(s);
        } else {
            self.ooo.insert(i, (s, s + 1));
            self.last_ooo = Some(s);
        }
    }

    fn make_ack(&mut self) -> Ack {
        self.unacked = 0;
        self.delack_deadline = None;
        let mut sacks = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0;
        // RFC 2018: the block holding the latest segment first, then the others (highest
        // first here; the sender keeps its own scoreboard so it learns every block).
        if let Some(start) = self.last_ooo {
            // The ranges are sorted and disjoint: their starts are unique and ascending.
            if let Ok(i) = self.ooo.binary_search_by_key(&start, |r| r.0) {
                sacks[0] = self.ooo[i];
                n = 1;
            }
        }
        for &r in self.ooo.iter().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if n > 0 && sacks[0] == r {
                continue;
            }
            sacks[n] = r;
            n += 1;
        }
        Ack { flow: self.flow, ack: self.rcv_nxt, sacks, n_sacks: n as u8, tsecr: self.ts_recent }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32, t: u64) -> Segment {
        Segment { flow: 0, seq, payload: 1448, wire_bytes: 1500, tsval: Time(t) }
    }

    #[test]
    fn acks_every_second_segment_after_the_quickack_phase() {
        let mut r = TcpReceiver::new(0, 1448, None, DelayedAck::default());
        for i in 0..QUICKACKS {
            assert!(r.on_data(Time(i as u64), &seg(i, i as u64)).is_some());
        }
        let s = QUICKACKS;
        assert!(r.on_data(Time(100), &seg(s, 100)).is_none());
        assert_eq!(r.delack_deadline(), Some(Time(100) + DelayedAck::default().timeout));
        let a = r.on_data(Time(101), &seg(s + 1, 101)).unwrap();
        assert_eq!(a.ack, s + 2);
        assert_eq!(r.delack_deadline(), None);
        assert!(r.on_data(Time(102), &seg(s + 2, 102)).is_none());
        let a = r.on_delack_timer(Time(102) + DelayedAck::default().timeout).unwrap();
        assert_eq!(a.ack, s + 3);
    }

    #[test]
    fn out_of_order_data_gets_sack_blocks_latest_first_and_immediate_acks() {
        let mut r = TcpReceiver::new(0, 1448, None, DelayedAck::default());
        r.quick = 0;
        r.on_data(Time(0), &seg(0, 0));
        let a = r.on_data(Time(1), &seg(2, 1)).unwrap();
        assert_eq!((a.ack, a.sack_blocks()), (1, &[(2, 3)][..]));
        let a = r.on_data(Time(2), &seg(5, 2)).unwrap();
        assert_eq!(a.sack_blocks(), &[(5, 6), (2, 3)]);
        let a = r.on_data(Time(3), &seg(3, 3)).unwrap();
        assert_eq!(a.sack_blocks(), &[(2, 4), (5, 6)]);
        assert_eq!(a.tsecr, Time(0), "echo stays at the last in-order segment");
        let a = r.on_data(Time(4), &seg(1, 4)).unwrap();
        assert_eq!((a.ack, a.sack_blocks()), (4, &[(5, 6)][..]));
        assert_eq!(a.tsecr, Time(4));
        assert_eq!(r.delivered_bytes(), 4 * 1448);
    }
}
