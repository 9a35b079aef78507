//! An emulated path run in-process, for the benchmarks and the integration tests: the
//! namespaces, the forwarder on its own thread, and helpers to run code in side A or B.
//! Dropping it stops the forwarder and removes the namespaces.

use crate::forwarder::monotonic_ns;
use crate::{DirectionConfig, EmuError, EmuNet, Forwarder, StopHandle};
use cclab_units::{Duration, Time};
use std::os::fd::RawFd;
use std::path::Path;
use std::thread::JoinHandle;

/// Which namespace a piece of code runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

pub struct Harness {
    // Field order is drop order: the forwarder thread is joined before the namespaces go.
    thread: Option<JoinHandle<(Forwarder, Result<(), EmuError>)>>,
    stop: StopHandle,
    gauges: crate::forwarder::Gauges,
    origin_ns: u64,
    net: EmuNet,
}

impl Harness {
    /// Creates the path and starts forwarding.
    pub fn start(
        up: &DirectionConfig,
        down: &DirectionConfig,
        seed: u64,
    ) -> Result<Harness, EmuError> {
        Self::start_with(up, down, seed, false)
    }

    /// [`start`](Self::start), optionally with the forwarder under SCHED_FIFO.
    pub fn start_with(
        up: &DirectionConfig,
        down: &DirectionConfig,
        seed: u64,
        realtime: bool,
    ) -> Result<Harness, EmuError> {
        Self::start_after(up, down, seed, realtime, None, |_| Ok(()), Duration::ZERO)
    }

    /// [`start_with`](Self::start_with), running `setup` on the namespaces before the
    /// emulator's clock starts: what it takes (the testbed's routes, a few ms of `ip`)
    /// then does not shift a trace's time 0 ahead of the run's. The clock reads zero
    /// `lead` after forwarding starts, time for the caller to make its hosts' threads and
    /// sockets, so that a flow told to start at 0 can start at the trace's time 0. With
    /// `packet_log`, every packet event goes to that file ([`crate::packet_log`]).
    pub fn start_after(
        up: &DirectionConfig,
        down: &DirectionConfig,
        seed: u64,
        realtime: bool,
        packet_log: Option<&Path>,
        setup: impl FnOnce(&EmuNet) -> Result<(), EmuError>,
        lead: Duration,
    ) -> Result<Harness, EmuError> {
        let (net, tun_a, tun_b) = EmuNet::create()?;
        setup(&net)?;
        let mut fwd =
            Forwarder::new(tun_a, tun_b, up, down, seed, Duration::from_millis(10), None)?;
        if let Some(path) = packet_log {
            fwd.set_packet_log(path)?;
        }
        fwd.set_realtime(realtime);
        let origin_ns = monotonic_ns() + lead.as_nanos();
        fwd.set_origin(origin_ns);
        let stop = fwd.stop_handle();
        let gauges = fwd.gauges();
        let thread = std::thread::Builder::new()
            .name("cclab-emu-forwarder".into())
            .spawn(move || {
                let r = fwd.run(None, None);
                (fwd, r)
            })
            .map_err(|e| EmuError::Setup(format!("cannot start the forwarder thread: {e}")))?;
        Ok(Harness { thread: Some(thread), stop, gauges, origin_ns, net })
    }

    /// Live counters of [uplink, downlink].
    pub fn gauges(&self) -> &[crate::forwarder::DirectionGauge; 2] {
        &self.gauges
    }

    pub fn net(&self) -> &EmuNet {
        &self.net
    }

    /// When the emulator's clock reads zero, in CLOCK_MONOTONIC ns.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns
    }

    /// The emulator's clock: time since its zero (`lead` after forwarding started, see
    /// [`start_after`](Self::start_after)); zero before that.
    pub fn now(&self) -> Time {
        Time(monotonic_ns().saturating_sub(self.origin_ns))
    }

    fn ns_fd(&self, side: Side) -> RawFd {
        match side {
            Side::A => self.net.a.fd(),
            Side::B => self.net.b.fd(),
        }
    }

    /// Runs `f` on a new thread inside `side`'s namespace.
    pub fn spawn<T: Send + 'static>(
        &self,
        side: Side,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> JoinHandle<T> {
        let fd = self.ns_fd(side);
        std::thread::spawn(move || {
            crate::netns::setns(fd).expect("entering the emulator's namespace");
            f()
        })
    }

    /// Stops forwarding and returns the forwarder with its statistics.
    pub fn finish(mut self) -> Result<Forwarder, EmuError> {
        self.stop.stop();
        let (fwd, r) = self
            .thread
            .take()
            .expect("joined once")
            .join()
            .map_err(|_| EmuError::Setup("the forwarder thread panicked".into()))?;
        r.map(|_| fwd)
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
