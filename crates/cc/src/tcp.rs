//! The helpers Linux's congestion control modules share, from `net/ipv4/tcp_cong.c`
//! (`tcp_slow_start`, `tcp_cong_avoid_ai`, `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`,
//! `tcp_reno_undo_cwnd`) and `include/net/tcp.h` (`tcp_in_slow_start`,
//! `tcp_is_cwnd_limited`). Written from the kernel's behaviour as of v6.x; each function
//! names the one it mirrors. Arithmetic saturates where the kernel's would wrap only for
//! windows no real path reaches.

use crate::TcpState;

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `tcp_in_slow_start`.
pub fn in_slow_start(tp: &TcpState) -> bool {
    tp.snd_cwnd < tp.snd_ssthresh
}

/// Linux `tcp_is_cwnd_limited`: in slow start, cwnd may grow until it is twice what was
/// in flight; afterwards only while cwnd actually limits sending.
pub fn is_cwnd_limited(tp: &TcpState) -> bool {
    if tp.is_cwnd_limited {
        return true;
    }
    if in_slow_start(tp) {
        return tp.snd_cwnd < tp.max_packets_out.saturating_mul(2);
    }
    false
}

/// Linux `tcp_slow_start`: grows cwnd by `acked` up to ssthresh and returns the `acked`
/// left over past ssthresh (for congestion avoidance to use).
pub fn slow_start(tp: &mut TcpState, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let left = acked - (cwnd - tp.snd_cwnd.min(cwnd));
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// Linux `tcp_cong_avoid_ai`: additive increase of one packet per `w` packets ACKed.
pub fn cong_avoid_ai(tp: &mut TcpState, w: u32, acked: u32) {
    let w = w.max(1);
    // Credits accumulated at a larger w are applied gently now.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(1);
    }
    tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(acked);
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(delta);
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// The opening of Linux's `tcp_reno_cong_avoid`, which most `cong_avoid` hooks repeat:
/// no growth unless cwnd limits sending, then slow start below ssthresh. Returns the ACKed
/// packets left over for congestion avoidance, or `None` when nothing is left to do.
pub fn slow_start_first(tp: &mut TcpState, acked: u32) -> Option<u32> {
    if !is_cwnd_limited(tp) {
        return None;
    }
    let left = if in_slow_start(tp) { slow_start(tp, acked) } else { acked };
    (left > 0).then_some(left)
}

/// Linux `tcp_reno_cong_avoid`: slow start below ssthresh, then one packet per RTT.
pub fn reno_cong_avoid(tp: &mut TcpState, acked: u32) {
    if let Some(acked) = slow_start_first(tp, acked) {
        cong_avoid_ai(tp, tp.snd_cwnd, acked);
    }
}

/// Linux `tcp_reno_ssthresh`: half the window, at least two packets.
pub fn reno_ssthresh(tp: &TcpState) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// Linux `tcp_reno_undo_cwnd`: back to the window before the reduction.
pub fn reno_undo_cwnd(tp: &TcpState) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32, ssthresh: u32) -> TcpState {
        let mut t = TcpState::new(1448, cwnd);
        t.snd_ssthresh = ssthresh;
        t
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut t = tp(10, 14);
        assert_eq!(slow_start(&mut t, 3), 0);
        assert_eq!(t.snd_cwnd, 13);
        assert_eq!(slow_start(&mut t, 3), 2);
        assert_eq!(t.snd_cwnd, 14);
    }

    #[test]
    fn cong_avoid_ai_adds_one_packet_per_window_of_acks() {
        let mut t = tp(10, 5);
        for _ in 0..9 {
            cong_avoid_ai(&mut t, 10, 1);
        }
        assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (10, 9));
        cong_avoid_ai(&mut t, 10, 1);
        assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (11, 0));
        // A stretch ACK of 25 packets at w = 11 buys two packets, 3 credits remain.
        cong_avoid_ai(&mut t, 11, 25);
        assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (13, 3));
    }

    #[test]
    fn cong_avoid_ai_applies_old_credit_when_w_shrinks() {
        let mut t = tp(20, 5);
        t.snd_cwnd_cnt = 15;
        cong_avoid_ai(&mut t, 10, 1);
        assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (21, 1));
    }

    #[test]
    fn reno_cong_avoid_respects_the_clamp_and_cwnd_limit() {
        let mut t = tp(10, 100);
        t.snd_cwnd_clamp = 12;
        reno_cong_avoid(&mut t, 5);
        assert_eq!(t.snd_cwnd, 12);
        let mut idle = tp(10, 100);
        idle.is_cwnd_limited = false;
        idle.max_packets_out = 4; // 10 >= 2 * 4: not allowed to grow
        reno_cong_avoid(&mut idle, 5);
        assert_eq!(idle.snd_cwnd, 10);
    }

    #[test]
    fn reno_ssthresh_never_below_two() {
        assert_eq!(reno_ssthresh(&tp(1, 1)), 2);
        assert_eq!(reno_ssthresh(&tp(3, 1)), 2);
        assert_eq!(reno_ssthresh(&tp(101, 1)), 50);
    }
}
