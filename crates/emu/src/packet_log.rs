//! The emulator's packet log: one CSV line per packet event, with the emulator's own
//! timestamps, for looking at what happens within a packet time (which flow's packet
//! finds a full queue, how long each receiver takes to ACK, how late the delay lines
//! release). Written only when asked for (`cclab testbed run --packet-log FILE`), through
//! a 1 MiB buffer, so that logging costs the forwarding loop a formatted line per event
//! and a write to the file only every ten thousand or so events.
//!
//! `cclab run --packet-log` writes the simulator's packet events through this same type,
//! so that one script (`scripts/packet_log.py`) reads a simulated and a real run alike.
//!
//! Columns: `event,direction,time_ns,address,queue_packets,due_ns`.
//! - `event`: `arrive` (read from a namespace and queued), `drop` (read and refused:
//!   queue full, AQM or random loss), `depart` (left the link for the delay line),
//!   `release` (written into the other namespace).
//! - `direction`: `up` (A to B: data) or `down` (B to A: ACKs).
//! - `time_ns`: the emulator's clock when it handled the packet (ns since forwarding began).
//! - `address`: the flow's receiver address, the packet's destination going up and its
//!   source coming down, so both directions of one flow share it.
//! - `queue_packets`: for `arrive` and `drop`, the direction's backlog after it (the packet
//!   in service included); empty otherwise.
//! - `due_ns`: for `depart`, when the link finished the packet; for `release`, when the
//!   delay line was due to release it (the difference to `time_ns` is the emulator's own
//!   lateness); empty otherwise.

use crate::EmuError;
use cclab_units::Time;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The write buffer: about ten thousand lines.
const BUFFER_BYTES: usize = 1 << 20;

/// What happened to a packet, with what the line says beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Read and queued; the backlog after it, in packets.
    Arrive { queue: u64 },
    /// Read and refused; the backlog, in packets.
    Drop { queue: u64 },
    /// Left the link; when the link finished it.
    Depart { due: Time },
    /// Written into the other namespace; when the delay line was due to release it.
    Release { due: Time },
}

/// The log file being written. A write error is kept and reported by
/// [`finish`](Self::finish), so that the forwarding loop never stops for it.
pub struct PacketLog {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
}

impl PacketLog {
    /// Creates (or replaces) `path` and writes the header.
    pub fn create(path: &Path) -> Result<PacketLog, EmuError> {
        let file = File::create(path)
            .map_err(|e| EmuError::Io(format!("--packet-log {}: {e}", path.display())))?;
        let out = BufWriter::with_capacity(BUFFER_BYTES, file);
        let mut log = PacketLog { path: path.to_path_buf(), out, error: None };
        log.put(format_args!("event,direction,time_ns,address,queue_packets,due_ns\n"));
        Ok(log)
    }

    /// One event of direction `dir` (0: up, 1: down) at `now`, for the flow whose receiver
    /// is `address` (IPv4, host order).
    pub fn event(&mut self, event: Event, dir: usize, now: Time, address: u32) {
        let [a, b, c, d] = address.to_be_bytes();
        let direction = if dir == 0 { "up" } else { "down" };
        let t = now.as_nanos();
        let head = format_args!("{direction},{t},{a}.{b}.{c}.{d}");
        match event {
            Event::Arrive { queue } => self.put(format_args!("arrive,{head},{queue},\n")),
            Event::Drop { queue } => self.put(format_args!("drop,{head},{queue},\n")),
            Event::Depart { due } => self.put(format_args!("depart,{head},,{}\n", due.as_nanos())),
            Event::Release { due } => {
                self.put(format_args!("release,{head},,{}\n", due.as_nanos()))
            }
        }
    }

    fn put(&mut self, line: std::fmt::Arguments<'_>) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_fmt(line) {
                self.error = Some(e);
            }
        }
    }

    /// Flushes the file; the first write error, if any, names the file.
    pub fn finish(mut self) -> Result<(), EmuError> {
        let flushed = self.out.flush();
        match self.error.take().map_or(flushed, Err) {
            Ok(()) => Ok(()),
            Err(e) => Err(EmuError::Io(format!("--packet-log {}: {e}", self.path.display()))),
        }
    }
}
