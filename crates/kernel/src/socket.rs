//! A socket's congestion control (Linux `TCP_CONGESTION`): connecting with an algorithm
//! chosen before the handshake, and reading back the one a socket runs. The testbed's
//! flows and the live tests connect this way.

use std::net::{SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

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
    UnconnectedSocket::with_congestion(cc)?.connect(addr)
}

/// A TCP socket that runs `cc` and is not connected yet: [`connect_with_congestion`] in
/// two steps, so that a caller can make the socket ahead of time and spend only the
/// `connect` itself at the moment its connection is meant to start.
pub struct UnconnectedSocket(OwnedFd);

impl UnconnectedSocket {
    /// A new TCP socket with its congestion control set to `cc`.
    pub fn with_congestion(cc: &str) -> std::io::Result<UnconnectedSocket> {
        // SAFETY: socket(2) has no preconditions.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a non-negative result of socket(2) is a new descriptor that nothing else
        // owns, so OwnedFd may close it.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        set_congestion(socket.as_raw_fd(), cc)
            .map_err(|e| std::io::Error::new(e.kind(), format!("TCP_CONGESTION {cc}: {e}")))?;
        Ok(UnconnectedSocket(socket))
    }

    /// Connects to `addr` (blocking until the handshake completes or fails).
    pub fn connect(self, addr: SocketAddrV4) -> std::io::Result<TcpStream> {
        self.connect_unless(addr, &AtomicBool::new(false))
    }

    /// Connects to `addr`, giving up when `stop` is set (looked at every 20 ms) with an
    /// error of kind `Interrupted`. A blocking `connect` whose SYNs get no answer (a link
    /// that loses them, a run stopped meanwhile) waits out the kernel's SYN retries
    /// (`tcp_syn_retries`, 6: about two minutes) and cannot be interrupted. The SYN
    /// leaves at the call as with a blocking one; only the wait is done here.
    pub fn connect_unless(
        self,
        addr: SocketAddrV4,
        stop: &AtomicBool,
    ) -> std::io::Result<TcpStream> {
        let stream = TcpStream::from(self.0);
        let context =
            |e: std::io::Error| std::io::Error::new(e.kind(), format!("connect to {addr}: {e}"));
        stream.set_nonblocking(true).map_err(context)?;
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: addr.port().to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr.ip().octets()) },
            sin_zero: [0; 8],
        };
        // SAFETY: `sin` is a valid sockaddr_in and the length given is its size.
        let r = unsafe {
            libc::connect(
                stream.as_raw_fd(),
                &sin as *const libc::sockaddr_in as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(context(e));
            }
            wait_writable(&stream, stop).map_err(context)?;
            // The handshake's outcome (SO_ERROR).
            if let Some(e) = stream.take_error().map_err(context)? {
                return Err(context(e));
            }
        }
        stream.set_nonblocking(false).map_err(context)?;
        Ok(stream)
    }
}

/// Waits until a non-blocking connect on `stream` has finished, either way, or for `stop`.
fn wait_writable(stream: &TcpStream, stop: &AtomicBool) -> std::io::Result<()> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "stopped before the handshake completed",
            ));
        }
        let mut p = libc::pollfd { fd: stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
        // SAFETY: `p` is one valid pollfd.
        match unsafe { libc::poll(&mut p, 1, 20) } {
            0 => continue,
            n if n < 0 => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            _ => return Ok(()),
        }
    }
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

/// How many TCP sockets of this network namespace run the congestion control `cc`, as
/// `ss -tin` lists them (the algorithm's name leads each socket's info line); `None`
/// when `ss` cannot be run.
pub fn sockets_running(cc: &str) -> Option<usize> {
    let out = std::process::Command::new("ss").args(["-Htin", "state", "all"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(text.lines().filter(|l| l.split_whitespace().next() == Some(cc)).count())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
