//! A progress bar on stderr for runs longer than about two seconds of wall time: drawn
//! at most ten times a second and only when stderr is a terminal; otherwise one final
//! line for long runs.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

pub struct Progress {
    started: Instant,
    last_draw: Option<Instant>,
    tty: bool,
    drawn: bool,
    label: String,
    /// How the run's time passes: "simulated" or, on the testbed, "emulated".
    clock: &'static str,
}

/// Wall time after which progress is shown.
const QUIET_FOR: Duration = Duration::from_secs(2);
const REDRAW_EVERY: Duration = Duration::from_millis(100);

impl Progress {
    /// A bar for a simulated run.
    pub fn simulated(label: &str) -> Progress {
        Progress::new(label, "simulated")
    }

    /// A bar for a run on the testbed, whose time is the wall clock's.
    pub fn emulated(label: &str) -> Progress {
        Progress::new(label, "emulated")
    }

    fn new(label: &str, clock: &'static str) -> Progress {
        Progress {
            started: Instant::now(),
            last_draw: None,
            tty: std::io::stderr().is_terminal(),
            drawn: false,
            label: label.to_string(),
            clock,
        }
    }

    /// The run's time `done_s` of `total_s` reached.
    pub fn update(&mut self, done_s: f64, total_s: f64) {
        if !self.tty {
            return;
        }
        let now = Instant::now();
        if now - self.started < QUIET_FOR || self.last_draw.is_some_and(|t| now - t < REDRAW_EVERY)
        {
            return;
        }
        self.last_draw = Some(now);
        self.drawn = true;
        let frac = if total_s > 0.0 { (done_s / total_s).clamp(0.0, 1.0) } else { 1.0 };
        let width = 30;
        let filled = (frac * width as f64).round() as usize;
        let bar: String = "#".repeat(filled) + &" ".repeat(width - filled);
        let elapsed = (now - self.started).as_secs_f64();
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} [{bar}] {:5.1}%  {done_s:.1}/{total_s:.1} s {}, {elapsed:.1} s wall",
            self.label,
            frac * 100.0,
            self.clock
        );
        let _ = err.flush();
    }

    /// Ends the bar (or, without a terminal, prints one line if the run was long).
    pub fn finish(&mut self, total_s: f64) {
        let elapsed = self.started.elapsed();
        let mut err = std::io::stderr().lock();
        if self.drawn {
            let _ = writeln!(
                err,
                "\r{} [{}] 100.0%  {total_s:.1} s {} in {:.1} s wall in all          ",
                self.label,
                "#".repeat(30),
                self.clock,
                elapsed.as_secs_f64()
            );
        } else if !self.tty && elapsed >= QUIET_FOR {
            let _ = writeln!(
                err,
                "{}: {total_s:.1} s {} in {:.1} s wall in all",
                self.label,
                self.clock,
                elapsed.as_secs_f64()
            );
        }
    }
}
