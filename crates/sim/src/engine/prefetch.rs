//! Loading a flow's state before its packet is handled. With thousands of flows (case
//! (c) of `cclab bench`: 10,000), the flow an ACK or a segment belongs to was last
//! touched about a round trip earlier and has left the caches; `perf` showed the first
//! reads of the sender in `on_ack` and of the receiver in `on_data` among the costliest
//! instructions of the run. The FIFOs (the pipe to the receivers, the ACK paths) say
//! which flows come next, so the handler of one packet asks the CPU to start loading
//! the state of the flow a few packets behind it; the next timer and the flows of a
//! sampling instant are loaded ahead the same way. A prefetch is only a hint: it changes
//! no value and cannot fault, so results are the same with or without it.

use super::net::Kind;
use super::Flow;
use crate::tcp::SCOREBOARD_RECORD_BYTES;

/// How many packets ahead in its FIFO a flow's state is loaded: far enough for the
/// load to finish (a few packets' handling, against one trip to memory), near enough
/// that the lines are still in the cache when they are used. On case (c), 4 to 8 were
/// best (CPU 2.25-2.61 s), 2 and 16 a little slower, 0 (the flow being handled, too
/// late to help) 2.91-3.00 s.
pub(super) const AHEAD: usize = 8;

/// Flows' state (`Flow`, sender and receiver) beyond which per-packet prefetching is
/// turned on: about a core's L2 cache here (1 MiB), so 1,237 flows and more. With 100
/// flows (case (b) of `cclab bench`, 85 kB of flows) their state stays in the caches,
/// and prefetching made the run x1.12 in CPU time; with 10,000 flows (case (c)) x0.75.
const CACHED_FLOW_BYTES: usize = 1 << 20;

/// Whether a run of `flows` flows prefetches per packet and per timer.
pub(super) fn worth_it(flows: usize) -> bool {
    flows * size_of::<Flow>() > CACHED_FLOW_BYTES
}

/// How many flows ahead of the one being sampled a flow's state is loaded (see
/// `take_samples`).
pub(super) const SAMPLE_AHEAD: usize = 4;

/// Starts loading all of flow `f`'s state (nothing if there is no flow `f`).
#[inline(always)]
pub(super) fn flow(flows: &[Flow], f: usize) {
    if let Some(fl) = flows.get(f) {
        lines(fl);
    }
}

/// Starts loading what `on_data` and the delayed-ACK check read of flow `f`.
#[inline(always)]
pub(super) fn receiver_of(flows: &[Flow], f: usize) {
    if let Some(fl) = flows.get(f) {
        lines(&fl.receiver);
        lines(&fl.delack_ev);
    }
}

/// Starts loading what `on_ack` and the sending after it read of flow `f`.
#[inline(always)]
pub(super) fn sender_of(flows: &[Flow], f: usize) {
    if let Some(fl) = flows.get(f) {
        lines(&fl.sender);
        lines(&fl.rto_ev);
    }
}

/// Starts loading what the handler of `timer` (an `Rto` or `DelAck` event) reads.
#[inline(always)]
pub(super) fn timer_of(flows: &[Flow], timer: Kind) {
    match timer {
        Kind::Rto(f) => sender_of(flows, f as usize),
        Kind::DelAck(f) => receiver_of(flows, f as usize),
        _ => {}
    }
}

/// Starts loading flow `f`'s RTT histogram counts, which `on_ack` adds its RTT sample
/// to. They are a separate allocation, found through the sender: call this once the
/// sender's own lines have been asked for (`sender_of`, a few packets earlier), so that
/// reading where the counts lie does not itself wait for memory. At most
/// `MAX_COUNT_LINES` lines are asked for (a histogram spans a few lines in practice).
#[inline(always)]
pub(super) fn rtt_counts_of(flows: &[Flow], f: usize) {
    const MAX_COUNT_LINES: usize = 8;
    if let Some(fl) = flows.get(f) {
        let (start, bytes) = fl.sender.stats().rtt_us.counts_memory();
        range(start, bytes.min(MAX_COUNT_LINES * LINE));
    }
}

/// Starts loading both ends of flow `f`'s scoreboard ring: the records at its front,
/// the first thing an ACK's cleaning reads (`Scoreboard::clean`; two lines: an ACK
/// usually covers two 24-byte records), and the slots at its back, which the segments
/// sent after the ACK are written to (two records' worth). The back slot was last
/// used about a window of segments earlier and has left the caches too; writing a
/// record there missed, and the store held up the packet's handoff to the
/// bottleneck behind it. Like `rtt_counts_of`, call it once the sender's own lines have
/// been asked for.
#[inline(always)]
pub(super) fn scoreboard_ends_of(flows: &[Flow], f: usize) {
    if let Some((front, back)) = flows.get(f).and_then(|fl| fl.sender.scoreboard_ends_address()) {
        range(front, 2 * LINE);
        range(back, 2 * SCOREBOARD_RECORD_BYTES);
    }
}

/// Prefetches every cache line `value` occupies.
#[inline(always)]
fn lines<T>(value: &T) {
    range(value as *const T as usize, size_of::<T>());
}

const LINE: usize = 64;

/// Prefetches the cache lines of the `bytes` bytes from address `start` (a no-op on
/// targets other than x86-64).
#[inline(always)]
fn range(start: usize, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut line = start & !(LINE - 1);
        while line < start + bytes {
            // SAFETY: prefetching is a hint to the cache; it reads nothing into the
            // program, never faults and writes nothing, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
            line += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes);
}
