//! A Linux-like TCP: the sender ([`TcpSender`]) and receiver ([`TcpReceiver`]) are
//! sans-IO state machines driven with `now` and packets, so the event loop, the tests'
//! random-operation model, the emulator's user-space TCP over UDP (`cclab udp`, the
//! testbed's `transport = "udp"` flows) all use the same code.
//!
//! Sequence numbers count *segments*, not bytes: segment `i` carries bytes
//! `[i*mss, (i+1)*mss)` of the stream (the last one of a finite transfer may be shorter).
//! With a fixed MSS per flow this loses nothing congestion control can see and keeps the
//! SACK scoreboard a ring of per-segment records.

mod handshake;
mod rack;
mod rate;
mod rcv_buffer;
mod receiver;
mod recovery;
mod rtt;
mod sack_blocks;
mod scoreboard;
mod send_buffers;
mod sender;
mod tlp;

pub use receiver::TcpReceiver;
pub(crate) use scoreboard::RECORD_BYTES as SCOREBOARD_RECORD_BYTES;
pub use sender::{recovery_style, SenderStats, TcpSender};

use crate::config::TcpConfig;
use cclab_units::Time;
use std::sync::Arc;

/// Hands out one shared copy of the TCP settings for a run of flows that have the same
/// ones (the usual case: a scenario's flows differ in little but their name).
#[derive(Default)]
pub struct SharedConfig {
    last: Option<Arc<TcpConfig>>,
}

impl SharedConfig {
    /// `cfg`, shared with the previous call's if equal.
    pub fn of(&mut self, cfg: &TcpConfig) -> Arc<TcpConfig> {
        match &self.last {
            Some(a) if **a == *cfg => a.clone(),
            _ => self.last.insert(Arc::new(cfg.clone())).clone(),
        }
    }
}

/// A data segment on the wire (a plain `Copy` struct: no allocation per packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub flow: u32,
    /// Segment number.
    pub seq: u32,
    /// Payload bytes.
    pub payload: u32,
    /// Bytes on the wire (payload + headers).
    pub wire_bytes: u32,
    /// The sender's timestamp (TSval), echoed by the receiver for undo decisions.
    pub tsval: Time,
    /// The sender's TSecr: the TSval of the latest ACK it took (RFC 7323 `TS.Recent`),
    /// from which the receiver estimates its RTT; zero before any.
    pub tsecr: Time,
    /// TCP's PSH flag; the sender sets it only with `TcpConfig::psh`, which says where.
    pub psh: bool,
}

/// The segment number that marks a SYN (and, in an [`Ack`], a SYN-ACK). Data segments
/// never reach it: a transfer is capped at `u32::MAX / 2` segments.
const SYN_SEQ: u32 = u32::MAX;

/// Bytes on the wire of a SYN: IP and TCP headers (40) and the options Linux puts in it
/// (`tcp_syn_options`: MSS 4, timestamps 10, SACK-permitted 2, window scale 3, padding 1).
pub const SYN_WIRE_BYTES: u32 = 60;

impl Segment {
    /// A SYN of `flow` sent at `now` (it carries no data; its TSval is echoed by the SYN-ACK).
    pub fn syn(flow: u32, now: Time) -> Segment {
        Segment {
            flow,
            seq: SYN_SEQ,
            payload: 0,
            wire_bytes: SYN_WIRE_BYTES,
            tsval: now,
            tsecr: Time::ZERO,
            psh: false,
        }
    }

    #[inline]
    pub fn is_syn(&self) -> bool {
        self.seq == SYN_SEQ
    }
}

/// Frees the storage of a list of ranges once it is empty: with 100,000 flows, lists kept
/// from a past loss episode cost more than the flows' other state, and a new episode's
/// one allocation is nothing beside the episode. Only capacity changes.
fn release_if_empty(v: &mut Vec<(u32, u32)>) {
    if v.is_empty() && v.capacity() > 0 {
        *v = Vec::new();
    }
}

/// Up to three SACK blocks, as fit in a TCP option with timestamps (RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

/// An acknowledgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub flow: u32,
    /// Next segment expected (cumulative ACK).
    pub ack: u32,
    /// SACK blocks `[start, end)` in segments, most recent first; `n_sacks` are valid.
    pub sacks: [(u32, u32); MAX_SACK_BLOCKS],
    pub n_sacks: u8,
    /// The receive window this ACK offers, bytes; 0 where the receiver does not model it
    /// (only GSO senders, `TcpConfig::psh`, read it: see `send_buffers.rs`).
    pub window: u32,
    /// Echo of the TSval of the latest in-order segment (RFC 7323 `TS.Recent`).
    pub tsecr: Time,
    /// The receiver's timestamp (TSval): when it sent this ACK.
    pub tsval: Time,
}

impl Ack {
    /// The SYN-ACK sent at `now` answering a SYN sent at `syn_tsval` (echoed as its TSecr).
    pub fn syn_ack(flow: u32, syn_tsval: Time, now: Time) -> Ack {
        let sacks = [(0, 0); MAX_SACK_BLOCKS];
        Ack { flow, ack: SYN_SEQ, sacks, n_sacks: 0, window: 0, tsecr: syn_tsval, tsval: now }
    }

    #[inline]
    pub fn is_syn_ack(&self) -> bool {
        self.ack == SYN_SEQ
    }

    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sacks[..self.n_sacks as usize]
    }
}

#[cfg(test)]
impl Ack {
    /// A hand-made ACK for unit tests: cumulative `ack`, up to three SACK `blocks`.
    fn hand_made(ack: u32, blocks: &[(u32, u32)], tsecr: Time) -> Ack {
        let mut sacks = [(0, 0); MAX_SACK_BLOCKS];
        sacks[..blocks.len()].copy_from_slice(blocks);
        Ack {
            flow: 0,
            ack,
            sacks,
            n_sacks: blocks.len() as u8,
            window: 0,
            tsecr,
            tsval: Time::ZERO,
        }
    }
}
