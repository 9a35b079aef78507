//! flows.csv (or flows.parquet) written on a thread of its own while the simulation goes
//! on.
//!
//! Why: formatting every flow's sample as text is work the simulation does not need. In
//! `perf` of a 100-flow run (1 Gbit/s, 30 s, 10 ms samples: 300,000 rows, 21 MB of CSV)
//! it took 23% of the whole process, on the thread that simulates. Here that thread only
//! copies each instant's columns (a few numbers per flow, into room kept from earlier
//! instants) and hands them over; the writer formats and writes them in the order they
//! came, so the file's bytes are the same as when one thread did both.
//!
//! Instants go over in batches of about [`BATCH_ROWS`] rows, since each hand-over wakes
//! the writer, and at most [`WAITING`] batches wait for it: a slow disk slows the run
//! down rather than filling memory.

use crate::format::{push_csv_num, push_millis, push_secs, push_u64};
use crate::series::{SeriesFile, Value};
use cclab_sim::FlowSamples;
use cclab_units::Time;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// Batches handed over and not yet written, at most.
const WAITING: usize = 2;

/// Rows after which a batch is handed over (an instant is never split). Handing over
/// every instant of a 100-flow run on its own cost 18% more CPU than one thread doing
/// everything; batches of this size bring that down (see docs/performance.md).
const BATCH_ROWS: usize = 4096;

/// Consecutive instants, handed over together: their rows one after another.
#[derive(Default)]
struct Batch {
    rows: FlowSamples,
    /// Each instant's time and where its rows end.
    instants: Vec<(Time, usize)>,
}

impl Batch {
    fn push(&mut self, samples: &FlowSamples) {
        self.rows.append(samples);
        self.instants.push((samples.time, self.rows.len()));
    }

    fn clear(&mut self) {
        self.rows.start(Time(0));
        self.instants.clear();
    }
}

/// What the simulating thread asks of the writer.
enum Job {
    /// Every flow's row at consecutive instants.
    Rows(Box<Batch>),
    /// Write what is buffered to the file (for a reader while the run goes on), and answer.
    Flush(SyncSender<Result<(), String>>),
}

/// The simulating thread's end: hands instants to the writer thread.
pub struct FlowWriter {
    jobs: Option<SyncSender<Job>>,
    /// The batch being filled.
    batch: Box<Batch>,
    /// Batches the writer is done with, filled again later. In a `Mutex` only so that a
    /// `FlowWriter` may be shared between threads (the Python package's objects must
    /// be); it is never locked, its owner reaches it through `get_mut`.
    written: Mutex<Receiver<Box<Batch>>>,
    writer: Option<JoinHandle<Result<(), String>>>,
    /// How the writer ended, once it has.
    ended: Result<(), String>,
}

impl FlowWriter {
    /// Starts the writer thread for `file`, whose `cc_*` columns are `cc_columns`, for a
    /// run of `flows` flows.
    pub fn start(
        file: SeriesFile,
        cc_columns: Vec<&'static str>,
        flows: usize,
    ) -> Result<FlowWriter, String> {
        let (jobs, jobs_in) = sync_channel(WAITING);
        let (written_out, written) = sync_channel(1);
        let rows = FlowRows {
            file,
            cc_values: vec![None; cc_columns.len()],
            cc_columns,
            cc_maps: vec![CcMap::default(); flows],
            values: Vec::new(),
        };
        let writer = std::thread::Builder::new()
            .name("flows writer".into())
            .spawn(move || rows.serve(jobs_in, written_out))
            .map_err(|e| {
                format!("cannot start the thread that writes the flows' time series: {e}")
            })?;
        let batch = Box::default();
        let written = Mutex::new(written);
        Ok(FlowWriter { jobs: Some(jobs), batch, written, writer: Some(writer), ended: Ok(()) })
    }

    /// Takes every flow's row at one instant, for the writer. A writer that has stopped
    /// on an error takes nothing more; the error comes from [`FlowWriter::finish`].
    pub fn rows(&mut self, samples: &FlowSamples) {
        if self.jobs.is_some() {
            self.batch.push(samples);
            if self.batch.rows.len() >= BATCH_ROWS {
                self.hand_over();
            }
        }
    }

    /// Hands the batch being filled to the writer, waiting while [`WAITING`] batches
    /// are still unwritten.
    fn hand_over(&mut self) {
        let Some(jobs) = &self.jobs else { return };
        if self.batch.instants.is_empty() {
            return;
        }
        let recycled = self.written.get_mut().ok().and_then(|w| w.try_recv().ok());
        let empty = recycled.unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, empty);
        if jobs.send(Job::Rows(full)).is_err() {
            self.jobs = None;
        }
    }

    /// Writes everything taken so far to the file, and reports the first error.
    pub fn flush(&mut self) -> Result<(), String> {
        self.hand_over();
        let (reply, answer) = sync_channel(1);
        let asked = self.jobs.as_ref().is_some_and(|jobs| jobs.send(Job::Flush(reply)).is_ok());
        match asked.then(|| answer.recv().ok()).flatten() {
            Some(flushed) => flushed,
            None => self.finish(),
        }
    }

    /// Waits for the writer to write everything and close the file; reports the first
    /// error it met.
    pub fn finish(&mut self) -> Result<(), String> {
        self.hand_over();
        self.jobs = None;
        if let Some(writer) = self.writer.take() {
            self.ended = writer.join().unwrap_or_else(|_| {
                Err("the thread writing the flows' time series stopped on an internal error".into())
            });
        }
        self.ended.clone()
    }
}

impl Drop for FlowWriter {
    /// A run that ends without [`FlowWriter::finish`] (an error elsewhere) still waits
    /// for its writer, which closes the file it has in its staging folder.
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The writer thread's part: the file, and where each flow's `cc_*` values go.
struct FlowRows {
    file: SeriesFile,
    /// Internal-variable names of the algorithms in this scenario, in a fixed order.
    cc_columns: Vec<&'static str>,
    /// The row being written's `cc_*` values, in column order (reused).
    cc_values: Vec<Option<f64>>,
    /// Per flow, the names its last sample reported and their columns.
    cc_maps: Vec<CcMap>,
    /// A Parquet row being built (reused).
    values: Vec<Value>,
}

impl FlowRows {
    /// Does the jobs in order until the simulating side hangs up, then closes the file.
    /// After a write error it writes nothing more and returns that error.
    fn serve(mut self, jobs: Receiver<Job>, written: SyncSender<Box<Batch>>) -> Result<(), String> {
        let mut error = None;
        for job in jobs {
            match job {
                Job::Rows(mut batch) => {
                    let mut start = 0;
                    for &(time, end) in &batch.instants {
                        if error.is_none() {
                            let rows = &batch.rows;
                            error = (start..end).find_map(|row| self.row(rows, time, row).err());
                        }
                        start = end;
                    }
                    batch.clear();
                    let _ = written.try_send(batch);
                }
                Job::Flush(reply) => {
                    let flushed = match &error {
                        Some(e) => Err(e.clone()),
                        None => self.file.flush_csv(),
                    };
                    let _ = reply.send(flushed);
                }
            }
        }
        match error {
            Some(e) => Err(e),
            None => self.file.finish(),
        }
    }

    /// Row `row` of `b`, sampled at `time`, as a row of flows.csv or flows.parquet.
    fn row(&mut self, b: &FlowSamples, time: Time, row: usize) -> Result<(), String> {
        self.fill_cc_values(b.flow[row], b.cc_of(row));
        if !self.file.wants_values() {
            let cc = &self.cc_values;
            return self.file.text_row(|out| flow_line(out, b, time, row, cc));
        }
        self.values.clear();
        self.values.extend([
            Value::Double(time.as_secs_f64()),
            Value::Int(b.flow[row] as i64),
            Value::Int(i64::from(b.cwnd_pkts[row])),
            Value::Int(i64::from(b.ssthresh_pkts[row])),
            Value::Double(b.srtt[row].as_millis_f64()),
            Value::Int(i64::from(b.inflight_pkts[row])),
            Value::Int(b.delivered_bytes[row] as i64),
        ]);
        self.values.extend(self.cc_values.iter().map(|v| v.map_or(Value::Missing, Value::Double)));
        self.file.values_row(&self.values)
    }

    /// Sets `cc_values` to flow `flow`'s `cc_*` values `cc`, in column order.
    fn fill_cc_values(&mut self, flow: usize, cc: &[(&'static str, f64)]) {
        self.cc_values.iter_mut().for_each(|v| *v = None);
        let Some(map) = self.cc_maps.get_mut(flow) else { return };
        if !map.matches(cc) {
            *map = CcMap::build(cc, &self.cc_columns);
        }
        for (column, (_, v)) in map.columns.iter().zip(cc) {
            if let Some(c) = column {
                self.cc_values[*c] = Some(*v);
            }
        }
    }
}

/// Row `row` of `b`, sampled at `time`, as a line of flows.csv (without newline), its
/// `cc_*` cells from `cc`.
fn flow_line(out: &mut Vec<u8>, b: &FlowSamples, time: Time, row: usize, cc: &[Option<f64>]) {
    push_secs(out, time.as_nanos());
    out.push(b',');
    push_u64(out, b.flow[row] as u64);
    for v in [b.cwnd_pkts[row], b.ssthresh_pkts[row]] {
        out.push(b',');
        push_u64(out, u64::from(v));
    }
    out.push(b',');
    push_millis(out, b.srtt[row].as_nanos());
    out.push(b',');
    push_u64(out, u64::from(b.inflight_pkts[row]));
    out.push(b',');
    push_u64(out, b.delivered_bytes[row]);
    for v in cc {
        out.push(b',');
        if let Some(v) = v {
            push_csv_num(out, *v, 6);
        }
    }
}

/// Where one flow's `cc_*` values go: the names its algorithm reported (in its own
/// order) and the column of each. Built on the flow's first sample and reused while the
/// algorithm keeps reporting the same names, so a sample costs no string comparison.
#[derive(Clone, Default)]
struct CcMap {
    names: Vec<&'static str>,
    columns: Vec<Option<usize>>,
}

impl CcMap {
    /// Whether `cc` reports the same names as this map, compared by address: the names
    /// are the algorithm's string constants.
    fn matches(&self, cc: &[(&'static str, f64)]) -> bool {
        self.names.len() == cc.len()
            && self.names.iter().zip(cc).all(|(a, (b, _))| std::ptr::eq(*a, *b))
    }

    fn build(cc: &[(&'static str, f64)], all: &[&'static str]) -> CcMap {
        CcMap {
            names: cc.iter().map(|(n, _)| *n).collect(),
            columns: cc.iter().map(|(n, _)| all.iter().position(|c| c == n)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::{Kind, SeriesFormat};
    use cclab_sim::FlowSample;
    use std::path::{Path, PathBuf};

    const COLUMNS: [&str; 7] = [
        "time_s",
        "flow",
        "cwnd_pkts",
        "ssthresh_pkts",
        "srtt_ms",
        "inflight_pkts",
        "delivered_bytes",
    ];

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cclab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn writer(dir: &Path) -> FlowWriter {
        let mut cols: Vec<(String, Kind)> =
            COLUMNS.iter().map(|c| (c.to_string(), Kind::Int)).collect();
        cols.push(("cc_w_max".into(), Kind::OptionalDouble));
        let file = SeriesFile::create(dir, "flows", SeriesFormat::Csv, &cols).unwrap();
        FlowWriter::start(file, vec!["w_max"], 5000).unwrap()
    }

    /// Instant `k` (k ms) of `flows` flows; odd flows report no `cc_*` value.
    fn instant(k: u64, flows: usize) -> FlowSamples {
        let mut b = FlowSamples::default();
        b.start(Time(k * 1_000_000));
        for flow in 0..flows {
            let s =
                FlowSample { flow, cwnd_pkts: (k as u32) * 3 + flow as u32, ..Default::default() };
            b.push(&s, |report| {
                if flow.is_multiple_of(2) {
                    report("w_max", flow as f64 + 0.25)
                }
            });
        }
        b
    }

    /// The line flows.csv must have for flow `flow` at instant `k`.
    fn line(k: u64, flow: usize) -> String {
        let w_max =
            if flow.is_multiple_of(2) { format!("{}", flow as f64 + 0.25) } else { String::new() };
        let time = format!("{}", k as f64 / 1000.0);
        format!("{time},{flow},{},0,0,0,0,{w_max}\n", k * 3 + flow as u64)
    }

    /// Compares line by line, naming the first that differs.
    fn same_lines(got: &str, want: &str) {
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "line {}", i + 1);
        }
        assert_eq!(got.lines().count(), want.lines().count(), "lines");
        assert!(got.ends_with('\n'));
    }

    /// Instants of different sizes cross several batches and a flush in the middle; the
    /// file holds each row once, whole and in order, and after the flush everything
    /// handed over so far.
    #[test]
    fn rows_arrive_in_order_across_batches_and_a_flush() {
        let dir = scratch("flow-writer");
        let mut w = writer(&dir);
        let mut want = format!("{},cc_w_max\n", COLUMNS.join(","));
        for k in 0..40 {
            let flows = [1, 999, 300, 4097][k as usize % 4];
            w.rows(&instant(k, flows));
            (0..flows).for_each(|flow| want.push_str(&line(k, flow)));
            if k == 21 {
                w.flush().unwrap();
                same_lines(&std::fs::read_to_string(dir.join("flows.csv")).unwrap(), &want);
            }
        }
        w.finish().unwrap();
        same_lines(&std::fs::read_to_string(dir.join("flows.csv")).unwrap(), &want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file that cannot be written (a full disk) makes flush and finish report the
    /// error, and the simulating side goes on without blocking.
    #[test]
    fn a_write_error_is_reported_and_does_not_block_the_run() {
        if !Path::new("/dev/full").exists() {
            cclab_units::errln!("skipped: no /dev/full here");
            return;
        }
        let dir = scratch("flow-writer-full");
        std::os::unix::fs::symlink("/dev/full", dir.join("flows.csv")).unwrap();
        let mut w = writer(&dir);
        for k in 0..200 {
            w.rows(&instant(k, 999));
        }
        let flushed = w.flush();
        assert!(flushed.as_ref().is_err_and(|e| e.contains("space")), "{flushed:?}");
        for k in 200..400 {
            w.rows(&instant(k, 999));
        }
        let finished = w.finish();
        assert!(finished.as_ref().is_err_and(|e| e.contains("space")), "{finished:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
