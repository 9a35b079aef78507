//! The report of `cclab fidelity`: per scenario and flow, the simulated figures beside the
//! real runs' mean and spread, the agreement verdicts of issue 10's targets, and a cwnd
//! overlay (simulated solid, real runs dashed). Read back from the runs' results folders
//! with `cclab compare`'s readers, so the report sees exactly what the files say.
//!
//! Figures per flow: goodput (summary.json); the smoothed RTT's p50 and p95 over the
//! samples (see `FlowSeries::srtt_percentiles`); the slow-start exit (the
//! first sample whose ssthresh is finite: the largest cwnd up to it, and its time after
//! the flow's start); loss events (reductions of cwnd, see `loss_event_times`) and the
//! share of them another flow shared (see `shared_losses`); retransmits and the flow's
//! packets the bottleneck dropped (summary.json's per-flow `drops`). Samples are the runs'
//! `sample_interval` apart (10 ms unless the scenario says otherwise), on both sides. A
//! figure a run does not have (no exit, no loss event) is left out of the runs' mean.
//!
//! Verdicts (issue 10's targets): a flow's goodput agrees when the simulated value is
//! within ±10% of the real mean or inside the real runs' range; a scenario's goodput
//! agrees when every flow's does; Jain agrees within ±0.05 of the real mean; a slow-start
//! exit cwnd agrees within ±15% of the real mean.
//!
//! The real mean and range are those of the runs the machine left undisturbed (kernel.json's
//! `emulator.disturbed`: too many packets released late, or a flow late to start). A
//! disturbed run measured the kernel on a network with the host's stalls added, not the
//! scenario's, so it is shown (its figures in `real_runs`, the cwnd overlay, the run's
//! line of timing) but not judged. A scenario whose every run was disturbed is not judged
//! at all: its figures are the disturbed runs' mean, and the counts leave it out.
//!
//! How firm each verdict is: it is judged again with each judged real run left out in
//! turn (leave-one-out). A verdict that comes out the same every time holds whichever run
//! is dropped; one that flips turns on a single run, and the report marks it (`*`). With
//! three real runs a scenario's counts moved by one to three between two matrices on one
//! host (docs/fidelity.md, 2026-12-04), and this says which verdicts such a move can touch.

use crate::compare::{load_flows, load_summary, FlowSeries, Run};
use crate::fidelity::{real_folder, real_runs_in, sim_folder, Case, SimSide};
use crate::format::{num, xml, Json};
use crate::plot::{Chart, Series};
use std::path::Path;

/// Linux `TCP_INFINITE_SSTHRESH`, which the simulator reports too before a first exit.
const INFINITE_SSTHRESH: f64 = cclab_cc::tcp::INFINITE_SSTHRESH as f64;
/// Flows drawn in a scenario's cwnd overlay at most (the legend holds 16 lines).
const MAX_PLOTTED_FLOWS: usize = 4;
/// Goodput agreement: relative to the real mean (issue 10).
const GOODPUT_TOLERANCE: f64 = 0.10;
/// Jain agreement: absolute (issue 10).
const JAIN_TOLERANCE: f64 = 0.05;
/// Slow-start exit cwnd agreement: relative to the real mean (issue 10).
const SS_EXIT_TOLERANCE: f64 = 0.15;

/// One run's figures for one flow.
#[derive(Clone, Copy)]
struct FlowFigures {
    goodput_bps: f64,
    srtt_p50_ms: f64,
    srtt_p95_ms: f64,
    ss_exit_cwnd: f64,
    ss_exit_s: f64,
    loss_events: f64,
    shared_losses_pct: f64,
    retransmits: f64,
    drops: f64,
}

/// Reads one figure of a flow.
type Get = fn(&FlowFigures) -> f64;

/// The figures of a flow and how each is shown: key, label, decimals.
const FIGURES: &[(&str, &str, usize, Get)] = &[
    ("goodput_bps", "goodput Mbit/s", 0, |f| f.goodput_bps),
    ("srtt_p50_ms", "srtt p50 ms", 3, |f| f.srtt_p50_ms),
    ("srtt_p95_ms", "srtt p95 ms", 3, |f| f.srtt_p95_ms),
    ("ss_exit_cwnd", "slow-start exit cwnd", 0, |f| f.ss_exit_cwnd),
    ("ss_exit_s", "slow-start exit s", 3, |f| f.ss_exit_s),
    ("loss_events", "loss events", 0, |f| f.loss_events),
    ("shared_losses_pct", "loss events shared, %", 0, |f| f.shared_losses_pct),
    ("retransmits", "retransmits", 0, |f| f.retransmits),
    ("drops", "drops at the bottleneck", 0, |f| f.drops),
];

/// One run (simulated or real) of a scenario.
struct RunFigures {
    /// The run's seed (summary.json): real run k has simulated run k's (`fidelity::SimSide`).
    seed: u64,
    jain: f64,
    flows: Vec<FlowFigures>,
    cwnd: Vec<Vec<(f64, f64)>>,
    /// Real runs: the kernel's HyStart exits over the run's CUBIC flows, from kernel.json
    /// (train detections, their cwnd sum, delay detections, their cwnd sum).
    hystart: Option<[u64; 4]>,
    /// Real runs: the share of packets the emulator released more than a packet time
    /// late, %, and whether the run was disturbed (that share too large, or a flow late
    /// to start), from kernel.json (`emulator`).
    late: Option<(f64, bool)>,
    /// Real runs: how late the emulator woke from its sleeps at the 99th percentile, us
    /// (kernel.json's `emulator.wake_p99_us`; absent from runs made before it was kept).
    wake_p99_us: Option<f64>,
    /// Real runs: how late after its start the latest kernel flow connected, us, and
    /// whether that was more than a packet time (kernel.json's `emulator.start_late_us`
    /// and `late_limit_us`; absent from runs made before it was kept).
    start_late: Option<(f64, bool)>,
    /// Real runs: the processor time the machine's host took from the guest while the
    /// run lasted, summed over its processors, s (kernel.json's `emulator.steal_ms`;
    /// absent from runs made before it was kept).
    steal_s: Option<f64>,
    /// Real runs: the same taken while each flow was in slow start, from its start to
    /// the sample where it had left, s (kernel.json's `emulator.steal_growth`; `None` for
    /// runs made before it was kept and flows that never left slow start).
    ss_steal_s: Vec<Option<f64>>,
}

/// A scenario's simulated runs and its real runs, read back from their folders.
pub struct Measured {
    stem: String,
    why: String,
    duration_s: f64,
    names: Vec<(String, String)>,
    /// The simulated runs' mean (the first run's cwnd trace), which the verdicts judge.
    sim: RunFigures,
    sim_runs: Vec<RunFigures>,
    real: Vec<RunFigures>,
}

impl Measured {
    /// Reads `folder/sim` (and `sim-<k>`) and every `folder/real-<k>` there is.
    pub fn read(case: &Case, folder: &Path) -> Result<Measured, String> {
        let starts: Vec<f64> =
            case.scn.config.flows.iter().map(|f| f.start.as_secs_f64()).collect();
        let sim_run = load_summary(&sim_folder(folder, 0))?;
        let names = sim_run.flows.iter().map(|f| (f.name.clone(), f.cc.clone())).collect();
        let mut sim_runs = vec![figures(&sim_run, &starts)?];
        for k in 1.. {
            let dir = sim_folder(folder, k);
            if !dir.is_dir() {
                break;
            }
            sim_runs.push(figures(&load_summary(&dir)?, &starts)?);
        }
        let sim = mean_of(&sim_runs);
        let real = (1..=real_runs_in(folder))
            .map(|k| figures(&load_summary(&real_folder(folder, k))?, &starts))
            .collect::<Result<Vec<_>, String>>()?;
        if real.is_empty() {
            return Err(format!("{}: no real runs (real-1 missing)", folder.display()));
        }
        Ok(Measured {
            stem: case.stem.clone(),
            why: case.why.clone(),
            duration_s: case.scn.config.duration.as_secs_f64(),
            names,
            sim,
            sim_runs,
            real,
        })
    }

    /// Whether any real run was left undisturbed, so that the verdicts judge this scenario.
    fn judged(&self) -> bool {
        self.real.iter().any(|r| !r.disturbed())
    }

    /// The real runs whose mean and range the report gives and the verdicts judge: the
    /// undisturbed ones, or every run when there are none (then shown, not judged).
    fn judged_runs(&self) -> impl Iterator<Item = &RunFigures> + Clone {
        let judged = self.judged();
        self.real.iter().filter(move |r| !judged || !r.disturbed())
    }

    /// The judged runs' mean, smallest and largest value of a figure of flow `i`.
    fn real_spread(&self, i: usize, get: Get) -> (f64, f64, f64) {
        spread(self.judged_runs().map(|r| get(&r.flows[i])))
    }

    /// The judged runs' mean, smallest and largest Jain index.
    fn real_jain(&self) -> (f64, f64, f64) {
        spread(self.judged_runs().map(|r| r.jain))
    }
}

impl RunFigures {
    /// A real run the machine disturbed (kernel.json's `emulator.disturbed`); runs made
    /// before kernel.json said are taken as undisturbed.
    fn disturbed(&self) -> bool {
        self.late.is_some_and(|(_, disturbed)| disturbed)
    }
}

/// The figures of several runs averaged, flow by flow (the first run's cwnd trace).
fn mean_of(runs: &[RunFigures]) -> RunFigures {
    let n = runs.len() as f64;
    let mean = |get: &dyn Fn(&RunFigures) -> f64| runs.iter().map(get).sum::<f64>() / n;
    let flows = (0..runs[0].flows.len())
        .map(|i| {
            // Over the runs where the figure exists, as for the real runs (`spread`).
            let m = |get: Get| spread(runs.iter().map(|r| get(&r.flows[i]))).0;
            FlowFigures {
                goodput_bps: m(|f| f.goodput_bps),
                srtt_p50_ms: m(|f| f.srtt_p50_ms),
                srtt_p95_ms: m(|f| f.srtt_p95_ms),
                ss_exit_cwnd: m(|f| f.ss_exit_cwnd),
                ss_exit_s: m(|f| f.ss_exit_s),
                loss_events: m(|f| f.loss_events),
                shared_losses_pct: m(|f| f.shared_losses_pct),
                retransmits: m(|f| f.retransmits),
                drops: m(|f| f.drops),
            }
        })
        .collect();
    RunFigures {
        seed: runs[0].seed,
        jain: mean(&|r| r.jain),
        flows,
        cwnd: runs[0].cwnd.clone(),
        hystart: None,
        late: None,
        wake_p99_us: None,
        start_late: None,
        steal_s: None,
        ss_steal_s: Vec::new(),
    }
}

fn figures(run: &Run, starts: &[f64]) -> Result<RunFigures, String> {
    let n = run.flows.len();
    let series = load_flows(&run.dir, n)?;
    let losses: Vec<Vec<f64>> = (0..n).map(|i| loss_event_times(&series, i)).collect();
    let srtt: Vec<[f64; 2]> = (0..n).map(|i| series.srtt_percentiles(i, [0.50, 0.95])).collect();
    let rtt_s: Vec<f64> = srtt.iter().map(|[_, p95]| p95 / 1e3).collect();
    let start_of = |i: usize| starts.get(i).copied().unwrap_or(0.0);
    let flows: Vec<FlowFigures> = run
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (ss_exit_cwnd, ss_exit_s) = slow_start_exit(&series, i, start_of(i));
            let [srtt_p50_ms, srtt_p95_ms] = srtt[i];
            FlowFigures {
                goodput_bps: f.goodput_bps,
                srtt_p50_ms,
                srtt_p95_ms,
                ss_exit_cwnd,
                ss_exit_s,
                loss_events: losses[i].len() as f64,
                shared_losses_pct: 100.0 * shared_losses(&losses, &rtt_s, i),
                retransmits: f.retransmits,
                drops: f.drops,
            }
        })
        .collect();
    let kernel = kernel_json(&run.dir);
    let hystart = kernel.as_ref().and_then(kernel_hystart);
    let emulator = kernel.as_ref().map(|k| &k["emulator"]);
    let late = emulator.and_then(|e| Some((e["late_pct"].as_f64()?, e["disturbed"].as_bool()?)));
    let wake_p99_us = emulator.and_then(|e| e["wake_p99_us"].as_f64());
    let start_late = emulator.and_then(|e| {
        let (us, limit) = (e["start_late_us"].as_f64()?, e["late_limit_us"].as_f64()?);
        Some((us, us > limit))
    });
    let steal_s = emulator
        .and_then(|e| e["steal_ms"].as_array())
        .map(|per_cpu| per_cpu.iter().filter_map(|ms| ms.as_f64()).sum::<f64>() / 1e3);
    let growth = emulator.and_then(|e| steal_growth(&e["steal_growth"]));
    let ss_steal_s = flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (growth, start) = (growth.as_ref()?, start_of(i));
            let end = start + f.ss_exit_s;
            end.is_finite().then(|| steal_until(growth, end) - steal_until(growth, start))
        })
        .collect();
    Ok(RunFigures {
        seed: run.seed,
        jain: run.jain,
        flows,
        cwnd: series.cwnd,
        hystart,
        late,
        wake_p99_us,
        start_late,
        steal_s,
        ss_steal_s,
    })
}

/// kernel.json's `emulator.steal_growth` as (time, steal summed over the processors),
/// both in s.
fn steal_growth(v: &serde_json::Value) -> Option<Vec<(f64, f64)>> {
    let entry = |e: &serde_json::Value| {
        let values: Vec<f64> = e.as_array()?.iter().map(|x| x.as_f64()).collect::<Option<_>>()?;
        let (t, per_cpu) = values.split_first()?;
        Some((*t, per_cpu.iter().sum::<f64>() / 1e3))
    };
    v.as_array()?.iter().map(entry).collect()
}

/// The steal a run had reached by `t` s: that of the last reading at or before it.
fn steal_until(growth: &[(f64, f64)], t: f64) -> f64 {
    growth.iter().take_while(|&&(at, _)| at <= t).last().map_or(0.0, |&(_, s)| s)
}

/// A real run's kernel.json (`cclab testbed run`), if it has one.
fn kernel_json(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("kernel.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The kernel's HyStart counters of a real run's kernel.json.
fn kernel_hystart(v: &serde_json::Value) -> Option<[u64; 4]> {
    let h = &v["hystart"];
    let get = |k: &str| h[k].as_u64();
    Some([
        get("train_detect")?,
        get("train_cwnd_sum")?,
        get("delay_detect")?,
        get("delay_cwnd_sum")?,
    ])
}

/// "train 1 (cwnd 135), delay 0" for each real run that has the kernel's counters.
fn hystart_text(m: &Measured) -> String {
    let runs: Vec<String> = m
        .real
        .iter()
        .filter_map(|r| r.hystart)
        .map(|[t, tc, d, dc]| format!("train {t} (cwnd sum {tc}), delay {d} (cwnd sum {dc})"))
        .collect();
    if runs.is_empty() {
        "-".into()
    } else {
        runs.join("; ")
    }
}

/// "2 undisturbed, judged": how many real runs the verdicts and the real mean [range] are
/// over.
fn judged_text(m: &Measured) -> String {
    if m.judged() {
        format!("{} undisturbed, judged", m.judged_runs().count())
    } else {
        "every one disturbed, so not judged (the real figures are their mean)".into()
    }
}

/// "1, 2, 3": the real runs' seeds, which drew the emulator's random losses and drops.
fn seeds_text(m: &Measured) -> String {
    m.real.iter().map(|r| r.seed.to_string()).collect::<Vec<_>>().join(", ")
}

/// "0.02% (woke 209 us late), 3.41% (host took 0.93 s, 0.03 s of it in a slow start,
/// disturbed)": each real run's packets released more than a packet time late, whether a
/// flow started more than that late, the 99th percentile of how late the emulator woke
/// from its sleeps, and the processor time the machine's host took from the run and
/// during its flows' slow starts, where its kernel.json says.
fn late_text(m: &Measured) -> String {
    let runs: Vec<String> = m
        .real
        .iter()
        .filter_map(|r| {
            let (pct, disturbed) = r.late?;
            let mut notes = Vec::new();
            if let Some(us) = r.wake_p99_us {
                notes.push(format!("woke {us:.0} us late"));
            }
            if let Some((us, true)) = r.start_late {
                notes.push(format!("a flow {us:.0} us late to start"));
            }
            if let Some(s) = r.steal_s.filter(|&s| s > 0.0) {
                notes.push(format!("host took {s:.2} s{}", slow_start_steal_text(&r.ss_steal_s)));
            }
            if disturbed {
                notes.push("disturbed".to_string());
            }
            Some(if notes.is_empty() {
                format!("{pct:.2}%")
            } else {
                format!("{pct:.2}% ({})", notes.join(", "))
            })
        })
        .collect();
    if runs.is_empty() {
        "-".into()
    } else {
        runs.join(", ")
    }
}

/// ", 0.03 s of it in a slow start": the most the host took from the run while one of
/// its flows was in slow start, where the run's kernel.json says and it took any (each
/// flow's figure is in fidelity.json).
fn slow_start_steal_text(per_flow: &[Option<f64>]) -> String {
    let most = per_flow.iter().flatten().copied().fold(0.0, f64::max);
    if most > 0.0 {
        format!(", {most:.2} s of it in a slow start")
    } else {
        String::new()
    }
}

/// Each real run's HyStart counters (as its kernel.json has them), null where a run has
/// none.
fn hystart_json(m: &Measured) -> Json {
    let run = |h: Option<[u64; 4]>| {
        h.map_or(Json::Null, |[t, tc, d, dc]| {
            Json::Obj(vec![
                ("train_detect", Json::u(t)),
                ("train_cwnd_sum", Json::u(tc)),
                ("delay_detect", Json::u(d)),
                ("delay_cwnd_sum", Json::u(dc)),
            ])
        })
    };
    Json::Arr(m.real.iter().map(|r| run(r.hystart)).collect())
}

/// The largest cwnd up to the first sample with a finite ssthresh, and that sample's time
/// after `start`; NaN for a flow that never left slow start.
fn slow_start_exit(s: &FlowSeries, flow: usize, start: f64) -> (f64, f64) {
    let mut peak = 0.0f64;
    for (&(t, cwnd), &(_, ssthresh)) in s.cwnd[flow].iter().zip(&s.ssthresh[flow]) {
        peak = peak.max(cwnd);
        if ssthresh < INFINITE_SSTHRESH {
            return (peak, t - start);
        }
    }
    (f64::NAN, f64::NAN)
}

/// Window reductions: the times of the samples where cwnd falls after it last rose (a
/// peak, then a fall). Linux lowers cwnd only to reduce it (loss recovery, an RTO, ECN),
/// and a reduction that takes several samples, as PRR's does, counts once. HyStart's exit
/// (ssthresh = cwnd) does not lower cwnd, so it is not counted. A rule on ssthresh alone
/// would miss the reductions that set the same ssthresh as the one before, which steady
/// CUBIC cycles do.
fn loss_event_times(s: &FlowSeries, flow: usize) -> Vec<f64> {
    let mut rising = true;
    let mut times = Vec::new();
    for w in s.cwnd[flow].windows(2) {
        let (before, after) = (w[0].1, w[1].1);
        if after < before && rising {
            times.push(w[1].0);
        }
        if after != before {
            rising = after > before;
        }
    }
    times
}

/// The share of flow `i`'s loss events (`losses[i]`, times in s) that another flow shared:
/// one of its own began within the larger of the two flows' RTTs (`rtt_s`, each the
/// flow's srtt p95 in the run, which is its RTT with the queue full, when DropTail drops).
/// The drops of one overflow reach each sender about one of its RTTs later, so the
/// reductions they cause start that close together. With several flows on a link this
/// is how synchronised their losses are: a flow whose every reduction is shared loses
/// whenever the link overflows, whoever made it overflow. NaN without loss events or
/// without another flow.
fn shared_losses(losses: &[Vec<f64>], rtt_s: &[f64], i: usize) -> f64 {
    if losses[i].is_empty() || losses.len() < 2 {
        return f64::NAN;
    }
    let shared_with = |t: f64, j: usize| {
        let window = rtt_s[i].max(rtt_s[j]);
        losses[j].iter().any(|&u| (t - u).abs() <= window)
    };
    let shared = losses[i]
        .iter()
        .filter(|&&t| (0..losses.len()).any(|j| j != i && shared_with(t, j)))
        .count();
    shared as f64 / losses[i].len() as f64
}

/// Mean, smallest and largest of the finite values (NaN when there are none).
fn spread(xs: impl Iterator<Item = f64>) -> (f64, f64, f64) {
    let v: Vec<f64> = xs.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (
        mean,
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// Within `tol` of the real mean (relative), or inside the real runs' range.
fn agrees_rel(sim: f64, (mean, min, max): (f64, f64, f64), tol: f64) -> bool {
    sim.is_finite()
        && mean.is_finite()
        && ((sim - mean).abs() <= tol * mean || (min <= sim && sim <= max))
}

/// What one set of real runs says of a scenario's simulated figures.
#[derive(Clone, PartialEq, Debug)]
struct Calls {
    /// Per flow: goodput agrees.
    goodput: Vec<bool>,
    jain: bool,
    /// Per flow: the slow-start exit cwnd agrees (None: no exit on either side).
    ss_exit: Vec<Option<bool>>,
}

impl Calls {
    /// Every flow's goodput agrees.
    fn all_goodput(&self) -> bool {
        self.goodput.iter().all(|&b| b)
    }
}

/// Which of a scenario's verdicts hold whichever one judged real run is left out. None do
/// with fewer than two judged runs (leaving one out leaves nothing to judge by), nor in a
/// scenario not judged.
#[derive(Clone, PartialEq, Debug)]
struct Firm {
    goodput: bool,
    jain: bool,
    /// Per flow, the slow-start exit's verdict.
    ss_exit: Vec<bool>,
}

/// A scenario's verdicts, over its undisturbed real runs.
struct Verdict {
    /// Whether any real run was undisturbed; a scenario with none is not judged and the
    /// counts leave it out.
    judged: bool,
    /// What the judged runs say.
    calls: Calls,
    /// Which of those calls hold with any one judged run left out.
    firm: Firm,
}

impl Verdict {
    /// Flows whose slow-start exit agrees, and flows with an exit on either side.
    fn exits(&self) -> (u64, u64) {
        let judged = self.calls.ss_exit.iter().flatten().filter(|_| self.judged);
        (judged.clone().filter(|&&b| b).count() as u64, judged.count() as u64)
    }

    /// Judged, and every flow's goodput agrees.
    fn goodput_agrees(&self) -> bool {
        self.judged && self.calls.all_goodput()
    }

    /// Judged, and Jain agrees.
    fn jain_agrees(&self) -> bool {
        self.judged && self.calls.jain
    }

    /// "yes", "no", or "not judged" for one of this scenario's verdicts.
    fn text(&self, agrees: bool) -> &'static str {
        match (self.judged, agrees) {
            (false, _) => "not judged",
            (true, true) => "yes",
            (true, false) => "no",
        }
    }

    /// Judged flows whose slow-start exit verdict turns on a single real run.
    fn exits_turning(&self) -> usize {
        let exits = self.calls.ss_exit.iter().zip(&self.firm.ss_exit);
        exits.filter(|(e, &firm)| self.judged && e.is_some() && !firm).count()
    }

    /// As [`Self::text`], with `*` where the verdict turns on a single real run.
    fn marked(&self, agrees: bool, firm: bool) -> String {
        let star = if self.judged && !firm { "*" } else { "" };
        format!("{}{star}", self.text(agrees))
    }
}

/// Judged verdicts of one kind counted by how firm they are.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
struct FirmCount {
    /// Agree whichever run is left out.
    agree: usize,
    /// Disagree whichever run is left out.
    disagree: usize,
    /// Agree or not depending on which run is left out.
    turn: usize,
}

impl FirmCount {
    fn add(&mut self, agrees: bool, firm: bool) {
        match (firm, agrees) {
            (true, true) => self.agree += 1,
            (true, false) => self.disagree += 1,
            (false, _) => self.turn += 1,
        }
    }

    fn json(&self) -> Json {
        Json::Obj(vec![
            ("agree", Json::u(self.agree as u64)),
            ("disagree", Json::u(self.disagree as u64)),
            ("turn_on_one_run", Json::u(self.turn as u64)),
        ])
    }

    /// "10 yes, 1 no, 3 turn on one run".
    fn text(&self) -> String {
        format!("{} yes, {} no, {} turn on one run", self.agree, self.disagree, self.turn)
    }
}

/// Goodput, Jain and slow-start exit verdicts of the judged scenarios, by firmness.
fn firm_totals(verdicts: &[Verdict]) -> [FirmCount; 3] {
    let mut counts = [FirmCount::default(); 3];
    for v in verdicts.iter().filter(|v| v.judged) {
        counts[0].add(v.goodput_agrees(), v.firm.goodput);
        counts[1].add(v.calls.jain, v.firm.jain);
        for (agrees, &firm) in v.calls.ss_exit.iter().zip(&v.firm.ss_exit) {
            if let Some(agrees) = agrees {
                counts[2].add(*agrees, firm);
            }
        }
    }
    counts
}

/// Slow-start exits that agree, and exits judged, over every scenario.
fn exit_totals(verdicts: &[Verdict]) -> (u64, u64) {
    verdicts.iter().map(Verdict::exits).fold((0, 0), |(a, n), (b, m)| (a + b, n + m))
}

/// Scenarios judged, and among them those whose goodput and whose Jain agree.
fn scenario_totals(verdicts: &[Verdict]) -> (usize, usize, usize) {
    let count = |f: fn(&Verdict) -> bool| verdicts.iter().filter(|v| f(v)).count();
    (count(|v| v.judged), count(Verdict::goodput_agrees), count(Verdict::jain_agrees))
}

/// The verdicts the real runs `runs` give (their mean and range).
fn calls_over(m: &Measured, runs: &[&RunFigures]) -> Calls {
    let real = |i: usize, get: Get| spread(runs.iter().map(|r| get(&r.flows[i])));
    let n = m.sim.flows.len();
    let goodput = (0..n)
        .map(|i| {
            agrees_rel(m.sim.flows[i].goodput_bps, real(i, |f| f.goodput_bps), GOODPUT_TOLERANCE)
        })
        .collect();
    let ss_exit = (0..n)
        .map(|i| {
            let (s, r) = (m.sim.flows[i].ss_exit_cwnd, real(i, |f| f.ss_exit_cwnd));
            (s.is_finite() || r.0.is_finite()).then(|| {
                s.is_finite() && r.0.is_finite() && (s - r.0).abs() <= SS_EXIT_TOLERANCE * r.0
            })
        })
        .collect();
    let (jain_mean, _, _) = spread(runs.iter().map(|r| r.jain));
    let jain = (m.sim.jain - jain_mean).abs() <= JAIN_TOLERANCE;
    Calls { goodput, jain, ss_exit }
}

/// Which of `calls` (the verdicts of `runs`) every subset of `runs` short of one repeats.
fn firm_over(m: &Measured, runs: &[&RunFigures], calls: &Calls) -> Firm {
    let mut firm = Firm {
        goodput: runs.len() >= 2,
        jain: runs.len() >= 2,
        ss_exit: vec![runs.len() >= 2; calls.ss_exit.len()],
    };
    for left_out in 0..runs.len() {
        let rest: Vec<&RunFigures> =
            runs.iter().enumerate().filter(|&(k, _)| k != left_out).map(|(_, &r)| r).collect();
        let c = calls_over(m, &rest);
        firm.goodput &= c.all_goodput() == calls.all_goodput();
        firm.jain &= c.jain == calls.jain;
        for (f, (a, b)) in firm.ss_exit.iter_mut().zip(c.ss_exit.iter().zip(&calls.ss_exit)) {
            *f &= a == b;
        }
    }
    firm
}

fn verdict(m: &Measured) -> Verdict {
    let runs: Vec<&RunFigures> = m.judged_runs().collect();
    let calls = calls_over(m, &runs);
    // A scenario not judged has no verdicts to be firm (its runs are all disturbed ones).
    let firm = firm_over(m, if m.judged() { &runs } else { &[] }, &calls);
    Verdict { judged: m.judged(), calls, firm }
}

/// Writes fidelity.json, report.html and each scenario's cwnd overlay into `out`;
/// returns the terminal summary.
pub fn write(out: &Path, all: &[Measured], quick: bool, side: SimSide) -> Result<String, String> {
    let write = |name: &str, text: &str| {
        std::fs::write(out.join(name), text)
            .map_err(|e| format!("cannot write {}: {e}", out.join(name).display()))
    };
    let verdicts: Vec<Verdict> = all.iter().map(verdict).collect();
    let mut charts = Vec::new();
    for m in all {
        let svg = cwnd_chart(m);
        write(&format!("cwnd-{}.svg", m.stem), &svg)?;
        charts.push(svg);
    }
    write("fidelity.json", &json(all, &verdicts, quick, side).render())?;
    write("report.html", &html(all, &verdicts, &charts, side))?;
    Ok(format!("{}\n{}", side_text(side), terminal(all, &verdicts)))
}

fn pair_json(m: &Measured, i: usize, decimals: usize, get: Get) -> Json {
    let (mean, min, max) = m.real_spread(i, get);
    let runs = m.real.iter().map(|r| Json::f(get(&r.flows[i]), decimals)).collect();
    let sim_runs = m.sim_runs.iter().map(|r| Json::f(get(&r.flows[i]), decimals)).collect();
    Json::Obj(vec![
        ("sim", Json::f(get(&m.sim.flows[i]), decimals)),
        ("sim_runs", Json::Arr(sim_runs)),
        ("real_mean", Json::f(mean, decimals)),
        ("real_min", Json::f(min, decimals)),
        ("real_max", Json::f(max, decimals)),
        ("real_runs", Json::Arr(runs)),
    ])
}

fn scenario_json(m: &Measured, v: &Verdict) -> Json {
    let flows = (0..m.sim.flows.len())
        .map(|i| {
            let mut items = vec![("name", Json::s(&m.names[i].0)), ("cc", Json::s(&m.names[i].1))];
            items.extend(FIGURES.iter().map(|(key, _, d, get)| (*key, pair_json(m, i, *d, *get))));
            items.push(("goodput_agrees", Json::Bool(v.calls.goodput[i])));
            items.push(("ss_exit_agrees", v.calls.ss_exit[i].map_or(Json::Null, Json::Bool)));
            items.push((
                "ss_exit_firm",
                v.calls.ss_exit[i].map_or(Json::Null, |_| Json::Bool(v.firm.ss_exit[i])),
            ));
            let ss_steal = |r: &RunFigures| r.ss_steal_s.get(i).copied().flatten();
            items.push((
                "real_ss_host_steal_s",
                Json::Arr(
                    m.real
                        .iter()
                        .map(|r| ss_steal(r).map_or(Json::Null, |s| Json::f(s, 2)))
                        .collect(),
                ),
            ));
            Json::Obj(items)
        })
        .collect();
    let (mean, min, max) = m.real_jain();
    Json::Obj(vec![
        ("name", Json::s(&m.stem)),
        ("why", Json::s(&m.why)),
        ("duration_s", Json::f(m.duration_s, 3)),
        ("real_runs", Json::u(m.real.len() as u64)),
        ("real_seeds", Json::Arr(m.real.iter().map(|r| Json::u(r.seed)).collect())),
        ("real_disturbed", Json::Arr(m.real.iter().map(|r| Json::Bool(r.disturbed())).collect())),
        ("judged", Json::Bool(v.judged)),
        ("flows", Json::Arr(flows)),
        (
            "jain",
            Json::Obj(vec![
                ("sim", Json::f(m.sim.jain, 4)),
                ("real_mean", Json::f(mean, 4)),
                ("real_min", Json::f(min, 4)),
                ("real_max", Json::f(max, 4)),
            ]),
        ),
        ("kernel_hystart", hystart_json(m)),
        (
            "emulator_late_pct",
            Json::Arr(
                m.real.iter().map(|r| r.late.map_or(Json::Null, |(p, _)| Json::f(p, 3))).collect(),
            ),
        ),
        (
            "emulator_wake_p99_us",
            Json::Arr(
                m.real
                    .iter()
                    .map(|r| r.wake_p99_us.map_or(Json::Null, |us| Json::f(us, 1)))
                    .collect(),
            ),
        ),
        (
            "emulator_start_late_us",
            Json::Arr(
                m.real
                    .iter()
                    .map(|r| r.start_late.map_or(Json::Null, |(us, _)| Json::f(us, 1)))
                    .collect(),
            ),
        ),
        (
            "host_steal_s",
            Json::Arr(
                m.real.iter().map(|r| r.steal_s.map_or(Json::Null, |s| Json::f(s, 2))).collect(),
            ),
        ),
        ("goodput_agrees", Json::Bool(v.goodput_agrees())),
        ("jain_agrees", Json::Bool(v.jain_agrees())),
        ("goodput_firm", Json::Bool(v.firm.goodput)),
        ("jain_firm", Json::Bool(v.firm.jain)),
    ])
}

/// One line on what the simulator's side ran with beyond the files.
fn side_text(side: SimSide) -> String {
    let delay = side.host_delay.map_or("each file's".to_string(), |d| d.to_string());
    let read = side.read_delay.map_or("each file's".to_string(), |d| d.to_string());
    let hz = side.hz.map_or("each file's".to_string(), |hz| hz.to_string());
    let seed = side.seed.map_or("each file's seed".to_string(), |s| format!("seed {s}"));
    let phases = if side.tick_phases { ", tick phases spread over the runs" } else { "" };
    let psh = if side.psh { "psh on" } else { "psh each file's" };
    let hosts = side.hosts.name();
    match side.runs {
        1 => format!(
            "simulator (hosts {hosts}): host_delay {delay}, read_delay {read}, hz {hz}, {psh}, {seed}"
        ),
        n => format!(
            "simulator (hosts {hosts}): host_delay {delay}, read_delay {read}, hz {hz}, {psh}, {n} runs from {seed}{phases}; \"sim\" is their mean"
        ),
    }
}

fn json(all: &[Measured], verdicts: &[Verdict], quick: bool, side: SimSide) -> Json {
    let (judged, goodput_agree, jain_agree) = scenario_totals(verdicts);
    let (exits_agree, exits_judged) = exit_totals(verdicts);
    let [firm_goodput, firm_jain, firm_exits] = firm_totals(verdicts);
    Json::Obj(vec![
        ("quick", Json::Bool(quick)),
        (
            "simulator",
            Json::Obj(vec![
                ("hosts", Json::s(side.hosts.name())),
                ("host_delay_us", side.host_delay.map_or(Json::Null, |d| Json::f(d.as_nanos() as f64 / 1e3, 3))),
                ("read_delay_us", side.read_delay.map_or(Json::Null, |d| Json::f(d.as_nanos() as f64 / 1e3, 3))),
                ("hz", side.hz.map_or(Json::Null, |hz| Json::u(hz as u64))),
                ("seed", side.seed.map_or(Json::Null, Json::u)),
                ("runs", Json::u(side.runs)),
                ("tick_phases", Json::Bool(side.tick_phases)),
                ("psh", Json::Bool(side.psh)),
            ]),
        ),
        ("rules", Json::s("goodput: within 10% of the real mean or inside the real runs' range, every flow; Jain: within 0.05 of the real mean; slow-start exit cwnd: within 15% of the real mean; the real mean and range over the undisturbed real runs, a scenario with none not judged; a verdict is firm when it comes out the same with any one judged real run left out")),
        ("scenarios", Json::Arr(all.iter().zip(verdicts).map(|(m, v)| scenario_json(m, v)).collect())),
        ("counts", Json::Obj(vec![
            ("scenarios", Json::u(all.len() as u64)),
            ("scenarios_judged", Json::u(judged as u64)),
            ("goodput_agree", Json::u(goodput_agree as u64)),
            ("jain_agree", Json::u(jain_agree as u64)),
            ("ss_exit_agree", Json::u(exits_agree)),
            ("ss_exit_flows", Json::u(exits_judged)),
            ("firm", Json::Obj(vec![
                ("goodput", firm_goodput.json()),
                ("jain", firm_jain.json()),
                ("ss_exit", firm_exits.json()),
            ])),
        ])),
    ])
}

/// "12.34 [11.9-13.0]": the real mean and range in a figure's display scale.
fn real_text(m: &Measured, i: usize, get: Get, scale: f64, d: usize) -> String {
    let (mean, min, max) = m.real_spread(i, get);
    if !mean.is_finite() {
        return "-".into();
    }
    format!("{} [{}-{}]", num(mean * scale, d), num(min * scale, d), num(max * scale, d))
}

/// The rows of a scenario: per flow and figure, sim and real mean [range].
fn scenario_rows(m: &Measured) -> Vec<[String; 4]> {
    let mut rows = Vec::new();
    for i in 0..m.sim.flows.len() {
        for (key, label, _, get) in FIGURES {
            let (scale, d) = if *key == "goodput_bps" {
                (1e-6, 2)
            } else if key.ends_with("_s") || key.ends_with("_ms") {
                (1.0, 2)
            } else {
                (1.0, 0)
            };
            let sim = get(&m.sim.flows[i]);
            let mut sim = if sim.is_finite() { num(sim * scale, d) } else { "-".into() };
            if *key == "ss_exit_cwnd" {
                if let Some(counts) = value_counts(m.sim_runs.iter().map(|r| get(&r.flows[i]))) {
                    sim = format!("{sim} ({counts})");
                }
            }
            rows.push([
                format!("{} ({})", m.names[i].0, m.names[i].1),
                label.to_string(),
                sim,
                real_text(m, i, *get, scale, d),
            ]);
        }
    }
    rows
}

/// The most distinct values [`value_counts`] lists.
const MAX_LISTED_VALUES: usize = 4;

/// Whole-number values of several runs with how many runs took each ("89 x7, 133 x13"),
/// where they take two to [`MAX_LISTED_VALUES`] values. The simulated runs' slow-start
/// exits fall in two or three clusters (HyStart's test or one drop decides where a run
/// leaves), so their mean, which the verdict judges, is often a cwnd no run left at.
fn value_counts(values: impl Iterator<Item = f64>) -> Option<String> {
    let mut counts = std::collections::BTreeMap::<i64, usize>::new();
    for v in values.filter(|v| v.is_finite()) {
        *counts.entry(v.round() as i64).or_default() += 1;
    }
    (2..=MAX_LISTED_VALUES)
        .contains(&counts.len())
        .then(|| counts.iter().map(|(v, n)| format!("{v} x{n}")).collect::<Vec<_>>().join(", "))
}

/// One line per scenario: goodput per flow sim / real mean, Jain, verdicts.
fn terminal(all: &[Measured], verdicts: &[Verdict]) -> String {
    let mut s = String::from("scenario                  goodput Mbit/s per flow, sim / real mean            Jain sim / real   agrees: goodput Jain\n");
    for (m, v) in all.iter().zip(verdicts) {
        let flows: Vec<String> = (0..m.sim.flows.len())
            .map(|i| {
                let (mean, _, _) = m.real_spread(i, |f| f.goodput_bps);
                format!("{}/{}", num(m.sim.flows[i].goodput_bps * 1e-6, 1), num(mean * 1e-6, 1))
            })
            .collect();
        let (jain, _, _) = m.real_jain();
        let agrees = if v.judged {
            format!(
                "{:>7} {:>4}",
                v.marked(v.goodput_agrees(), v.firm.goodput),
                v.marked(v.calls.jain, v.firm.jain)
            )
        } else {
            "not judged: every real run disturbed".to_string()
        };
        s.push_str(&format!(
            "{:<25} {:<50} {:>5} / {:<9} {agrees}\n",
            m.stem,
            flows.join("  "),
            num(m.sim.jain, 3),
            num(jain, 3),
        ));
    }
    s.push_str(&totals_line(all.len(), verdicts));
    s.push('\n');
    s.push_str(&firm_line(verdicts));
    s.push('\n');
    s
}

/// The verdicts counted by how firm they are ("*" in the table: turns on one run).
fn firm_line(verdicts: &[Verdict]) -> String {
    let [goodput, jain, exits] = firm_totals(verdicts);
    format!(
        "with any one real run left out (*: turns on one run): goodput {}; Jain {}; slow-start exit cwnd {}",
        goodput.text(),
        jain.text(),
        exits.text()
    )
}

/// The verdicts counted over the matrix, as the terminal and the report's top give them.
fn totals_line(scenarios: usize, verdicts: &[Verdict]) -> String {
    let (judged, g, j) = scenario_totals(verdicts);
    let (e, flows) = exit_totals(verdicts);
    let unjudged = match scenarios - judged {
        0 => String::new(),
        n => format!(" ({n} of {scenarios} not judged: every real run disturbed)"),
    };
    format!(
        "goodput agrees on {g} of {judged} scenarios, Jain on {j} of {judged}, slow-start exit cwnd on {e} of {flows} flows{unjudged}"
    )
}

/// Simulated flows solid, each real run's dashed in the flow's colour.
fn cwnd_chart(m: &Measured) -> String {
    let shown = m.sim.flows.len().min(MAX_PLOTTED_FLOWS);
    let per_flow = 1 + m.real.len();
    let mut series = Vec::new();
    for i in 0..shown {
        series
            .push(Series { name: format!("sim {}", m.names[i].0), points: m.sim.cwnd[i].clone() });
        for (k, r) in m.real.iter().enumerate() {
            series.push(Series {
                name: format!("real {} {}", k + 1, m.names[i].0),
                points: r.cwnd[i].clone(),
            });
        }
    }
    let note = if shown < m.sim.flows.len() {
        format!("first {shown} of {} flows; simulated solid, real dashed", m.sim.flows.len())
    } else {
        "simulated solid, real runs dashed".to_string()
    };
    let chart = Chart {
        title: &m.stem,
        x_label: "time (s)",
        y_label: "cwnd (packets)",
        x_max: m.duration_s,
        series,
        note: Some(note),
    };
    chart.render_styled(&|s| (s / per_flow, s % per_flow != 0))
}

fn html(all: &[Measured], verdicts: &[Verdict], charts: &[String], side: SimSide) -> String {
    let mut h = String::from("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cclab fidelity</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1000px}table{border-collapse:collapse;margin:1em 0}td,th{padding:3px 10px;border-bottom:1px solid #ccc;text-align:right}td:first-child,th:first-child,td.l{text-align:left}</style></head><body>\n<h1>Simulator against the real kernel: how flows share a link</h1>\n");
    h.push_str(&format!("<p>{}.</p>\n", xml(&side_text(side))));
    h.push_str("<p>Per flow: simulated, and the real runs' mean [range]. Goodput agrees within 10% of the real mean or inside the real range (every flow); Jain within 0.05; slow-start exit cwnd within 15% of the real mean. The real mean and range are those of the real runs the machine left undisturbed (a disturbed run's packets left the emulator late, or a flow started late, because the host took the processors: it is drawn and listed but not judged); a scenario with no undisturbed run is not judged. Beside the simulated runs' mean exit, the exits they took and how many took each, where they took two to four (a mean of two clusters is a cwnd no run left at). Loss events shared: the share of a flow's cwnd reductions that another flow matched with one of its own within the larger of their srtt p95s (the drops of one overflow), which decides how unlike flows split a DropTail link. A verdict marked * turns on a single real run: judged again with each judged run left out in turn, it comes out both ways (with fewer than two judged runs every verdict is marked).</p>\n<table><tr><th>scenario</th><th>goodput agrees</th><th>Jain sim</th><th>Jain real</th><th>Jain agrees</th><th>slow-start exits agree</th></tr>\n");
    for (m, v) in all.iter().zip(verdicts) {
        let (mean, min, max) = m.real_jain();
        let (exits, judged) = v.exits();
        let exits_turning = match v.exits_turning() {
            0 => String::new(),
            n => format!(" ({n} turn on one run)"),
        };
        h.push_str(&format!(
            "<tr><td><a href=\"#{s}\">{s}</a></td><td>{}</td><td>{}</td><td>{} [{}-{}]</td><td>{}</td><td>{exits} of {judged}{exits_turning}</td></tr>\n",
            v.marked(v.goodput_agrees(), v.firm.goodput), num(m.sim.jain, 3), num(mean, 3), num(min, 3), num(max, 3), v.marked(v.calls.jain, v.firm.jain), s = xml(&m.stem)
        ));
    }
    h.push_str("</table>\n");
    h.push_str(&format!(
        "<p>{}.<br>{}.</p>\n",
        totals_line(all.len(), verdicts),
        firm_line(verdicts)
    ));
    for ((m, v), svg) in all.iter().zip(verdicts).zip(charts) {
        h.push_str(&format!("<h2 id=\"{s}\">{s}</h2>\n<p>{}</p>\n<p>{} real runs (seeds {}), {}; goodput agrees: {}; the kernel's HyStart exits per run: {}; packets the emulator released more than a packet time late, per run (and how late it woke from its sleeps, 99th percentile): {}</p>\n<table><tr><th>flow</th><th class=\"l\">figure</th><th>sim</th><th>real mean [range]</th></tr>\n", xml(&m.why), m.real.len(), seeds_text(m), judged_text(m), v.calls.goodput.iter().map(|&b| v.text(b)).collect::<Vec<_>>().join(", "), xml(&hystart_text(m)), xml(&late_text(m)), s = xml(&m.stem)));
        for r in scenario_rows(m) {
            h.push_str(&format!(
                "<tr><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>\n",
                xml(&r[0]),
                xml(&r[1]),
                xml(&r[2]),
                xml(&r[3])
            ));
        }
        h.push_str("</table>\n<div>\n");
        h.push_str(svg);
        h.push_str("</div>\n");
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(samples: &[(f64, f64, f64)]) -> FlowSeries {
        FlowSeries {
            cwnd: vec![samples.iter().map(|s| (s.0, s.1)).collect()],
            ssthresh: vec![samples.iter().map(|s| (s.0, s.2)).collect()],
            delivered: vec![Vec::new()],
            srtt_ms: vec![Vec::new()],
        }
    }

    #[test]
    fn srtt_percentiles_skip_the_samples_before_the_first_rtt() {
        let mut s = series(&[]);
        assert!(s.srtt_percentiles(0, [0.5])[0].is_nan());
        s.srtt_ms[0] = [0.0, 0.0, 50.0, 40.0, 30.0, 20.0, 10.0].iter().map(|&r| (0.0, r)).collect();
        assert_eq!(s.srtt_percentiles(0, [0.0, 0.5, 0.95, 1.0]), [10.0, 30.0, 50.0, 50.0]);
        assert_eq!(s.srtt_percentiles(0, [0.2, 0.21]), [10.0, 20.0]);
    }

    #[test]
    fn slow_start_exit_is_the_peak_before_the_first_finite_ssthresh() {
        let inf = INFINITE_SSTHRESH;
        // A loss exit: cwnd peaked at 80, then ssthresh 56 and cwnd cut.
        let s =
            series(&[(1.0, 10.0, inf), (1.01, 40.0, inf), (1.02, 80.0, inf), (1.03, 57.0, 56.0)]);
        let (cwnd, after) = slow_start_exit(&s, 0, 1.0);
        assert_eq!(cwnd, 80.0);
        assert!((after - 0.03).abs() < 1e-9, "{after}");
        // HyStart's exit: ssthresh = cwnd, no reduction, so no loss event.
        let s =
            series(&[(0.0, 10.0, inf), (0.01, 30.0, 30.0), (0.02, 31.0, 30.0), (0.03, 20.0, 21.0)]);
        assert_eq!(slow_start_exit(&s, 0, 0.0), (30.0, 0.01));
        assert_eq!(loss_event_times(&s, 0), [0.03]);
        // Two reductions to the same ssthresh, the second over two samples: two events.
        let cycles = series(&[
            (0.0, 60.0, 42.0),
            (0.01, 66.0, 42.0),
            (0.02, 46.0, 46.0),
            (0.03, 60.0, 46.0),
            (0.04, 66.0, 46.0),
            (0.05, 56.0, 46.0),
            (0.06, 56.0, 46.0),
            (0.07, 46.0, 46.0),
            (0.08, 47.0, 46.0),
        ]);
        assert_eq!(loss_event_times(&cycles, 0), [0.02, 0.05]);
        let never = series(&[(0.0, 10.0, inf), (0.01, 20.0, inf)]);
        assert!(slow_start_exit(&never, 0, 0.0).0.is_nan());
        assert!(loss_event_times(&never, 0).is_empty());
    }

    #[test]
    fn the_steal_in_a_window_is_read_from_kernel_json_growth_at_its_two_ends() {
        let v: serde_json::Value =
            serde_json::from_str("[[0.5, 0, 10], [1.25, 20, 10], [2.0, 20, 40]]").unwrap();
        let growth = steal_growth(&v).unwrap();
        assert_eq!(growth, vec![(0.5, 0.01), (1.25, 0.03), (2.0, 0.06)]);
        let between = |from, to| steal_until(&growth, to) - steal_until(&growth, from);
        assert_eq!(between(0.0, 0.4), 0.0);
        assert_eq!(between(0.0, 0.5), 0.01);
        assert!((between(0.5, 1.9) - 0.02).abs() < 1e-12);
        assert!((between(0.0, 9.0) - 0.06).abs() < 1e-12);
        assert!(steal_growth(&serde_json::from_str("[[0.5, \"x\"]]").unwrap()).is_none());
        assert_eq!(steal_growth(&serde_json::from_str("[]").unwrap()), Some(vec![]));
        assert_eq!(
            slow_start_steal_text(&[Some(0.0), None, Some(0.03), Some(0.01)]),
            ", 0.03 s of it in a slow start"
        );
        assert_eq!(slow_start_steal_text(&[Some(0.0), None]), "");
    }

    #[test]
    fn a_loss_event_is_shared_when_another_flow_reduces_within_the_larger_rtt() {
        // Flow 0 (RTT 0.1 s) reduces at 5, 10 and 15 s; flow 1 (RTT 0.3 s) at 5.25 s (within
        // its own RTT of 5 s, not of flow 0's) and 10.5 s (within neither).
        let losses = vec![vec![5.0, 10.0, 15.0], vec![5.25, 10.5]];
        let rtt = [0.1, 0.3];
        assert!((shared_losses(&losses, &rtt, 0) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(shared_losses(&losses, &rtt, 1), 0.5);
        // The window is the larger RTT on both sides: with flow 1's RTT at 0.2 s, 5.25 s
        // is no longer shared.
        assert_eq!(shared_losses(&losses, &[0.1, 0.2], 0), 0.0);
        // Any other flow counts, once.
        let three = vec![vec![5.0], vec![5.05], vec![5.08]];
        assert_eq!(shared_losses(&three, &[0.1; 3], 0), 1.0);
        // No loss events, or no other flow: no share.
        assert!(shared_losses(&[vec![], vec![1.0]], &rtt, 0).is_nan());
        assert!(shared_losses(&[vec![1.0]], &[0.1], 0).is_nan());
    }

    #[test]
    fn exits_are_counted_over_the_flows_that_left_slow_start() {
        let v = |ss_exit: Vec<Option<bool>>| Verdict {
            judged: true,
            firm: Firm { goodput: true, jain: true, ss_exit: vec![true; ss_exit.len()] },
            calls: Calls { goodput: vec![], jain: true, ss_exit },
        };
        let verdicts = [v(vec![Some(true), Some(false)]), v(vec![None, Some(true), Some(true)])];
        assert_eq!(verdicts[1].exits(), (2, 2));
        assert_eq!(exit_totals(&verdicts), (3, 4));
        assert!(totals_line(2, &verdicts).ends_with("slow-start exit cwnd on 3 of 4 flows"));
    }

    /// A real run with one flow of `goodput` Mbit/s leaving slow start at cwnd `exit`.
    fn run(goodput: f64, exit: f64, jain: f64, disturbed: bool) -> RunFigures {
        let flow = FlowFigures {
            goodput_bps: goodput * 1e6,
            srtt_p50_ms: 20.0,
            srtt_p95_ms: 25.0,
            ss_exit_cwnd: exit,
            ss_exit_s: 0.5,
            loss_events: 3.0,
            shared_losses_pct: f64::NAN,
            retransmits: 10.0,
            drops: 10.0,
        };
        RunFigures {
            seed: 1,
            jain,
            flows: vec![flow],
            cwnd: vec![Vec::new()],
            hystart: None,
            late: Some((if disturbed { 4.0 } else { 0.1 }, disturbed)),
            wake_p99_us: None,
            start_late: None,
            steal_s: None,
            ss_steal_s: vec![None],
        }
    }

    fn measured(sim: RunFigures, real: Vec<RunFigures>) -> Measured {
        Measured {
            stem: "case".into(),
            why: String::new(),
            duration_s: 10.0,
            names: vec![("a".into(), "cubic".into())],
            sim: mean_of(std::slice::from_ref(&sim)),
            sim_runs: vec![sim],
            real,
        }
    }

    #[test]
    fn verdicts_judge_the_undisturbed_runs_and_no_scenario_without_one() {
        // With the disturbed run (5 Mbit/s, Jain 0.5, exit 30) the real range would hold
        // the simulated 10 Mbit/s, Jain would be within 0.05 of the mean and the exit 100
        // not within 15% of it; over the undisturbed run each verdict is the other way.
        let real = vec![run(20.0, 90.0, 0.9, false), run(5.0, 30.0, 0.5, true)];
        let m = measured(run(10.0, 100.0, 0.7, false), real);
        assert_eq!(m.real_spread(0, |f| f.goodput_bps), (20e6, 20e6, 20e6));
        assert_eq!(m.real_jain().0, 0.9);
        let v = verdict(&m);
        assert!(v.judged && !v.goodput_agrees() && !v.jain_agrees());
        assert_eq!((v.exits(), v.text(v.goodput_agrees())), ((1, 1), "no"));
        assert_eq!(judged_text(&m), "1 undisturbed, judged");
        // Every run disturbed: the figures are theirs, the verdicts none.
        let real = vec![run(10.0, 100.0, 0.7, true), run(10.0, 100.0, 0.7, true)];
        let m = measured(run(10.0, 100.0, 0.7, false), real);
        assert_eq!(m.real_spread(0, |f| f.goodput_bps).0, 10e6);
        let unjudged = verdict(&m);
        assert!(!unjudged.judged && unjudged.calls.goodput[0] && unjudged.calls.jain);
        assert!(!unjudged.goodput_agrees() && !unjudged.jain_agrees());
        assert_eq!((unjudged.exits(), unjudged.text(true)), ((0, 0), "not judged"));
        let verdicts = [v, unjudged];
        assert_eq!(scenario_totals(&verdicts), (1, 0, 0));
        assert_eq!(
            totals_line(2, &verdicts),
            "goodput agrees on 0 of 1 scenarios, Jain on 0 of 1, slow-start exit cwnd on 1 of 1 flows (1 of 2 not judged: every real run disturbed)"
        );
    }

    #[test]
    fn a_verdict_one_real_run_decides_is_marked_as_turning_on_it() {
        // Goodput: simulated 13 Mbit/s is inside the range of 10, 10 and 14, but 30% off
        // the two runs of 10 alone. Jain 0.80 is within 0.05 of the mean of any two of
        // 0.80, 0.82 and 0.84; the exit 60 more than 15% below that of any two of 90, 90
        // and 140. The disturbed run is neither judged nor left out.
        let real = vec![
            run(10.0, 90.0, 0.80, false),
            run(10.0, 90.0, 0.82, false),
            run(14.0, 140.0, 0.84, false),
            run(40.0, 60.0, 0.2, true),
        ];
        let m = measured(run(13.0, 60.0, 0.80, false), real);
        let v = verdict(&m);
        assert!(v.goodput_agrees() && v.jain_agrees() && v.calls.ss_exit == [Some(false)]);
        assert_eq!(v.firm, Firm { goodput: false, jain: true, ss_exit: vec![true] });
        assert_eq!(v.marked(v.goodput_agrees(), v.firm.goodput), "yes*");
        assert_eq!(v.marked(v.calls.jain, v.firm.jain), "yes");
        let one = |agree, disagree, turn| FirmCount { agree, disagree, turn };
        assert_eq!(
            firm_totals(std::slice::from_ref(&v)),
            [one(0, 0, 1), one(1, 0, 0), one(0, 1, 0)]
        );
        assert_eq!(
            firm_line(std::slice::from_ref(&v)),
            "with any one real run left out (*: turns on one run): goodput 0 yes, 0 no, 1 turn on one run; Jain 1 yes, 0 no, 0 turn on one run; slow-start exit cwnd 0 yes, 1 no, 0 turn on one run"
        );
        // One judged run: leaving it out leaves nothing, so no verdict is firm; a
        // scenario not judged is counted nowhere and marked "not judged".
        let m = measured(run(13.0, 60.0, 0.80, false), vec![run(10.0, 90.0, 0.8, false)]);
        let single = verdict(&m);
        assert_eq!(single.firm, Firm { goodput: false, jain: false, ss_exit: vec![false] });
        assert_eq!(single.marked(single.goodput_agrees(), single.firm.goodput), "no*");
        assert_eq!((v.exits_turning(), single.exits_turning()), (0, 1));
        // Three disturbed runs, whose verdicts would stand leaving out any one.
        let disturbed = (0..3).map(|_| run(10.0, 90.0, 0.8, true)).collect();
        let m = measured(run(13.0, 60.0, 0.80, false), disturbed);
        let unjudged = verdict(&m);
        assert_eq!(unjudged.firm, Firm { goodput: false, jain: false, ss_exit: vec![false] });
        assert_eq!(unjudged.marked(unjudged.calls.jain, unjudged.firm.jain), "not judged");
        assert_eq!(unjudged.exits_turning(), 0);
        let counts = firm_totals(&[single, unjudged]);
        assert_eq!(counts, [one(0, 0, 1), one(0, 0, 1), one(0, 0, 1)]);
    }

    #[test]
    fn value_counts_list_a_few_clusters_and_nothing_else() {
        let runs = [89.0, 133.0, 89.0, f64::NAN, 133.0, 133.0];
        assert_eq!(value_counts(runs.into_iter()).as_deref(), Some("89 x2, 133 x3"));
        // One value, or more than a few: nothing to add to the mean.
        assert_eq!(value_counts([64.0; 20].into_iter()), None);
        assert_eq!(value_counts((1..=5).map(f64::from)), None);
        assert_eq!(value_counts(std::iter::empty()), None);
    }

    #[test]
    fn agreement_is_within_the_tolerance_or_the_real_range() {
        assert!(agrees_rel(10.5, (10.0, 9.9, 10.1), 0.10));
        assert!(!agrees_rel(11.5, (10.0, 9.9, 10.1), 0.10));
        assert!(agrees_rel(14.0, (10.0, 6.0, 14.0), 0.10));
        assert!(!agrees_rel(f64::NAN, (10.0, 6.0, 14.0), 0.10));
        assert_eq!(spread([1.0, f64::NAN, 3.0].into_iter()), (2.0, 1.0, 3.0));
    }
}
