//! Per-flow metrics (docs/spec/interface.md, "Results"), computed from [`FlowRecords`] only.
//!
//! Latency of a write = milestone − origin, where the milestone is `app` (delivered in order
//! to the receiving application), `transport` (last byte first arrives at the receiving host)
//! or `acked` (last byte cumulatively acknowledged), and the origin is the write call
//! (`*_latency_ms`) or the first transmission of the write's first byte
//! (`*_latency_from_send_ms`). `count` says how many writes reached the milestone.
//!
//! **Censoring.** A write that had not reached the milestone when the flow stopped being
//! observed (`FlowRecords::observed_until`, the end of the run) does not vanish from the
//! statistics: its latency is at least `observed_until − origin`, and it enters the mean and the
//! percentiles with that value as a *censored* sample; `censored` says how many did. With
//! `censored > 0` the mean, `max` and every percentile at or above the smallest censored value
//! are lower bounds (percentiles below it are exact). Writes never sent have no origin for the
//! `_from_send` variants and are left out of those. Without `observed_until` (a capture
//! without the receiver side) nothing is censored and unreached writes are left out.
//!
//! Percentiles use the **nearest-rank** definition: for `n` sorted samples `x_1 ≤ … ≤ x_n`,
//! the q-quantile is `x_k` with `k = max(1, ⌈q·n⌉)`, computed in integer arithmetic
//! (q is a fraction `num/den`), so p99 of 100 samples is exactly the 99th smallest. It is
//! always one of the samples, monotone in q, and p100 = max.

use crate::histogram::{merged_runs, ns_to_ms, LatencyHistogram};
use crate::records::{FlowRecords, WriteRecord};
use crate::status::FlowStatus;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use thinlab_tcp::Instant;

/// Summary of a latency distribution in milliseconds. Every field but `count` is `None`
/// (JSON `null`) when there are no samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    pub p999: Option<f64>,
    pub max: Option<f64>,
    /// Samples that reached the milestone (exact latencies).
    pub count: u64,
    /// Samples that had not reached it by the end of observation (lower bounds), included in
    /// every statistic above.
    pub censored: u64,
}

impl LatencyStats {
    /// Statistics of `samples_ms` (any order; NaNs are ignored).
    pub fn from_samples(samples_ms: &[f64]) -> Self {
        let mut sorted: Vec<f64> = samples_ms.iter().copied().filter(|x| !x.is_nan()).collect();
        sorted.sort_unstable_by(f64::total_cmp); // equal under total_cmp = identical bits
        Self::from_sorted(&sorted)
    }

    /// Statistics of samples already sorted ascending (no NaNs).
    pub fn from_sorted(sorted: &[f64]) -> Self {
        let n = sorted.len();
        let mean = (n > 0).then(|| sorted.iter().sum::<f64>() / n as f64);
        LatencyStats {
            mean,
            p50: nearest_rank(sorted, 50, 100),
            p90: nearest_rank(sorted, 90, 100),
            p99: nearest_rank(sorted, 99, 100),
            p999: nearest_rank(sorted, 999, 1000),
            max: sorted.last().copied(),
            count: n as u64,
            censored: 0,
        }
    }

    /// Statistics of the ascending `(value, count)` runs of a sorted multiset of samples
    /// (`histogram::merged_runs`), of which `censored` are censored: bit for bit
    /// [`LatencyStats::from_sorted`] of the expanded samples.
    pub fn from_runs(runs: &[(f64, u64)], censored: u64) -> Self {
        let n: u64 = runs.iter().map(|r| r.1).sum();
        let expanded = || {
            runs.iter()
                .flat_map(|&(v, c)| std::iter::repeat_n(v, c as usize))
        };
        let mean = (n > 0).then(|| expanded().sum::<f64>() / n as f64);
        LatencyStats {
            mean,
            p50: nearest_rank_runs(runs, n, 50, 100),
            p90: nearest_rank_runs(runs, n, 90, 100),
            p99: nearest_rank_runs(runs, n, 99, 100),
            p999: nearest_rank_runs(runs, n, 999, 1000),
            max: runs.last().map(|r| r.0),
            count: n - censored,
            censored,
        }
    }

    /// Statistics of exact samples together with censored ones (lower bounds); `count` is the
    /// number of exact samples, `censored` the number of censored ones.
    pub fn with_censored(exact_ms: &[f64], censored_ms: &[f64]) -> Self {
        let mut all: Vec<f64> = exact_ms
            .iter()
            .chain(censored_ms)
            .copied()
            .filter(|x| !x.is_nan())
            .collect();
        all.sort_unstable_by(f64::total_cmp);
        let mut s = Self::from_sorted(&all);
        let censored = censored_ms.iter().filter(|x| !x.is_nan()).count() as u64;
        s.count -= censored;
        s.censored = censored;
        s
    }
}

/// Nearest-rank percentile `num/den` (0 ≤ num ≤ den) of ascending `sorted`; `None` if empty.
pub fn nearest_rank(sorted: &[f64], num: u64, den: u64) -> Option<f64> {
    if sorted.is_empty() || den == 0 {
        return None;
    }
    let n = sorted.len() as u128;
    let num = u128::from(num.min(den));
    let den = u128::from(den);
    let k = (n * num).div_ceil(den).max(1);
    Some(sorted[(k - 1) as usize])
}

/// [`nearest_rank`] over `(value, count)` runs holding `n` samples.
pub fn nearest_rank_runs(runs: &[(f64, u64)], n: u64, num: u64, den: u64) -> Option<f64> {
    if n == 0 || den == 0 {
        return None;
    }
    let k = (u128::from(n) * u128::from(num.min(den)))
        .div_ceil(u128::from(den))
        .max(1);
    let mut seen = 0u128;
    for &(v, c) in runs {
        seen += u128::from(c);
        if seen >= k {
            return Some(v);
        }
    }
    None
}

/// Which milestone of a write a latency is measured to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Milestone {
    /// Last byte delivered in order to the receiving application.
    App,
    /// Last byte first arrives at the receiving host.
    Transport,
    /// Last byte cumulatively acknowledged at the sender.
    Ack,
}

/// Where a latency is measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The application's write call.
    Write,
    /// The first transmission of the write's first byte.
    FirstSend,
}

fn ms_between(from: Instant, to: Instant) -> f64 {
    ns_to_ms((to - from).as_nanos() as u64)
}

/// Latency of one write in ns, if it reached the milestone (and, for `FirstSend`, was sent).
pub fn write_latency_ns(w: &WriteRecord, milestone: Milestone, origin: Origin) -> Option<u64> {
    let to = match milestone {
        Milestone::App => w.app,
        Milestone::Transport => w.transport,
        Milestone::Ack => w.acked,
    }?;
    let from = match origin {
        Origin::Write => w.write_time,
        Origin::FirstSend => w.first_send?,
    };
    Some((to - from).as_nanos() as u64)
}

/// Latency of one write in ms, if it reached the milestone (and, for `FirstSend`, was sent).
pub fn write_latency_ms(w: &WriteRecord, milestone: Milestone, origin: Origin) -> Option<f64> {
    write_latency_ns(w, milestone, origin).map(ns_to_ms)
}

/// Exact histogram of the latencies of every write that reached `milestone`: the retired
/// writes' (`FlowRecords::retired`) and those of the writes still held.
pub fn latency_histogram(
    rec: &FlowRecords,
    milestone: Milestone,
    origin: Origin,
) -> LatencyHistogram {
    let mut h = rec.retired.latency(milestone, origin).clone();
    for ns in rec
        .writes
        .iter()
        .filter_map(|w| write_latency_ns(w, milestone, origin))
    {
        h.add(ns);
    }
    h.compact();
    h
}

/// Latency samples (ms) of every write that reached `milestone`: those of retired writes
/// first (ascending), then those of the writes still held, in write order.
pub fn latency_samples_ms(rec: &FlowRecords, milestone: Milestone, origin: Origin) -> Vec<f64> {
    let retired = rec.retired.latency(milestone, origin);
    retired
        .samples_ms()
        .chain(
            rec.writes
                .iter()
                .filter_map(|w| write_latency_ms(w, milestone, origin)),
        )
        .collect()
}

/// Censored latency samples (ms, in write order): for every write that had not reached
/// `milestone` by `rec.observed_until`, the time from its origin to then (a lower bound).
/// Empty when the records carry no `observed_until`.
pub fn censored_samples_ms(rec: &FlowRecords, milestone: Milestone, origin: Origin) -> Vec<f64> {
    let Some(until) = rec.observed_until else {
        return Vec::new();
    };
    rec.writes
        .iter()
        .filter(|w| {
            match milestone {
                Milestone::App => w.app,
                Milestone::Transport => w.transport,
                Milestone::Ack => w.acked,
            }
            .is_none()
        })
        .filter_map(|w| {
            let from = match origin {
                Origin::Write => w.write_time,
                Origin::FirstSend => w.first_send?,
            };
            Some(ms_between(from, until.max(from)))
        })
        .collect()
}

/// Retransmitted segments by the mechanism that sent them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetransmissionsByCause {
    /// Retransmission timeouts.
    pub rto: u64,
    /// Fast retransmit by duplicate ACKs / SACK count / NewReno partial ACK (thin dupACK
    /// included).
    pub fast: u64,
    /// Fast retransmissions of segments RACK marked lost.
    pub rack: u64,
    /// Early Retransmit (RFC 5827).
    pub early: u64,
    /// The F-RTO threshold of Yin et al. (`er-threshold`).
    pub er_threshold: u64,
    /// Tail loss probes that retransmitted (probes of new data are in `tlp_probes`).
    pub tlp: u64,
}

/// Every per-flow metric of docs/spec/interface.md, by its exact name. Serializes to the `metrics`
/// object of `summary.json`; `None` fields serialize as `null`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowMetrics {
    pub app_latency_ms: LatencyStats,
    pub transport_latency_ms: LatencyStats,
    pub ack_latency_ms: LatencyStats,
    pub app_latency_from_send_ms: LatencyStats,
    pub transport_latency_from_send_ms: LatencyStats,
    pub ack_latency_from_send_ms: LatencyStats,
    /// How the flow ended; `completed` exactly when every write was delivered.
    pub status: FlowStatus,
    /// Why it did not complete (`"15 retransmission timeouts"`, `"reset"`, …); null when
    /// completed.
    pub status_reason: Option<String>,
    /// Writes the application made (delivered or not).
    pub writes: u64,
    /// Writes delivered to the receiving application / not delivered by the end of the run.
    pub writes_delivered: u64,
    pub writes_undelivered: u64,
    pub bytes_written: u64,
    pub bytes_delivered: u64,
    pub data_packets_sent: u64,
    pub payload_bytes_sent: u64,
    pub unique_bytes_sent: u64,
    pub redundant_bytes_sent: u64,
    /// `payload_bytes_sent / data_packets_sent`; null when no data packet was sent.
    pub avg_payload_bytes: Option<f64>,
    pub rdb_bundles: u64,
    /// Losses RDB repaired: bundles whose redundant bytes filled the receiver's next gap
    /// without a retransmission (not part of `retransmissions`). Null where the driver cannot
    /// tell (captures, the emulator).
    pub rdb_repaired_losses: Option<u64>,
    /// Segments sent by a retransmission mechanism (sum of `retransmissions_by_cause`).
    pub retransmissions: u64,
    pub retransmissions_by_cause: RetransmissionsByCause,
    /// Tail loss probes sent, of new data and retransmissions (Linux `TCPLossProbes`).
    pub tlp_probes: u64,
    pub rto_events: u64,
    pub spurious_retransmissions: u64,
    /// Total time spent waiting for an RTO to expire with nothing sent, ms.
    pub frozen_time_ms: f64,
    /// The time the flow was active, s: from its connect to its last delivery (to the end of
    /// the run if nothing was delivered). Rates are computed over it.
    pub duration_s: f64,
    /// `bytes_delivered · 8 / duration_s`; null when the duration is zero. Never above the
    /// bottleneck rate: every byte counted was delivered within `duration_s`.
    pub goodput_bps: Option<f64>,
    /// Finite transfers whose every byte was delivered: connect → last byte delivered, ms.
    /// Null for unbounded flows and transfers that did not complete.
    pub completion_time_ms: Option<f64>,
}

/// How many scalars follow the latency statistics ([`FlowMetrics::scalars`]).
const OTHER_SCALARS: usize = 26;
/// How many scalars a flow has: eight per latency statistic, then the others.
const SCALARS: usize = FlowMetrics::LATENCY_NAMES.len() * 8 + OTHER_SCALARS;

impl FlowMetrics {
    /// Names of the latency statistics, in serialization order.
    pub const LATENCY_NAMES: [&'static str; 6] = [
        "app_latency_ms",
        "transport_latency_ms",
        "ack_latency_ms",
        "app_latency_from_send_ms",
        "transport_latency_from_send_ms",
        "ack_latency_from_send_ms",
    ];

    /// Every scalar metric under its dotted name (`app_latency_ms.p99`,
    /// `retransmissions_by_cause.rto`), in serialization order; `None` is JSON `null`.
    /// Counts are exact as f64 up to 2^53.
    pub fn scalars(&self) -> Vec<(String, Option<f64>)> {
        Self::scalar_names()
            .iter()
            .cloned()
            .zip(self.scalar_values())
            .collect()
    }

    /// The names of [`FlowMetrics::scalars`], in order (made once).
    pub fn scalar_names() -> &'static [String] {
        static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        NAMES.get_or_init(|| {
            let m = FlowMetrics::default();
            let mut names = Vec::with_capacity(SCALARS);
            for name in Self::LATENCY_NAMES {
                for (field, _) in Self::latency_fields(&m.app_latency_ms) {
                    names.push(format!("{name}.{field}"));
                }
            }
            names.extend(m.other_scalars().into_iter().map(|(k, _)| k.to_string()));
            names
        })
    }

    /// The values of [`FlowMetrics::scalars`], in order, without their names (one row of
    /// `runs.csv` per flow: a sweep of 100 000 runs formatted 7 million names to drop them).
    pub fn scalar_values(&self) -> Vec<Option<f64>> {
        let mut out = Vec::with_capacity(SCALARS);
        let latencies = [
            &self.app_latency_ms,
            &self.transport_latency_ms,
            &self.ack_latency_ms,
            &self.app_latency_from_send_ms,
            &self.transport_latency_from_send_ms,
            &self.ack_latency_from_send_ms,
        ];
        for s in latencies {
            out.extend(Self::latency_fields(s).map(|(_, v)| v));
        }
        out.extend(self.other_scalars().map(|(_, v)| v));
        out
    }

    /// The fields of one latency statistic, in order.
    fn latency_fields(s: &LatencyStats) -> [(&'static str, Option<f64>); 8] {
        [
            ("mean", s.mean),
            ("p50", s.p50),
            ("p90", s.p90),
            ("p99", s.p99),
            ("p999", s.p999),
            ("max", s.max),
            ("count", Some(s.count as f64)),
            ("censored", Some(s.censored as f64)),
        ]
    }

    /// The scalars after the latency statistics, in order.
    fn other_scalars(&self) -> [(&'static str, Option<f64>); OTHER_SCALARS] {
        let n = |v: u64| Some(v as f64);
        let c = &self.retransmissions_by_cause;
        [
            ("writes", n(self.writes)),
            ("writes_delivered", n(self.writes_delivered)),
            ("writes_undelivered", n(self.writes_undelivered)),
            ("bytes_written", n(self.bytes_written)),
            ("bytes_delivered", n(self.bytes_delivered)),
            ("data_packets_sent", n(self.data_packets_sent)),
            ("payload_bytes_sent", n(self.payload_bytes_sent)),
            ("unique_bytes_sent", n(self.unique_bytes_sent)),
            ("redundant_bytes_sent", n(self.redundant_bytes_sent)),
            ("avg_payload_bytes", self.avg_payload_bytes),
            ("rdb_bundles", n(self.rdb_bundles)),
            (
                "rdb_repaired_losses",
                self.rdb_repaired_losses.map(|v| v as f64),
            ),
            ("retransmissions", n(self.retransmissions)),
            ("retransmissions_by_cause.rto", n(c.rto)),
            ("retransmissions_by_cause.fast", n(c.fast)),
            ("retransmissions_by_cause.early", n(c.early)),
            ("retransmissions_by_cause.tlp", n(c.tlp)),
            ("retransmissions_by_cause.rack", n(c.rack)),
            ("retransmissions_by_cause.er_threshold", n(c.er_threshold)),
            ("tlp_probes", n(self.tlp_probes)),
            ("rto_events", n(self.rto_events)),
            ("spurious_retransmissions", n(self.spurious_retransmissions)),
            ("frozen_time_ms", Some(self.frozen_time_ms)),
            ("duration_s", Some(self.duration_s)),
            ("goodput_bps", self.goodput_bps),
            ("completion_time_ms", self.completion_time_ms),
        ]
    }

    /// Whether the scalar `name` of [`FlowMetrics::scalars`] counts something (an integer in
    /// `summary.json`, an unsigned integer column in Parquet); the others are real numbers.
    pub fn is_count(name: &str) -> bool {
        const REAL: [&str; 5] = [
            "avg_payload_bytes",
            "frozen_time_ms",
            "duration_s",
            "goodput_bps",
            "completion_time_ms",
        ];
        match name.rsplit_once('.') {
            Some((group, field)) if Self::LATENCY_NAMES.contains(&group) => {
                matches!(field, "count" | "censored")
            }
            _ => !REAL.contains(&name),
        }
    }
}

/// Computes every metric of one flow; `duration` is what rates are computed over.
///
/// `status` is `completed` when every write was delivered and `capture_ended` otherwise; a
/// driver that knows more (the simulator: aborted, never established, drain bound) sets it.
pub fn flow_metrics(rec: &FlowRecords, duration: Duration) -> FlowMetrics {
    flow_metrics_and_app_latency(rec, duration).0
}

/// [`flow_metrics`], with the application latency it was computed from: the histogram of
/// [`latency_histogram`] and the samples of [`censored_samples_ms`] (`Milestone::App`,
/// `Origin::Write`), for a caller that keeps them (the CDFs of a run's results), so that they
/// are computed once.
pub fn flow_metrics_and_app_latency(
    rec: &FlowRecords,
    duration: Duration,
) -> (FlowMetrics, LatencyHistogram, Vec<f64>) {
    let stats_of = |hist: &LatencyHistogram, censored: &[f64]| {
        let runs = merged_runs(hist, censored);
        let n_censored = censored.iter().filter(|x| !x.is_nan()).count() as u64;
        LatencyStats::from_runs(&runs, n_censored)
    };
    let stats = |m, o| {
        stats_of(
            &latency_histogram(rec, m, o),
            &censored_samples_ms(rec, m, o),
        )
    };
    let app_hist = latency_histogram(rec, Milestone::App, Origin::Write);
    let app_censored = censored_samples_ms(rec, Milestone::App, Origin::Write);
    let writes_delivered = rec.writes_delivered();
    let writes_undelivered = rec.write_count() - writes_delivered;
    let (status, status_reason) = if writes_undelivered == 0 {
        (FlowStatus::Completed, None)
    } else {
        (
            FlowStatus::CaptureEnded,
            Some(format!(
                "{writes_undelivered} write(s) undelivered when observation ended"
            )),
        )
    };
    let p = &rec.packets;
    let duration_s = duration.as_secs_f64();
    let bytes_written = rec.bytes_written();
    let completion_time_ms = match (rec.finite, rec.connect_time, rec.last_delivery) {
        (true, Some(c), Some(d)) if rec.bytes_delivered >= bytes_written => Some(ms_between(c, d)),
        _ => None,
    };
    let metrics = FlowMetrics {
        app_latency_ms: stats_of(&app_hist, &app_censored),
        transport_latency_ms: stats(Milestone::Transport, Origin::Write),
        ack_latency_ms: stats(Milestone::Ack, Origin::Write),
        app_latency_from_send_ms: stats(Milestone::App, Origin::FirstSend),
        transport_latency_from_send_ms: stats(Milestone::Transport, Origin::FirstSend),
        ack_latency_from_send_ms: stats(Milestone::Ack, Origin::FirstSend),
        status,
        status_reason,
        writes: rec.write_count(),
        writes_delivered,
        writes_undelivered,
        bytes_written,
        bytes_delivered: rec.bytes_delivered,
        data_packets_sent: p.data_packets_sent,
        payload_bytes_sent: p.payload_bytes_sent,
        unique_bytes_sent: p.unique_bytes_sent,
        redundant_bytes_sent: p.redundant_bytes_sent,
        avg_payload_bytes: (p.data_packets_sent > 0)
            .then(|| p.payload_bytes_sent as f64 / p.data_packets_sent as f64),
        rdb_bundles: p.rdb_bundles,
        rdb_repaired_losses: p.rdb_repaired,
        retransmissions: p.retransmissions(),
        retransmissions_by_cause: RetransmissionsByCause {
            rto: p.retrans_rto,
            fast: p.retrans_fast,
            early: p.retrans_early,
            tlp: p.retrans_tlp,
            rack: p.retrans_rack,
            er_threshold: p.retrans_er_threshold,
        },
        tlp_probes: p.tlp_probes,
        rto_events: p.rto_events,
        spurious_retransmissions: p.spurious_retransmissions,
        frozen_time_ms: p.frozen_time_ns as f64 / 1e6,
        duration_s,
        goodput_bps: (duration_s > 0.0).then(|| rec.bytes_delivered as f64 * 8.0 / duration_s),
        completion_time_ms,
    };
    (metrics, app_hist, app_censored)
}

/// Empirical CDF of `samples_ms` as `(value, cumulative fraction)` points, ascending, one per
/// distinct value (the fraction of samples ≤ value). NaNs are ignored.
///
/// When there are more distinct values than `max_points` (at least 2), the body is thinned to
/// evenly spaced ranks, always keeping the first point; every point at or above the 99th
/// percentile (fraction ≥ 0.99) is kept exactly, so the result may exceed `max_points` by
/// the size of the tail.
pub fn latency_cdf(samples_ms: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    latency_cdf_runs(
        &merged_runs(&LatencyHistogram::default(), samples_ms),
        max_points,
    )
}

/// [`latency_cdf`] of the samples given as ascending `(value, count)` runs.
pub fn latency_cdf_runs(runs: &[(f64, u64)], max_points: usize) -> Vec<(f64, f64)> {
    let n = runs.iter().map(|r| r.1).sum::<u64>() as usize;
    // One point per distinct value: (value, fraction of samples ≤ value).
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(runs.len());
    let mut cum = 0usize;
    for &(x, c) in runs {
        cum += c as usize;
        points.push((x, cum as f64 / n as f64));
    }
    let max_points = max_points.max(2);
    if points.len() <= max_points {
        return points;
    }
    // Tail: points whose count of samples ≤ value is ≥ ⌈0.99·n⌉ (integer arithmetic).
    let tail_rank = (n * 99).div_ceil(100);
    let tail_start = points
        .iter()
        .position(|&(_, f)| (f * n as f64).round() as usize >= tail_rank)
        .unwrap_or(points.len());
    let (body, tail) = points.split_at(tail_start);
    // The body keeps at least half the budget however long the exact tail is.
    let budget = max_points
        .saturating_sub(tail.len())
        .max(max_points / 2)
        .max(2);
    let mut out = Vec::with_capacity(budget + tail.len());
    if body.len() <= budget {
        out.extend_from_slice(body);
    } else {
        // Points evenly spaced in cumulative fraction (first and last body points kept), so
        // every step of the distribution that holds 1/budget of the samples stays visible.
        let last = body.len() - 1;
        let (f0, f1) = (body[0].1, body[last].1);
        let mut prev = usize::MAX;
        let mut idx = 0;
        for j in 0..budget {
            let target = f0 + (f1 - f0) * j as f64 / (budget - 1) as f64;
            while idx < last && body[idx].1 < target {
                idx += 1;
            }
            if idx != prev {
                out.push(body[idx]);
                prev = idx;
            }
        }
    }
    out.extend_from_slice(tail);
    out
}

#[cfg(test)]
mod tests;
