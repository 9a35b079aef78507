//! The receiver's buffer and window growth as Linux 6.x runs them, for the one thing the
//! simulator takes from them: each time the receiver raises its window it ACKs the
//! segment that made it do so at once (`tcp_grow_window` sets `icsk_ack.quick`), so a
//! Linux receiver ACKs every segment, not every second one, for as long as its window
//! grows. In the kernel this lasts well past the 16 quick ACKs of a connection's start:
//! `tcp_probe` on the testbed showed a 40 ms flow's receiver ACKing 125 of its first 267
//! ACKs' worth of data one segment at a time, and HyStart's delay test, which looks at
//! the first 8 ACKs of a round, then ends slow start about 8 segments earlier than with
//! an ACK per two segments (four CUBIC flows at 20 to 80 ms: cwnd 49 in the kernel, 56
//! in the simulator before this model).
//!
//! What is modelled (net/ipv4/tcp_input.c, tcp_output.c, include/net/tcp.h):
//! - the starting window (`tcp_select_initial_window`, `tcp_init_buffer_space`) from
//!   `tcp_rmem[1]`, the window clamp and `rcv_ssthresh`;
//! - the scaling ratio, set from the first full segment's size against its buffer's
//!   true size (`tcp_measure_rcv_mss`), and the clamp that follows it
//!   (`tcp_set_window_clamp`);
//! - `tcp_grow_window`: `rcv_ssthresh` grows by two segments per segment received while
//!   it is below the clamp and the free buffer (`tcp_space`, less what the receiver
//!   holds unread or out of order), and asks for a quick ACK each time;
//! - receive-buffer autotuning (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`), once per
//!   receiver RTT: when the application read more in the last RTT than ever before, the
//!   buffer and the clamp grow to twice that, more while the amount read grows, plus the
//!   out-of-order data; and on each segment queued out of order;
//! - the receiver's RTT from the timestamps echoed in data (`tcp_rcv_rtt_measure_ts`: a
//!   moving average of millisecond samples).
//!
//! - the window each ACK offers (`tcp_select_window`, `__tcp_select_window`), kept only
//!   when the receiving application takes time to read (`TcpConfig::read_delay`): a
//!   second full segment is then ACKed on arrival only if that window, with the segment
//!   unread, reaches the last one offered (`__tcp_ack_snd_check`).
//!
//! The sender is never limited by the offered window (the testbed's kernel senders showed
//! no `rwnd_limited` time). Not modelled: the window-update ACKs a read can send
//! (`tcp_cleanup_rbuf`: only when the advertised window is nearly used up), the RTT
//! samples taken per window without timestamps (they can only lower the estimate, and
//! take a whole window), and memory pressure (with the `quick` reset of
//! `__tcp_select_window`'s low-memory branch).

use cclab_units::Time;

/// `net.ipv4.tcp_rmem[1]`: a socket's receive buffer at the start, bytes.
const RMEM_DEFAULT: u64 = 131_072;

/// `net.ipv4.tcp_rmem[2]`: the most autotuning gives a receive buffer, bytes (32 MiB,
/// Linux 6.18's default and this machine's).
const RMEM_MAX: u64 = 33_554_432;

/// The receiver's window scale (`tcp_select_initial_window`: room for the largest buffer,
/// `tcp_rmem[2]` here being above `net.core.rmem_max`, in a 16-bit field): offered windows
/// are whole multiples of `1 << WINDOW_SCALE` bytes (1,024, as the testbed's ACKs show).
const WINDOW_SCALE: u32 = RMEM_MAX.ilog2() - 15;
const WINDOW_UNIT: u64 = 1 << WINDOW_SCALE;

/// `TCP_RMEM_TO_WIN_SCALE`: the scaling ratio is in 256ths.
const RATIO_ONE: u64 = 256;

/// `TCP_DEFAULT_SCALING_RATIO`: half the buffer is window until a segment is measured.
const DEFAULT_RATIO: u64 = RATIO_ONE / 2;

/// The buffer memory (`skb->truesize`) of a received segment beyond its payload, bytes,
/// as the testbed's receivers get it. Read off the kernel's advertised windows in
/// `tcp_probe` (Linux 6.18, veth): growth stops at 80,896 bytes, the free buffer
/// (131,072 less one segment's buffer) times a ratio of 160/256, rounded up to the window
/// scale's 1,024; a 1,448-byte segment gives 160 for a true size of 2,290 to 2,316 bytes,
/// taken here as 2,304.
const SEGMENT_OVERHEAD: u64 = 2_304 - 1_448;

/// Linux `TCP_MSS_DEFAULT`: the receiver's segment-size guess before data arrives.
pub(super) const MSS_DEFAULT: u64 = 536;

/// `net.ipv4.tcp_app_win` (31): the part of the window kept for the application's
/// buffer, as a shift.
const APP_WIN: u32 = 31;

/// Linux's smallest segment that grows the window (`tcp_event_data_recv`: `len >= 128`).
const GROW_MIN_BYTES: u64 = 128;

/// One receiver's buffer, window and RTT estimate, in bytes and microseconds.
#[derive(Clone, Debug)]
pub(super) struct ReceiveBuffer {
    advmss: u64,
    /// `sk->sk_rcvbuf`.
    rcvbuf: u64,
    /// `tp->window_clamp`: the largest window the buffer allows.
    window_clamp: u64,
    /// `tp->rcv_ssthresh`: the window grows to here (and the advertised window with it).
    rcv_ssthresh: u64,
    /// `tp->scaling_ratio`, in 256ths: how much of the buffer is window.
    ratio: u64,
    /// `icsk_ack.rcv_mss`: a segment of another size updates the ratio.
    rcv_mss: u64,
    /// `tp->rcvq_space`: the most read in one RTT so far, and where and when the current
    /// measurement began (None until the first segment).
    space: u64,
    space_read: u64,
    space_since: Option<Time>,
    /// `tp->rcv_rtt_est.rtt_us`: eight times the RTT estimate, us (0: none yet).
    rtt_us8: u64,
    /// The last TSecr taken for an RTT sample (`tp->rcv_rtt_last_tsecr`; zero at first,
    /// so segments echoing nothing give no sample).
    last_tsecr: Time,
    /// `tp->rcv_wnd`: the window the last ACK offered, bytes.
    rcv_wnd: u64,
}

impl ReceiveBuffer {
    /// A receiver's buffer at the connection's start (`tcp_select_initial_window`, then
    /// `tcp_init_buffer_space`), for segments of `mss` bytes.
    pub(super) fn new(mss: u32) -> ReceiveBuffer {
        let advmss = mss.max(1) as u64;
        let full = win_from_space(RMEM_DEFAULT, DEFAULT_RATIO);
        let rcv_wnd = first_window(advmss);
        let mut window_clamp = full;
        if full > 4 * advmss {
            window_clamp = (full - (full >> APP_WIN)).max(4 * advmss);
        }
        if window_clamp > 2 * advmss && window_clamp + advmss > full {
            window_clamp = (2 * advmss).max(full - advmss);
        }
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        ReceiveBuffer {
            advmss,
            rcvbuf: RMEM_DEFAULT,
            window_clamp,
            rcv_ssthresh,
            ratio: DEFAULT_RATIO,
            rcv_mss: MSS_DEFAULT.min(advmss).min(rcv_wnd / 2),
            space: rcv_ssthresh.min(rcv_wnd).min(10 * advmss),
            space_read: 0,
            space_since: None,
            rtt_us8: 0,
            last_tsecr: Time::ZERO,
            rcv_wnd,
        }
    }

    /// `__tcp_select_window`: the window an ACK sent now would offer while `held`
    /// segments' buffers are unread or out of order. The free buffer's window, rounded to
    /// the window scale, at most `rcv_ssthresh`; none when under a sixteenth of the buffer
    /// or one segment.
    fn offered_window(&self, held: u32) -> u64 {
        let used = held as u64 * truesize(self.advmss);
        let mut free = win_from_space(self.rcvbuf.saturating_sub(used), self.ratio);
        let allowed = win_from_space(self.rcvbuf, self.ratio);
        if free < self.window_clamp.min(allowed) / 2 {
            free = free / WINDOW_UNIT * WINDOW_UNIT;
            if free < allowed >> 4 || free < self.rcv_mss {
                return 0;
            }
        }
        free.min(self.rcv_ssthresh).next_multiple_of(WINDOW_UNIT)
    }

    /// An ACK leaves while `held` segments are unread or out of order, `consumed` bytes
    /// after the last one (`tcp_select_window`): it offers [`Self::offered_window`], but
    /// never less than what is left of the last window offered.
    pub(super) fn advertise(&mut self, held: u32, consumed: u64) {
        let left = self.rcv_wnd.saturating_sub(consumed);
        self.rcv_wnd = self.offered_window(held).max(left.next_multiple_of(WINDOW_UNIT));
    }

    /// `tp->rcv_wnd`: the window the last ACK offered, bytes (the first window until an
    /// ACK is sent).
    pub(super) fn window(&self) -> u32 {
        self.rcv_wnd.min(u32::MAX as u64) as u32
    }

    /// `__tcp_ack_snd_check`'s test for a second full segment that waits unread: whether
    /// an ACK now would offer at least the last window (the window's right edge would
    /// advance). If not, Linux leaves the ACK to the application's read.
    pub(super) fn window_advances(&self, held: u32) -> bool {
        self.offered_window(held) >= self.rcv_wnd
    }

    /// A data segment of `len` bytes arrived at `now`, echoing `tsecr`, while the
    /// receiver holds `held` segments unread or out of order besides it (`in_order`: it
    /// goes to the application; else it is held, and grows the window only for a SACK
    /// receiver, `tcp_data_queue_ofo`). Returns whether it grew the window, which asks
    /// for an ACK at once.
    pub(super) fn on_segment(
        &mut self,
        now: Time,
        len: u32,
        tsecr: Time,
        in_order: bool,
        held: u32,
        sack: bool,
    ) -> bool {
        let len = len as u64;
        self.space_since.get_or_insert(now);
        self.rtt_sample(now, len, tsecr);
        let held = held as u64 * truesize(self.advmss);
        if !in_order {
            return sack && self.grow(len, held);
        }
        self.measure_mss(len);
        // The in-order segment is in the receive queue, not yet read, when the window is
        // grown (`tcp_event_data_recv` after `tcp_queue_rcv`).
        len >= GROW_MIN_BYTES && self.grow(len, held + truesize(len))
    }

    /// The application has read everything up to `read` bytes at `now`, while the
    /// receiver holds out-of-order data up to `ooo_bytes` beyond what it read
    /// (`tcp_rcv_space_adjust`, called from `tcp_recvmsg`). Nothing is left unread (the
    /// application reads each in-order segment as it arrives), so Linux's `inq` is zero.
    pub(super) fn on_read(&mut self, now: Time, read: u64, ooo_bytes: u64) {
        let Some(since) = self.space_since else { return };
        if self.rtt_us8 == 0 {
            return;
        }
        // In ns against the RTT in us: no division on every read.
        if (now - since).as_nanos() < (self.rtt_us8 >> 3) * 1000 {
            return;
        }
        let copied = read - self.space_read;
        if copied > self.space {
            self.grow_buffer(copied, ooo_bytes);
        }
        self.space_read = read;
        self.space_since = Some(now);
    }

    /// A segment went into the out-of-order queue, which now reaches `ooo_bytes` beyond
    /// what was read: the buffer makes room for it (`tcp_data_queue_ofo` ends with
    /// `tcp_rcvbuf_grow`, the amount read per RTT unchanged).
    pub(super) fn on_out_of_order(&mut self, ooo_bytes: u64) {
        self.grow_buffer(self.space, ooo_bytes);
    }

    /// `tcp_rcvbuf_grow` as Linux 6.18 has it: `copied` bytes read in the last RTT (the
    /// new `rcvq_space.space`) make a window of twice that, plus twice that again times
    /// the growth since the last measurement (room for a sender in slow start), plus the
    /// out-of-order data; the buffer grows to hold that window, the clamp with it. Linux
    /// 6.16 ("tcp: fix sk_rcvbuf overshoot", net-next May 2025) dropped the earlier
    /// formula's cushion of 16 segments, and "tcp: fix too slow tcp_rcvbuf_grow() action"
    /// put back the growth term; `tcp:tcp_rcvbuf_grow` traces of the testbed's receivers
    /// (Linux 6.18.44) give these windows to the byte.
    fn grow_buffer(&mut self, copied: u64, ooo_bytes: u64) {
        let old = self.space.max(1);
        self.space = copied;
        let mut rcvwin = copied << 1;
        rcvwin += (rcvwin * copied.saturating_sub(old) / old) << 1;
        rcvwin += ooo_bytes;
        let rcvbuf = (rcvwin * RATIO_ONE / self.ratio).min(RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(rcvbuf, self.ratio);
        }
    }

    /// `tcp_rcv_rtt_measure_ts`: a sample from each new TSecr on a full segment, in whole
    /// milliseconds (Linux's timestamp clock; `tcp_rtt_tsopt_us` gives no sample for 0),
    /// then `tcp_rcv_rtt_update` with `win_dep` 0 as Linux 6.16 has it ("tcp: always
    /// seek for minimal rtt in tcp_rcv_rtt_update()"): a sample below the estimate
    /// replaces it, a larger one moves it by an eighth of the difference. Linux skips a
    /// larger sample while data waits unread (`rcv_nxt != copied_seq`); here the
    /// application has read everything by the next segment, so none is skipped.
    fn rtt_sample(&mut self, now: Time, len: u64, tsecr: Time) {
        if self.last_tsecr == tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        if len < self.rcv_mss {
            return;
        }
        let ms = (now.as_nanos() / 1_000_000).saturating_sub(tsecr.as_nanos() / 1_000_000);
        if ms == 0 {
            return;
        }
        let m = ms * 1000;
        self.rtt_us8 = if self.rtt_us8 == 0 || m << 3 < self.rtt_us8 {
            m << 3
        } else {
            self.rtt_us8 + m - (self.rtt_us8 >> 3)
        };
    }

    /// `tcp_measure_rcv_mss`: a full segment of a new size sets the scaling ratio from its
    /// true size, and the clamp follows (`tcp_set_window_clamp`).
    fn measure_mss(&mut self, len: u64) {
        if len < self.rcv_mss {
            return;
        }
        if len != self.rcv_mss {
            let ratio = (len * RATIO_ONE / truesize(len)).max(1);
            if ratio != self.ratio {
                self.ratio = ratio;
                self.set_window_clamp(win_from_space(self.rcvbuf, ratio));
                self.space = self.space.min(self.window_clamp);
            }
        }
        self.rcv_mss = len.min(self.advmss);
    }

    /// `tcp_set_window_clamp` for a clamp that is not zero: a lower clamp restarts
    /// `rcv_ssthresh` from two segments (`__tcp_adjust_rcv_ssthresh`, with no memory
    /// reserved), a higher one lets it start from the advertised window.
    fn set_window_clamp(&mut self, clamp: u64) {
        if clamp < self.window_clamp {
            self.rcv_ssthresh = clamp.min(2 * self.advmss);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(first_window(self.advmss).min(clamp));
        }
        self.window_clamp = clamp;
    }

    /// `tcp_grow_window` for a segment of `len` bytes with `held` bytes of buffers in use
    /// (`tcp_space`): grows `rcv_ssthresh` if there is room below the clamp and the free
    /// buffer's window and the segment's buffer is not too large for its length.
    fn grow(&mut self, len: u64, held: u64) -> bool {
        // Grown to the clamp: no room whatever the free buffer (and most segments of a
        // long transfer end here, so this comes first).
        if self.rcv_ssthresh >= self.window_clamp {
            return false;
        }
        let free = win_from_space(self.rcvbuf.saturating_sub(held), self.ratio);
        let room = self.window_clamp.min(free).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let incr = if win_from_space(truesize(len), self.ratio) <= len {
            2 * self.advmss
        } else {
            self.small_segment_increment(len)
        };
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min(incr.max(2 * len));
        true
    }

    /// `__tcp_grow_window`: a segment whose buffer is large for its length grows the
    /// window only while the window is small against the largest buffer.
    fn small_segment_increment(&self, len: u64) -> u64 {
        let mut size = win_from_space(truesize(len), self.ratio) >> 1;
        let mut window = win_from_space(RMEM_MAX, self.ratio) >> 1;
        while self.rcv_ssthresh <= window {
            if size <= len {
                return 2 * self.rcv_mss;
            }
            size >>= 1;
            window >>= 1;
        }
        0
    }

    /// [`Self::grown`] with `rcv_ssthresh` one segment short of the clamp, where growth
    /// stops when each segment is still unread as it grows the window.
    #[cfg(test)]
    pub(super) fn grown_but_one(mss: u32) -> ReceiveBuffer {
        let mut b = ReceiveBuffer::grown(mss);
        b.rcv_ssthresh -= win_from_space(truesize(b.advmss), b.ratio);
        b
    }

    /// `tp->rcv_ssthresh` (for tests).
    #[cfg(test)]
    pub(super) fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// A buffer whose window can grow no further (its segment size measured, the buffer
    /// at `tcp_rmem[2]`, the window at the clamp): its receiver ACKs every second segment.
    #[cfg(test)]
    pub(super) fn grown(mss: u32) -> ReceiveBuffer {
        let mut b = ReceiveBuffer::new(mss);
        b.rcv_mss = b.advmss;
        b.ratio = b.advmss * RATIO_ONE / truesize(b.advmss);
        b.rcvbuf = RMEM_MAX;
        b.window_clamp = win_from_space(RMEM_MAX, b.ratio);
        b.rcv_ssthresh = b.window_clamp;
        b
    }
}

/// The first window a receiver advertises (`tcp_select_initial_window`: the starting
/// buffer's window in whole segments), which `tp->rcv_wnd` keeps until data arrives.
fn first_window(advmss: u64) -> u64 {
    let full = win_from_space(RMEM_DEFAULT, DEFAULT_RATIO);
    if full > advmss {
        full / advmss * advmss
    } else {
        full
    }
}

/// A received segment's buffer memory (`skb->truesize`) for `len` payload bytes.
fn truesize(len: u64) -> u64 {
    len + SEGMENT_OVERHEAD
}

/// `__tcp_win_from_space`: the window a buffer of `space` bytes allows.
fn win_from_space(space: u64, ratio: u64) -> u64 {
    space * ratio / RATIO_ONE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_linuxs_first_window() {
        let b = ReceiveBuffer::new(1448);
        // 131,072 bytes at a ratio of 1/2 is 65,536, 45 segments; the clamp keeps one
        // segment for the application.
        assert_eq!(b.window_clamp, 65_536 - 1448);
        assert_eq!(b.rcv_ssthresh, 65_536 - 1448);
        assert_eq!(b.space, 10 * 1448);
    }

    #[test]
    fn grows_two_segments_per_segment_up_to_the_free_buffer() {
        let mut b = ReceiveBuffer::new(1448);
        let mut grown = 0;
        for i in 0..20 {
            if b.on_segment(Time(i), 1448, Time::ZERO, true, 0, true) {
                grown += 1;
            }
        }
        // The first segment sets the ratio to 160/256: the clamp is 81,920 and the free
        // buffer with one segment held 80,480, which is where it stops, as the kernel's
        // window did (module doc).
        assert_eq!(b.ratio, 160);
        assert_eq!(b.rcv_ssthresh(), (131_072 - 2_304) * 160 / 256);
        assert_eq!(grown, 6, "65,160 to 80,480 in steps of 2,896");
    }

    #[test]
    fn autotuning_raises_the_clamp_once_an_rtt_when_more_is_read() {
        let mut b = ReceiveBuffer::new(1448);
        let ms = |m: u64| Time(m * 1_000_000);
        // Ten segments at 40 ms echoing a timestamp from 0 ms: RTT 40 ms.
        for i in 0..10 {
            b.on_segment(ms(40), 1448, Time(1), true, 0, true);
            b.on_read(ms(40), (i + 1) * 1448, 0);
        }
        assert_eq!(b.rtt_us8 >> 3, 40_000);
        let clamp = b.window_clamp;
        // 30 segments read by 81 ms, more than the 10 of the start: the buffer and
        // the clamp grow.
        b.on_read(ms(81), 30 * 1448, 0);
        assert!(b.window_clamp > 2 * clamp, "{} against {clamp}", b.window_clamp);
        assert_eq!(b.space, 30 * 1448);
        // Less read in the next RTT: nothing changes but the measurement's start.
        let grown = b.window_clamp;
        b.on_read(ms(125), 40 * 1448, 0);
        assert_eq!(b.window_clamp, grown);
        assert_eq!(b.space_read, 40 * 1448);
    }

    /// The windows Linux 6.18 gave an 80 ms flow's receiver on the testbed
    /// (`tcp:tcp_rcvbuf_grow`, rtt8 fidelity case): 28,960 bytes read in an RTT after
    /// 15,928, then 57,920.
    #[test]
    fn autotuning_gives_linux_6_18s_windows() {
        let mut b = ReceiveBuffer::new(1448);
        b.on_segment(Time(0), 1448, Time::ZERO, true, 0, true);
        assert_eq!((b.ratio, b.rcvbuf, b.window_clamp), (160, 131_072, 81_920));
        b.space = 15_928;
        b.rtt_us8 = 95_301 << 3;
        b.on_read(Time(98_403_000), 28_960, 0);
        assert_eq!((b.rcvbuf, b.window_clamp, b.space), (244_316, 152_697, 28_960));
        b.rtt_us8 = 102_000 << 3;
        b.on_read(Time(200_405_000), 28_960 + 57_920, 0);
        assert_eq!((b.rcvbuf, b.window_clamp, b.space), (556_032, 347_520, 57_920));
        // Out-of-order data beyond what was read makes room for itself: twice the last
        // RTT's reading plus how far the held data reaches.
        b.on_out_of_order(400_000);
        assert_eq!(b.window_clamp, win_from_space((2 * 57_920 + 400_000) * 256 / 160, 160));
        assert_eq!(b.space, 57_920);
    }

    /// The windows a 20 ms Reno flow's receiver offered on the testbed (Linux 6.18.44,
    /// `tcp:tcp_rcvbuf_grow` and `tcp:tcp_probe`, rtt4-reno-reno): its buffer grown to
    /// 4,140,432 bytes, a clamp of 2,587,770, and ACKs offering 2,588,672 bytes with
    /// nothing unread or 2,586,624 with one segment unread. At the clamp, one segment
    /// unread keeps the window from advancing; a segment short of it, it does not.
    #[test]
    fn offered_windows_are_linuxs_and_advance_only_below_the_clamp() {
        let mut b = ReceiveBuffer::new(1448);
        b.on_segment(Time(0), 1448, Time::ZERO, true, 0, true);
        b.rcvbuf = 4_140_432;
        b.window_clamp = win_from_space(b.rcvbuf, b.ratio);
        assert_eq!(b.window_clamp, 2_587_770);
        b.rcv_ssthresh = b.window_clamp;
        assert_eq!((b.offered_window(0), b.offered_window(1)), (2_588_672, 2_586_624));
        b.advertise(0, 0);
        assert!(!b.window_advances(1));
        // Never less than what is left of the last window: 2,588,672 less two segments
        // is 2,585,776, which the window scale's unit rounds up to 2,586,624.
        b.advertise(1, 2 * 1448);
        assert_eq!(b.rcv_wnd, 2_586_624);
        assert!(b.window_advances(1));
        // One segment short of the clamp (where growth with a segment unread stops), the
        // window advances with a segment unread even after one offered with none.
        b.rcv_ssthresh = b.window_clamp - win_from_space(truesize(1448), b.ratio);
        b.advertise(0, 0);
        assert!(b.window_advances(1));
        assert!(!b.window_advances(2));
    }

    /// The receiver's RTT estimate falls to a lower sample at once and rises by an
    /// eighth of a higher one.
    #[test]
    fn the_receivers_rtt_seeks_the_minimum() {
        let mut b = ReceiveBuffer::new(1448);
        let ms = |m: u64| Time(m * 1_000_000);
        let sample = |b: &mut ReceiveBuffer, now: u64, echoed: u64| {
            b.on_segment(ms(now), 1448, ms(echoed), true, 0, true);
            b.rtt_us8 >> 3
        };
        assert_eq!(sample(&mut b, 101, 1), 100_000);
        assert_eq!(sample(&mut b, 192, 102), 90_000);
        assert_eq!(sample(&mut b, 323, 203), 93_750);
    }

    #[test]
    fn held_data_leaves_less_room() {
        let mut b = ReceiveBuffer::new(1448);
        b.on_segment(Time(0), 1448, Time::ZERO, true, 0, true);
        let before = b.rcv_ssthresh();
        // 20 segments held out of order: the free buffer's window is below rcv_ssthresh.
        assert!(!b.on_segment(Time(1), 1448, Time::ZERO, false, 20, true));
        assert_eq!(b.rcv_ssthresh(), before);
        // A receiver without SACK never grows its window on data out of order.
        let mut nosack = ReceiveBuffer::new(1448);
        nosack.on_segment(Time(0), 1448, Time::ZERO, true, 0, false);
        assert!(!nosack.on_segment(Time(1), 1448, Time::ZERO, false, 0, false));
    }
}
