//! Files and folders being written, removed when the command is interrupted.
//!
//! Results are written beside their destination (a hidden staging folder or file) and
//! moved into place when complete, so an interrupted command never leaves half a results
//! folder where a whole one was. Without more, Ctrl-C left the staging behind (a long
//! run's 100 MB `flows.csv` in `.NAME.partial-PID-N`), to be removed only by a later run
//! to the same destination. A command that calls [`remove_staged_on_signals`] instead has
//! one thread wait for SIGINT, SIGTERM and SIGHUP; it removes everything
//! [`create_staged`] made and not yet settled, then exits with the shell's status for the
//! signal (128 + its number).
//!
//! Moving a finished folder into place ([`Staged::settle`]) holds the same lock as that
//! thread, so an interrupt never lands between moving earlier results aside and moving
//! the new ones in.
//!
//! The signals are blocked in the thread that calls it and in every thread started after
//! (they inherit the mask), and taken with `sigwait`: the waiting thread may then lock,
//! allocate and remove files, which a signal handler may not. Commands that run the
//! emulator keep their own handlers (`cclab_emu::forwarder`) and do not call it, except
//! `reproduce --testbed`, whose simulated sweeps come first: it hands the signals back
//! ([`hand_back_signals`]) before its testbed part installs them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// What is being written: (registration number, path).
static STAGED: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());

fn lock() -> MutexGuard<'static, Vec<(u64, PathBuf)>> {
    STAGED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A staging file or folder, removed if the command is interrupted before it is settled
/// or dropped (the owner removes it on drop as before; this only forgets it).
#[must_use]
pub struct Staged {
    id: u64,
}

/// Creates `path` (a file or folder to be written) with `create` and records it for
/// removal on an interrupt, both under the lock the interrupt holds from its removals
/// to the exit. Recorded first and created after, a path could be made just after the
/// interrupt removed what was recorded, and be left behind (a sweep's staging folder was,
/// once in a clean-clone CI run).
pub fn create_staged<T, E>(
    path: &Path,
    create: impl FnOnce() -> Result<T, E>,
) -> Result<(Staged, T), E> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut list = lock();
    let made = create()?;
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    list.push((id, path.to_path_buf()));
    Ok((Staged { id }, made))
}

impl Staged {
    /// Runs `finish` (moving the staging into place) where no interrupt can cut it short,
    /// and forgets the path.
    pub fn settle<T>(self, finish: impl FnOnce() -> T) -> T {
        let mut list = lock();
        let out = finish();
        list.retain(|(id, _)| *id != self.id);
        out
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        lock().retain(|(id, _)| *id != self.id);
    }
}

/// The signals the waiting thread takes.
fn signal_set() -> libc::sigset_t {
    // SAFETY: plain libc calls on a signal set owned here.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Asks the waiting thread to end ([`hand_back_signals`]); it looks between waits.
static HAND_BACK: AtomicBool = AtomicBool::new(false);
/// The waiting thread, while there is one.
static WAITER: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);
/// How long the waiting thread waits for a signal before it looks at [`HAND_BACK`].
const LOOK_EVERY: libc::timespec = libc::timespec { tv_sec: 0, tv_nsec: 100_000_000 };

/// From now on SIGINT, SIGTERM and SIGHUP remove what [`create_staged`] made and end the
/// process (status 128 + the signal's number), saying so with `then` added (what the user
/// may do next). Call it before starting other threads.
pub fn remove_staged_on_signals(then: &'static str) -> std::io::Result<()> {
    HAND_BACK.store(false, Ordering::Release); // a waiter after an earlier hand-back
    let set = signal_set();
    // SAFETY: blocks the set in this thread (and so in the threads it starts after).
    let e = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if e != 0 {
        return Err(std::io::Error::from_raw_os_error(e));
    }
    let waiter = std::thread::Builder::new().name("interrupt".into()).spawn(move || {
        let sig = loop {
            if HAND_BACK.load(Ordering::Acquire) {
                return;
            }
            // SAFETY: waits up to LOOK_EVERY for one of the blocked signals of `set`.
            let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &LOOK_EVERY) };
            if sig > 0 {
                break sig;
            }
        };
        let list = lock();
        for (_, path) in list.iter() {
            remove(path);
        }
        let name = match sig {
            libc::SIGINT => "interrupted",
            libc::SIGTERM => "terminated",
            _ => "hung up",
        };
        // SAFETY: isatty only reads the descriptor's state.
        let newline = if unsafe { libc::isatty(2) } == 1 { "\n" } else { "" };
        // Not eprintln!, which panics when stderr is gone (a hung-up terminal, a closed
        // pipe): this thread must reach the exit whatever becomes of the message.
        let _ = writeln!(
            std::io::stderr(),
            "{newline}cclab: {name}; what it was writing is removed, and earlier results are as they were{then}"
        );
        std::process::exit(128 + sig);
    });
    match waiter {
        Ok(handle) => {
            *WAITER.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(handle);
            Ok(())
        }
        Err(e) => {
            unblock(&set); // nobody would take them: the signals must end the process as before
            Err(e)
        }
    }
}

/// Removes a staging file or folder. Other threads may still be writing into a folder,
/// and a file made while it is emptied makes its last step fail ("directory not
/// empty"), so it is tried again (a few times: each try removes what was there).
fn remove(path: &Path) {
    for _ in 0..10 {
        match std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path)) {
            Ok(()) => return,
            Err(_) if std::fs::symlink_metadata(path).is_err() => return,
            Err(_) => continue,
        }
    }
}

/// Ends what [`remove_staged_on_signals`] started, from the thread that called it: the
/// waiting thread stops and the signals take their default action in this thread again,
/// so that a part that installs its own handlers (the emulator's, which remove network
/// namespaces) gets them. Threads started before keep them blocked, which is harmless:
/// a signal sent to the process goes to a thread that does not block it. A signal that
/// comes while this hands back is taken by the waiting thread as before or, once it has
/// stopped, stays pending until the unblocking here delivers it.
pub fn hand_back_signals() {
    let waiter = WAITER.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    if let Some(waiter) = waiter {
        HAND_BACK.store(true, Ordering::Release);
        let _ = waiter.join();
        unblock(&signal_set());
    }
}

fn unblock(set: &libc::sigset_t) {
    // SAFETY: unblocks the set in this thread; the signals take their default action.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, set, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// By path, not by count: other tests of this crate (whole_file's) stage files of
    /// their own at the same time.
    #[test]
    fn settled_and_dropped_paths_are_forgotten() {
        let held = |p: &str| lock().iter().any(|(_, q)| q == Path::new(p));
        let nothing = || Ok::<(), ()>(());
        let (a, ()) = create_staged(Path::new("/nonexistent/interrupt-test-a"), nothing).unwrap();
        let (b, ()) = create_staged(Path::new("/nonexistent/interrupt-test-b"), nothing).unwrap();
        // What could not be created is not recorded.
        let failed = create_staged(Path::new("/nonexistent/interrupt-test-c"), || Err::<(), _>(()));
        assert!(failed.is_err() && !held("/nonexistent/interrupt-test-c"));
        assert!(held("/nonexistent/interrupt-test-a") && held("/nonexistent/interrupt-test-b"));
        assert_eq!(a.settle(|| 7), 7);
        assert!(!held("/nonexistent/interrupt-test-a") && held("/nonexistent/interrupt-test-b"));
        drop(b);
        assert!(!held("/nonexistent/interrupt-test-b"));
    }
}
