//! HighSpeed TCP (S. Floyd, RFC 3649, "HighSpeed TCP for Large Congestion Windows", 2003),
//! as Linux runs it in `net/ipv4/tcp_highspeed.c`.
//!
//! Above 38 packets the additive increase a(w) grows and the decrease b(w) shrinks with the
//! window, following the table of RFC 3649 Appendix B. Like Linux we keep the table as
//! (upper window bound, b(w) scaled by 256) pairs and use a(w) = index + 1: a window in
//! (w[i-1], w[i]] adds i + 1 packets per RTT and, on a loss, keeps `cwnd - cwnd*md[i]/256`.
//! Slow start, recovery and undo are Reno's. There are no tunables (the RFC fixes the
//! table; Linux has no module parameters).

use crate::registry::AlgorithmInfo;
use crate::{tcp, CongestionControl, TcpState};

/// RFC 3649 Appendix B: (w, b(w) * 256), in Linux's fixed point (`hstcp_aimd_vals`).
/// Row i applies to windows in (w[i-1], w[i]] and gives a(w) = i + 1.
pub const AIMD_TABLE: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// Windows above the last row (89053 packets) stay on the last row, as in Linux
/// (`HSTCP_AIMD_MAX - 1`).
const ROWS: usize = AIMD_TABLE.len();

/// HighSpeed TCP per-flow state: the current table row (Linux `hstcp.ai`).
#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    /// Index into [`AIMD_TABLE`]; a(w) = ai + 1.
    ai: usize,
}

impl HighSpeed {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "highspeed",
        summary: "HighSpeed TCP: a(w), b(w) from RFC 3649's table; Reno below 38 packets",
        source: "RFC 3649 Appendix B; Linux net/ipv4/tcp_highspeed.c",
        params: &[],
    };

    /// a(w) in packets per RTT for the current row.
    pub fn a(&self) -> u32 {
        self.ai as u32 + 1
    }

    /// b(w), the fraction of cwnd removed on a loss, for the current row.
    pub fn b(&self) -> f64 {
        AIMD_TABLE[self.ai].1 as f64 / 256.0
    }

    /// Moves `ai` so that w[ai-1] < cwnd <= w[ai] (Linux does this on each ACK in
    /// congestion avoidance, stepping row by row).
    fn update_row(&mut self, cwnd: u32) {
        while cwnd > AIMD_TABLE[self.ai].0 && self.ai < ROWS - 1 {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= AIMD_TABLE[self.ai - 1].0 {
            self.ai -= 1;
        }
    }
}

impl CongestionControl for HighSpeed {
    fn init(&mut self, tp: &mut TcpState) {
        self.ai = 0;
        // Linux: keeps cwnd * md within 32 bits.
        tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(u32::MAX / 128);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let md = AIMD_TABLE[self.ai].1 as u64;
        let cut = (tp.snd_cwnd as u64 * md) >> 8;
        (tp.snd_cwnd - cut as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tcp::is_cwnd_limited(tp) {
            return;
        }
        if tcp::in_slow_start(tp) {
            tcp::slow_start(tp, acked);
            return;
        }
        self.update_row(tp.snd_cwnd);
        // cwnd += a(w) / cwnd per ACK (Linux counts one ACK per call, whatever `acked`).
        if tp.snd_cwnd < tp.snd_cwnd_clamp {
            tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(self.a());
            if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                tp.snd_cwnd_cnt -= tp.snd_cwnd;
                tp.snd_cwnd += 1;
            }
        }
    }

    fn inspect(&self, report: &mut dyn FnMut(&'static str, f64)) {
        report("a", self.a() as f64);
        report("b", self.b());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = 2;
        t
    }

    /// Drives one ACK at `cwnd` so the row follows the window, then reads a(w), b(w) and
    /// the ssthresh a loss would give.
    fn at(cwnd: u32) -> (u32, f64, u32) {
        let mut h = HighSpeed::default();
        let mut t = tp(cwnd);
        h.init(&mut t);
        h.cong_avoid(&mut t, 1);
        t.snd_cwnd = cwnd;
        (h.a(), h.b(), h.ssthresh(&t))
    }

    /// RFC 3649 Appendix B at its table points: w = 38 -> a 1, b 0.50; 118 -> 2, 0.44;
    /// 1058 -> 8, 0.33; 10661 -> 30, 0.21; 89053 -> 72, 0.10 (b in Linux's /256 fixed point).
    #[test]
    fn a_and_b_at_rfc_table_points() {
        let cases =
            [(38, 1, 0.50), (118, 2, 0.44), (1058, 8, 0.33), (10661, 30, 0.21), (89053, 72, 0.10)];
        for (w, a, b) in cases {
            let (ga, gb, _) = at(w);
            assert_eq!(ga, a, "a({w})");
            assert!((gb - b).abs() < 0.01, "b({w}) = {gb}, RFC {b}");
        }
        // Just above a table point the next row applies.
        assert_eq!(at(39).0, 2);
        assert_eq!(at(119).0, 3);
    }

    /// The decrease: at 38 packets Reno's half (19 kept); at 1058, 1058 - 1058*83/256 = 715
    /// (b = 0.324); never below two.
    #[test]
    fn loss_keeps_one_minus_b() {
        assert_eq!(at(38).2, 19);
        assert_eq!(at(1058).2, 1058 - ((1058 * 83) >> 8));
        assert_eq!(at(1058).2, 715);
        assert_eq!(at(2).2, 2);
    }

    /// a(w) packets per RTT: at cwnd 1000 (row 7, a = 8) one window of ACKs adds 8 packets
    /// (not exactly, as cwnd grows on the way: 1000 ACKs add 7 or 8).
    #[test]
    fn increase_is_a_of_w_per_round() {
        let mut h = HighSpeed::default();
        let mut t = tp(1000);
        h.init(&mut t);
        for _ in 0..1000 {
            h.cong_avoid(&mut t, 1);
        }
        assert_eq!(h.a(), 8);
        assert!((1007..=1008).contains(&t.snd_cwnd), "{}", t.snd_cwnd);
        // At or below 38 packets it is Reno: 30 ACKs at cwnd 30 add one.
        let mut t = tp(30);
        let mut h = HighSpeed::default();
        for _ in 0..30 {
            h.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.snd_cwnd, 31);
    }

    /// The row also moves down when the window shrinks after a loss.
    #[test]
    fn row_follows_the_window_down() {
        let mut h = HighSpeed::default();
        let mut t = tp(5000);
        h.cong_avoid(&mut t, 1);
        assert_eq!(h.a(), 20);
        t.snd_cwnd = 100;
        h.cong_avoid(&mut t, 1);
        assert_eq!(h.a(), 2);
    }
}
