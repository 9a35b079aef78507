//! `cclab._cclab`: the native half of the Python package. It holds no rule of its own:
//! scenarios are read and checked by cclab_scenario, runs are stepped and written by the
//! `cclab` command's own code (cclab_cli::run, ::results, ::sweep), so a run from Python
//! gives the very files `cclab run` writes. The Python half (python/cclab/) turns those
//! files into DataFrames and drives sweeps (threads, or Ray tasks).
//!
//! Long calls release the GIL and check for Ctrl-C between steps. A panic in a run (a bug)
//! reaches Python as `cclab.RunError` saying so, not as pyo3's `PanicException`, which
//! derives from `BaseException` and escapes `except Exception`.

use cclab_cli::results::Staging;
use cclab_cli::run::{execute_with, Running};
use cclab_cli::series::SeriesFormat;
use cclab_cli::sweep::{self, caught_panic};
use cclab_scenario::sweep::Plan;
use cclab_scenario::{Loaded, ScenarioError};
use cclab_sim::LiveClock;
use cclab_units::Time;
use cclab_web::catalog::ShownValue;
use cclab_web::live::LiveChange;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::{Path, PathBuf};

mod convert;

/// A scenario's source as `cclab.Scenario` keeps it: (text, file, base_dir, stem,
/// overrides), the arguments of `cclab_scenario::parse_str_or_sweep`.
#[derive(FromPyObject, Clone)]
struct Source(String, String, Option<String>, String, Vec<String>);

impl Source {
    fn load(&self) -> Result<Loaded, ScenarioError> {
        let Source(text, file, dir, stem, overrides) = self;
        let dir = dir.as_ref().map(PathBuf::from);
        cclab_scenario::parse_str_or_sweep(text, file, dir.as_deref(), stem, overrides)
    }

    fn file(&self) -> &str {
        &self.1
    }
}

/// `cclab.ScenarioError` (defined in Python, cclab/_errors.py) with the error's parts.
fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let made = py.import("cclab._errors").and_then(|m| m.getattr("ScenarioError")).and_then(|c| {
        c.call1((
            e.text_naming_overrides("Scenario.set"),
            &e.file,
            e.line,
            e.from_override,
            &e.field,
            e.value.as_deref(),
            &e.message,
        ))
    });
    match made {
        Ok(err) => PyErr::from_value(err),
        Err(e) => e,
    }
}

/// `cclab.RunError` for a run that could not be done (a results folder refused, ...).
fn run_error(py: Python<'_>, message: String) -> PyErr {
    match py.import("cclab._errors").and_then(|m| m.getattr("RunError")) {
        Ok(c) => match c.call1((message,)) {
            Ok(err) => PyErr::from_value(err),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

fn load(py: Python<'_>, src: &Source) -> PyResult<Loaded> {
    src.load().map_err(|e| scenario_error(py, &e))
}

fn load_single(py: Python<'_>, src: &Source) -> PyResult<cclab_scenario::Scenario> {
    match load(py, src)? {
        Loaded::Single(s) => Ok(*s),
        Loaded::Sweep(_) => Err(run_error(
            py,
            format!("{}: has a [sweep] table; run it with cclab.sweep", src.file()),
        )),
    }
}

/// Reads a scenario file as `cclab run FILE` does: (text, file, base_dir, stem).
#[pyfunction]
fn read_file(py: Python<'_>, path: PathBuf) -> PyResult<(String, String, Option<String>, String)> {
    let s = cclab_scenario::read_source(&path).map_err(|e| scenario_error(py, &e))?;
    Ok((s.text, s.file, s.dir.map(|d| d.display().to_string()), s.stem))
}

/// Checks a scenario; returns what Python shows of it: name, whether it is a sweep, the
/// number of runs, and each flow's name and algorithm (of the first run for a sweep).
#[pyfunction]
fn check<'py>(py: Python<'py>, src: Source) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let loaded = load(py, &src)?;
    // The package always writes the time series (its frames are read from them), so a
    // scenario whose series would not fit is refused here, as a file is by `cclab run`
    // without `--series none`.
    let scenarios: Vec<&cclab_scenario::Scenario> = match &loaded {
        Loaded::Single(s) => vec![s],
        Loaded::Sweep(plan) => plan.runs.iter().map(|r| &r.scenario).collect(),
    };
    for scn in scenarios {
        scn.check_series_size().map_err(|e| scenario_error(py, &e))?;
    }
    let scn = match loaded {
        Loaded::Single(s) => {
            d.set_item("sweep", false)?;
            d.set_item("runs", 1)?;
            *s
        }
        Loaded::Sweep(plan) => {
            d.set_item("sweep", true)?;
            d.set_item("runs", plan.runs.len())?;
            match plan.runs.into_iter().next() {
                Some(r) => r.scenario,
                None => return Ok(d),
            }
        }
    };
    d.set_item("name", &scn.name)?;
    d.set_item("seed", scn.config.seed)?;
    d.set_item("duration_ns", scn.config.duration.as_nanos())?;
    d.set_item("sample_interval_ns", scn.config.sample_interval.as_nanos())?;
    let flows = PyList::empty(py);
    for f in &scn.config.flows {
        flows.append((&f.name, &f.cc))?;
    }
    d.set_item("flows", flows)?;
    Ok(d)
}

/// The stepping loop of a whole run checks for Ctrl-C through this: between steps it
/// takes the GIL back for a moment.
fn check_signals(pending: &mut Option<PyErr>) -> Result<(), String> {
    match Python::with_gil(|py| py.check_signals()) {
        Ok(()) => Ok(()),
        Err(e) => {
            *pending = Some(e);
            Err("interrupted".to_string())
        }
    }
}

/// Runs a scenario and writes its results folder `out` (as `cclab run --out`), with the
/// GIL released; Ctrl-C stops it and nothing is written.
#[pyfunction]
fn run(py: Python<'_>, src: Source, out: PathBuf) -> PyResult<()> {
    let scn = load_single(py, &src)?;
    let mut interrupted = None;
    let file = src.file().to_string();
    let done = py.allow_threads(|| {
        caught_panic(|| {
            execute_with(&scn, &file, (&out, SeriesFormat::Auto), &[], &mut |_| {
                check_signals(&mut interrupted)
            })
            .map(|_| ())
        })
        .and_then(|done| done)
    });
    match (done, interrupted) {
        (_, Some(e)) => Err(e),
        (Ok(()), None) => Ok(()),
        (Err(msg), None) => Err(run_error(py, msg)),
    }
}

/// Copies the results folder `from` to `dest` the way `cclab run --out` writes one:
/// staged beside it and moved into place; a `dest` that is not a results folder is
/// refused.
#[pyfunction]
fn save(py: Python<'_>, from: PathBuf, dest: PathBuf) -> PyResult<()> {
    let names = std::fs::read_dir(&from)
        .and_then(|d| d.map(|e| e.map(|e| e.file_name())).collect::<Result<Vec<_>, _>>())
        .map_err(|e| run_error(py, format!("cannot read {}: {e}", from.display())))?;
    let files = names
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(from.join(&n))
                .map_err(|e| format!("cannot read {}: {e}", from.join(&n).display()))?;
            Ok((n.to_string_lossy().into_owned(), bytes))
        })
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| run_error(py, e))?;
    write_folder(&dest, &files).map_err(|e| run_error(py, e))
}

/// Writes `files` (plain names) as the results folder `dest`, staged and moved into place.
fn write_folder(dest: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    let staging = Staging::new(dest)?;
    for (name, bytes) in files {
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(format!("{name:?} is not a results file name"));
        }
        let path = staging.path().join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    staging.commit().map(|_| ())
}

/// The built-in default scenario: (text, file, stem).
#[pyfunction]
fn default_source() -> (&'static str, &'static str, &'static str) {
    (cclab_scenario::DEFAULT_SCENARIO, cclab_scenario::DEFAULT_FILE_NAME, "default")
}

/// One flow's goodput in Mbit/s over time from its (time s, delivered bytes) samples, over
/// a sliding window of `window` s: the report's goodput plot.
#[pyfunction]
fn goodput_points(samples: Vec<(f64, u64)>, window: f64) -> Vec<(f64, f64)> {
    cclab_cli::results::goodput_points(&samples, window)
}

/// A duration as scenario files write it ("30s", "250ms") in nanoseconds.
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<u64> {
    cclab_units::parse_duration(text)
        .map(|d| d.as_nanos())
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("{text:?}: {e}")))
}

/// Every algorithm and parameter as rows: (algorithm, summary, source, parameter, kind,
/// default, min, min_exclusive, max, allowed, unit, doc); an algorithm without parameters
/// has one row with the parameter columns None.
#[pyfunction]
fn algorithms() -> Vec<AlgorithmRow> {
    let mut rows = Vec::new();
    for a in cclab_cc::ALGORITHMS {
        let row = |p: Option<&cclab_cc::ParamSpec>| {
            (
                a.name,
                a.summary,
                a.source,
                p.map(|p| p.name),
                p.map(|p| format!("{:?}", p.kind).to_lowercase()),
                p.map(|p| p.default),
                p.map(|p| p.min),
                p.map(|p| p.min_exclusive),
                p.map(|p| p.max),
                p.map(|p| p.allowed()),
                p.map(|p| p.unit),
                p.map(|p| p.doc),
            )
        };
        if a.params.is_empty() {
            rows.push(row(None));
        }
        rows.extend(a.params.iter().map(|p| row(Some(p))));
    }
    rows
}

type AlgorithmRow = (
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<String>,
    Option<f64>,
    Option<f64>,
    Option<bool>,
    Option<f64>,
    Option<String>,
    Option<&'static str>,
    Option<&'static str>,
);

/// A run stepped from Python (`cclab.Simulation`): the same [`Running`] that `cclab run`
/// steps, with live changes placed by the simulator's [`LiveClock`].
#[pyclass(module = "cclab._cclab")]
struct Simulation {
    run: Option<Running>,
    scenario: cclab_scenario::Scenario,
    clock: LiveClock,
    /// Simulated nanoseconds per step between checks for Ctrl-C.
    step_ns: u64,
    changes: Vec<(u64, usize, String, ShownValue)>,
}

impl Simulation {
    fn running(&mut self, py: Python<'_>) -> PyResult<&mut Running> {
        self.run.as_mut().ok_or_else(|| run_error(py, "the simulation has finished".to_string()))
    }
}

#[pymethods]
impl Simulation {
    /// Builds the run; its results folder will be `out` (written by `finish`).
    #[new]
    fn new(py: Python<'_>, src: Source, out: PathBuf) -> PyResult<Simulation> {
        let scn = load_single(py, &src)?;
        let clock = LiveClock::new(&scn.config);
        let step_ns = (scn.config.duration.as_nanos() / 1000).max(1_000);
        let run = caught_panic(|| Running::start(&scn, src.file(), (&out, SeriesFormat::Csv)))
            .and_then(|started| started)
            .map_err(|e| run_error(py, e))?;
        Ok(Simulation { run: Some(run), scenario: scn, clock, step_ns, changes: Vec::new() })
    }

    /// Runs every event up to `t_ns` (capped at the end); true when the run is over.
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<bool> {
        let step_ns = self.step_ns;
        let run = self.running(py)?;
        let now_ns = run.sim().now().as_nanos();
        if t_ns < now_ns {
            let s = |ns: u64| ns as f64 / 1e9;
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "t = {} s: before now ({} s); a simulation only goes forward",
                s(t_ns),
                s(now_ns)
            )));
        }
        let t_ns = t_ns.min(run.end().as_nanos());
        loop {
            let next = run.sim().now().as_nanos().saturating_add(step_ns).min(t_ns);
            let finished = match py.allow_threads(|| caught_panic(|| run.run_until(Time(next)))) {
                Ok(finished) => finished,
                Err(e) => {
                    // The run's state is unknown after a panic: it is ended, not stepped on.
                    self.run = None;
                    return Err(run_error(py, format!("{e}; the simulation has ended")));
                }
            };
            py.check_signals()?;
            if finished || next >= t_ns {
                return Ok(finished);
            }
        }
    }

    /// Simulated time now, ns.
    #[getter]
    fn now_ns(&mut self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.running(py)?.sim().now().as_nanos())
    }

    /// The run's duration, ns.
    #[getter]
    fn end_ns(&mut self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.running(py)?.end().as_nanos())
    }

    /// Changes a parameter of flow `flow` now; returns the instant (ns) of the
    /// `[[changes]]` entry that replays it.
    /// `switch`: the value was given as True/False (refused for a parameter that is a number).
    fn set_param(
        &mut self,
        py: Python<'_>,
        flow: usize,
        name: &str,
        value: f64,
        switch: bool,
    ) -> PyResult<u64> {
        if let (true, Some(f)) = (switch, self.scenario.config.flows.get(flow)) {
            cclab_web::catalog::refuse_switch_value(&f.cc, name, value != 0.0)
                .map_err(pyo3::exceptions::PyValueError::new_err)?;
        }
        let clock = &self.clock;
        let run = self
            .run
            .as_mut()
            .ok_or_else(|| run_error(py, "the simulation has finished".to_string()))?;
        let at = run
            .set_param(clock, flow, name, value)
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        let value = ShownValue::of(&self.scenario.config.flows[flow].cc, name, value);
        self.changes.push((at, flow, name.to_string(), value));
        Ok(at)
    }

    /// The live changes so far: (at_ns, flow, name, value), a switch's value a bool.
    #[getter]
    fn changes(&self, py: Python<'_>) -> PyResult<Vec<(u64, usize, String, PyObject)>> {
        let shown = |v: ShownValue| -> PyResult<PyObject> {
            Ok(match v {
                ShownValue::Switch(on) => on.into_pyobject(py)?.to_owned().into_any().unbind(),
                ShownValue::Number(x) => x.into_pyobject(py)?.into_any().unbind(),
            })
        };
        self.changes.iter().map(|(at, f, n, v)| Ok((*at, *f, n.clone(), shown(*v)?))).collect()
    }

    /// The `[[changes]]` entries (TOML text) that replay the live changes, as the lab
    /// UI saves them.
    fn changes_toml(&self) -> String {
        self.changes
            .iter()
            .map(|(at_ns, flow, name, value)| {
                let ch =
                    LiveChange { at_ns: *at_ns, flow: *flow, name: name.clone(), value: *value };
                cclab_web::replay::change_entry(&self.scenario, &ch)
            })
            .collect()
    }

    /// flows.csv and queue.csv as written so far.
    fn series_files(&mut self, py: Python<'_>) -> PyResult<(PathBuf, PathBuf)> {
        self.running(py)?.series_files().map_err(|e| run_error(py, e))
    }

    /// Writes the results folder for the run so far (summary, plots, report) and ends it.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let run = self
            .run
            .take()
            .ok_or_else(|| run_error(py, "the simulation has finished".to_string()))?;
        let scn = &self.scenario;
        py.allow_threads(|| caught_panic(|| run.finish(scn, &[])).and_then(|written| written))
            .map(|_| ())
            .map_err(|e| run_error(py, e))
    }
}

/// A sweep's run: (run, point, seed, [(field, value)...]).
type RunRow = (usize, usize, u64, Vec<(String, String)>);

/// A sweep's plan (`cclab.sweep`): every run, validated, and the `cclab run` sweep
/// runner's own pieces to run one, gather results and write the tables.
#[pyclass(module = "cclab._cclab", frozen)]
struct SweepPlan {
    plan: Plan,
    file: String,
}

#[pymethods]
impl SweepPlan {
    #[new]
    fn new(py: Python<'_>, src: Source) -> PyResult<SweepPlan> {
        match load(py, &src)? {
            Loaded::Sweep(plan) => Ok(SweepPlan { plan, file: src.file().to_string() }),
            Loaded::Single(_) => {
                Err(run_error(py, format!("{}: has no [sweep] table", src.file())))
            }
        }
    }

    /// The `FIELD=VALUE` overrides whose field the sweep sets in every run, so that
    /// they have no effect: (field, the `sweep` path that changes its values).
    fn overridden(&self, overrides: Vec<String>) -> Vec<(String, String)> {
        let found = self.plan.overridden_axes(&overrides);
        found.into_iter().map(|(field, axis)| (field.to_string(), axis.set_path.clone())).collect()
    }

    /// Every run: (run, point, seed, [(field, value)...]).
    fn runs(&self) -> Vec<RunRow> {
        let values = |r| {
            self.plan
                .values_of(r)
                .into_iter()
                .map(|(f, v)| (f.to_string(), v.to_string()))
                .collect()
        };
        self.plan.runs.iter().map(|r| (r.index, r.point, r.seed, values(r))).collect()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.plan.name
    }

    /// Creates `out` (or checks it is a sweep's folder) and writes sweep.json; returns a
    /// note when earlier runs there are removed or run again.
    fn prepare(&self, py: Python<'_>, out: PathBuf) -> PyResult<Option<String>> {
        let earlier = sweep::prepare_folder(&out, &self.plan).map_err(|e| run_error(py, e))?;
        Ok(earlier.note(&out))
    }

    /// The runs not done yet in `out`.
    fn todo(&self, out: PathBuf) -> Vec<usize> {
        let points = out.join("points");
        self.plan.runs.iter().filter(|r| !sweep::is_done(&points, r)).map(|r| r.index).collect()
    }

    /// Runs run `k` into `out/points/k` with the GIL released; returns the failure
    /// message as `cclab run` reports it, or None.
    fn run_one(&self, py: Python<'_>, out: PathBuf, k: usize) -> PyResult<Option<String>> {
        let run = self.plan.runs.get(k).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!("run {k} is not in the sweep"))
        })?;
        let points = out.join("points");
        let done = py.allow_threads(|| {
            sweep::run_one(&self.plan, &self.file, &points, run, SeriesFormat::Auto)
        });
        Ok(done.err().map(|e| format!("run {k} ({}) failed: {e}", sweep::describe(run))))
    }

    /// Puts run `k`'s files (made elsewhere, e.g. by a Ray worker) in `out/points/k`.
    fn store(
        &self,
        py: Python<'_>,
        out: PathBuf,
        k: usize,
        files: Vec<(String, Vec<u8>)>,
    ) -> PyResult<()> {
        write_folder(&out.join("points").join(k.to_string()), &files).map_err(|e| run_error(py, e))
    }

    /// Writes sweep.csv, sweep.parquet and sweep.html from the runs done in `out`;
    /// returns sweep.csv's text.
    fn finish(&self, py: Python<'_>, out: PathBuf, failed: Vec<String>) -> PyResult<String> {
        let table = py
            .allow_threads(|| sweep::write_tables(&self.plan, &out, &failed))
            .map_err(|e| run_error(py, e))?;
        Ok(table.csv())
    }
}

/// The field of a `FIELD=VALUE` change, as the scenario reads it (quoted keys kept whole).
#[pyfunction]
fn override_field(spec: &str) -> String {
    cclab_scenario::split_override(spec).map_or(spec, |(f, _)| f).trim().to_string()
}

/// A Python value as an inline TOML value (`--set` and `[sweep]` values).
#[pyfunction]
fn toml_value(v: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(convert::value(v)?.to_string())
}

/// A Python dict as a TOML document.
#[pyfunction]
fn toml_document(d: &Bound<'_, PyDict>) -> PyResult<String> {
    convert::document(d)
}

#[pymodule]
fn _cclab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_file, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(default_source, m)?)?;
    m.add_function(wrap_pyfunction!(goodput_points, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(toml_value, m)?)?;
    m.add_function(wrap_pyfunction!(override_field, m)?)?;
    m.add_function(wrap_pyfunction!(toml_document, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<SweepPlan>()?;
    Ok(())
}
