//! Keeps the emulator's processor from going idle while a real-time run lasts.
//!
//! An idle processor halts, and waking it costs time that lands on the emulator's
//! schedule: in a virtual machine a halted vCPU leaves the guest (`HLT` exits to the
//! host), and the host wakes it for the emulator's timer or a host's packet only when its
//! own scheduler runs the vCPU's thread again, which on a busy host takes from tens of
//! microseconds to milliseconds (on bare metal, a deep C-state's exit latency does the
//! same on a smaller scale). Measured on the project's 2-core Firecracker guest, whose
//! `cpuidle` driver is `none` (so `/dev/cpu_dma_latency` cannot keep it from halting):
//! docs/fidelity.md, "Keeping the emulator's processor awake".
//!
//! While a [`KeepAwake`] lives, the emulator's thread stays on the processor it was on
//! and one thread spins on that processor under `SCHED_IDLE`, the lowest priority Linux
//! has: the emulator (under `SCHED_FIFO`) and any other thread preempt it at once when
//! they wake (`check_preempt_wakeup_fair` in kernel/sched/fair.c preempts an idle-policy
//! task for a normal one), so it takes only time that nothing else wants, and it is not
//! real-time, so the kernel's real-time throttling (which stops a spinning `SCHED_FIFO`
//! thread for 50 ms in every second) does not apply. One processor, not all: with every
//! vCPU spinning the guest used all the CPU time its host allows it and was stopped for
//! about 100 ms in 2 of 20 runs. The loop is a load of a flag and a `sched_yield`,
//! without the `PAUSE` instruction that `std::hint::spin_loop` issues: KVM takes a vCPU
//! that pauses in a loop for a waiter on a lock and gives its time to another (pause-loop
//! exiting), which is what this is here to avoid. It yields because preemption at wake-up
//! does not cover a thread that was never asleep: a sender waiting for its start yields
//! in a loop, the scheduler may then pick the spinner, and without the spinner's own
//! yield that sender waited for the next scheduler tick (up to 4 ms at this kernel's HZ
//! of 250): 64 of 140 one-flow runs connected 0.6 to 5.1 ms late, none of 130 with it
//! (docs/fidelity.md, "Late starts were the spinner's ticks"). A `sched_yield` with
//! nothing else to run returns at once and stays in the guest, so the processor is kept
//! as busy as before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Whether real-time emulator runs keep their processor awake (on unless turned off).
static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns [`KeepAwake`] on or off for the emulator runs this process starts from now on
/// (`cclab testbed run --let-cpus-idle` turns it off, to see what it changes).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether [`KeepAwake`] is on ([`set_enabled`]).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The calling thread held on its processor, and a spinner keeping that processor
/// awake; dropping it stops the spinner and gives the thread its processors back.
pub struct KeepAwake {
    stop: Arc<AtomicBool>,
    spinner: Option<JoinHandle<()>>,
    prior: Option<libc::cpu_set_t>,
    cpu: Option<usize>,
}

impl KeepAwake {
    /// Holds the calling thread on the processor it is on and starts the spinner there.
    /// Where that cannot be done (no processor number, the affinity or `SCHED_IDLE`
    /// refused) nothing spins, since a spinner at ordinary priority would take time from
    /// the hosts' threads, and the caller runs as it would have; [`cpu`](Self::cpu) says
    /// which processor is kept awake, if any.
    pub fn here() -> KeepAwake {
        let stop = Arc::new(AtomicBool::new(false));
        let mut awake =
            KeepAwake { stop: Arc::clone(&stop), spinner: None, prior: None, cpu: None };
        // SAFETY: sched_getcpu takes no arguments.
        let Ok(cpu) = usize::try_from(unsafe { libc::sched_getcpu() }) else {
            return awake;
        };
        let Some(prior) = affinity() else {
            return awake;
        };
        if !pin_to(cpu) {
            return awake;
        }
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let spawned =
            std::thread::Builder::new().name(format!("cclab-awake-{cpu}")).spawn(move || {
                let ok = pin_to(cpu) && idle_policy();
                let _ = ready_tx.send(ok);
                if ok {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::yield_now();
                    }
                }
            });
        if let Ok(handle) = spawned {
            if ready_rx.recv().unwrap_or(false) {
                awake.spinner = Some(handle);
                awake.cpu = Some(cpu);
                awake.prior = Some(prior);
                return awake;
            }
            let _ = handle.join();
        }
        // Nothing spins, so the caller need not stay here either.
        set_affinity(&prior);
        awake
    }

    /// The processor kept awake, if any.
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }
}

impl Drop for KeepAwake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(s) = self.spinner.take() {
            let _ = s.join();
        }
        if let Some(prior) = &self.prior {
            set_affinity(prior);
        }
    }
}

/// The calling thread's processors.
fn affinity() -> Option<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    (unsafe { libc::sched_getaffinity(0, size, &mut set) } == 0).then_some(set)
}

fn set_affinity(set: &libc::cpu_set_t) -> bool {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: a valid set of the size given, for the calling thread.
    unsafe { libc::sched_setaffinity(0, size, set) == 0 }
}

/// Holds the calling thread on `cpu`.
fn pin_to(cpu: usize) -> bool {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET adds one processor.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    set_affinity(&set)
}

/// Puts the calling thread under SCHED_IDLE (which any user may ask for).
fn idle_policy() -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sets this thread's own policy.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spinners() -> Vec<(i32, i32)> {
        let task = std::path::Path::new("/proc/self/task");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(task).unwrap().flatten() {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            if comm.starts_with("cclab-awake-") {
                let tid: i32 = entry.file_name().to_string_lossy().parse().unwrap();
                // SAFETY: querying another thread's policy.
                found.push((tid, unsafe { libc::sched_getscheduler(tid) }));
            }
        }
        found
    }

    #[test]
    fn one_idle_priority_spinner_on_the_callers_processor_until_dropped() {
        let before = affinity().unwrap();
        // Other tests of this binary run real-time forwarders, with spinners of their
        // own, at the same time: this test's spinner is the one that was not there before.
        let others = spinners();
        let awake = KeepAwake::here();
        let cpu = awake.cpu().expect("a processor kept awake");
        // The caller stays on that processor while the spinner runs beside it.
        let held = affinity().unwrap();
        assert_eq!(unsafe { libc::CPU_COUNT(&held) }, 1);
        assert!(unsafe { libc::CPU_ISSET(cpu, &held) });
        // A listing of /proc/self/task can miss a live thread while other threads exit
        // (fs/proc/base.c: `next_tid` ends the walk at a thread that died under it, and
        // `first_tid` resumes the next call at an index into the thread list, which the
        // exits have shifted), and the tests beside this one start and stop threads: a
        // CI run of 2026-12-04 once listed no new spinner, which is the likeliest reason
        // (not proven). The spinner, which `here` saw running under SCHED_IDLE before it
        // returned, is looked for again for up to a second.
        let new_spinners =
            || -> Vec<_> { spinners().into_iter().filter(|s| !others.contains(s)).collect() };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        let mut found = new_spinners();
        while found.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
            found = new_spinners();
        }
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1, libc::SCHED_IDLE);
        drop(awake);
        // `join` returns once the kernel has cleared the thread's id (`CLONE_CHILD_CLEARTID`,
        // in `mm_release`), a moment before the exiting task leaves /proc/self/task: so its
        // entry may be seen briefly after the join, and is waited for, up to a second.
        let tid = found[0].0;
        let gone = || spinners().iter().all(|&(t, _)| t != tid);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while !gone() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(gone(), "the spinner is joined when KeepAwake is dropped");
        let after = affinity().unwrap();
        assert!(unsafe { libc::CPU_EQUAL(&before, &after) }, "the caller's processors back");
    }
}
