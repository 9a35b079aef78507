//! How testbed and fidelity runs, `cclab kernel set` and the web lab's kernel panel take
//! turns on a BPF algorithm's parameters. They live in one map per algorithm that every
//! connection shares (as TCPTuner's module parameters did), so a run sets them for its
//! length and puts the earlier values back at its end (cclab_emu's `RunTunables`).
//!
//! A run holds a lock on the algorithm's parameters while it lasts and keeps the values to
//! put back in a file beside it ([`Kernel::run_params_paths`]). A run killed outright
//! leaves that file: the next run takes those values as the ones to put back at its own
//! end, and a setting between runs ([`set_between_runs`]) puts them back first, so that
//! no later restore undoes a newer setting.

use crate::algo::Algo;
use crate::error::Error;
use crate::loader::{self, Kernel, Unloaded};
use std::fs::File;

/// Parameter values by name, as [`Kernel::set`] takes them.
pub type Params = Vec<(String, f64)>;

/// The lock on `algo`'s parameters, or `None` while a run (or a setting between runs)
/// holds it. Released when the file is dropped (or the process ends, however it ends).
pub fn try_lock(k: &Kernel, algo: Algo) -> Result<Option<File>, Error> {
    std::fs::create_dir_all(&k.state_dir)
        .map_err(|e| Error::io(format!("creating {}", k.state_dir.display()), e))?;
    let path = k.run_params_paths(algo).0;
    let lock =
        File::create(&path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    // std's lock is flock(2), as the pin lock's (`Kernel::lock`): per open file, so two
    // holders in one process (the web lab's run and its panel) exclude each other too.
    match lock.try_lock() {
        Ok(()) => Ok(Some(lock)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(Error::io(format!("locking {}", path.display()), e))
        }
    }
}

/// `name value` lines, one parameter each (Rust's shortest decimal form reads back exactly).
pub fn to_text(params: &Params) -> String {
    params.iter().map(|(n, v)| format!("{n} {v}\n")).collect()
}

/// The values in a saved file, if it names exactly `algo`'s parameters, in order (a file
/// cut short by a crash, or of another build's parameters, is not used).
pub fn from_text(algo: Algo, text: &str) -> Option<Params> {
    let params: Params = text
        .lines()
        .map(|l| {
            let (n, v) = l.split_once(' ')?;
            Some((n.to_string(), v.parse().ok()?))
        })
        .collect::<Option<_>>()?;
    let names = params.iter().map(|(n, _)| n.as_str());
    names.eq(algo.params().iter().map(|p| p.name)).then_some(params)
}

/// What a run killed before its end left to put back in `algo`'s parameters. Read only
/// under the lock: while a run holds it, its file is its own.
pub fn left_by_a_dead_run(k: &Kernel, algo: Algo) -> Option<Params> {
    let text = std::fs::read_to_string(k.run_params_paths(algo).1).ok()?;
    from_text(algo, &text)
}

/// Puts back what a run killed before its end had changed (under the lock), and forgets
/// it; returns the values put back, if there were any.
fn finish_a_dead_run(k: &Kernel, algo: Algo) -> Result<Option<Params>, Error> {
    let Some(left) = left_by_a_dead_run(k, algo) else { return Ok(None) };
    let saved = k.run_params_paths(algo).1;
    k.set(algo, &left).map_err(|e| {
        Error::Other(format!(
            "putting back the parameters a run killed before its end saved in {}: {e}; remove that file to skip it",
            saved.display()
        ))
    })?;
    let _ = std::fs::remove_file(&saved);
    Ok(Some(left))
}

/// Sets `changes` on `algo` between runs (`cclab kernel set`, the web lab's kernel panel):
/// refused while a run holds its parameters, since the run puts the earlier values back
/// at its end; a killed run's values are put back first. Returns those, if any, and the
/// values stored.
#[allow(clippy::type_complexity)]
pub fn set_between_runs(
    k: &Kernel,
    algo: Algo,
    changes: &[(String, f64)],
) -> Result<(Option<Params>, Vec<(&'static str, f64)>), Error> {
    k.get(algo)?; // loaded, and root: before the lock's file is made
    for (name, value) in changes {
        algo.check(name, *value)?; // a bad value changes nothing, a dead run's restore included
    }
    let _turn = try_lock(k, algo)?.ok_or_else(|| {
        held_by_a_run(
            algo,
            "that would undo this setting: change them within that run (the web lab's tuning of the run), or wait for it to end",
        )
    })?;
    let put_back = finish_a_dead_run(k, algo)?;
    Ok((put_back, k.set(algo, changes)?))
}

/// Puts back what a run killed before its end left in `algo`'s parameters, unless a run
/// holds them now (`cclab kernel get` and `list`, so that they show the values in force
/// rather than a dead run's); returns the values put back, if any.
pub fn tidy_after_a_dead_run(k: &Kernel, algo: Algo) -> Result<Option<Params>, Error> {
    if !loader::is_root() || left_by_a_dead_run(k, algo).is_none() {
        return Ok(None); // nothing to do (or to be done by root): no lock file made for a read
    }
    match try_lock(k, algo)? {
        Some(_turn) => finish_a_dead_run(k, algo),
        None => Ok(None),
    }
}

/// Unloads `algo` between runs: refused while a run holds its parameters.
pub fn unload_between_runs(k: &Kernel, algo: Algo) -> Result<Unloaded, Error> {
    let _turn = match loader::is_root() && k.dir(algo).exists() {
        true => Some(
            try_lock(k, algo)?
                .ok_or_else(|| held_by_a_run(algo, "wait for it to end before unloading it"))?,
        ),
        false => None, // not loaded, or not root: unload says which
    };
    k.unload(algo)
}

/// The refusal while a run holds `algo`'s parameters; `advice` says what to do instead.
pub fn held_by_a_run(algo: Algo, advice: &str) -> Error {
    Error::Busy(format!(
        "a cclab testbed or fidelity run (or another cclab kernel command, or the web lab's kernel panel) is using {}, whose parameters every connection in the kernel shares, and a run puts their earlier values back when it ends; {advice}",
        algo.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saved file is used only whole: every parameter of the algorithm, in order.
    #[test]
    fn saved_values_read_back_exactly_or_not_at_all() {
        let all: Params =
            Algo::Tuner.params().iter().map(|p| (p.name.to_string(), p.default / 3.0)).collect();
        assert_eq!(from_text(Algo::Tuner, &to_text(&all)), Some(all.clone()));
        let cut = to_text(&all[..all.len() - 1].to_vec());
        assert_eq!(from_text(Algo::Tuner, &cut), None);
        assert_eq!(from_text(Algo::Tuner, ""), None);
        assert_eq!(from_text(Algo::CubicFit, &to_text(&all)), None);
        let text = to_text(&all).replacen(' ', " x", 1);
        assert_eq!(from_text(Algo::Tuner, &text), None);
    }
}
