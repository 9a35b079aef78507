//! A scenario's algorithms as the real kernel runs them on the testbed.
//!
//! cclab's own algorithms with a BPF build (`tuner`, `cubic-fit`; see `cclab_kernel::Algo`)
//! run in the kernel under their registered names (`cclab_tuner`, `cclab_cubic_fit`), so
//! one scenario file runs in the simulator and on the testbed alike.
//!
//! Their parameters live in one BPF map per algorithm, shared by every connection using it
//! (as TCPTuner's module parameters were). A run therefore sets each such algorithm's map
//! to its flows' parameters over the defaults — the values the simulator would use — and
//! puts the earlier values back when it ends ([`RunTunables`]). Flows of one algorithm
//! must agree on its parameters; the kernel cannot give them different ones.

use crate::EmuError;
use cclab_kernel::run_params::{self, Params};
use cclab_kernel::{Algo, Kernel};
use cclab_sim::FlowConfig;

/// The name the kernel knows the algorithm `cc` by: cclab's BPF build of it where there
/// is one, else `cc` itself (`cubic`, `reno`, ...).
pub fn kernel_name(cc: &str) -> &str {
    match Algo::parse(cc) {
        Ok(a) => a.name(),
        Err(_) => cc,
    }
}

/// Whether the kernel can run `cc` with per-run parameters (cclab's BPF algorithms).
pub fn tunable(cc: &str) -> bool {
    Algo::parse(cc).is_ok()
}

/// The full parameter set a flow asks of its BPF algorithm: the defaults with the flow's
/// own values over them.
fn wanted(algo: Algo, flow: &FlowConfig) -> Params {
    algo.params()
        .iter()
        .map(|p| {
            let own = flow.params.iter().find(|(n, _)| n == p.name).map(|(_, v)| *v);
            (p.name.to_string(), own.unwrap_or(p.default))
        })
        .collect()
}

/// The parameters on which two flows' wishes differ, as "beta 0.5 in flows[0], 0.7 in
/// flows[2]" (values as the scenario gives them, defaults filled in).
fn differences(first: &Params, then: &Params, j: usize, i: usize) -> String {
    let said: Vec<String> = first
        .iter()
        .zip(then)
        .filter(|((_, a), (_, b))| a != b)
        .map(|((name, a), (_, b))| format!("{name} {a} in flows[{j}], {b} in flows[{i}]"))
        .collect();
    said.join("; ")
}

/// The BPF algorithms' parameters for the length of one run; dropping it restores the
/// values the maps had before.
///
/// Runs of one algorithm take turns: each holds a lock on the algorithm's parameters for
/// its length (a second run is refused, since the one map would serve both), and keeps
/// the values to restore in a file beside the lock, so that a run killed outright has
/// them put back by the next run of that algorithm before it sets its own.
pub struct RunTunables {
    held: Vec<Held>,
}

/// One algorithm's parameters as a run holds them.
struct Held {
    algo: Algo,
    /// What to put back at the end (also in the file of `Kernel::run_params_paths`).
    before: Params,
    /// The lock by which runs take turns, released when dropped (after the restore).
    _lock: std::fs::File,
}

/// The lock on `algo`'s parameters for a run, waiting up to a second for a setting
/// between runs (`cclab kernel set`, the web lab's panel: milliseconds) to let it go;
/// `None` while another run holds it.
fn lock_for_a_run(k: &Kernel, algo: Algo) -> Result<Option<std::fs::File>, cclab_kernel::Error> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        match run_params::try_lock(k, algo)? {
            Some(lock) => return Ok(Some(lock)),
            None if std::time::Instant::now() >= deadline => return Ok(None),
            None => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// Writes `text` to `path` whole or not at all ([`cclab_units::whole_file`]).
fn write_whole(path: &std::path::Path, text: &str) -> Result<(), EmuError> {
    cclab_units::whole_file::write(path, text.as_bytes())
        .map_err(|e| EmuError::Setup(format!("writing {}: {e}", path.display())))
}

impl RunTunables {
    /// Sets every BPF algorithm used by a kernel flow (`kernel[i]`) to its flows'
    /// parameters. Errors name the flow whose parameters disagree with an earlier one's.
    pub fn apply(flows: &[FlowConfig], kernel: &[bool]) -> Result<RunTunables, EmuError> {
        let mut chosen: Vec<(Algo, usize, Params)> = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            let Ok(algo) = Algo::parse(&f.cc) else { continue };
            if !kernel[i] {
                continue;
            }
            let want = wanted(algo, f);
            match chosen.iter().find(|(a, ..)| *a == algo) {
                Some((_, j, first)) if *first != want => {
                    return Err(EmuError::Config(format!(
                        "flows[{i}].params: {} has one set of parameters for every connection in the kernel, and flows[{j}] asks for others ({}); give them the same parameters, or run one of them with transport = \"udp\"",
                        algo.name(),
                        differences(first, &want, *j, i)
                    )))
                }
                Some(_) => {}
                None => chosen.push((algo, i, want)),
            }
        }
        let mut tunables = RunTunables { held: Vec::new() };
        let k = Kernel::default();
        for (algo, _, want) in chosen {
            let setup = |e: cclab_kernel::Error| EmuError::Setup(e.to_string());
            let lock = lock_for_a_run(&k, algo).map_err(setup)?.ok_or_else(|| {
                setup(run_params::held_by_a_run(
                    algo,
                    "runs of it take turns: wait for that run to end",
                ))
            })?;
            let saved = k.run_params_paths(algo).1;
            // A run killed outright left the values it changed: those are the ones to keep.
            let before: Params = match run_params::left_by_a_dead_run(&k, algo) {
                Some(p) => p,
                None => {
                    let now = k.get(algo).map_err(setup)?;
                    now.into_iter().map(|(n, v)| (n.to_string(), v)).collect()
                }
            };
            write_whole(&saved, &run_params::to_text(&before))?;
            // One map serves every connection: others running the algorithm outside the
            // run are retuned with it, which their owner should hear about.
            let retunes = want.iter().any(|(n, v)| before.iter().all(|(m, w)| m != n || w != v));
            if let Some(n @ 1..) =
                retunes.then(|| cclab_kernel::socket::sockets_running(algo.name())).flatten()
            {
                cclab_units::errln!(
                    "note: {n} other connection(s) of this host run {}: its parameters are one set for all, so they run with this run's values until it ends",
                    algo.name()
                );
            }
            tunables.held.push(Held { algo, before, _lock: lock });
            k.set(algo, &want).map_err(|e| EmuError::Config(e.to_string()))?;
        }
        Ok(tunables)
    }
}

impl Drop for RunTunables {
    fn drop(&mut self) {
        let k = Kernel::default();
        for Held { algo, before, .. } in &self.held {
            let saved = k.run_params_paths(*algo).1;
            match k.set(*algo, before) {
                Ok(_) => {
                    let _ = std::fs::remove_file(&saved);
                }
                Err(e) => cclab_units::errln!(
                    "warning: could not put {}'s parameters back ({e}); the next run of it will, from {}",
                    algo.name(),
                    saved.display()
                ),
            }
        }
    }
}

/// Changes one parameter of flow `flow`'s BPF algorithm while it runs (for every
/// connection using that algorithm; [`RunTunables`] restores it at the end).
pub fn set_live(flow: usize, f: &FlowConfig, name: &str, value: f64) -> Result<(), EmuError> {
    let algo = Algo::parse(&f.cc).map_err(|_| {
        EmuError::Config(format!(
            "flows[{flow}] runs the kernel's own {}, whose parameters cclab cannot change; cclab's BPF algorithms (cclab_tuner, cclab_cubic_fit) can be retuned while they run",
            f.cc
        ))
    })?;
    Kernel::default()
        .set(algo, &[(name.to_string(), value)])
        .map(|_| ())
        .map_err(|e| EmuError::Config(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(cc: &str, params: &[(&str, f64)]) -> FlowConfig {
        FlowConfig {
            name: cc.to_string(),
            cc: cc.to_string(),
            params: params.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            rtt: cclab_units::Duration::from_millis(40),
            start: cclab_units::Time::ZERO,
            stop: None,
            bytes: None,
            tcp: cclab_sim::TcpConfig::default(),
            direction: cclab_sim::Direction::Forward,
        }
    }

    #[test]
    fn cclabs_algorithms_run_under_their_kernel_names() {
        assert_eq!(kernel_name("tuner"), "cclab_tuner");
        assert_eq!(kernel_name("cubic-fit"), "cclab_cubic_fit");
        assert_eq!(kernel_name("cubic"), "cubic");
        assert!(tunable("tuner") && !tunable("cubic"));
    }

    /// Refused before anything in the kernel is touched, so no root is needed.
    #[test]
    fn flows_of_one_bpf_algorithm_must_agree_on_its_parameters() {
        let flows = [flow("tuner", &[("beta", 0.5)]), flow("cubic", &[]), flow("tuner", &[])];
        let e = RunTunables::apply(&flows, &[true, true, true]).err().unwrap().to_string();
        assert!(e.contains("flows[2].params") && e.contains("flows[0]"), "{e}");
        let default = Algo::Tuner.params().iter().find(|p| p.name == "beta").unwrap().default;
        assert!(e.contains(&format!("(beta 0.5 in flows[0], {default} in flows[2])")), "{e}");
        // A flow without parameters asks for the defaults.
        let tuner = Algo::Tuner;
        let beta = |f: &FlowConfig| wanted(tuner, f).into_iter().find(|(n, _)| n == "beta");
        let default = tuner.params().iter().find(|p| p.name == "beta").unwrap().default;
        assert_eq!(beta(&flows[2]), Some(("beta".to_string(), default)));
        assert_eq!(beta(&flows[0]), Some(("beta".to_string(), 0.5)));
    }
}
