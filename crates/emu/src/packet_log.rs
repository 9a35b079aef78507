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
//! Columns: `event,direction,time_ns,address,queue_packets,due_ns,seq,ack,flags,window,payload_bytes,tsval,tsecr`.
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
//! - `seq`, `ack`, `flags`, `window`, `payload_bytes`, `tsval`, `tsecr`: for `arrive` and
//!   `drop` in the emulator's log, the packet's TCP header as the sending host wrote it
//!   (sequence and acknowledgement numbers, the flags set as letters of `FSRPAUEC` (FIN,
//!   SYN, RST, PSH, ACK, URG, ECE, CWR), the window field as sent, before the connection's
//!   window scaling, payload bytes, and the timestamp option of RFC 7323, in the sender's
//!   millisecond clock plus its per-connection offset); `tsval` and `tsecr` are empty
//!   without that option. They say how many segments each ACK covers, when a receiver
//!   raises its window, which of its ACKs a data segment echoes and what RTT it then
//!   measures (`tcp_rcv_rtt_measure_ts`). Empty for the other events (the same packet)
//!   and in the simulator's log.

use crate::EmuError;
use cclab_units::interrupt::{self, Staged};
use cclab_units::Time;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The write buffer: about ten thousand lines.
const BUFFER_BYTES: usize = 1 << 20;

/// What happened to a packet, with what the line says beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Read and queued; the backlog after it, in packets, and the TCP header, if any.
    Arrive { queue: u64, tcp: Option<TcpHeader> },
    /// Read and refused; the backlog, in packets, and the TCP header, if any.
    Drop { queue: u64, tcp: Option<TcpHeader> },
    /// Left the link; when the link finished it.
    Depart { due: Time },
    /// Written into the other namespace; when the delay line was due to release it.
    Release { due: Time },
}

/// The fields of a TCP header the log keeps, as on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpHeader {
    pub seq: u32,
    pub ack: u32,
    /// The flags byte (FIN is bit 0, CWR bit 7).
    pub flags: u8,
    /// The window field, unscaled.
    pub window: u16,
    pub payload_bytes: u32,
    /// The timestamp option's TSval and TSecr (RFC 7323), if the segment carries it.
    pub timestamps: Option<(u32, u32)>,
}

/// The option kind and length of TCP's timestamps (RFC 7323, section 3).
const TIMESTAMP_KIND: u8 = 8;
const TIMESTAMP_LEN: usize = 10;

impl TcpHeader {
    /// The TCP header of IPv4 packet `ip`, or `None` if it is not a whole one (another
    /// protocol, a fragment's tail, or lengths that do not fit the bytes read).
    pub fn parse(ip: &[u8]) -> Option<TcpHeader> {
        if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 6 {
            return None;
        }
        let fragment_offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
        if fragment_offset != 0 {
            return None;
        }
        let ihl = (ip[0] & 0x0f) as usize * 4;
        let total = (u16::from_be_bytes([ip[2], ip[3]]) as usize).min(ip.len());
        let tcp = ip.get(ihl..total)?;
        if tcp.len() < 20 {
            return None;
        }
        let header_len = (tcp[12] >> 4) as usize * 4;
        let options = tcp.get(20..header_len)?;
        Some(TcpHeader {
            seq: be_u32(tcp, 4),
            ack: be_u32(tcp, 8),
            flags: tcp[13],
            window: u16::from_be_bytes([tcp[14], tcp[15]]),
            payload_bytes: (tcp.len() - header_len) as u32,
            timestamps: timestamp_option(options),
        })
    }
}

/// TSval and TSecr from a TCP header's options, if there.
fn timestamp_option(mut options: &[u8]) -> Option<(u32, u32)> {
    while let [kind, rest @ ..] = options {
        match kind {
            0 => return None,
            1 => options = rest,
            _ => {
                let len = *rest.first()? as usize;
                let option = options.get(..len.max(2))?;
                if *kind == TIMESTAMP_KIND && len == TIMESTAMP_LEN {
                    return Some((be_u32(option, 2), be_u32(option, 6)));
                }
                options = &options[len.max(2)..];
            }
        }
    }
    None
}

/// The 32-bit big-endian word at `at` in `bytes` (the caller has checked the length).
fn be_u32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// Whether `path` is a file that starts as a packet log does (an empty one counts: a log
/// whose run failed before its first line was flushed).
fn is_packet_log(path: &Path) -> bool {
    use std::io::Read;
    let mut start = [0u8; 32];
    let Ok(mut f) = File::open(path) else { return false };
    let n = f.read(&mut start).unwrap_or(0);
    HEADER.as_bytes().starts_with(&start[..n])
}

/// The log file being written. A write error is kept and reported by
/// [`finish`](Self::finish), so that the forwarding loop never stops for it.
pub struct PacketLog {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
    /// Where a log bound for a regular file is written until [`finish`](Self::finish)
    /// moves it into place: a run that fails or is interrupted leaves an earlier log as
    /// it was (the file is removed when the log is dropped unfinished, or by
    /// [`cclab_units::interrupt`] when the command is interrupted).
    staged: Option<(PathBuf, Staged)>,
}

/// The log's first line: its columns.
const HEADER: &str =
    "event,direction,time_ns,address,queue_packets,due_ns,seq,ack,flags,window,payload_bytes,tsval,tsecr\n";

impl PacketLog {
    /// Creates the log of `path` and writes the header. An existing regular file is
    /// replaced only if it is an earlier packet log (it starts with the header's first
    /// columns), so that a mistyped `--packet-log` cannot overwrite a file of the user's,
    /// and only when the run completes (it is staged beside it until then); anything else
    /// that is not a folder (a named pipe, /dev/stdout) is written to as it is, never read.
    pub fn create(path: &Path) -> Result<PacketLog, EmuError> {
        let refuse = |why: &str| EmuError::Io(format!("--packet-log {}: {why}", path.display()));
        // A link to a log: the log it names is replaced, and the link stays.
        let path = cclab_units::whole_file::through_link(path).map_err(|e| refuse(&e))?;
        let path = path.as_path();
        if path.is_dir() {
            return Err(refuse("is a folder; give a file name"));
        }
        if path.is_file() && !is_packet_log(path) {
            return Err(refuse("exists and is not a packet log; choose another file"));
        }
        let (file, staged) = if path.is_file() || !path.exists() {
            remove_dead_runs_staging(path);
            let part = staging_of(path);
            let (on_interrupt, file) = interrupt::create_staged(&part, || File::create(&part))
                .map_err(|e| refuse(&e.to_string()))?;
            (file, Some((part, on_interrupt)))
        } else {
            (File::create(path).map_err(|e| refuse(&e.to_string()))?, None)
        };
        let out = BufWriter::with_capacity(BUFFER_BYTES, file);
        let mut log = PacketLog { path: path.to_path_buf(), out, error: None, staged };
        log.put(format_args!("{HEADER}"));
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
            Event::Arrive { queue, tcp } => {
                self.put(format_args!("arrive,{head},{queue},,{}\n", Header(tcp)))
            }
            Event::Drop { queue, tcp } => {
                self.put(format_args!("drop,{head},{queue},,{}\n", Header(tcp)))
            }
            Event::Depart { due } => {
                self.put(format_args!("depart,{head},,{},,,,,,,\n", due.as_nanos()))
            }
            Event::Release { due } => {
                self.put(format_args!("release,{head},,{},,,,,,,\n", due.as_nanos()))
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
        let done = match (self.error.take().map_or(flushed, Err), self.staged.take()) {
            (Ok(()), Some((staged, on_interrupt))) => on_interrupt.settle(|| {
                std::fs::rename(&staged, &self.path).inspect_err(|_| {
                    let _ = std::fs::remove_file(&staged);
                })
            }),
            (Ok(()), None) => Ok(()),
            (Err(e), staged) => {
                staged.map(|(file, _)| std::fs::remove_file(file));
                Err(e)
            }
        };
        done.map_err(|e| EmuError::Io(format!("--packet-log {}: {e}", self.path.display())))
    }
}

/// An unfinished log (its run failed or was interrupted) leaves no staged file behind.
impl Drop for PacketLog {
    fn drop(&mut self) {
        if let Some((staged, _)) = self.staged.take() {
            let _ = std::fs::remove_file(staged);
        }
    }
}

/// Beside `path`, hidden and this process's: `dir/.NAME.partial-PID`, so that two runs
/// logging to one path each write their own (the one to finish last then replaces the
/// other's whole log; with one staging file they interleaved into one corrupt log).
fn staging_of(path: &Path) -> PathBuf {
    path.with_file_name(format!("{}{}", staging_prefix(path), std::process::id()))
}

fn staging_prefix(path: &Path) -> String {
    let name = path.file_name().map_or_else(|| "packets".into(), |n| n.to_string_lossy());
    format!(".{name}.partial-")
}

/// Removes the staged logs of `path` left by runs that were killed outright (no `Drop`)
/// and whose process is gone.
fn remove_dead_runs_staging(path: &Path) {
    let prefix = staging_prefix(path);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if cclab_units::whole_file::writer_is_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The flags' letters, from bit 0 (FIN) to bit 7 (CWR) of the header's flags byte.
const FLAG_LETTERS: &str = "FSRPAUEC";

/// A TCP header's seven columns (empty ones for a packet without one).
struct Header(Option<TcpHeader>);

impl std::fmt::Display for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(h) = self.0 else { return f.write_str(",,,,,,") };
        write!(f, "{},{},", h.seq, h.ack)?;
        for (bit, letter) in FLAG_LETTERS.chars().enumerate() {
            if h.flags & (1 << bit) != 0 {
                write!(f, "{letter}")?;
            }
        }
        write!(f, ",{},{},", h.window, h.payload_bytes)?;
        match h.timestamps {
            Some((tsval, tsecr)) => write!(f, "{tsval},{tsecr}"),
            None => f.write_str(","),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_an_earlier_packet_log() {
        let dir = std::env::temp_dir().join(format!("cclab-packet-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mine = dir.join("notes.csv");
        std::fs::write(&mine, "a,b\n1,2\n").unwrap();
        let e =
            PacketLog::create(&mine).err().expect("a file of the user's is refused").to_string();
        assert!(e.contains("notes.csv: exists and is not a packet log"), "{e}");
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "a,b\n1,2\n");
        assert!(PacketLog::create(&dir).is_err(), "a folder is refused");
        let log = dir.join("packets.csv");
        PacketLog::create(&log).unwrap().finish().unwrap();
        PacketLog::create(&log).expect("an earlier log is replaced").finish().unwrap();
        // A log dropped unfinished (its run failed or was interrupted) leaves the earlier
        // one as it was, and nothing beside it.
        std::fs::write(&log, format!("{HEADER}up,1,198.18.0.1\n")).unwrap();
        let mut unfinished = PacketLog::create(&log).unwrap();
        unfinished.put(format_args!("a line of the unfinished run\n"));
        drop(unfinished);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), format!("{HEADER}up,1,198.18.0.1\n"));
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "notes.csv and packets.csv");
        PacketLog::create(&log).unwrap().finish().unwrap();
        // Through a symbolic link, the log it names is replaced and the link stays.
        let link = dir.join("link.csv");
        std::os::unix::fs::symlink("packets.csv", &link).unwrap();
        let mut through = PacketLog::create(&link).unwrap();
        through.put(format_args!("a line written through the link\n"));
        through.finish().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(&log).unwrap().ends_with("through the link\n"));
        std::fs::remove_file(&link).unwrap();
        // A staged log of a run killed outright (its process gone) is removed by the next
        // run to the same path; one of a run still going (this process) is left alone.
        let dead = dir.join(format!(".packets.csv.partial-{}", u32::MAX - 1));
        let alive = dir.join(".packets.csv.partial-1"); // process 1 is always there
        std::fs::write(&dead, "killed").unwrap();
        std::fs::write(&alive, "running").unwrap();
        PacketLog::create(&log).unwrap().finish().unwrap();
        assert!(!dead.exists() && alive.exists());
        std::fs::remove_file(&alive).unwrap();
        // A device (or a pipe) is written to, not read first (reading a pipe would wait).
        PacketLog::create(Path::new("/dev/null")).expect("a device is written").finish().unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), HEADER);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An IPv4 packet carrying a TCP header with `options` and `payload` bytes of data.
    fn packet(options: &[u8], payload: usize) -> Vec<u8> {
        let tcp_len = 20 + options.len();
        let total = 20 + tcp_len + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 6;
        p[24..28].copy_from_slice(&1_000u32.to_be_bytes());
        p[28..32].copy_from_slice(&2_000u32.to_be_bytes());
        p[33] = 0x18; // PSH, ACK
        p[34..36].copy_from_slice(&3_000u16.to_be_bytes());
        p[32] = ((tcp_len / 4) as u8) << 4;
        p[40..40 + options.len()].copy_from_slice(options);
        p
    }

    #[test]
    fn reads_sequence_numbers_payload_and_timestamps() {
        // NOP, NOP, timestamps: the option block Linux sends on established segments.
        let ts = [1, 1, 8, 10, 0, 0, 0x30, 0x39, 0, 1, 0xe2, 0x40];
        let h = TcpHeader::parse(&packet(&ts, 1448)).unwrap();
        assert_eq!(
            h,
            TcpHeader {
                seq: 1_000,
                ack: 2_000,
                flags: 0x18,
                window: 3_000,
                payload_bytes: 1448,
                timestamps: Some((12_345, 123_456))
            }
        );
        // SACK before the timestamps, as on an ACK after a loss.
        let sack_ts = [1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 9];
        assert_eq!(TcpHeader::parse(&packet(&sack_ts, 0)).unwrap().timestamps, Some((7, 9)));
        assert_eq!(TcpHeader::parse(&packet(&[], 0)).unwrap().timestamps, None);
        // The end of the option list, and an option longer than the header, stop the search.
        assert_eq!(
            TcpHeader::parse(&packet(&[0, 0, 0, 0, 8, 10, 0, 0, 0, 7, 0, 0], 0))
                .unwrap()
                .timestamps,
            None
        );
        assert_eq!(TcpHeader::parse(&packet(&[3, 40, 0, 0], 0)).unwrap().timestamps, None);
    }

    #[test]
    fn refuses_what_is_not_a_whole_tcp_header() {
        let mut udp = packet(&[], 0);
        udp[9] = 17;
        assert_eq!(TcpHeader::parse(&udp), None);
        assert_eq!(TcpHeader::parse(&packet(&[], 0)[..30]), None);
        let mut long = packet(&[], 0);
        long[32] = 15 << 4; // a 60-byte header in 20 bytes
        assert_eq!(TcpHeader::parse(&long), None);
        assert_eq!(TcpHeader::parse(&[0x60; 60]), None);
        let mut tail = packet(&[], 8);
        tail[7] = 1; // a fragment at offset 8: its bytes are payload, not a header
        assert_eq!(TcpHeader::parse(&tail), None);
    }

    #[test]
    fn writes_the_header_only_on_arrivals_and_drops() {
        let path =
            std::env::temp_dir().join(format!("cclab-packet-log-{}.csv", std::process::id()));
        let mut log = PacketLog::create(&path).unwrap();
        let header = TcpHeader {
            seq: 1,
            ack: 2,
            flags: 0x91,
            window: 6,
            payload_bytes: 3,
            timestamps: Some((4, 5)),
        };
        let address = u32::from(std::net::Ipv4Addr::new(198, 18, 1, 1));
        log.event(Event::Arrive { queue: 1, tcp: Some(header) }, 0, Time(10), address);
        log.event(
            Event::Drop { queue: 2, tcp: Some(TcpHeader { timestamps: None, ..header }) },
            0,
            Time(11),
            address,
        );
        log.event(Event::Depart { due: Time(12) }, 1, Time(13), address);
        log.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "arrive,up,10,198.18.1.1,1,,1,2,FAC,6,3,4,5",
                "drop,up,11,198.18.1.1,2,,1,2,FAC,6,3,,",
                "depart,down,13,198.18.1.1,,12,,,,,,,",
            ]
        );
    }
}
