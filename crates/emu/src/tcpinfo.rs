//! Linux `struct tcp_info` (include/uapi/linux/tcp.h, as of 6.7) read with
//! `getsockopt(TCP_INFO)`: how the testbed samples a real flow's cwnd, ssthresh and RTT.
//! How it chooses each flow's algorithm is [`cclab_kernel::socket`].
//! Fields a kernel does not fill (older kernels return a shorter struct) stay zero.

use std::os::fd::RawFd;

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
