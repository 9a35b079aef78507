//! The helpers Linux's congestion control modules share, from `net/ipv4/tcp_cong.c`
//! (`tcp_slow_start`, `tcp_cong_avoid_ai`, `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`,
//! `tcp_reno_undo_cwnd`) and `include/net/tcp.h` (`tcp_in_slow_start`,
//! `tcp_is_cwnd_limited`). Written from the kernel's behaviour as of v6.x; each function
//! names the one it mirrors. Arithmetic saturates where the kernel's would wrap only for
//! windows no real path reaches.

use crate::TcpState;

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// `GSO_LEGACY_MAX_SIZE` (include/linux/netdevice.h): what `sk_gso_max_size` is on a
/// device without BIG TCP. CUBIC's `hystart_ack_delay()` and [`tso_segs`] scale with it.
pub const GSO_MAX_SIZE: u64 = 65536;
/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio` sysctl defaults (percent).
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;
/// `sk_pacing_shift`'s default for TCP (`tcp_init_sock`): a packet of `tcp_tso_autosize`
/// holds about 2^-10 s (1 ms) of data at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `tcp_min_tso_segs` sysctl default: a GSO packet holds at least two segments.
pub const MIN_TSO_SEGS: u32 = 2;
/// `tcp_tso_rtt_log` sysctl default (Linux 5.18+): flows whose min RTT is under a few
/// 2^9 us get larger GSO packets.
const TSO_RTT_LOG: u32 = 9;

/// Linux `tcp_update_pacing_rate` (tcp_input.c): `sk_pacing_rate` in bytes per second,
/// 200% of cwnd * mss / srtt in slow start (below half of ssthresh), 120% after; zero
/// before the first RTT sample. The kernel takes the larger of cwnd and `packets_out`;
/// [`TcpState`] has packets in flight, which differs from it only while segments are
/// SACKed or marked lost.
pub fn pacing_rate(tp: &TcpState) -> u64 {
    if tp.srtt_us == 0 {
        return 0;
    }
    let ratio = if tp.snd_cwnd < tp.snd_ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    // mss * (USEC_PER_SEC / 100 << 3) * ratio * cwnd / srtt_us, srtt_us being 8 * srtt.
    tp.mss_cache as u64
        * ((1_000_000 / 100) << 3)
        * ratio
        * tp.snd_cwnd.max(tp.packets_in_flight) as u64
        / tp.srtt_us as u64
}

/// Linux `tcp_tso_segs` with `tcp_tso_autosize` (tcp_output.c): how many segments
/// `tcp_write_xmit` puts in one GSO packet: about 1 ms of data at the pacing rate, plus
/// 64 KiB halved for every 512 us of min RTT (`tcp_tso_rtt_log`, which matters only
/// below a few milliseconds), at most 64 KiB and at least [`MIN_TSO_SEGS`] segments.
pub fn tso_segs(tp: &TcpState) -> u32 {
    let mut bytes = pacing_rate(tp) >> PACING_SHIFT;
    let r = tp.min_rtt_us >> TSO_RTT_LOG;
    if r < u32::BITS {
        // tcp_min_rtt() is ~0U before the first sample, which shifts past the width.
        bytes += GSO_MAX_SIZE >> r;
    }
    let segs = bytes.min(GSO_MAX_SIZE) / tp.mss_cache.max(1) as u64;
    (segs as u32).max(MIN_TSO_SEGS)
}

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

    #[test]
    fn gso_packets_hold_a_millisecond_at_the_pacing_rate() {
        let mut t = tp(100, 50);
        // No RTT sample: no pacing rate, the floor of two segments.
        assert_eq!((pacing_rate(&t), tso_segs(&t)), (0, 2));
        // 100 packets over 100 ms in congestion avoidance: 1.2 * 1448 * 100 / 0.1 s.
        t.srtt_us = 100_000 << 3;
        t.min_rtt_us = 80_000;
        assert_eq!(pacing_rate(&t), 1_737_600);
        assert_eq!(tso_segs(&t), 2, "1,696 bytes a millisecond is one segment");
        // 430 packets over 50 ms: 14,943,360 B/s, 14,593 bytes a millisecond.
        t.snd_cwnd = 430;
        t.srtt_us = 50_000 << 3;
        t.min_rtt_us = 50_000;
        assert_eq!(tso_segs(&t), 10);
        // A min RTT of 1 ms (2^1 * 512 us) adds 64 KiB / 2.
        t.min_rtt_us = 1_000;
        assert_eq!(tso_segs(&t), (14_593 + 32_768) / 1448);
        // Slow start on the testbed (CUBIC against Reno, 60 ms): the kernel's packets went
        // from pairs to triples with PSH on the third between cwnd 80 at srtt 69.6 ms and
        // cwnd 107 at srtt 67.4 ms (its TCP_INFO samples at 0.30 and 0.32 s).
        let mut ss = tp(80, INFINITE_SSTHRESH);
        (ss.srtt_us, ss.min_rtt_us) = (69_625 << 3, 60_113);
        assert_eq!(tso_segs(&ss), 2);
        (ss.snd_cwnd, ss.srtt_us) = (107, 67_440 << 3);
        assert_eq!(tso_segs(&ss), 3);
        // In slow start the rate doubles its 120%; never more than 64 KiB.
        t.snd_ssthresh = 10_000;
        t.srtt_us = 100 << 3;
        assert_eq!(tso_segs(&t), 65_536 / 1448);
    }
}
