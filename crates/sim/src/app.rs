//! Traffic sources (docs/spec/mechanisms.md, traffic sources): they decide *when* the application writes *how
//! much*; the simulator turns each write into bytes offered to the endpoint.
//!
//! - `fixed`: `payload_bytes` at start and every `interval` (± a uniform `jitter`, as the RTT
//!   sweep of Evensen, "Improving TCP for time-dependent applications": "(150 ± 10) ms");
//! - `exponential`: sizes `max(1, round(Exp(mean)))`, gaps `Exp(mean interval)` (first write at start);
//! - `cbr`: `payload_bytes` every `payload_bytes·8/rate` (rounded to the ns);
//! - `transfer`: `writes × write_bytes` all issued at start, then close;
//! - `bulk`: no discrete writes; the simulator keeps the send buffer full through
//!   [`Source::bulk_budget`], up to `bytes` (then close) or unbounded until the stop time;
//! - `trace`: the writes of a trace file ([`crate::trace_source`]), each at establishment +
//!   its offset;
//! - `profile`: an application of Table 2.1 of Evensen, "Improving TCP for time-dependent
//!   applications" (docs/references.md) ([`crate::app_profiles`]): first write
//!   at start, sizes and gaps drawn (size first, then gap) from the row's fitted distributions;
//! - `http`: ns-2-style web pages ([`crate::app_http`]): first page at start, then page size
//!   (Pareto II) and gap to the next page start (exponential), drawn in that order.
//!
//! Time-bounded sources (fixed, exponential, cbr, trace, profile, http, unbounded bulk) generate from
//! the moment the connection is established until `stop`, the scenario's `duration`; finite sources
//! (transfer, bulk with `bytes`) write all their bytes whatever the duration.

use crate::rng::Rng;
use crate::scenario::App;
use rand::Rng as _;
use rand_distr::{Distribution, Exp};

#[derive(Debug)]
// In declaration order (repr(C)): what each write reads first, the random stream and the profile
// last (docs/performance/many-flows.md, "Hot fields first").
#[repr(C)]
pub struct Source {
    app: App,
    stop: u64,
    /// No more writes will be generated.
    finished: bool,
    /// Bytes a bulk source has handed to the endpoint.
    bulk_written: u64,
    /// Trace sources: establishment time (offsets are relative to it) and next write's index.
    trace_base: u64,
    trace_next: usize,
    rng: Rng,
    /// Profile sources: the fitted distributions (fitted once, at construction).
    profile: Option<crate::app_profiles::Profile>,
}

impl Source {
    /// Prefetches what an event reads of the source: its scalars and, for the source's own
    /// events (`writes`), its random stream and profile (`thinlab_tcp::prefetch`).
    #[inline]
    pub fn prefetch(&self, writes: bool) {
        if writes {
            thinlab_tcp::prefetch::prefetch(self);
        } else {
            let scalars = std::mem::offset_of!(Source, rng);
            thinlab_tcp::prefetch::prefetch_bytes(self as *const Self, scalars);
        }
    }

    pub fn new(app: App, rng: Rng, stop_ns: u64) -> Source {
        let profile = match &app {
            App::Profile { name } => crate::app_profiles::profile(name),
            _ => None,
        };
        Source {
            profile,
            app,
            rng,
            stop: stop_ns,
            bulk_written: 0,
            finished: false,
            trace_base: 0,
            trace_next: 0,
        }
    }

    pub fn app(&self) -> &App {
        &self.app
    }

    /// The stop time (ns) time-bounded sources generate until.
    pub fn stop_ns(&self) -> u64 {
        self.stop
    }

    /// Whether the source closes the connection after its last write.
    pub fn closes(&self) -> bool {
        self.app.is_finite()
    }

    pub fn is_bulk(&self) -> bool {
        matches!(self.app, App::Bulk { .. })
    }

    /// No more data will be generated.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The flow starts at `now`: emits the first writes through `write(bytes)` and returns the
    /// time of the next tick, if any.
    pub fn start(&mut self, now: u64, write: &mut impl FnMut(u64)) -> Option<u64> {
        match self.app {
            App::Transfer {
                writes,
                write_bytes,
            } => {
                for _ in 0..writes {
                    write(write_bytes);
                }
                self.finished = true;
                None
            }
            App::Bulk { .. } => None,
            App::Trace { .. } => {
                self.trace_base = now;
                self.tick(now, write)
            }
            _ => self.tick(now, write),
        }
    }

    /// A tick at `now`: emits this tick's write and returns the next tick time, if before stop.
    pub fn tick(&mut self, now: u64, write: &mut impl FnMut(u64)) -> Option<u64> {
        if self.finished || now >= self.stop {
            self.finished = true;
            return None;
        }
        if let App::Trace { writes } = &self.app {
            // Every write due by now (several may share an offset), then the next one's time.
            while let Some(&(off, bytes)) = writes.get(self.trace_next) {
                let at = self.trace_base.saturating_add(off);
                if at > now {
                    if at >= self.stop {
                        break;
                    }
                    return Some(at);
                }
                write(u64::from(bytes));
                self.trace_next += 1;
            }
            self.finished = true;
            return None;
        }
        let gap = match self.app {
            App::Fixed {
                payload_bytes,
                interval,
                jitter,
            } => {
                write(payload_bytes);
                let (i, j) = (interval.as_nanos() as u64, jitter.as_nanos() as u64);
                if j == 0 {
                    i
                } else {
                    i - j + self.rng.gen_range(0..=2 * j)
                }
            }
            App::Cbr {
                rate,
                payload_bytes,
            } => {
                write(payload_bytes);
                cbr_interval_ns(rate, payload_bytes)
            }
            App::Exponential {
                mean_payload_bytes,
                mean_interval,
            } => {
                let size =
                    Exp::new(1.0 / mean_payload_bytes).map_or(1.0, |d| d.sample(&mut self.rng));
                write((size.round() as u64).max(1));
                let mean_ns = mean_interval.as_nanos() as f64;
                let g = Exp::new(1.0 / mean_ns).map_or(mean_ns, |d| d.sample(&mut self.rng));
                g.round().min(1e18) as u64
            }
            App::Profile { .. } => match &self.profile {
                Some(p) => {
                    write(p.sample_payload(&mut self.rng));
                    p.sample_gap_ns(&mut self.rng)
                }
                None => {
                    // Unknown names are rejected at validation.
                    self.finished = true;
                    return None;
                }
            },
            App::Http(h) => {
                write(h.sample_page(&mut self.rng));
                h.sample_gap_ns(&mut self.rng)
            }
            App::Bulk { .. } | App::Transfer { .. } | App::Trace { .. } => {
                self.finished = true;
                return None;
            }
        };
        let next = now.saturating_add(gap);
        if next >= self.stop {
            self.finished = true;
            None
        } else {
            Some(next)
        }
    }

    /// The stop time has come: time-bounded sources generate nothing more. Finite sources
    /// (`transfer`, `bulk` with `bytes`) are not bounded by time: they write all their bytes.
    pub fn stop(&mut self) {
        if !self.app.is_finite() {
            self.finished = true;
        }
    }

    /// For bulk sources: how many more bytes may be written now (0 once stopped).
    pub fn bulk_budget(&self) -> u64 {
        match self.app {
            App::Bulk { bytes } if !self.finished => {
                bytes.map_or(u64::MAX, |b| b - self.bulk_written)
            }
            _ => 0,
        }
    }

    /// For bulk sources: `n` bytes were accepted by the endpoint.
    pub fn bulk_wrote(&mut self, n: u64) {
        self.bulk_written += n;
        if let App::Bulk { bytes: Some(b) } = self.app {
            if self.bulk_written >= b {
                self.finished = true;
            }
        }
    }
}

/// The write interval of a CBR source, in ns.
pub fn cbr_interval_ns(rate_bps: u64, payload_bytes: u64) -> u64 {
    ((payload_bytes as u128 * 8 * 1_000_000_000) / rate_bps.max(1) as u128).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Component};
    use std::time::Duration;

    fn run(app: App, start: u64, stop: u64) -> Vec<(u64, u64)> {
        let mut s = Source::new(app, stream(1, Component::App(0)), stop);
        let mut out = Vec::new();
        let mut next = s.start(start, &mut |b| out.push((start, b)));
        while let Some(t) = next {
            next = s.tick(t, &mut |b| out.push((t, b)));
        }
        assert!(s.finished());
        out
    }

    #[test]
    fn fixed_jitter_keeps_gaps_within_bounds_and_the_mean() {
        let w = run(
            App::Fixed {
                payload_bytes: 120,
                interval: Duration::from_millis(150),
                jitter: Duration::from_millis(10),
            },
            0,
            3_000_000_000_000,
        );
        let gaps: Vec<u64> = w.windows(2).map(|p| p[1].0 - p[0].0).collect();
        assert!(gaps
            .iter()
            .all(|&g| (140_000_000..=160_000_000).contains(&g)));
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 150e6).abs() < 0.2e6, "mean gap {mean}");
        assert!(gaps.iter().any(|&g| g < 142_000_000) && gaps.iter().any(|&g| g > 158_000_000));
    }

    #[test]
    fn fixed_schedule() {
        let w = run(
            App::Fixed {
                payload_bytes: 120,
                interval: Duration::from_millis(140),
                jitter: Duration::ZERO,
            },
            0,
            1_000_000_000,
        );
        assert_eq!(w.len(), 8); // 0, 140, …, 980 ms
        assert_eq!(w[7], (980_000_000, 120));
        let w = run(
            App::Fixed {
                payload_bytes: 10,
                interval: Duration::from_millis(100),
                jitter: Duration::ZERO,
            },
            50_000_000,
            250_000_000,
        );
        assert_eq!(
            w.iter().map(|x| x.0).collect::<Vec<_>>(),
            vec![50_000_000, 150_000_000]
        );
    }

    #[test]
    fn cbr_schedule() {
        // 1000 bytes at 300 kbit/s: every 26.666… ms.
        assert_eq!(cbr_interval_ns(300_000, 1000), 26_666_666);
        let w = run(
            App::Cbr {
                rate: 300_000,
                payload_bytes: 1000,
            },
            0,
            1_000_000_000,
        );
        assert_eq!(w.len(), 38);
    }

    #[test]
    fn exponential_means() {
        let w = run(
            App::Exponential {
                mean_payload_bytes: 200.0,
                mean_interval: Duration::from_millis(10),
            },
            0,
            1_000_000_000_000,
        );
        let n = w.len() as f64;
        assert!((n - 100_000.0).abs() < 2_000.0, "{n}");
        let mean_size = w.iter().map(|x| x.1 as f64).sum::<f64>() / n;
        assert!((mean_size - 200.0).abs() < 3.0, "{mean_size}");
        assert!(w.iter().all(|x| x.1 >= 1));
    }

    #[test]
    fn transfer_all_at_start() {
        let w = run(
            App::Transfer {
                writes: 3,
                write_bytes: 2500,
            },
            7,
            10,
        );
        assert_eq!(w, vec![(7, 2500); 3]);
    }

    #[test]
    fn trace_schedule() {
        let writes: crate::trace_source::TraceWrites =
            vec![(0, 10), (0, 20), (5, 30), (100, 40), (200, 50)].into();
        let w = run(App::Trace { writes }, 1000, 1200);
        assert_eq!(w, vec![(1000, 10), (1000, 20), (1005, 30), (1100, 40)]);
    }

    #[test]
    fn bulk_budget() {
        let mut s = Source::new(
            App::Bulk { bytes: Some(1000) },
            stream(1, Component::App(0)),
            10,
        );
        assert_eq!(s.bulk_budget(), 1000);
        s.bulk_wrote(600);
        s.stop(); // a finite source is not cut off by the stop time
        assert_eq!(s.bulk_budget(), 400);
        s.bulk_wrote(400);
        assert!(s.finished());
        assert_eq!(s.bulk_budget(), 0);
        let mut u = Source::new(App::Bulk { bytes: None }, stream(1, Component::App(0)), 10);
        assert_eq!(u.bulk_budget(), u64::MAX);
        u.stop();
        assert_eq!(u.bulk_budget(), 0);
    }
}
