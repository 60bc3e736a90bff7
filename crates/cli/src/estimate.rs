//! The resource estimate made before anything runs (docs/scenarios.md, "Run health"): how
//! many writes (delivery records) and events the runs will make and how much memory they
//! need at once; a scenario that cannot fit is refused with exit code 2 unless `--force`.
//!
//! Memory model (measured on the release build, rounded up): while a run is simulated, each
//! write costs [`BYTES_PER_WRITE_RUNNING`] (its record, the latency samples sorted for the
//! statistics) and each flow its send and receive buffers; after a run, each write keeps
//! [`BYTES_PER_WRITE_KEPT`] (its latency sample, for the pooled CDF) until the results are
//! written. Runs proceed `threads` at a time.

use crate::error::BadInput;
use crate::resources::human;
use crate::run::Prepared;
use crate::runner::Job;

/// Memory per write while its run is simulated, bytes.
pub const BYTES_PER_WRITE_RUNNING: u64 = 100;
/// Memory per write kept after its run until the result files are written, bytes.
pub const BYTES_PER_WRITE_KEPT: u64 = 16;
/// Memory per flow besides its buffers and writes, bytes (its state while running; its
/// metrics, configuration and scenario after).
pub const BYTES_PER_FLOW: u64 = 4 << 10;
/// Events per write (send, arrive, ACK, timers), roughly, for the events estimate.
pub const EVENTS_PER_WRITE: u64 = 8;
/// The share of the memory limit an estimate may use.
pub const SHARE: f64 = 0.8;

/// The estimate of a whole `thinlab run`.
#[derive(Debug)]
pub struct Estimate {
    pub memory: u64,
    pub events: u64,
    pub writes: u64,
    /// The flow with the most writes: (dotted key of its app, flow name, writes per run).
    pub largest: Option<(String, String, u64)>,
}

/// Estimates the resources of `jobs` run `threads` at a time.
pub fn estimate(prepared: &Prepared, jobs: &[Job], threads: usize) -> Estimate {
    let mut per_run = Vec::with_capacity(prepared.scenarios.len());
    let mut largest: Option<(String, String, u64)> = None;
    for s in &prepared.scenarios {
        let (mut running, mut writes) = (0u64, 0u64);
        for (i, f) in s.flows.iter().enumerate() {
            let w = f.estimated_writes(s.duration, s.network.bandwidth);
            writes = writes.saturating_add(w);
            running = running
                .saturating_add(w.saturating_mul(BYTES_PER_WRITE_RUNNING))
                // Buffers fill only with data in flight: at most what the flow writes.
                .saturating_add(
                    (f.tcp.send_buffer as u64 + f.tcp.recv_buffer as u64)
                        .min(w.saturating_mul(3000)),
                )
                .saturating_add(BYTES_PER_FLOW);
            if largest.as_ref().is_none_or(|l| w > l.2) {
                largest = Some((format!("flow.{i}.app"), f.name.clone(), w));
            }
        }
        per_run.push((running, writes));
    }
    let mut kept = 0u64;
    let mut events = 0u64;
    let mut total_writes = 0u64;
    let mut biggest_runs: Vec<u64> = Vec::with_capacity(jobs.len());
    for j in jobs {
        let (running, writes) = per_run[j.config];
        kept = kept.saturating_add(
            writes
                .saturating_mul(BYTES_PER_WRITE_KEPT)
                .saturating_add(BYTES_PER_FLOW),
        );
        events = events.saturating_add(writes.saturating_mul(EVENTS_PER_WRITE));
        total_writes = total_writes.saturating_add(writes);
        biggest_runs.push(running);
    }
    // The `threads` largest runs at once.
    biggest_runs.sort_unstable_by(|a, b| b.cmp(a));
    let at_once: u64 = biggest_runs
        .iter()
        .take(threads.max(1))
        .fold(0u64, |a, &b| a.saturating_add(b));
    Estimate {
        memory: at_once.saturating_add(kept),
        events,
        writes: total_writes,
        largest,
    }
}

/// Refuses an estimate over [`SHARE`] of `limit` bytes (exit code 2), naming the largest flow.
pub fn check(e: &Estimate, limit: Option<u64>, runs: usize) -> Result<(), BadInput> {
    let Some(limit) = limit else {
        return Ok(());
    };
    if (e.memory as f64) <= SHARE * limit as f64 {
        return Ok(());
    }
    let flow = e.largest.as_ref().map_or(String::new(), |(key, name, w)| {
        format!(" The largest flow, `{key}` (flow \"{name}\"), makes about {w} writes per run.")
    });
    Err(BadInput::new(format!(
        "the scenario needs about {} of memory ({} writes in {runs} run(s), about {} events), more \
         than {:.0} % of the {} this process may use.{flow} Expected fewer writes (a longer \
         interval, a shorter duration), fewer configurations or repetitions, fewer --jobs, or \
         --force to run anyway",
        human(e.memory),
        e.writes,
        e.events,
        SHARE * 100.0,
        human(limit)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(memory: u64) -> Estimate {
        Estimate {
            memory,
            events: 8,
            writes: 1,
            largest: Some(("flow.0.app".into(), "game".into(), 123)),
        }
    }

    #[test]
    fn refuses_only_what_does_not_fit() {
        assert!(check(&est(1 << 30), Some(4 << 30), 1).is_ok());
        assert!(check(&est(1 << 40), None, 1).is_ok());
        let e = check(&est(10 << 30), Some(4 << 30), 2).unwrap_err();
        assert!(
            e.0.contains("10.0 GiB") && e.0.contains("flow.0.app") && e.0.contains("--force"),
            "{e}"
        );
    }
}
