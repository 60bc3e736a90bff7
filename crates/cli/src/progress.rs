//! Progress on stderr: one bar over the simulated time of all runs, so it advances both as
//! runs finish and inside a single long run. Hidden with `--quiet` or when stderr is not a
//! terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Shared by all worker threads.
pub struct Progress {
    bar: ProgressBar,
    runs_total: usize,
    runs_done: AtomicUsize,
}

impl Progress {
    /// `total` is the summed simulated duration of all runs.
    pub fn new(total: Duration, runs_total: usize, quiet: bool) -> Self {
        Self::with_clock(total, runs_total, quiet, "simulated")
    }

    /// Like [`Progress::new`], naming the clock the bar counts (`"real time"` for emulated runs).
    pub fn with_clock(total: Duration, runs_total: usize, quiet: bool, clock: &str) -> Self {
        let visible = !quiet && std::io::stderr().is_terminal();
        let bar = ProgressBar::with_draw_target(
            Some(total.as_millis().max(1) as u64),
            if visible {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        let style = ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{percent:>3}}% {clock}, {{msg}} (eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        if visible {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        let p = Progress {
            bar,
            runs_total,
            runs_done: AtomicUsize::new(0),
        };
        p.set_message();
        p
    }

    fn set_message(&self) {
        let done = self.runs_done.load(Ordering::Relaxed);
        self.bar
            .set_message(format!("{done}/{} runs", self.runs_total));
    }

    /// A tracker for one run of simulated length `duration`.
    pub fn run(&self, duration: Duration) -> RunProgress<'_> {
        RunProgress {
            p: self,
            duration,
            reported: Duration::ZERO,
            next: duration / UPDATES_PER_RUN,
        }
    }

    /// Runs finished, and the fraction of all simulated time done (0 to 1).
    pub fn done(&self) -> (usize, f64) {
        let total = self.bar.length().unwrap_or(1).max(1);
        (
            self.runs_done.load(Ordering::Relaxed),
            (self.bar.position() as f64 / total as f64).min(1.0),
        )
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Bar updates per run at most: an update reads the clock, and the simulator reports every
/// simulated second (360 000 times in 100 hours, which took 0.7 % of such a run's time).
const UPDATES_PER_RUN: u32 = 1000;

/// Converts one run's simulated-time callbacks into bar increments.
pub struct RunProgress<'a> {
    p: &'a Progress,
    duration: Duration,
    reported: Duration,
    /// The simulated time of the next bar update.
    next: Duration,
}

impl RunProgress<'_> {
    /// The run's simulated clock reached `now`.
    pub fn at(&mut self, now: Duration) {
        let now = now.min(self.duration);
        if now > self.reported && (now >= self.next || now == self.duration) {
            let step = now.as_millis() as u64 - self.reported.as_millis() as u64;
            self.p.bar.inc(step);
            self.reported = Duration::from_millis(now.as_millis() as u64);
            self.next = self.reported + self.duration / UPDATES_PER_RUN;
        }
    }

    /// The run is over: account for whatever was not reported.
    pub fn done(mut self) {
        self.at(self.duration);
        self.p.runs_done.fetch_add(1, Ordering::Relaxed);
        self.p.set_message();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_updates_the_bar_a_thousand_times_and_ends_complete() {
        let hours = Duration::from_secs(100 * 3600);
        let p = Progress::new(hours, 1, true);
        let mut run = p.run(hours);
        let (mut updates, mut last) = (0, 0);
        for s in 1..=hours.as_secs() {
            run.at(Duration::from_secs(s));
            if p.bar.position() != last {
                updates += 1;
                last = p.bar.position();
            }
        }
        assert!((999..=1000).contains(&updates), "{updates} updates");
        run.done();
        assert_eq!(p.done(), (1, 1.0));
    }

    #[test]
    fn a_run_shorter_than_a_thousand_milliseconds_still_advances() {
        let p = Progress::new(Duration::from_millis(5), 1, true);
        let mut run = p.run(Duration::from_millis(5));
        run.at(Duration::from_millis(3));
        assert_eq!(p.bar.position(), 3);
        run.done();
        assert_eq!(p.done(), (1, 1.0));
    }
}
