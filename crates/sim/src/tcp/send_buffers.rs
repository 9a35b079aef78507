//! The sender's queue of unsent data cut into buffers, as Linux's write queue is: for GSO
//! sending only (`TcpConfig::psh`), where the buffers' ends decide how segments are
//! grouped into packets and which packets may be held back.
//!
//! Linux copies what the application writes into buffers (`skb`s) of `size_goal` bytes
//! (`tcp_sendmsg_locked`, net/ipv4/tcp.c). `tcp_xmit_size_goal` takes 64 KiB
//! (`sk_gso_max_size`) or half the largest window the receiver has advertised
//! (`tcp_bound_to_half_wnd`), whichever is smaller, in whole segments, when the
//! application writes. tcp_output.c then never sends a GSO packet across a buffer's end
//! (`tcp_mss_split_point`). A buffer's last segment, when it is all that is left of it,
//! is never held back (`tcp_write_xmit` asks `tcp_tso_should_defer` only for more than one
//! segment). A packet that takes the rest of a buffer that is not the last is not held
//! back either ("middle in queue" in `tcp_tso_should_defer`).
//!
//! The application writes while what it has written and not had acknowledged is below
//! the send buffer (`sk_stream_memory_free`), which `tcp_sndbuf_expand` sizes for twice
//! cwnd (at least `TCP_INIT_CWND`) at 4,352 bytes of memory per segment. Simplified here:
//! - the buffer memory is counted as the payload (a buffer of tens of segments costs about
//!   a kilobyte more);
//! - the writer is woken as soon as there is room (Linux wakes it once a third of the
//!   buffer is free);
//! - each buffer is written whole, at the size goal of the moment it is begun.

use super::rcv_buffer::MSS_DEFAULT;
use std::collections::VecDeque;

/// `sk_gso_max_size` of the testbed's veth devices (`GSO_LEGACY_MAX_SIZE`): the most one
/// buffer holds, bytes.
const GSO_MAX_BYTES: u64 = 65_536;

/// `tcp_sndbuf_expand`'s memory per segment on x86-64 for a 1,460-byte MSS clamp:
/// `roundup_pow_of_two(1,460 + MAX_TCP_HEADER + the aligned skb_shared_info)` (4,096) plus
/// the aligned `struct sk_buff` (256), bytes.
const PER_SEGMENT_MEMORY: u64 = 4_352;

/// `TCP_INIT_CWND`: the send buffer is sized for at least this many segments.
const INIT_CWND: u64 = 10;

/// `net.ipv4.tcp_wmem[2]`: the most autotuning gives a send buffer, bytes.
const WMEM_MAX: u64 = 4_194_304;

/// The buffer a segment lies in: its segments left from there on, and whether it is the
/// last one the application has written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Buffer {
    pub(super) left: u32,
    pub(super) last: bool,
}

/// One sender's write queue, in segments.
#[derive(Clone, Debug)]
pub(super) struct SendBuffers {
    mss: u64,
    /// `sk->sk_sndbuf`, bytes.
    sndbuf: u64,
    /// The end (exclusive) of each buffer that is not yet wholly sent, in order.
    ends: VecDeque<u32>,
}

impl SendBuffers {
    /// A connection's write queue once established (`tcp_init_buffer_space` expands the
    /// send buffer for the initial cwnd), for segments of `mss` bytes.
    pub(super) fn new(mss: u32, init_cwnd: u32) -> SendBuffers {
        let mut b = SendBuffers { mss: mss.max(1) as u64, sndbuf: 0, ends: VecDeque::new() };
        b.expand(init_cwnd);
        b
    }

    /// `tcp_sndbuf_expand` for a cwnd of `cwnd`: the buffer only grows.
    pub(super) fn expand(&mut self, cwnd: u32) {
        let segments = (cwnd as u64).max(INIT_CWND);
        self.sndbuf = self.sndbuf.max((2 * segments * PER_SEGMENT_MEMORY).min(WMEM_MAX));
    }

    /// `tcp_xmit_size_goal` in segments, for a largest window offered of `max_window`
    /// bytes (0: none yet); a window of at most `TCP_MSS_DEFAULT` is not halved
    /// (`tcp_bound_to_half_wnd`).
    fn size_goal(&self, max_window: u32) -> u32 {
        let max_window = max_window as u64;
        let cutoff = if max_window > MSS_DEFAULT { max_window / 2 } else { max_window };
        let bytes = if cutoff > 0 { GSO_MAX_BYTES.min(cutoff) } else { GSO_MAX_BYTES };
        (bytes / self.mss).max(1) as u32
    }

    /// Where the application has written up to (the last buffer's end), if anywhere.
    fn written(&self) -> Option<u32> {
        self.ends.back().copied()
    }

    /// The application writes, from `snd_una` on, as much as the send buffer holds, up to
    /// `data_end` (the end of a finite transfer), with `max_window` the largest window the
    /// receiver has offered so far.
    pub(super) fn write(&mut self, snd_una: u32, data_end: Option<u32>, max_window: u32) {
        let room = (self.sndbuf / self.mss).min(u32::MAX as u64) as u32;
        let limit = snd_una.saturating_add(room).min(data_end.unwrap_or(u32::MAX));
        let mut written = self.written().unwrap_or(snd_una).max(snd_una);
        while written < limit {
            written = written
                .saturating_add(self.size_goal(max_window))
                .min(data_end.unwrap_or(u32::MAX));
            self.ends.push_back(written);
        }
    }

    /// The buffer that segment `seq` (the next to send) lies in: how many of its segments
    /// are left from `seq` on, and whether it is the last one written. Buffers wholly
    /// before `seq` are dropped. Where the writer has not reached `seq`, a buffer is begun
    /// there (the application's writes are modelled only as far as they shape buffers;
    /// they never hold sending back).
    pub(super) fn buffer_at(&mut self, seq: u32, max_window: u32) -> Buffer {
        while self.ends.front().is_some_and(|&end| end <= seq) {
            self.ends.pop_front();
        }
        if self.ends.is_empty() {
            self.ends.push_back(seq.saturating_add(self.size_goal(max_window)));
        }
        Buffer { left: self.ends[0] - seq, last: self.ends.len() == 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_half_the_largest_window_up_to_64_kib() {
        let b = SendBuffers::new(1448, 10);
        // No window yet: 64 KiB, 45 segments of 1,448 bytes.
        assert_eq!(b.size_goal(0), 45);
        // The testbed's first window, 65,160 bytes: half is 22.5 segments.
        assert_eq!(b.size_goal(65_160), 22);
        assert_eq!(b.size_goal(80_896), 27);
        assert_eq!(b.size_goal(200_000), 45);
        // A window under the default MSS is not halved.
        assert_eq!(b.size_goal(500), 1);
    }

    #[test]
    fn the_application_writes_what_the_send_buffer_holds_in_buffers_of_the_moment() {
        let mut b = SendBuffers::new(1448, 10);
        // 2 x 10 x 4,352 bytes: 60 segments of room from snd_una 0: buffers of 22.
        b.write(0, None, 65_160);
        assert_eq!(b.ends, [22, 44, 66]);
        // The window grows: buffers written from now on are larger.
        b.expand(30); // 180 segments of room
        b.write(40, None, 131_072);
        assert_eq!(b.ends, [22, 44, 66, 111, 156, 201, 246]);
        // A finite transfer's last buffer ends with its data.
        let mut f = SendBuffers::new(1448, 10);
        f.write(0, Some(30), 0);
        assert_eq!(f.ends, [30]);
    }

    #[test]
    fn the_buffer_at_a_segment_says_what_is_left_of_it_and_whether_it_is_the_last() {
        let mut b = SendBuffers::new(1448, 10);
        b.write(0, None, 65_160);
        assert_eq!(b.buffer_at(0, 65_160), Buffer { left: 22, last: false });
        assert_eq!(b.buffer_at(21, 65_160), Buffer { left: 1, last: false });
        assert_eq!(b.buffer_at(22, 65_160), Buffer { left: 22, last: false });
        assert_eq!(b.buffer_at(50, 65_160), Buffer { left: 16, last: true });
        // Past what was written, a buffer is begun where sending is.
        assert_eq!(b.buffer_at(70, 65_160), Buffer { left: 22, last: true });
    }
}
