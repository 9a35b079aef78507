//! User-space transport: the simulator's own sans-IO TCP sender and receiver
//! (`cclab_sim::tcp`), with any of cclab's Rust algorithms, carried in UDP datagrams
//! across the emulated link, so algorithms the kernel lacks (Tahoe, CUBIC-FIT, ...) still
//! cross a real link in wall-clock time (what the CUBIC-vs-Tahoe notebook did over UDP).
//!
//! Wire format (little-endian), one segment or ACK per datagram:
//! - data: `b'D'` (`b'P'` with TCP's PSH flag), flow u32, seq u32 (segment number),
//!   payload u32, tsval u64 (ns), tsecr u64 (ns), then padding so that the IP packet
//!   has the segment's `wire_bytes` (1500 for a full MSS, as the equivalent TCP packet);
//! - ack: `b'A'`, flow u32, ack u32, n_sacks u8, 3 x (start u32, end u32), tsecr u64,
//!   tsval u64.
//!
//! Both ends read the same CLOCK_MONOTONIC origin, so echoed timestamps are comparable.

use crate::forwarder::monotonic_ns;
use crate::harness::{Harness, Side};
use crate::EmuError;
use cclab_cc::Algorithm;
use cclab_sim::tcp::{recovery_style, Ack, Segment, TcpReceiver, TcpSender, MAX_SACK_BLOCKS};
use cclab_sim::{FlowSample, TcpConfig};
use cclab_units::{Duration, Time};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const DATA_HEADER: usize = 29;
/// Where an ACK's two timestamps (TSecr, then TSval) start, after its SACK blocks.
const ACK_TIMES: usize = 10 + MAX_SACK_BLOCKS * 8;
const ACK_LEN: usize = ACK_TIMES + 16;
/// IPv4 + UDP headers.
const IP_UDP: u32 = 28;
/// UDP port of a user-space flow's receiver.
pub const PORT: u16 = 5401;

/// A data datagram's first byte: `D`, or `P` for one with TCP's PSH flag.
const DATA: u8 = b'D';
const DATA_PUSHED: u8 = b'P';

pub fn encode_segment(seg: &Segment, buf: &mut [u8]) -> usize {
    buf[0] = if seg.psh { DATA_PUSHED } else { DATA };
    buf[1..5].copy_from_slice(&seg.flow.to_le_bytes());
    buf[5..9].copy_from_slice(&seg.seq.to_le_bytes());
    buf[9..13].copy_from_slice(&seg.payload.to_le_bytes());
    buf[13..21].copy_from_slice(&seg.tsval.as_nanos().to_le_bytes());
    buf[21..29].copy_from_slice(&seg.tsecr.as_nanos().to_le_bytes());
    (seg.wire_bytes.saturating_sub(IP_UDP) as usize).clamp(DATA_HEADER, buf.len())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Decodes a data datagram (None: not one); `wire_bytes` is what arrived plus IP/UDP.
pub fn decode_segment(b: &[u8]) -> Option<Segment> {
    if b.len() < DATA_HEADER || (b[0] != DATA && b[0] != DATA_PUSHED) {
        return None;
    }
    Some(Segment {
        flow: u32_at(b, 1),
        seq: u32_at(b, 5),
        payload: u32_at(b, 9),
        wire_bytes: b.len() as u32 + IP_UDP,
        tsval: Time(u64_at(b, 13)),
        tsecr: Time(u64_at(b, 21)),
        psh: b[0] == DATA_PUSHED,
    })
}

pub fn encode_ack(a: &Ack, buf: &mut [u8]) -> usize {
    buf[0] = b'A';
    buf[1..5].copy_from_slice(&a.flow.to_le_bytes());
    buf[5..9].copy_from_slice(&a.ack.to_le_bytes());
    buf[9] = a.n_sacks;
    for (k, &(s, e)) in a.sacks.iter().enumerate() {
        buf[10 + 8 * k..14 + 8 * k].copy_from_slice(&s.to_le_bytes());
        buf[14 + 8 * k..18 + 8 * k].copy_from_slice(&e.to_le_bytes());
    }
    buf[ACK_TIMES..ACK_TIMES + 8].copy_from_slice(&a.tsecr.as_nanos().to_le_bytes());
    buf[ACK_TIMES + 8..ACK_LEN].copy_from_slice(&a.tsval.as_nanos().to_le_bytes());
    ACK_LEN
}

pub fn decode_ack(b: &[u8]) -> Option<Ack> {
    if b.len() < ACK_LEN || b[0] != b'A' || b[9] as usize > MAX_SACK_BLOCKS {
        return None;
    }
    let mut sacks = [(0, 0); MAX_SACK_BLOCKS];
    for (k, s) in sacks.iter_mut().enumerate() {
        *s = (u32_at(b, 10 + 8 * k), u32_at(b, 14 + 8 * k));
    }
    Some(Ack {
        flow: u32_at(b, 1),
        ack: u32_at(b, 5),
        sacks,
        n_sacks: b[9],
        // Not on this wire: the user-space flows' senders then cut their send queue into
        // 64 KiB buffers (see cclab_sim's send_buffers.rs).
        window: 0,
        tsecr: Time(u64_at(b, ACK_TIMES)),
        tsval: Time(u64_at(b, ACK_TIMES + 8)),
    })
}

/// One user-space flow to run.
#[derive(Clone, Debug)]
pub struct UdpFlow {
    /// Algorithm name (cclab's registry) and parameters.
    pub cc: String,
    pub params: Vec<(String, f64)>,
    pub tcp: TcpConfig,
    /// Finite transfer (None: bulk until `duration`).
    pub bytes: Option<u64>,
    pub duration: Duration,
    pub sample_interval: Duration,
}

/// What a user-space flow did.
#[derive(Clone, Debug, Default)]
pub struct UdpRun {
    pub delivered_bytes: u64,
    pub goodput_bps: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub completed_at: Option<Time>,
    pub samples: Vec<FlowSample>,
}

/// Builds the algorithm with its parameters; errors name the parameter.
pub fn algorithm(cc: &str, params: &[(String, f64)]) -> Result<Algorithm, EmuError> {
    let mut a = Algorithm::new(cc).map_err(|e| EmuError::Config(format!("--cc: {e}")))?;
    for (k, v) in params {
        a.set_param(k, *v).map_err(|e| EmuError::Config(format!("--param {k}={v}: {e}")))?;
    }
    Ok(a)
}

/// Waits until `fd` is readable or `until` (CLOCK_MONOTONIC ns) passes.
fn wait_readable(fd: i32, until_ns: u64) {
    let now = monotonic_ns();
    if until_ns <= now {
        return;
    }
    let d = until_ns - now;
    let ts = libc::timespec { tv_sec: (d / 1_000_000_000) as _, tv_nsec: (d % 1_000_000_000) as _ };
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, a valid timespec, no signal mask.
    unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
}

/// The sender's state as a sample (delivered bytes: cumulatively acknowledged).
pub fn sample_of(snd: &TcpSender, flow: usize, now: Time) -> FlowSample {
    let mut s = FlowSample {
        time: now,
        flow,
        cwnd_pkts: 0,
        ssthresh_pkts: 0,
        srtt: Duration::ZERO,
        inflight_pkts: 0,
        delivered_bytes: snd.snd_una() as u64 * snd.mss() as u64,
        retransmits: 0,
        cc: Vec::new(),
    };
    snd.fill_sample(&mut s);
    s
}

/// Serves one flow's receiving end on `sock` until `stop`: ACKs (delayed as the
/// simulator's receiver decides) go back to the sender; `delivered` follows the bytes
/// delivered in order. Times are CLOCK_MONOTONIC ns minus `origin`.
pub fn serve_receiver(
    sock: &UdpSocket,
    r: &mut TcpReceiver,
    origin: u64,
    stop: &AtomicBool,
    delivered: &AtomicU64,
) -> std::io::Result<()> {
    let clock = || Time(monotonic_ns().saturating_sub(origin));
    let mut buf = [0u8; 2048];
    let mut out = [0u8; ACK_LEN];
    let mut peer: Option<SocketAddr> = None;
    sock.set_nonblocking(true)?;
    while !stop.load(Ordering::Relaxed) {
        let wake =
            r.delack_deadline().map_or(monotonic_ns() + 20_000_000, |d| origin + d.as_nanos());
        wait_readable(sock.as_raw_fd(), wake);
        let now = clock();
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            peer = Some(from);
            if let Some(ack) = decode_segment(&buf[..n]).and_then(|seg| r.on_data(now, &seg)) {
                let k = encode_ack(&ack, &mut out);
                let _ = sock.send_to(&out[..k], from);
                // A compressed ACK that left first; the segment's own may follow (the
                // timer it may have armed is this loop's wake-up).
                if let Some(second) = r.take_second_ack() {
                    let k = encode_ack(&second, &mut out);
                    let _ = sock.send_to(&out[..k], from);
                }
            }
        }
        if let (Some(d), Some(p)) = (r.delack_deadline(), peer) {
            if d <= clock() {
                if let Some(ack) = r.on_delack_timer(clock()) {
                    let k = encode_ack(&ack, &mut out);
                    let _ = sock.send_to(&out[..k], p);
                }
            }
        }
        delivered.store(r.delivered_bytes(), Ordering::Relaxed);
    }
    Ok(())
}

/// A UDP socket connected to `dst` with room for a whole window of datagrams (a full
/// socket buffer would drop segments before they reach the emulated link).
pub fn sender_socket(dst: SocketAddr) -> std::io::Result<UdpSocket> {
    let s = UdpSocket::bind("0.0.0.0:0")?;
    s.connect(dst)?;
    s.set_nonblocking(true)?;
    let big: libc::c_int = 8 << 20;
    // SAFETY: setting an int socket option.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            &big as *const _ as *const libc::c_void,
            4,
        )
    };
    Ok(s)
}

/// Drives a started sender over `sock` until `end`, completion or `stop`, calling
/// `sample` every `interval`. Times are CLOCK_MONOTONIC ns minus `origin`.
pub fn drive_sender(
    sock: &UdpSocket,
    snd: &mut TcpSender,
    origin: u64,
    end: Time,
    interval: Duration,
    stop: &AtomicBool,
    sample: &mut dyn FnMut(&TcpSender, Time),
) {
    let clock = || Time(monotonic_ns().saturating_sub(origin));
    let mut buf = vec![0u8; 2048];
    let mut ackbuf = [0u8; 256];
    let mut next_sample = clock();
    loop {
        let now = clock();
        if now >= end
            || snd.is_complete()
            || stop.load(Ordering::Relaxed)
            || crate::forwarder::signalled()
        {
            break;
        }
        while let Ok(n) = sock.recv(&mut ackbuf) {
            if let Some(a) = decode_ack(&ackbuf[..n]) {
                snd.on_ack(clock(), &a);
            }
        }
        if snd.rto_deadline().is_some_and(|d| d <= clock()) {
            snd.on_rto(clock());
        }
        snd.transmit(clock(), &mut |seg| {
            let k = encode_segment(&seg, &mut buf);
            let _ = sock.send(&buf[..k]);
        });
        let now = clock();
        if now >= next_sample {
            sample(snd, now);
            next_sample = now + interval;
        }
        let mut wake = next_sample.min(end);
        if let Some(d) = snd.rto_deadline() {
            wake = wake.min(d);
        }
        wait_readable(sock.as_raw_fd(), origin + wake.as_nanos());
    }
}

/// Runs one user-space flow from A to B through the harness's path.
pub fn run_flow(h: &Harness, flow: &UdpFlow) -> Result<UdpRun, EmuError> {
    let ca = algorithm(&flow.cc, &flow.params)?;
    let origin = monotonic_ns();
    let end = Time::ZERO + flow.duration;
    let stop = Arc::new(AtomicBool::new(false));
    let delivered = Arc::new(AtomicU64::new(0));

    let (tx, rx) = std::sync::mpsc::channel();
    let (rstop, rdelivered, tcp, bytes) =
        (stop.clone(), delivered.clone(), flow.tcp.clone(), flow.bytes);
    let recovery = recovery_style(&tcp, &ca);
    let receiver = h.spawn(Side::B, move || -> std::io::Result<()> {
        let s = UdpSocket::bind((crate::ADDR_B, PORT))?;
        let _ = tx.send(());
        let mut r = TcpReceiver::new(0, tcp.mss, bytes, tcp.delayed_ack, recovery);
        serve_receiver(&s, &mut r, origin, &rstop, &rdelivered)
    });
    rx.recv_timeout(std::time::Duration::from_secs(2))
        .map_err(|_| EmuError::Setup("the UDP receiver did not start".into()))?;

    let (tcp, bytes, interval, sstop) =
        (flow.tcp.clone(), flow.bytes, flow.sample_interval, stop.clone());
    let sender = h.spawn(Side::A, move || -> std::io::Result<UdpRun> {
        let s = sender_socket(SocketAddr::new(crate::ADDR_B.into(), PORT))?;
        let mut snd = TcpSender::new(0, ca, tcp, bytes);
        let mut run = UdpRun::default();
        snd.start(Time(monotonic_ns().saturating_sub(origin)));
        drive_sender(&s, &mut snd, origin, end, interval, &sstop, &mut |snd, now| {
            run.samples.push(sample_of(snd, 0, now))
        });
        run.retransmits = snd.stats().retransmits;
        run.timeouts = snd.stats().timeouts;
        run.completed_at = snd.stats().completed_at;
        Ok(run)
    });
    let run = sender.join().map_err(|_| EmuError::Setup("the UDP sender panicked".into()))?;
    // What had arrived when the sender stopped, at the run's end: goodput counts the bytes
    // delivered within the run, as the simulator's does, not those still on the link.
    let delivered_by_end = delivered.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    receiver
        .join()
        .map_err(|_| EmuError::Setup("the UDP receiver panicked".into()))?
        .map_err(|e| EmuError::Setup(format!("UDP receiver: {e}")))?;
    let mut run = run.map_err(|e| EmuError::Setup(format!("UDP sender: {e}")))?;
    run.delivered_bytes = delivered_by_end;
    let active = run.completed_at.map_or(flow.duration, |t| t - Time::ZERO).as_secs_f64();
    run.goodput_bps = if active > 0.0 { run.delivered_bytes as f64 * 8.0 / active } else { 0.0 };
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_acks_round_trip_through_the_wire_format() {
        let seg = Segment {
            flow: 3,
            seq: 123_456,
            payload: 1448,
            wire_bytes: 1500,
            tsval: Time(987_654_321),
            tsecr: Time(123_456_789),
            psh: false,
        };
        let mut buf = [0u8; 2048];
        let n = encode_segment(&seg, &mut buf);
        assert_eq!(n as u32 + IP_UDP, 1500, "same size on the wire as the TCP segment");
        assert_eq!(decode_segment(&buf[..n]), Some(seg));
        let pushed = Segment { psh: true, ..seg };
        let n = encode_segment(&pushed, &mut buf);
        assert_eq!(decode_segment(&buf[..n]), Some(pushed));
        let ack = Ack {
            flow: 3,
            ack: 77,
            sacks: [(80, 90), (95, 99), (0, 0)],
            n_sacks: 2,
            window: 0,
            tsecr: Time(42),
            tsval: Time(43),
        };
        let n = encode_ack(&ack, &mut buf);
        assert_eq!(decode_ack(&buf[..n]), Some(ack));
        assert_eq!(decode_ack(&buf[..5]), None);
        assert_eq!(decode_segment(b"X garbage garbage garbage"), None);
    }

    #[test]
    fn unknown_algorithms_and_parameters_are_named() {
        assert!(algorithm("nosuch", &[]).unwrap_err().to_string().contains("--cc"));
        let e = algorithm("reno", &[("nosuch".into(), 1.0)]).unwrap_err().to_string();
        assert!(e.contains("--param nosuch=1"), "{e}");
    }
}
