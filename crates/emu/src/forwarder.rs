//! The wall-clock forwarding loop: reads packets from the two TUN devices, passes each
//! through its direction's [`Link`] and delay stage ([`Delays`]), and writes it to the
//! other side when due.
//!
//! Timing: one thread, CLOCK_MONOTONIC. Between events the thread sleeps in `epoll_wait`
//! on the TUN devices and a `timerfd` armed (absolute time, hrtimer precision) a little
//! before the next scheduled release; the last [`SPIN`] it polls, so a packet leaves
//! within microseconds of its scheduled time on an idle machine. Departures are computed
//! from scheduled, not actual, times, so lateness never accumulates. Every delivery's
//! lateness is recorded.
//!
//! Memory: packets live in a per-direction pool of fixed 2 KiB slots that grows in
//! chunks and is reused; the queues hold slot indices. Nothing is allocated per packet.

use crate::keep_awake::KeepAwake;
use crate::model::{flow_key, ipv4_destination, ipv4_source, Delays, EmuLink, Link, Pkt, Refusal};
use crate::packet_log::{Event, PacketLog, TcpHeader};
use crate::stats::{DirectionStats, Lateness};
use crate::{DirectionConfig, EmuError};
use cclab_units::{Duration, Time};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

/// How long before a scheduled event the loop stops sleeping and polls.
pub const SPIN: Duration = Duration::from_micros(50);
/// Largest packet a slot holds (TUN MTU is 1500; headroom for a larger MTU).
const SLOT: usize = 2048;
/// Packets read from one device before the loop services departures again.
const READ_BATCH: usize = 64;

/// The signal the SIGINT/SIGTERM/SIGHUP handler caught (see [`install_signal_handlers`]);
/// 0 while none has come.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);
/// The eventfd the signal handler writes to wake the loop (-1: none).
static SIGNAL_WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::SeqCst);
    let fd = SIGNAL_WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: write is async-signal-safe; the buffer is a valid u64.
        unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP set a flag ([`signalled`]) instead of killing the
/// process, so that a run interrupted at any point, setup included, still ends normally
/// and every Drop guard runs. Installed before anything is created.
pub fn install_signal_handlers() {
    SIGNALLED.store(0, Ordering::SeqCst);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a plain handler; no SA_RESTART so that
        // epoll_wait returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Makes a signal also wake the loop of `fwd` (after [`install_signal_handlers`]).
pub fn wake_on_signal(fwd: &Forwarder) {
    SIGNAL_WAKE_FD.store(fwd.wake.as_raw_fd(), Ordering::SeqCst);
}

/// Restores the default dispositions of SIGINT, SIGTERM and SIGHUP (and forgets the
/// wake descriptor, which is about to be closed).
pub fn uninstall_signal_handlers() {
    SIGNAL_WAKE_FD.store(-1, Ordering::SeqCst);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: restoring the default disposition.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
}

/// [`install_signal_handlers`] until the returned guard is dropped, however the run ends.
pub fn signal_handlers_until_dropped() -> SignalGuard {
    install_signal_handlers();
    SignalGuard
}

/// Restores default signal handling when dropped.
pub struct SignalGuard;

impl Drop for SignalGuard {
    fn drop(&mut self) {
        uninstall_signal_handlers();
    }
}

/// A step's result, or the interruption when a signal stopped it (its own error, if any,
/// is what the stop caused); its namespaces are removed on the way out.
pub fn unless_signalled<T>(step: Result<T, crate::EmuError>) -> Result<T, crate::EmuError> {
    if signalled() {
        Err(crate::EmuError::Setup(
            "interrupted by a signal: stopped, and the run's namespaces were removed".into(),
        ))
    } else {
        step
    }
}

/// Whether a signal asked the emulator to stop.
pub fn signalled() -> bool {
    SIGNALLED.load(Ordering::SeqCst) != 0
}

/// The exit status of a process that a signal stopped, as a shell reports one killed by
/// it (128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), so
/// that every command tells an interrupted run from a failed one alike; `None` when no
/// signal came.
pub fn signal_exit_status() -> Option<u8> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some((128 + sig).clamp(0, 255) as u8),
    }
}

/// Fixed-size packet buffers, reused through a free list.
struct Pool {
    bytes: Vec<u8>,
    free: Vec<u32>,
    slots: u32,
}

impl Pool {
    fn new(slots: u32) -> Pool {
        let mut p = Pool { bytes: Vec::new(), free: Vec::new(), slots: 0 };
        p.grow(slots);
        p
    }
    fn grow(&mut self, more: u32) {
        let old = self.slots;
        self.slots += more;
        self.bytes.resize(self.slots as usize * SLOT, 0);
        self.free.extend((old..self.slots).rev());
    }
    fn alloc(&mut self) -> u32 {
        if self.free.is_empty() {
            self.grow(self.slots.max(256));
        }
        self.free.pop().expect("pool grown above")
    }
    fn release(&mut self, slot: u32) {
        self.free.push(slot);
    }
    fn buf(&mut self, slot: u32) -> &mut [u8] {
        let at = slot as usize * SLOT;
        &mut self.bytes[at..at + SLOT]
    }
}

/// One direction: its link model, delay line, buffers and counters.
pub struct Direction {
    link: EmuLink,
    delay: Delays,
    pool: Pool,
    pub stats: DirectionStats,
}

impl Direction {
    /// `index`: [`UPLINK`] or [`DOWNLINK`] (each direction draws its own random streams).
    pub fn new(cfg: &DirectionConfig, seed: u64, index: usize) -> Result<Direction, EmuError> {
        let link = EmuLink::new(
            cfg.rate.as_ref(),
            cfg.buffer,
            &cfg.qdisc,
            cfg.loss.clone(),
            seed,
            index as u64,
        )
        .map_err(EmuError::Config)?;
        Ok(Direction {
            link,
            delay: Delays::new(cfg.delay, &cfg.per_source_delay),
            pool: Pool::new(1024),
            stats: DirectionStats::default(),
        })
    }
    /// The next time something in this direction is due.
    fn next_event(&self) -> Option<Time> {
        match (self.link.next_departure(), self.delay.next_release()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Offers `pkt`, read at `now`, to the link as the link model has it at that instant:
    /// the packets it finished by `now` leave first. Reading a batch takes microseconds,
    /// and a departure due meanwhile would otherwise still hold its place in a full queue
    /// and drop an arrival the model admits (mostly the first of a pair, so that both of
    /// the pair were dropped: 2 of 56 drops in one run of the four mixed RTTs).
    fn offer(
        &mut self,
        d: usize,
        pkt: Pkt,
        now: Time,
        log: &mut Option<PacketLog>,
    ) -> Result<(), (Pkt, Refusal)> {
        self.depart_due(d, now, log);
        self.link.enqueue(pkt, now)
    }

    /// Moves every packet the link has finished by `now` onto the delay line, logging
    /// each departure where a packet log is kept.
    fn depart_due(&mut self, d: usize, now: Time, log: &mut Option<PacketLog>) {
        while let Some((pkt, departed)) = self.link.dequeue(now) {
            self.stats.departed_packets += 1;
            self.stats.departed_bytes += u64::from(pkt.len);
            if let Some(log) = log {
                let address = receiver_address(d, self.pool.buf(pkt.slot), &pkt);
                log.event(Event::Depart { due: departed }, d, now, address);
            }
            self.delay.push(pkt, departed);
        }
    }

    /// Packets waiting in the queue, bytes waiting, and packets on the delay line.
    pub fn backlog(&self) -> (u64, u64, u64) {
        let (p, b) = self.link.backlog();
        (p, b, self.delay.len() as u64)
    }
}

/// Which end a direction reads from: uplink reads side A and writes side B.
pub const UPLINK: usize = 0;
pub const DOWNLINK: usize = 1;

/// Stops a running [`Forwarder`] from another thread.
#[derive(Clone)]
pub struct StopHandle {
    flag: Arc<AtomicBool>,
    wake: Arc<OwnedFd>,
}

impl StopHandle {
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: writing 8 bytes to an eventfd we own.
        unsafe { libc::write(self.wake.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
    }
}

/// A live view of one direction, published by the loop for other threads (the testbed's
/// sampler): relaxed atomics written once per loop iteration.
#[derive(Default, Debug)]
pub struct DirectionGauge {
    /// Packets and bytes in the link (waiting and in service).
    pub queue_packets: AtomicU64,
    pub queue_bytes: AtomicU64,
    /// Queue drops plus random losses so far.
    pub drops: AtomicU64,
    /// Packets and bytes that left the link so far ([`DirectionStats::departed_packets`]).
    pub departed_packets: AtomicU64,
    pub departed_bytes: AtomicU64,
    pub delivered_packets: AtomicU64,
    pub delivered_bytes: AtomicU64,
}

/// [`DirectionGauge`]s of [uplink, downlink].
pub type Gauges = Arc<[DirectionGauge; 2]>;

/// The forwarding loop and the state it drives.
pub struct Forwarder {
    /// TUN devices: [side A, side B].
    tun: [OwnedFd; 2],
    /// [uplink (A to B), downlink (B to A)].
    pub dirs: [Direction; 2],
    epoll: OwnedFd,
    timer: OwnedFd,
    wake: Arc<OwnedFd>,
    stop: Arc<AtomicBool>,
    /// CLOCK_MONOTONIC at time zero, ns.
    origin_ns: u64,
    sample_interval: Duration,
    logs: Option<[BufWriter<File>; 2]>,
    /// Every packet event, when asked for ([`set_packet_log`](Self::set_packet_log)).
    packet_log: Option<PacketLog>,
    /// Time the loop ran.
    elapsed: Duration,
    /// Run the loop's thread under SCHED_FIFO (see [`set_realtime`](Self::set_realtime)).
    realtime: bool,
    realtime_refused: Option<String>,
    /// The processor the last real-time run kept awake ([`KeepAwake`]), if it did.
    cpu_kept_awake: Option<usize>,
    cpu_time: Duration,
    /// How long after its timer's expiry the loop woke from each sleep on it: what a
    /// packet that reaches a sleeping emulator waits before it is read, on the same
    /// wake-up path (a timer interrupt instead of the TUN device's). Microseconds on an
    /// idle machine; hundreds on a virtual machine whose host is slow to run a halted
    /// vCPU again (docs/fidelity.md, "What the emulator adds, and how firm the verdicts
    /// are").
    wakes: Lateness,
    gauges: Gauges,
}

/// The address of the receiver a packet of direction `d` belongs to (0: up, data to the
/// receiver; 1: down, ACKs from it), read from its IPv4 header in `buf`.
fn receiver_address(d: usize, buf: &[u8], pkt: &Pkt) -> u32 {
    if d == 0 {
        ipv4_destination(&buf[..pkt.len as usize])
    } else {
        pkt.src
    }
}

fn cvt(r: libc::c_int, what: &str) -> Result<libc::c_int, EmuError> {
    if r < 0 {
        Err(EmuError::Setup(format!("{what}: {}", std::io::Error::last_os_error())))
    } else {
        Ok(r)
    }
}

fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: called only on descriptors just created by this module.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Whether this process may run a thread under SCHED_FIFO (tried on a scratch thread).
pub fn realtime_permitted() -> Result<(), String> {
    std::thread::spawn(|| {
        let param = libc::sched_param { sched_priority: 10 };
        // SAFETY: sets the scratch thread's own policy.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        Ok(())
    })
    .join()
    .unwrap_or_else(|_| Err("the probe thread panicked".into()))
}

fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Forwarder {
    /// `tun_a`/`tun_b`: non-blocking TUN descriptors of sides A and B. `log_dir`: where the
    /// per-direction CSV logs (`uplink.csv`, `downlink.csv`) go, if anywhere.
    pub fn new(
        tun_a: OwnedFd,
        tun_b: OwnedFd,
        uplink: &DirectionConfig,
        downlink: &DirectionConfig,
        seed: u64,
        sample_interval: Duration,
        log_dir: Option<&Path>,
    ) -> Result<Forwarder, EmuError> {
        let dirs =
            [Direction::new(uplink, seed, UPLINK)?, Direction::new(downlink, seed, DOWNLINK)?];
        // SAFETY: plain syscalls creating descriptors; results checked.
        let epoll =
            owned(cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) }, "epoll_create1")?);
        let timer = owned(cvt(
            unsafe {
                libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
            },
            "timerfd_create",
        )?);
        let wake = owned(cvt(
            unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) },
            "eventfd",
        )?);
        let logs = match log_dir {
            None => None,
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| EmuError::Io(format!("cannot create {}: {e}", dir.display())))?;
                let open = |name: &str| -> Result<BufWriter<File>, EmuError> {
                    let p = dir.join(name);
                    let mut w = BufWriter::new(File::create(&p).map_err(|e| {
                        EmuError::Io(format!("cannot create {}: {e}", p.display()))
                    })?);
                    writeln!(w, "time_s,packets,bytes,drops,random_losses,delivered_packets,delivered_bytes")
                        .map_err(|e| EmuError::Io(format!("{}: {e}", p.display())))?;
                    Ok(w)
                };
                Some([open("uplink.csv")?, open("downlink.csv")?])
            }
        };
        let fwd = Forwarder {
            tun: [tun_a, tun_b],
            dirs,
            epoll,
            timer,
            wake: Arc::new(wake),
            stop: Arc::new(AtomicBool::new(false)),
            origin_ns: 0,
            sample_interval,
            logs,
            packet_log: None,
            elapsed: Duration::ZERO,
            realtime: false,
            realtime_refused: None,
            cpu_kept_awake: None,
            cpu_time: Duration::ZERO,
            wakes: Lateness::default(),
            gauges: Arc::new(Default::default()),
        };
        for fd in [
            fwd.tun[0].as_raw_fd(),
            fwd.tun[1].as_raw_fd(),
            fwd.timer.as_raw_fd(),
            fwd.wake.as_raw_fd(),
        ] {
            fwd.watch(fd)?;
        }
        Ok(fwd)
    }

    fn watch(&self, fd: RawFd) -> Result<(), EmuError> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
        // SAFETY: valid epoll and event.
        cvt(
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) },
            "epoll_ctl",
        )?;
        Ok(())
    }

    /// The live per-direction counters this forwarder publishes while it runs.
    pub fn gauges(&self) -> Gauges {
        self.gauges.clone()
    }

    fn publish(&self) {
        for (g, d) in self.gauges.iter().zip(self.dirs.iter()) {
            let (p, b) = d.link.backlog();
            let s = &d.stats;
            g.queue_packets.store(p, Ordering::Relaxed);
            g.queue_bytes.store(b, Ordering::Relaxed);
            g.drops.store(s.queue_drops + s.random_losses, Ordering::Relaxed);
            g.departed_packets.store(s.departed_packets, Ordering::Relaxed);
            g.departed_bytes.store(s.departed_bytes, Ordering::Relaxed);
            g.delivered_packets.store(s.delivered_packets, Ordering::Relaxed);
            g.delivered_bytes.store(s.delivered_bytes, Ordering::Relaxed);
        }
    }

    pub fn stop_handle(&self) -> StopHandle {
        StopHandle { flag: self.stop.clone(), wake: self.wake.clone() }
    }

    /// How long the last [`run`](Self::run) lasted.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Asks to run the loop under the SCHED_FIFO real-time policy (priority 10), so that
    /// on a busy machine the woken forwarder preempts ordinary threads instead of waiting
    /// for its turn (milliseconds under CFS). The loop sleeps between events, and the
    /// kernel's RT throttling bounds it in any case. Where the policy is refused (no
    /// real-time budget, e.g. in some containers) the loop runs as an ordinary thread;
    /// [`realtime_refused`](Self::realtime_refused) says so after the run. A real-time
    /// loop also stays on its processor and keeps it from idling while it runs
    /// ([`KeepAwake`], unless [`crate::keep_awake::set_enabled`] turned that off).
    pub fn set_realtime(&mut self, on: bool) {
        self.realtime = on;
    }

    /// The processor the last run kept awake ([`KeepAwake`]), if it did.
    pub fn cpu_kept_awake(&self) -> Option<usize> {
        self.cpu_kept_awake
    }

    /// Logs every packet event of the next [`run`](Self::run) to `path`
    /// ([`crate::packet_log`]), replacing an earlier log there (a file of any other kind
    /// is refused).
    pub fn set_packet_log(&mut self, path: &Path) -> Result<(), EmuError> {
        self.packet_log = Some(PacketLog::create(path)?);
        Ok(())
    }

    /// Why SCHED_FIFO was asked for and refused in the last run, if it was.
    pub fn realtime_refused(&self) -> Option<&str> {
        self.realtime_refused.as_deref()
    }

    /// How late the loop woke on its timer, over every sleep so far (see the field).
    pub fn wakes(&self) -> &Lateness {
        &self.wakes
    }

    /// CPU time the loop's thread used in the last run (for cost-per-packet figures).
    pub fn cpu_time(&self) -> Duration {
        self.cpu_time
    }

    /// Fixes time zero of the next [`run`](Self::run) (CLOCK_MONOTONIC ns), so that a
    /// caller can relate its own clock readings to the emulator's schedule.
    pub fn set_origin(&mut self, monotonic_ns: u64) {
        self.origin_ns = monotonic_ns;
    }

    fn now(&self) -> Time {
        Time(monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// Forwards until stopped (a [`StopHandle`], a signal after
    /// [`install_signal_handlers`]), until `limit` has passed, or until `exit_fd` (e.g. a
    /// pidfd of a wrapped command) becomes readable.
    pub fn run(&mut self, limit: Option<Duration>, exit_fd: Option<RawFd>) -> Result<(), EmuError> {
        if let Some(fd) = exit_fd {
            self.watch(fd)?;
        }
        // Ask for precise timer expiry (the default slack is 50 µs).
        // SAFETY: prctl with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        self.realtime_refused = None;
        // The caller's policy, restored when the loop ends (the loop may run on the
        // caller's own thread, e.g. the `cclab` main thread).
        // SAFETY: querying this thread's policy and parameters.
        let prior_policy = unsafe { libc::sched_getscheduler(0) };
        let mut prior_param = libc::sched_param { sched_priority: 0 };
        unsafe { libc::sched_getparam(0, &mut prior_param) };
        if self.realtime {
            let param = libc::sched_param { sched_priority: 10 };
            // SAFETY: sets this thread's policy; failure is kept for the caller.
            if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
                self.realtime_refused = Some(std::io::Error::last_os_error().to_string());
            }
        }
        let awake = (self.realtime && crate::keep_awake::enabled()).then(KeepAwake::here);
        self.cpu_kept_awake = awake.as_ref().and_then(KeepAwake::cpu);
        let cpu_start = thread_cpu_ns();
        if self.origin_ns == 0 {
            self.origin_ns = monotonic_ns();
        }
        let until = limit.map(|d| Time::ZERO + d);
        let mut next_sample = Time::ZERO;
        let mut events: [libc::epoll_event; 8] = [libc::epoll_event { events: 0, u64: 0 }; 8];
        let result = loop {
            if self.stop.load(Ordering::SeqCst) || signalled() {
                break Ok(());
            }
            let now = self.now();
            if until.is_some_and(|u| now >= u) {
                break Ok(());
            }
            self.release_due();
            if let Err(e) = self.read_side(0).and_then(|_| self.read_side(1)) {
                break Err(e);
            }
            self.release_due();
            self.publish();
            let now = self.now();
            if now >= next_sample {
                if let Err(e) = self.log(now) {
                    break Err(e);
                }
                next_sample += self.sample_interval;
                if next_sample <= now {
                    next_sample = now + self.sample_interval;
                }
            }
            let mut next = next_sample;
            for d in &self.dirs {
                if let Some(t) = d.next_event() {
                    next = next.min(t);
                }
            }
            if let Some(u) = until {
                next = next.min(u);
            }
            if next <= now + SPIN {
                continue; // poll: the next event is too close to sleep for
            }
            let alarm = Time(next.as_nanos() - SPIN.as_nanos());
            self.arm_timer(alarm);
            // SAFETY: events is a valid buffer of 8 entries.
            let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), 8, -1) };
            if n < 0 {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                break Err(EmuError::Setup(format!("epoll_wait: {err}")));
            }
            let mut exited = false;
            let woke = self.now();
            for ev in &events[..n as usize] {
                let fd = ev.u64 as RawFd;
                if fd == self.timer.as_raw_fd() {
                    self.wakes.record(woke.saturating_since(alarm));
                }
                if fd == self.timer.as_raw_fd() || fd == self.wake.as_raw_fd() {
                    drain_counter(fd);
                } else if Some(fd) == exit_fd {
                    exited = true;
                }
            }
            if exited {
                break Ok(());
            }
        };
        if let Some(fd) = exit_fd {
            // Stop watching it, so a later `run` with the same fd can watch it again.
            // SAFETY: valid epoll fd; a null event is allowed for EPOLL_CTL_DEL.
            unsafe {
                libc::epoll_ctl(
                    self.epoll.as_raw_fd(),
                    libc::EPOLL_CTL_DEL,
                    fd,
                    std::ptr::null_mut(),
                )
            };
        }
        // A run ended by a signal is not complete: its log is dropped, which leaves an
        // earlier log in place (`PacketLog`'s staging).
        let result = match (result, self.packet_log.take()) {
            (Ok(()), Some(log)) if !signalled() => log.finish(),
            (result, _) => result,
        };
        self.elapsed = self.now() - Time::ZERO;
        self.cpu_time = Duration(thread_cpu_ns().saturating_sub(cpu_start));
        if self.realtime && self.realtime_refused.is_none() && prior_policy >= 0 {
            // SAFETY: restoring this thread's earlier policy.
            unsafe { libc::sched_setscheduler(0, prior_policy, &prior_param) };
        }
        let _ = self.log(self.now());
        if let Some(logs) = &mut self.logs {
            for w in logs.iter_mut() {
                w.flush().map_err(|e| EmuError::Io(format!("log: {e}")))?;
            }
        }
        result
    }

    fn arm_timer(&self, at: Time) {
        let abs = self.origin_ns + at.as_nanos();
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (abs / 1_000_000_000) as _,
                tv_nsec: (abs % 1_000_000_000) as _,
            },
        };
        // SAFETY: valid timerfd and itimerspec.
        unsafe {
            libc::timerfd_settime(
                self.timer.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
    }

    /// Reads what side `side` has sent (up to a batch) into the direction leaving it.
    fn read_side(&mut self, side: usize) -> Result<(), EmuError> {
        let fd = self.tun[side].as_raw_fd();
        let dir = &mut self.dirs[side];
        for _ in 0..READ_BATCH {
            let slot = dir.pool.alloc();
            let buf = dir.pool.buf(slot);
            // SAFETY: buf is a valid writable slice of SLOT bytes.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, SLOT) };
            if n <= 0 {
                dir.pool.release(slot);
                let err = std::io::Error::last_os_error();
                return match err.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(()),
                    _ if n == 0 => Ok(()),
                    _ => Err(EmuError::Setup(format!("read from TUN: {err}"))),
                };
            }
            let now = Time(monotonic_ns().saturating_sub(self.origin_ns));
            if dir.stats.arrived_packets == 0 {
                dir.stats.first_arrival = Some(now);
            }
            dir.stats.arrived_packets += 1;
            dir.stats.arrived_bytes += n as u64;
            let head = &buf[..n as usize];
            let destination = ipv4_destination(head);
            let pkt = Pkt {
                slot,
                len: n as u32,
                flow: flow_key(head),
                src: ipv4_source(head),
                arrived: now,
            };
            // The flow's receiver: where its data goes, and where its ACKs come from.
            let receiver = if side == 0 { destination } else { pkt.src };
            // Parsed before `offer`, which takes `dir` whole: `head` lies in its pool.
            let tcp = if self.packet_log.is_some() { TcpHeader::parse(head) } else { None };
            let queued = dir.offer(side, pkt, now, &mut self.packet_log);
            if let Some(log) = &mut self.packet_log {
                let queue = dir.link.backlog().0;
                let event = if queued.is_ok() {
                    Event::Arrive { queue, tcp }
                } else {
                    Event::Drop { queue, tcp }
                };
                log.event(event, side, now, receiver);
            }
            if let Err((pkt, why)) = queued {
                match why {
                    Refusal::QueueDrop => dir.stats.queue_drops += 1,
                    Refusal::RandomLoss => dir.stats.random_losses += 1,
                }
                dir.stats.count_drop(destination);
                dir.pool.release(pkt.slot);
            }
        }
        Ok(())
    }

    /// Moves departed packets onto the delay lines and writes released ones out.
    fn release_due(&mut self) {
        for d in 0..2 {
            let out = self.tun[1 - d].as_raw_fd();
            let origin = self.origin_ns;
            let dir = &mut self.dirs[d];
            loop {
                let now = Time(monotonic_ns().saturating_sub(origin));
                dir.depart_due(d, now, &mut self.packet_log);
                let Some((pkt, release)) = dir.delay.pop_due(now) else {
                    break;
                };
                // Lateness is taken when the packet is handed to the kernel (the write
                // itself runs the receiving side's stack, which is not the link's delay).
                let late = now.saturating_since(release);
                let buf = dir.pool.buf(pkt.slot);
                if let Some(log) = &mut self.packet_log {
                    let address = receiver_address(d, buf, &pkt);
                    log.event(Event::Release { due: release }, d, now, address);
                }
                // SAFETY: buf holds pkt.len valid bytes.
                let n = unsafe {
                    libc::write(out, buf.as_ptr() as *const libc::c_void, pkt.len as usize)
                };
                if n == pkt.len as isize {
                    dir.stats.delivered_packets += 1;
                    dir.stats.delivered_bytes += pkt.len as u64;
                    dir.stats.lateness.record(late);
                } else {
                    dir.stats.write_errors += 1;
                }
                dir.pool.release(pkt.slot);
            }
        }
    }

    fn log(&mut self, now: Time) -> Result<(), EmuError> {
        let Some(logs) = &mut self.logs else {
            return Ok(());
        };
        for (w, d) in logs.iter_mut().zip(self.dirs.iter()) {
            let (p, b) = d.link.backlog();
            let s = &d.stats;
            writeln!(
                w,
                "{:.3},{p},{b},{},{},{},{}",
                now.as_secs_f64(),
                s.queue_drops,
                s.random_losses,
                s.delivered_packets,
                s.delivered_bytes
            )
            .map_err(|e| EmuError::Io(format!("log: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        // A signal arriving later must not write to this (soon reused) descriptor.
        let _ = SIGNAL_WAKE_FD.compare_exchange(
            self.wake.as_raw_fd(),
            -1,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }
}

fn drain_counter(fd: RawFd) {
    let mut v: u64 = 0;
    // SAFETY: reading 8 bytes into a u64 from a timerfd/eventfd.
    unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_sim::{Buffer, LinkRate};
    use cclab_units::Rate;

    /// 12 Mbit/s, so a 1500-byte packet takes 1 ms, and room for one packet waiting.
    #[test]
    fn a_packet_read_after_a_departure_was_due_finds_its_place_free() {
        let cfg = DirectionConfig {
            rate: Some(LinkRate::Constant(Rate::from_mbps(12))),
            buffer: Buffer::Packets(1),
            ..Default::default()
        };
        let mut dir = Direction::new(&cfg, 1, UPLINK).unwrap();
        let read_at = |dir: &mut Direction, us: u64| {
            let (slot, at) = (dir.pool.alloc(), Time(us * 1_000));
            let pkt = Pkt { slot, len: 1500, flow: 0, src: 0, arrived: at };
            dir.offer(UPLINK, pkt, at, &mut None).is_ok()
        };
        assert!(read_at(&mut dir, 0), "on the link until 1 ms");
        assert!(read_at(&mut dir, 0), "waits");
        assert!(!read_at(&mut dir, 999), "the queue is full");
        // The loop has not taken the first packet's departure, due at 1 ms: the packet
        // read at 1.005 ms finds the second on the link and the queue free.
        assert!(read_at(&mut dir, 1_005));
        assert_eq!(dir.backlog(), (2, 3000, 1));
    }
}
