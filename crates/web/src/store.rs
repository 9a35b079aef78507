//! The server's results folder: saved runs (each a normal results folder, written by the
//! `cclab run` writer, plus the scenario that reproduces it), comparisons and uploaded
//! traces. Names from requests are checked to be plain names, and only regular files
//! directly inside a saved run's folder are served: nothing outside the folder is read or
//! written.

use crate::catalog::{valid_trace_name, Traces};
use crate::error::{ApiError, ApiResult};
use crate::runs::Run;
use crate::ResultFiles;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Sub-folder of the results folder holding comparisons.
const COMPARE_DIR: &str = ".compare";
/// Sub-folder holding uploaded traces.
pub const UPLOAD_DIR: &str = ".traces";

pub struct Store {
    pub dir: PathBuf,
    pub traces: Traces,
    results: Arc<dyn ResultFiles>,
    /// Names promised to runs still to be saved: a second run asking for one of them
    /// is refused at once, rather than both answered "pending" and one overwritten.
    promised: Mutex<BTreeSet<String>>,
    /// Held while a comparison is rebuilt: two requests for one pair would otherwise
    /// remove and write the same folder at once.
    comparing: Mutex<()>,
    /// Held from the check that a trace name is free until the trace is in place, so
    /// that of two uploads under one name, one is kept and the other refused; and while
    /// one is deleted.
    changing_traces: Mutex<()>,
    /// What the folder may hold (`Limits::max_disk_bytes`).
    max_bytes: u64,
}

/// A saved run's name: 1 to 64 letters, digits, '.', '_', '-', starting with a letter
/// or digit (so never "..", never hidden, never a path).
pub fn check_name(field: &str, name: &str) -> ApiResult<()> {
    let ok = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ApiError::field(field, format!("\"{name}\": allowed: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")))
    }
}

/// The refusal of a name a saved run has.
fn taken(name: &str) -> ApiError {
    ApiError::conflict(format!("a saved run \"{name}\" exists; choose another name"))
}

/// Regular files directly in `dir` (no folders, no symbolic links), sorted.
fn files_in(dir: &Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            let name = e.file_name().to_str()?.to_string();
            (meta.is_file() && !name.starts_with('.')).then_some((name, meta.len()))
        })
        .collect();
    out.sort();
    out
}

/// When a file was written, in seconds since 1970 (the page offers the latest saved runs
/// to compare; names sort by name, not by age).
fn saved_at_s(file: &Path) -> Option<f64> {
    let modified = std::fs::metadata(file).and_then(|m| m.modified()).ok()?;
    Some(modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64())
}

fn files_json(dir: &Path) -> Vec<Value> {
    files_in(dir).into_iter().map(|(n, size)| json!({ "name": n, "bytes": size })).collect()
}

/// The content type a file is served with.
pub fn content_type(file: &str) -> &'static str {
    match file.rsplit('.').next() {
        Some("json") => "application/json",
        Some("csv") => "text/csv; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("html") => "text/html; charset=utf-8",
        Some("toml") | Some("trace") | Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

impl Store {
    pub fn new(
        dir: PathBuf,
        ready_traces: Vec<PathBuf>,
        results: Arc<dyn ResultFiles>,
        max_bytes: u64,
    ) -> Store {
        let traces = Traces { ready: ready_traces, uploads: dir.join(UPLOAD_DIR) };
        let store = Store {
            dir,
            traces,
            results,
            promised: Mutex::new(BTreeSet::new()),
            comparing: Mutex::new(()),
            changing_traces: Mutex::new(()),
            max_bytes,
        };
        store.remove_leftovers();
        store
    }

    /// Removes the work files of server processes that are gone. A process names its work
    /// files with its id (`.save-RUN-PID` and `.deleting-NAME-PID` folders,
    /// `.traces/.NAME.PID.part` files, and the results writer's `.NAME.partial-PID-N`
    /// stagings); one killed while writing leaves them behind, where they would count
    /// against the disk limit and nothing else would remove them. Those of a live process
    /// (another server on this folder) are left alone, as is any name of another shape.
    fn remove_leftovers(&self) {
        type PidOf = fn(&str) -> Option<u32>;
        let places: [(&Path, PidOf); 2] =
            [(&self.dir, work_folder_pid), (&self.traces.uploads, upload_part_pid)];
        for (dir, pid_of) in places {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if pid_of(&name).is_some_and(cclab_units::whole_file::writer_is_gone) {
                    let path = entry.path();
                    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                }
            }
        }
        self.results.tidy(&self.dir);
    }

    /// Refuses a write of `adding` bytes (0 where the size is not known beforehand: a
    /// save or a comparison) once the folder would hold more than its limit. The folder
    /// is measured each time (on a blocking thread: a large one takes a while), so room
    /// made by hand counts at once; a write that starts under the limit may end above it
    /// by its own size.
    pub fn check_room(&self, what: &str, adding: u64) -> ApiResult<()> {
        let held = bytes_under(&self.dir);
        // A write of unknown size needs the folder under its limit; one of known size,
        // room for itself.
        if held < self.max_bytes && held.saturating_add(adding) <= self.max_bytes {
            return Ok(());
        }
        let limit = format!(
            "its limit of {} (cclab serve --max-disk-mb {})",
            size_text(self.max_bytes),
            self.max_bytes / 1_000_000
        );
        let why = if held >= self.max_bytes {
            format!("the results folder holds {}, at or over {limit}", size_text(held))
        } else {
            format!(
                "the results folder holds {} and this {what} adds {}, which would pass {limit}",
                size_text(held),
                size_text(adding)
            )
        };
        Err(ApiError::no_room(format!(
            "no room for this {what}: {why}; delete saved runs or uploaded traces to make room"
        )))
    }

    /// What the folder holds and may hold, in bytes (`GET /api/saved`'s `disk`).
    pub fn disk_json(&self) -> Value {
        json!({ "used_bytes": bytes_under(&self.dir), "max_bytes": self.max_bytes })
    }

    /// Promises `name` to a run to be saved, unless a saved run has it or another run
    /// was promised it; [`Store::release`] takes the promise back.
    pub fn promise(&self, name: &str) -> ApiResult<()> {
        check_name("name", name)?;
        if std::fs::symlink_metadata(self.dir.join(name)).is_ok() {
            return Err(taken(name));
        }
        if !self.promised.lock().unwrap().insert(name.to_string()) {
            return Err(ApiError::conflict(format!(
                "another run is to be saved as \"{name}\"; choose another name"
            )));
        }
        Ok(())
    }

    /// Takes back the promise of `name` (the run was saved under it, or will not be).
    pub fn release(&self, name: &str) {
        self.promised.lock().unwrap().remove(name);
    }

    fn saved_dir(&self, name: &str) -> ApiResult<PathBuf> {
        check_name("name", name)?;
        let dir = self.dir.join(name);
        let real = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
        if real && dir.join("summary.json").is_file() {
            Ok(dir)
        } else {
            Err(ApiError::not_found(format!("no saved run \"{name}\"")))
        }
    }

    /// `GET /api/saved`: every results folder in the folder.
    pub fn list(&self) -> Vec<Value> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| check_name("name", n).is_ok() && self.saved_dir(n).is_ok())
            .collect();
        names.sort();
        names.iter().filter_map(|n| self.detail(n).ok()).collect()
    }

    /// `GET /api/saved/{name}`: the summary and the files.
    pub fn detail(&self, name: &str) -> ApiResult<Value> {
        let dir = self.saved_dir(name)?;
        let summary = std::fs::read_to_string(dir.join("summary.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .unwrap_or(Value::Null);
        let saved_at = saved_at_s(&dir.join("summary.json"));
        Ok(
            json!({ "name": name, "saved_at_s": saved_at, "summary": summary, "files": files_json(&dir) }),
        )
    }

    /// `DELETE /api/saved/{name}`: removes a saved run and every comparison it is in. Not
    /// while it is being compared (the comparison's lock is held) or saved (its name is
    /// promised). The folder is renamed to a hidden name first, so no listing shows it
    /// half removed.
    pub fn delete(&self, name: &str) -> ApiResult<Value> {
        check_name("name", name)?;
        // Looked for under the lock, so that of two deletions one finds it gone (404).
        let _no_comparison = self.comparing.lock().unwrap_or_else(|e| e.into_inner());
        // Promised from the save's request to its end, before its folder exists.
        if self.promised.lock().unwrap().contains(name) {
            return Err(ApiError::conflict(format!(
                "\"{name}\" is to be saved or being saved; delete it once the save is done"
            )));
        }
        let dir = self.saved_dir(name)?;
        let doomed = self.dir.join(format!(".deleting-{name}-{}", std::process::id()));
        std::fs::rename(&dir, &doomed)
            .map_err(|e| ApiError::internal(format!("cannot remove \"{name}\": {e}")))?;
        let _ = std::fs::remove_dir_all(&doomed);
        // Its comparisons: `.compare/NAME/*` (as A) and `.compare/*/NAME` (as B).
        let compared = self.dir.join(COMPARE_DIR);
        let _ = std::fs::remove_dir_all(compared.join(name));
        for a in std::fs::read_dir(&compared).into_iter().flatten().flatten() {
            let _ = std::fs::remove_dir_all(a.path().join(name));
            let _ = std::fs::remove_dir(a.path()); // left empty: nothing else was compared with A
        }
        Ok(json!({ "deleted": name }))
    }

    /// The path of one file of a saved run (or of a comparison, `compare` = (a, b)).
    pub fn file(&self, name: &str, file: &str) -> ApiResult<PathBuf> {
        let dir = self.saved_dir(name)?;
        Self::file_in(&dir, file)
    }

    fn file_in(dir: &Path, file: &str) -> ApiResult<PathBuf> {
        if files_in(dir).iter().any(|(n, _)| n == file) {
            Ok(dir.join(file))
        } else {
            Err(ApiError::not_found(format!("no file \"{file}\" here")))
        }
    }

    /// Saves a finished run under `name`: writes its scenario with the live changes, runs
    /// it with the `cclab run` writer into the folder, and checks that the replay's
    /// summary.json is byte for byte the live run's.
    pub fn save(&self, run: &Run, name: &str) -> ApiResult<Value> {
        check_name("name", name)?;
        let dest = self.dir.join(name);
        if std::fs::symlink_metadata(&dest).is_ok() {
            return Err(taken(name));
        }
        let (summary, changes) = {
            let feed = run.feed.lock().unwrap();
            (feed.summary.clone(), feed.changes.clone())
        };
        let summary = summary.ok_or_else(|| ApiError::conflict("the run has not finished"))?;
        // Asked when the save was asked for, and again now: a pending save comes later.
        self.check_room("save", 0)?;
        let text = crate::replay::scenario_with_changes(&run.checked, &changes)?;
        let work = self.dir.join(format!(".save-{}-{}", run.id, std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work).map_err(|e| io_error("cannot create the work folder", e))?;
        let outcome = self.write_saved(run, &work, &text, &dest);
        let _ = std::fs::remove_dir_all(&work);
        if outcome.is_err() {
            // Nothing half-saved is listed as a saved run.
            let _ = std::fs::remove_dir_all(&dest);
        }
        outcome?;
        let written = std::fs::read_to_string(dest.join("summary.json")).unwrap_or_default();
        if written != summary {
            return Err(ApiError::internal(format!(
                "saved as \"{name}\", but its replay's summary.json differs from the live run's (a bug; please report it with the folder)"
            )));
        }
        Ok(json!({ "name": name, "identical": true, "files": files_json(&dest) }))
    }

    /// The scenario (and its trace) in `work`, run by the results writer into `dest`,
    /// then copied beside the results.
    fn write_saved(&self, run: &Run, work: &Path, text: &str, dest: &Path) -> ApiResult<()> {
        let file = &run.checked.file;
        std::fs::write(work.join(file), text)
            .map_err(|e| io_error("cannot write the scenario", e))?;
        let mut copies = vec![file.clone()];
        if let Some(trace) = &run.checked.trace {
            std::fs::write(work.join(&trace.name), &trace.text)
                .map_err(|e| io_error("cannot write the trace", e))?;
            copies.push(trace.name.clone());
        }
        self.results
            .run(&work.join(file), dest)
            .map_err(|e| writer_error(e, ApiError::internal))?;
        for name in copies {
            // An uploaded trace may bear a results file's name ("queue.csv").
            if dest.join(&name).exists() {
                return Err(ApiError::conflict(format!(
                    "the run's trace \"{name}\" has the name of a file the results hold, so it cannot be kept beside them; upload it under another name to save such a run"
                )));
            }
            std::fs::copy(work.join(&name), dest.join(&name))
                .map_err(|e| io_error("cannot copy the scenario beside the results", e))?;
        }
        Ok(())
    }

    fn compare_dir(&self, a: &str, b: &str) -> PathBuf {
        compare_dir(&self.dir, a, b)
    }

    /// `POST /api/compare`: `cclab compare` of two saved runs, into `.compare/A/B`.
    pub fn compare(&self, a: &str, b: &str) -> ApiResult<Value> {
        let (da, db) = (self.saved_dir(a)?, self.saved_dir(b)?);
        let out = self.compare_dir(a, b);
        let _one_at_a_time = self.comparing.lock().unwrap_or_else(|e| e.into_inner());
        self.check_room("comparison", 0)?;
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(out.parent().unwrap_or(&self.dir))
            .map_err(|e| ApiError::internal(format!("cannot create the comparison folder: {e}")))?;
        // The message names the folders by their saved names, not the server's paths.
        let root = format!("{}/", self.dir.display());
        self.results
            .compare(&da, &db, &out)
            .map_err(|e| writer_error(e.replace(&root, ""), ApiError::bad))?;
        let report = std::fs::read_to_string(out.join("compare.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .unwrap_or(Value::Null);
        Ok(json!({ "a": a, "b": b, "compare": report, "files": files_json(&out) }))
    }

    /// A file of the comparison of `a` and `b`, read while no comparison is being
    /// rebuilt: a rebuild empties the folder first, so a reader could find the file gone
    /// or half written.
    pub fn compare_file(&self, a: &str, b: &str, file: &str) -> ApiResult<Vec<u8>> {
        check_name("a", a)?;
        check_name("b", b)?;
        let _no_rebuild = self.comparing.lock().unwrap_or_else(|e| e.into_inner());
        let path = Self::file_in(&self.compare_dir(a, b), file)?;
        std::fs::read(path).map_err(|e| ApiError::internal(format!("cannot read {file}: {e}")))
    }

    /// `POST /api/traces?name=...`: a mahimahi trace kept among the uploads.
    pub fn upload_trace(&self, name: &str, body: &[u8]) -> ApiResult<Value> {
        check_trace_name(name)?;
        let _one_at_a_time = self.changing_traces.lock().unwrap_or_else(|e| e.into_inner());
        if self.traces.find(name).is_some() {
            return Err(ApiError::conflict(format!(
                "a trace \"{name}\" exists: a scenario can use it as it is, or upload this one under another name to keep both"
            )));
        }
        let text = std::str::from_utf8(body).map_err(|_| {
            ApiError::field(
                "trace",
                "not UTF-8 text; a mahimahi trace is one whole number of milliseconds per line",
            )
        })?;
        let trace = cclab_sim::Trace::parse(text)
            .map_err(|e| ApiError::field("trace", format!("not a mahimahi trace: {e}")))?;
        self.check_room("trace", body.len() as u64)?;
        // Written under a hidden name (never listed nor found) and then renamed, so no
        // run reads half a trace.
        let dir = &self.traces.uploads;
        let part = dir.join(format!(".{name}.{}.part", std::process::id()));
        std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&part, text))
            .and_then(|_| std::fs::rename(&part, dir.join(name)))
            .map_err(|e| {
                let _ = std::fs::remove_file(&part);
                io_error("cannot keep the trace", e)
            })?;
        Ok(json!({ "name": name, "mean_rate_bps": trace.mean_rate().0 }))
    }

    /// `DELETE /api/traces/{name}`: removes an uploaded trace. A run that uses it goes on
    /// and saves as before, with the text it read when it was checked; the ready traces
    /// belong to the repository and are not deleted.
    pub fn delete_trace(&self, name: &str) -> ApiResult<Value> {
        check_trace_name(name)?;
        let _one_at_a_time = self.changing_traces.lock().unwrap_or_else(|e| e.into_inner());
        // The trace the name finds, as a scenario would: a ready trace hides an upload
        // of its name, which a scenario cannot use and is not deleted for it.
        match self.traces.find(name) {
            Some(path) if path == self.traces.uploads.join(name) => {
                std::fs::remove_file(&path)
                    .map_err(|e| ApiError::internal(format!("cannot delete \"{name}\": {e}")))?;
                Ok(json!({ "deleted": name }))
            }
            Some(_) => Err(ApiError::forbidden(format!(
                "\"{name}\" is a ready trace of the repository, not an upload; only traces uploaded through the page can be deleted"
            ))),
            None => Err(ApiError::not_found(format!("no uploaded trace \"{name}\""))),
        }
    }
}

/// The process id in the name of a work folder of the results folder: `.save-RUN-PID`
/// (a save's) or `.deleting-NAME-PID` (a saved run being deleted); none for any other name.
fn work_folder_pid(name: &str) -> Option<u32> {
    if let Some(rest) = name.strip_prefix(".save-") {
        let (run, pid) = rest.split_once('-')?;
        run.parse::<u64>().ok()?;
        return pid.parse().ok();
    }
    let (saved, pid) = name.strip_prefix(".deleting-")?.rsplit_once('-')?;
    check_name("name", saved).ok()?;
    pid.parse().ok()
}

/// The process id in the name of an upload's work file, `.NAME.PID.part`; none for any
/// other name.
fn upload_part_pid(name: &str) -> Option<u32> {
    let (trace, pid) = name.strip_prefix('.')?.strip_suffix(".part")?.rsplit_once('.')?;
    valid_trace_name(trace).then_some(())?;
    pid.parse().ok()
}

/// The errors of a disk with no room left: full, or over the user's quota.
const DISK_FULL: [i32; 2] = [libc::ENOSPC, libc::EDQUOT];

/// A failed write of the store's, said as `what` failed: a full disk is a 507 as the
/// limit's refusals are (the client can make room), anything else the server's fault.
fn io_error(what: &str, e: std::io::Error) -> ApiError {
    if e.raw_os_error().is_some_and(|code| DISK_FULL.contains(&code)) {
        return ApiError::no_room(format!(
            "{what}: the disk is full ({e}); delete saved runs or uploaded traces to make room"
        ));
    }
    ApiError::internal(format!("{what}: {e}"))
}

/// A failure of the results writer (`cclab run`'s and `cclab compare`'s), which says its
/// I/O errors in words: one that a full disk or quota caused is a 507, as [`io_error`]'s
/// are; any other is `otherwise`'s. The words are the operating system's own, as the
/// writer quotes them ("No space left on device (os error 28)").
fn writer_error(message: String, otherwise: fn(String) -> ApiError) -> ApiError {
    let said = |code| std::io::Error::from_raw_os_error(code).to_string();
    if DISK_FULL.iter().any(|&code| message.contains(&said(code))) {
        return ApiError::no_room(format!(
            "{message}; the disk is full: delete saved runs or uploaded traces to make room"
        ));
    }
    otherwise(message)
}

/// A size as the limit's refusals give it: kB below a megabyte, MB above.
fn size_text(bytes: u64) -> String {
    match bytes {
        ..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// The bytes of the regular files under `dir`, at any depth (links are not followed).
fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
        .map(|(path, kind)| match kind {
            k if k.is_dir() => bytes_under(&path),
            k if k.is_file() => std::fs::symlink_metadata(&path).map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

/// A trace's name as a request gives it (`name`), or why it is refused.
fn check_trace_name(name: &str) -> ApiResult<()> {
    if valid_trace_name(name) {
        return Ok(());
    }
    Err(ApiError::field(
        "name",
        format!("\"{name}\": a plain file name such as my-link.trace: 1 to 100 letters, digits, '.', '_', '-', not starting with '.' and not ending in .md"),
    ))
}

/// One folder per pair, `.compare/A/B`: a name may hold any separator a single folder
/// name could use ("x--y" and "z" against "x" and "y--z").
fn compare_dir(results: &Path, a: &str, b: &str) -> PathBuf {
    results.join(COMPARE_DIR).join(a).join(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk or quota is the client's to mend (507), in the writer's words or as an
    /// error of the store's own; anything else keeps its status.
    #[test]
    fn a_full_disk_or_quota_is_a_507() {
        let said =
            |code| format!("cannot write results: {}", std::io::Error::from_raw_os_error(code));
        for code in DISK_FULL {
            assert_eq!(writer_error(said(code), ApiError::internal).status.as_u16(), 507);
            let e = io_error("cannot save", std::io::Error::from_raw_os_error(code));
            assert_eq!(e.status.as_u16(), 507);
        }
        assert_eq!(writer_error(said(libc::EACCES), ApiError::bad).status.as_u16(), 400);
        let e = io_error("cannot save", std::io::Error::from_raw_os_error(libc::EACCES));
        assert_eq!(e.status.as_u16(), 500);
    }

    #[test]
    fn work_files_are_told_by_their_names() {
        assert_eq!(work_folder_pid(".save-12-345"), Some(345));
        assert_eq!(work_folder_pid(".deleting-my-run-7"), Some(7));
        assert_eq!(upload_part_pid(".my.link.trace.99.part"), Some(99));
        // A person's own hidden folders and files, and every other shape, are not.
        for other in ["run-5", ".compare", ".traces", ".save-notes-2023", ".save-1-x", "a.trace"] {
            assert_eq!(work_folder_pid(other), None, "{other}");
        }
        assert_eq!(work_folder_pid(".deleting-.hidden-7"), None);
        for other in [".x.part", ".notes.2024", "x.1.part", "..1.part", ".a/b.1.part"] {
            assert_eq!(upload_part_pid(other), None, "{other}");
        }
    }

    #[test]
    fn two_pairs_never_share_a_comparison_folder() {
        let r = Path::new("/r");
        assert_ne!(compare_dir(r, "x--y", "z"), compare_dir(r, "x", "y--z"));
    }
}
