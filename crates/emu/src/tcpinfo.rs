//! Linux `struct tcp_info` (include/uapi/linux/tcp.h, as of 6.7) read with
//! `getsockopt(TCP_INFO)`: how the testbed samples a real flow's cwnd, ssthresh and RTT;
//! and `TCP_CONGESTION`, how it chooses each flow's algorithm.
//! Fields a kernel does not fill (older kernels return a shorter struct) stay zero.

use std::net::{SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    /// Retransmission timeout, µs.
    pub rto_us: u32,
    pub ato_us: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    /// Segments sent and not yet acknowledged (packets in flight, Linux's view).
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// Slow-start threshold, segments (0x7fffffff: not yet set).
    pub snd_ssthresh: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt_us: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    /// Retransmission timeouts over the connection's life (Linux 6.7+).
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
}

/// Reads the socket's TCP_INFO.
pub fn tcp_info(fd: RawFd) -> std::io::Result<TcpInfo> {
    let mut info = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    // SAFETY: info is a plain repr(C) struct of `len` bytes; the kernel writes at most len.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut TcpInfo as *mut libc::c_void,
            &mut len,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(info)
}

/// A TCP connection to `addr` whose congestion control is `cc` from its first packet.
///
/// The algorithm is set on the socket before `connect`, never after. A socket that
/// completes its handshake under the namespace's default algorithm runs that algorithm's
/// `init` first (`tcp_init_transfer` -> `tcp_init_congestion_control`), and a later
/// `TCP_CONGESTION` does not undo what it did to the socket. With BBR as the default
/// (a new network namespace inherits the host's), `bbr_init` sets `sk_pacing_status` to
/// `SK_PACING_NEEDED` (net/ipv4/tcp_bbr.c), so the flow would go on being paced by TCP
/// itself (`tcp_needs_internal_pacing`, net/ipv4/tcp_output.c) and CUBIC's HyStart would
/// use the ACK-train threshold meant for paced flows (`hystart_update`,
/// net/ipv4/tcp_cubic.c): a different sender from the unpaced one the simulator models.
pub fn connect_with_congestion(addr: SocketAddrV4, cc: &str) -> std::io::Result<TcpStream> {
    // SAFETY: socket(2) has no preconditions; a non-negative result is a new descriptor
    // that nothing else owns, so OwnedFd may close it.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    set_congestion(socket.as_raw_fd(), cc)
        .map_err(|e| std::io::Error::new(e.kind(), format!("TCP_CONGESTION {cc}: {e}")))?;
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr.ip().octets()) },
        sin_zero: [0; 8],
    };
    // SAFETY: `sin` is a valid sockaddr_in and the length given is its size.
    let r = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            &sin as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(e.kind(), format!("connect to {addr}: {e}")));
    }
    Ok(TcpStream::from(socket))
}

/// Sets a socket's congestion control (Linux TCP_CONGESTION).
fn set_congestion(fd: RawFd, name: &str) -> std::io::Result<()> {
    // SAFETY: name bytes and length are valid for the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr() as *const libc::c_void,
            name.len() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The congestion control a socket runs (Linux TCP_CONGESTION).
pub fn congestion(fd: RawFd) -> std::io::Result<String> {
    let mut name = [0u8; 16];
    let mut len = name.len() as libc::socklen_t;
    // SAFETY: `name` and `len` describe a writable buffer of that many bytes.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_mut_ptr() as *mut libc::c_void,
            &mut len,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let name = &name[..(len as usize).min(name.len())];
    Ok(String::from_utf8_lossy(name).trim_end_matches('\0').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_kernel_header() {
        // Offsets from include/uapi/linux/tcp.h.
        assert_eq!(std::mem::offset_of!(TcpInfo, rtt_us), 68);
        assert_eq!(std::mem::offset_of!(TcpInfo, snd_cwnd), 80);
        assert_eq!(std::mem::offset_of!(TcpInfo, total_retrans), 100);
        assert_eq!(std::mem::offset_of!(TcpInfo, bytes_acked), 120);
        assert_eq!(std::mem::offset_of!(TcpInfo, total_rto), 240);
        assert_eq!(std::mem::size_of::<TcpInfo>(), 248);
    }

    #[test]
    fn the_algorithm_is_set_before_the_handshake_and_a_bad_name_is_named() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let std::net::SocketAddr::V4(addr) = l.local_addr().unwrap() else {
            unreachable!("bound to an IPv4 address")
        };
        let c = connect_with_congestion(addr, "reno").unwrap();
        assert_eq!(congestion(c.as_raw_fd()).unwrap(), "reno");
        let e = connect_with_congestion(addr, "no-such-cc").unwrap_err().to_string();
        assert!(e.starts_with("TCP_CONGESTION no-such-cc: "), "{e}");
    }

    #[test]
    fn reads_a_loopback_connection() {
        use std::io::{Read, Write};
        use std::os::fd::AsRawFd;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        c.write_all(&[1u8; 10_000]).unwrap();
        let mut buf = [0u8; 10_000];
        s.read_exact(&mut buf).unwrap();
        let i = tcp_info(c.as_raw_fd()).unwrap();
        assert_eq!(i.state, 1, "ESTABLISHED");
        assert!(i.snd_cwnd >= 2 && i.rtt_us > 0, "{i:?}");
        assert!(i.bytes_sent >= 10_000, "{i:?}");
    }
}
