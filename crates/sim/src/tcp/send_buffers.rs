//! The sender's queue of unsent data cut into buffers, as Linux's write queue is: for GSO
//! sending only (`TcpConfig::psh`), where the buffers' ends decide how segments are
//! grouped into packets and which packets may be held back, and where the application's
//! writes decide how much data there is to send.
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
//! How much the application has written is the send buffer's business:
//! - Every buffer costs its payload and the memory of an empty `skb` (`SKB_OVERHEAD`),
//!   and so does every packet sent from one until it is wholly acknowledged: sending a
//!   packet cuts it off its buffer into an `skb` of its own (`tso_fragment`), and an ACK
//!   frees an `skb` only once it covers all of it (`tcp_clean_rtx_queue`). Their sum is
//!   `sk_wmem_queued`.
//! - The application begins a new buffer only while that sum is below the send buffer
//!   (`sk_stream_memory_free`), and fills a buffer it has begun; then it blocks
//!   (`sk_stream_wait_memory`, which sets `SOCK_NOSPACE`).
//! - After each ACK's sending, `tcp_check_space` (tcp_input.c) looks at a blocked writer
//!   only: if the push left cwnd unfilled, the send buffer grows to twice cwnd at 2,304
//!   bytes of memory per segment (`tcp_new_space`, `tcp_should_expand_sndbuf`,
//!   `tcp_sndbuf_expand`); and if at least a third of it is then free
//!   (`sk_stream_write_space`: free space at least half of what is queued), the writer
//!   wakes and writes until the send buffer is full again.
//! - Data the application has not written cannot be sent: a sender that catches up with
//!   its writer leaves cwnd unfilled, which is what grows the send buffer.
//!
//! Which buffers end in a pushed segment (PSH), as `tcp_sendmsg_locked` marks them
//! (`tcp_mark_push`): the buffer the writer was filling when it blocks (`wait_for_space`
//! pushes what the call copied), and, while a write goes on, a buffer it has just filled
//! that takes the data written more than half the largest offered window past the last
//! push (`forced_push`). The end of each of the application's writes pushes too
//! (`tcp_push`), which moves the point `forced_push` counts from; the mark it sets on a
//! buffer still being filled is taken off again when the next write appends to it (`if
//! (!copied) ... &= ~TCPHDR_PSH`), so it is not kept here. The flag stays on a buffer's
//! rest when `tso_fragment` cuts a packet off its front, so the buffer's last segment
//! carries it however it is sent: alone, it is the one segment sent alone with PSH, which
//! the receiver ACKs at once (the sender's side of "RTT ratio 2's 40 ms exit, with the
//! packets' TCP headers" in docs/fidelity.md).
//!
//! Simplified here: the woken writer writes at the instant of the ACK (the kernel wakes a
//! thread, which takes some microseconds); a buffer is written whole at the size goal of
//! the moment it is begun (the testbed's writer writes 64 KiB at a time, and a buffer
//! left part-filled by one write is filled by the next, whose size goal may have grown);
//! after a loss, the kernel splits the `skb`s that SACK blocks cut and merges SACKed ones
//! (`tcp_fragment`, `tcp_shift_skb_data`), which is not followed, so the memory of a
//! window with losses in it is counted as it was sent.

use super::rcv_buffer::MSS_DEFAULT;
use std::collections::VecDeque;

/// `sk_gso_max_size` of the testbed's veth devices (`GSO_LEGACY_MAX_SIZE`): the most one
/// buffer holds, bytes.
const GSO_MAX_BYTES: u64 = 65_536;

/// `tcp_sndbuf_expand`'s memory per segment for a 1,460-byte MSS clamp:
/// `roundup_pow_of_two(1,460 + MAX_TCP_HEADER + the aligned skb_shared_info)` plus the
/// aligned `struct sk_buff` (256), bytes. Measured on this project's kernel (6.18):
/// `ss -m`'s `tb` (`sk_sndbuf`) of the testbed's senders was twice a cwnd times 2,304 at
/// every sample (46,080 at the start, then 138,240, 165,888, 179,712, 419,328 and 423,936
/// for cwnds of 30, 36, 39, 91 and 92), so the power of two is 2,048 there: its
/// `MAX_TCP_HEADER` is smaller than the 320 bytes once assumed here (4,352 per segment).
const PER_SEGMENT_MEMORY: u64 = 2_304;

/// The memory of an `skb` beyond its payload, bytes: `tcp_stream_alloc_skb` charges
/// `SKB_TRUESIZE` of its empty head (the head, the aligned `struct sk_buff` and
/// `skb_shared_info`), and the payload adds its own length. Measured on this project's
/// kernel (6.18): a socket whose peer's window held everything back queued 54 buffers,
/// and `ss -m`'s `w` (`sk_wmem_queued`) exceeded its unsent bytes by 67,392, 54 times
/// 1,248 (two and four buffers: 2,496 and 4,992).
const SKB_OVERHEAD: u64 = 1_248;

/// `TCP_INIT_CWND`: the send buffer is sized for at least this many segments.
const INIT_CWND: u64 = 10;

/// `net.ipv4.tcp_wmem[2]`: the most autotuning gives a send buffer, bytes.
const WMEM_MAX: u64 = 4_194_304;

/// The testbed's writer writes 64 KiB at a time (`sendmsg` of 65,536 bytes), bytes.
const WRITE_BYTES: u64 = 65_536;

/// The buffer a segment lies in: its segments left from there on, and whether it is the
/// last one the application has written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Buffer {
    pub(super) left: u32,
    pub(super) last: bool,
    /// Its last segment carries PSH (`tcp_mark_push`).
    pub(super) pushed: bool,
}

/// Where the sender stands: the oldest unacknowledged segment and the next to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Progress {
    pub(super) snd_una: u32,
    pub(super) snd_nxt: u32,
}

/// One sender's write queue, in segments.
#[derive(Clone, Debug)]
pub(super) struct SendBuffers {
    mss: u64,
    /// `sk->sk_sndbuf`, bytes.
    sndbuf: u64,
    /// Where the application has written up to (exclusive).
    written: u32,
    /// Where the last push was (`tp->pushed_seq`), a segment.
    pushed_at: u32,
    /// Bytes of the application's current write (`WRITE_BYTES`) still to come.
    write_left: u64,
    /// The end (exclusive) of each buffer that is not yet wholly sent, in order, and
    /// whether it is marked to push.
    ends: VecDeque<(u32, bool)>,
    /// The end (exclusive) of each packet sent from the buffers and not wholly
    /// acknowledged, in order: each is an `skb` of its own.
    packets: VecDeque<u32>,
    /// The application waits for memory (`SOCK_NOSPACE`).
    writer_blocked: bool,
}

impl SendBuffers {
    /// A connection's write queue once established at segment `start` (`tcp_init_buffer_space`
    /// expands the send buffer for the initial cwnd), for segments of `mss` bytes.
    pub(super) fn new(mss: u32, init_cwnd: u32, start: u32) -> SendBuffers {
        let mut b = SendBuffers {
            mss: mss.max(1) as u64,
            sndbuf: 0,
            written: start,
            pushed_at: start,
            write_left: WRITE_BYTES,
            ends: VecDeque::new(),
            packets: VecDeque::new(),
            writer_blocked: false,
        };
        b.expand(init_cwnd);
        b
    }

    /// `tcp_sndbuf_expand` for a cwnd of `cwnd`: the buffer only grows.
    fn expand(&mut self, cwnd: u32) {
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

    /// Where the application has written up to: the sender may send below it.
    pub(super) fn written(&self) -> u32 {
        self.written
    }

    /// Forgets the buffers wholly sent and the packets wholly acknowledged.
    fn free(&mut self, at: Progress) {
        self.drop_buffers_sent_by(at.snd_nxt);
        while self.packets.front().is_some_and(|&end| end <= at.snd_una) {
            self.packets.pop_front();
        }
    }

    /// Forgets the buffers that end at or before segment `seq`: they are wholly sent.
    fn drop_buffers_sent_by(&mut self, seq: u32) {
        while self.ends.front().is_some_and(|&(end, _)| end <= seq) {
            self.ends.pop_front();
        }
    }

    /// `sk_wmem_queued`: the payload written and not acknowledged, and the memory of each
    /// `skb` holding it, bytes (call `free` first).
    fn queued(&self, at: Progress) -> u64 {
        let payload = self.written.saturating_sub(at.snd_una) as u64 * self.mss;
        payload + SKB_OVERHEAD * (self.ends.len() + self.packets.len()) as u64
    }

    /// A packet ending (exclusive) at segment `end` was sent from the buffers.
    pub(super) fn packet_sent(&mut self, end: u32) {
        self.packets.push_back(end);
    }

    /// The application writes, unless it is blocked: a buffer at a time while the send
    /// buffer has room, up to `data_end` (the end of a finite transfer), with
    /// `max_window` the largest window the receiver has offered so far. It blocks when
    /// the send buffer is full, and pushes the buffer it filled last (module doc).
    pub(super) fn write(&mut self, at: Progress, data_end: Option<u32>, max_window: u32) {
        if self.writer_blocked {
            return;
        }
        self.free(at);
        let end = data_end.unwrap_or(u32::MAX);
        while self.written < end {
            if self.queued(at) >= self.sndbuf {
                self.writer_blocked = true;
                self.push_last();
                return;
            }
            let before = self.written;
            self.written = before.saturating_add(self.size_goal(max_window)).min(end);
            self.ends.push_back((self.written, false));
            self.count_writes(self.written - before);
            // The last write of a finite transfer ends with its data, and nothing appends
            // to its buffer; otherwise a full buffer may be forced out.
            let past_push = (self.written - self.pushed_at) as u64 * self.mss;
            if self.written == end || past_push > max_window as u64 / 2 {
                self.push_last();
            }
        }
    }

    /// `tcp_mark_push` on the last buffer written.
    fn push_last(&mut self) {
        if let Some(last) = self.ends.back_mut() {
            last.1 = true;
            self.pushed_at = self.written;
        }
    }

    /// The application's writes that `segments` more written segments complete: each
    /// one's end moves the point pushes count from to where the data then stood (the
    /// mark itself does not stay: module doc).
    fn count_writes(&mut self, segments: u32) {
        let mut bytes = segments as u64 * self.mss;
        while bytes >= self.write_left {
            bytes -= self.write_left;
            self.write_left = WRITE_BYTES;
            let ended_at = self.written - (bytes / self.mss) as u32;
            self.pushed_at = self.pushed_at.max(ended_at);
        }
        self.write_left -= bytes;
    }

    /// `tcp_check_space` after an ACK's sending, with `cwnd_unfilled` whether the push
    /// left cwnd unfilled: a blocked writer may see the send buffer grow, and wakes to
    /// write if a third of it is free. Whether it wrote anything.
    pub(super) fn check_space(
        &mut self,
        at: Progress,
        cwnd: u32,
        cwnd_unfilled: bool,
        data_end: Option<u32>,
        max_window: u32,
    ) -> bool {
        if !self.writer_blocked {
            return false;
        }
        if cwnd_unfilled {
            self.expand(cwnd);
        }
        self.free(at);
        let queued = self.queued(at);
        if self.sndbuf.saturating_sub(queued) < queued / 2 {
            return false;
        }
        self.writer_blocked = false;
        let before = self.written;
        self.write(at, data_end, max_window);
        self.written > before
    }

    /// The buffer that segment `seq` (the next to send, below `written`) lies in: how
    /// many of its segments are left from `seq` on, and whether it is the last one
    /// written. Buffers wholly before `seq` are dropped.
    pub(super) fn buffer_at(&mut self, seq: u32) -> Buffer {
        self.drop_buffers_sent_by(seq);
        match self.ends.front() {
            Some(&(end, pushed)) => Buffer { left: end - seq, last: self.ends.len() == 1, pushed },
            // Not reached: the sender sends only what was written.
            None => Buffer { left: 1, last: true, pushed: false },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT_START: Progress = Progress { snd_una: 0, snd_nxt: 0 };

    #[test]
    fn buffers_are_half_the_largest_window_up_to_64_kib() {
        let b = SendBuffers::new(1448, 10, 0);
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
    fn the_writer_begins_buffers_while_the_send_buffer_has_room_then_blocks() {
        // 2 x 10 x 2,304 = 46,080 bytes; a buffer of 22 segments costs 22 x 1,448 + 1,248
        // = 33,104: the second is begun at 33,104 and the writer blocks at 66,208.
        let mut b = SendBuffers::new(1448, 10, 0);
        assert_eq!(b.sndbuf, 46_080);
        b.write(AT_START, None, 65_160);
        // The second buffer takes the data 44 segments (63,712 bytes) past the start, more
        // than half the window: forced out (and pushed again as the writer blocks).
        assert_eq!(b.ends, [(22, false), (44, true)]);
        assert_eq!((b.written(), b.writer_blocked), (44, true));
        // Blocked, it writes no more, however much is acknowledged.
        b.write(Progress { snd_una: 40, snd_nxt: 40 }, None, 65_160);
        assert_eq!(b.written(), 44);
        // A finite transfer's last buffer ends with its data, and the writer is done.
        let mut f = SendBuffers::new(1448, 10, 0);
        f.write(AT_START, Some(30), 0);
        assert_eq!((f.ends.clone(), f.writer_blocked), (VecDeque::from([(30, true)]), false));
    }

    #[test]
    fn sent_packets_cost_memory_until_wholly_acknowledged() {
        let mut b = SendBuffers::new(1448, 10, 0);
        b.write(AT_START, None, 65_160);
        for end in (2..=10).step_by(2) {
            b.packet_sent(end);
        }
        let at = Progress { snd_una: 0, snd_nxt: 10 };
        b.free(at);
        // 44 segments, two buffers (the first one's rest among them), five packets.
        assert_eq!(b.queued(at), 44 * 1448 + 7 * 1248);
        // An ACK of 3 segments frees one packet; the one it covers half stays.
        let at = Progress { snd_una: 3, snd_nxt: 10 };
        b.free(at);
        assert_eq!(b.queued(at), 41 * 1448 + 6 * 1248);
    }

    #[test]
    fn a_blocked_writer_wakes_when_a_third_of_the_send_buffer_is_free() {
        let mut b = SendBuffers::new(1448, 10, 0);
        b.write(AT_START, None, 65_160);
        for end in (2..=44).step_by(2) {
            b.packet_sent(end);
        }
        // 44 x 1,448 + 24 x 1,248 = 93,664 bytes queued: no room.
        let sent = Progress { snd_una: 0, snd_nxt: 10 };
        assert!(!b.check_space(sent, 10, false, None, 65_160));
        // Acknowledged up to 40 with 44 sent: 4 x 1,448 + 2 x 1,248 = 8,288 queued,
        // 37,792 free, at least half of it: the writer wakes, begins two buffers and
        // blocks again (41,392 before the second, 74,496 after).
        let acked = Progress { snd_una: 40, snd_nxt: 44 };
        assert!(b.check_space(acked, 40, false, None, 65_160));
        assert_eq!((b.written(), b.writer_blocked), (88, true));
        assert_eq!(b.sndbuf, 46_080);
        // A push that leaves cwnd unfilled grows the send buffer first: 2 x 40 x 2,304.
        assert!(b.check_space(acked, 40, true, None, 65_160));
        assert_eq!(b.sndbuf, 184_320);
    }

    #[test]
    fn the_ends_of_the_applications_writes_move_where_forced_pushes_count_from() {
        // A large send buffer and a window of 200,000 bytes: buffers of 45 segments
        // (65,160 bytes), forced out only 100,000 bytes past the last push. The writes of
        // 65,536 bytes end 0.26 segments into each next buffer, so no buffer gets that far
        // past one: none is forced, and only the last, where the writer blocks, is pushed.
        let mut b = SendBuffers::new(1448, 200, 0);
        b.write(AT_START, None, 200_000);
        let n = b.ends.len();
        assert!(n >= 10, "{n} buffers");
        assert!(b.ends.iter().take(n - 1).all(|&(_, pushed)| !pushed), "{:?}", b.ends);
        // (Counted from the start instead, every second buffer would be 130,320 bytes past.)
        assert_eq!(b.ends.back().map(|e| e.1), Some(true));
    }

    #[test]
    fn the_buffer_at_a_segment_says_what_is_left_of_it_and_whether_it_is_the_last() {
        let mut b = SendBuffers::new(1448, 10, 0);
        b.write(AT_START, None, 65_160);
        assert_eq!(b.buffer_at(0), Buffer { left: 22, last: false, pushed: false });
        assert_eq!(b.buffer_at(21), Buffer { left: 1, last: false, pushed: false });
        assert_eq!(b.buffer_at(22), Buffer { left: 22, last: true, pushed: true });
        assert_eq!(b.buffer_at(30), Buffer { left: 14, last: true, pushed: true });
    }
}
