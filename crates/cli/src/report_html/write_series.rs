//! The per-write plots of `report.html`: for the first [`MAX_SERIES`] (configuration, flow)
//! pairs, the application latency of every delivered write of the worst repetition (kept by the
//! run itself as a bounded series, `thinlab_trace::series`) and a time-sequence graph of the
//! window around its worst write (also traced by the run itself, `thinlab_sim::WorstWindow`;
//! when it gave up, or for runs made elsewhere without them, the simulator runs that repetition
//! again up to the window's end: it is deterministic).

use super::data::r3;
use crate::runner::RunOutput;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use thinlab_sim::{Scenario, TraceFilter, TracedWindow, WorstWindow};
use thinlab_tcp::{Event, Instant, SendKind};
use thinlab_trace::histogram::ns_to_ms;
use thinlab_trace::series::{LatencySeries, WorstWrite};

/// Most per-write series: the first (configuration, flow) pairs get one.
pub const MAX_SERIES: usize = 8;
/// Most points of a per-write series (each the maximum of consecutive writes when there are
/// more).
pub const SERIES_POINTS: usize = 800;
/// Most points of a sequence diagram.
const SEQUENCE_POINTS: usize = 6000;
/// What the traced rerun keeps of a window: the first [`SEQUENCE_POINTS`] events of the
/// categories drawn as points (class 0) and of the SACK blocks (class 1), and the first
/// [`SEQUENCE_POINTS`] writes: all that [`sequence`] can use, however busy the flow.
const SEQUENCE_EVENTS: TraceFilter = TraceFilter {
    classify: |at_sender, ev| match ev {
        Event::Sacked { .. } if at_sender => Some(1),
        _ => category(at_sender, ev).map(|_| 0),
    },
    per_class: SEQUENCE_POINTS,
};
/// The sequence diagram shows 200 ms before the worst write and after its delivery, as far as
/// [`SEQUENCE_EVENTS`] keeps it; each run traces that window ([`crate::runner`]).
pub const SEQUENCE_WINDOW: WorstWindow = WorstWindow {
    filter: SEQUENCE_EVENTS,
    margin: Duration::from_millis(200),
};

/// Application latency of the delivered writes of one repetition, in write order.
#[derive(Serialize)]
pub struct WriteSeries {
    pub config: usize,
    pub flow: usize,
    pub label: String,
    pub repetition: u32,
    pub seed: u64,
    pub writes: usize,
    /// The time-sequence graph around the worst write.
    pub sequence: Option<Sequence>,
    /// Each point is the maximum over this many consecutive writes.
    pub bucket: usize,
    /// `[index of the bucket's first write, its maximum latency ms]`.
    pub points: Vec<(usize, f64)>,
}

/// What happened around one write: every write, transmission (by cause), arrival, in-order
/// delivery, cumulative ACK and SACK block of the flow in a window of simulated time, as
/// `(category, time ms, stream offset of its end)`: a time-sequence graph (tcptrace's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    pub from_ms: f64,
    pub to_ms: f64,
    /// The worst write: write time, latency, its end offset.
    pub write_ms: f64,
    pub latency_ms: f64,
    pub end: u64,
    pub categories: Vec<String>,
    pub points: Vec<(usize, f64, u64)>,
    /// SACK blocks the sender received: `(time ms, start, end)`, drawn as vertical bars.
    pub sacks: Vec<(f64, u64, u64)>,
}

/// Categories of the sequence diagram, in drawing order.
const CATEGORIES: [&str; 11] = [
    "write",
    "sent: new data",
    "sent: RDB bundle",
    "retransmission: fast / RACK",
    "retransmission: early",
    "retransmission: TLP probe",
    "retransmission: RTO",
    "arrived at the receiver",
    "delivered to the application",
    "acknowledged (snd.una)",
    "SACK block (held by the receiver)",
];

fn category(at_sender: bool, ev: &Event) -> Option<(usize, Instant, u64)> {
    Some(match *ev {
        Event::Sent {
            at,
            start,
            end,
            kind,
            ..
        } if at_sender && end > start => {
            let c = match kind {
                SendKind::New | SendKind::TlpNewData => 1,
                SendKind::Rdb => 2,
                SendKind::FastRetransmit | SendKind::RackRetransmit => 3,
                SendKind::Early | SendKind::EarlyThreshold => 4,
                SendKind::Tlp => 5,
                SendKind::Rto => 6,
                _ => return None,
            };
            (c, at, end)
        }
        Event::Arrived { at, end, .. } if !at_sender => (7, at, end),
        Event::Delivered { at, end, .. } if !at_sender => (8, at, end),
        Event::Acked { at, una } if at_sender => (9, at, una),
        Event::Sacked { at, end, .. } if at_sender => (10, at, end),
        _ => return None,
    })
}

/// Per configuration of `scenarios`, the flows that keep their latency series: the first
/// [`MAX_SERIES`] (configuration, flow) pairs, in order (the report's first lines).
pub fn series_flows(scenarios: &[Scenario]) -> Vec<Vec<usize>> {
    let mut left = MAX_SERIES;
    scenarios
        .iter()
        .map(|s| {
            let n = s.flows.len().min(left);
            left -= n;
            (0..n).collect()
        })
        .collect()
}

/// Runs of the simulator again, for the per-write plots (the emulator's runs cannot be repeated).
pub struct SimReruns<'a> {
    scenarios: &'a [Scenario],
}

impl<'a> SimReruns<'a> {
    pub fn new(scenarios: &'a [Scenario]) -> Self {
        SimReruns { scenarios }
    }

    /// The latency series of flows `flows` of configuration `config` run with `seed` (for runs
    /// that did not keep them: made elsewhere, or the flow was not among the first pairs).
    fn series(&self, config: usize, seed: u64, flows: &[usize]) -> Vec<Option<LatencySeries>> {
        let Some(s) = self.scenarios.get(config) else {
            return vec![None; flows.len()];
        };
        let keep = thinlab_sim::Keep {
            series_flows: flows,
            series_points: SERIES_POINTS,
            ..Default::default()
        };
        let r = thinlab_sim::run_keeping(s, seed, keep, &mut |_| {});
        flows
            .iter()
            .map(|&f| r.flows.get(f)?.records.series.as_deref().cloned())
            .collect()
    }

    /// What the flows did in `windows` (flow, from, to) of configuration `config` run with `seed`.
    fn traced(
        &self,
        config: usize,
        seed: u64,
        windows: &[(usize, Duration, Duration)],
    ) -> Vec<TracedWindow> {
        match self.scenarios.get(config) {
            Some(s) => thinlab_sim::run_traced(s, seed, windows, SEQUENCE_EVENTS),
            None => windows.iter().map(|_| TracedWindow::default()).collect(),
        }
    }
}

/// The per-write series of `wanted` (config, flow, label, worst repetition), in that order:
/// the series and sequence diagram each run kept, or one rerun per (config, seed) for the
/// series that are missing, then one traced rerun per (config, seed) for the sequence diagrams
/// that are.
pub fn write_series(
    wanted: Vec<(usize, usize, String, &RunOutput)>,
    reruns: &SimReruns<'_>,
) -> Vec<WriteSeries> {
    let mut series: Vec<Option<LatencySeries>> = wanted
        .iter()
        .map(|&(_, f, _, run)| run.flows.get(f).and_then(|o| o.series.clone()))
        .collect();
    let missing: Vec<usize> = (0..wanted.len()).filter(|&k| series[k].is_none()).collect();
    for (key, members) in groups(&missing, |k| (wanted[k].0, wanted[k].3.seed)) {
        let flows: Vec<usize> = members.iter().map(|&k| wanted[k].1).collect();
        for (k, found) in members.into_iter().zip(reruns.series(key.0, key.1, &flows)) {
            series[k] = found;
        }
    }
    let worst: Vec<Option<WorstWrite>> = series
        .iter()
        .map(|s| s.as_ref().and_then(LatencySeries::worst))
        .collect();
    let mut sequences: Vec<Option<Sequence>> = wanted
        .iter()
        .map(|&(_, f, _, run)| run.flows.get(f).and_then(|o| o.sequence.clone()))
        .collect();
    let traced_ones: Vec<usize> = (0..wanted.len())
        .filter(|&k| worst[k].is_some() && sequences[k].is_none())
        .collect();
    for (key, members) in groups(&traced_ones, |k| (wanted[k].0, wanted[k].3.seed)) {
        let windows: Vec<_> = members
            .iter()
            .filter_map(|&k| worst[k].map(|w| (wanted[k].1, window(&w))))
            .map(|(f, (from, to))| (f, from, to))
            .collect();
        for (k, traced) in members
            .into_iter()
            .zip(reruns.traced(key.0, key.1, &windows))
        {
            sequences[k] = worst[k].map(|w| sequence(&w, &traced));
        }
    }
    wanted
        .into_iter()
        .zip(series)
        .zip(sequences)
        .filter_map(|(((config, flow, label, run), series), sequence)| {
            let series = series?;
            Some(WriteSeries {
                config,
                flow,
                label,
                repetition: run.repetition,
                seed: run.seed,
                writes: series.count() as usize,
                sequence,
                bucket: series.bucket() as usize,
                points: series
                    .points()
                    .into_iter()
                    .map(|(i, ns)| (i as usize, r3(ns_to_ms(ns))))
                    .collect(),
            })
        })
        .collect()
}

/// `items` grouped by `key`, groups in the order of their first item.
fn groups<K: PartialEq>(items: &[usize], key: impl Fn(usize) -> K) -> Vec<(K, Vec<usize>)> {
    let mut out: Vec<(K, Vec<usize>)> = Vec::new();
    for &k in items {
        let key = key(k);
        match out.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(k),
            None => out.push((key, vec![k])),
        }
    }
    out
}

/// The window of the sequence diagram around write `w` ([`SEQUENCE_WINDOW`]).
fn window(w: &WorstWrite) -> (Duration, Duration) {
    let (from, to) = SEQUENCE_WINDOW.around(w);
    (Duration::from_nanos(from), Duration::from_nanos(to))
}

/// The sequence diagram of the window around write `w`, from what the flow did in it.
pub fn sequence(w: &WorstWrite, traced: &TracedWindow) -> Sequence {
    let (from, to) = window(w);
    let ms = |t: Instant| r3(t.as_millis_f64());
    let mut points: Vec<(usize, f64, u64)> = traced
        .writes
        .iter()
        .map(|&(at, end)| (0, ms(at), end))
        .collect();
    points.extend(
        traced
            .events
            .iter()
            .filter_map(|(s, e)| category(*s, e))
            .map(|(c, t, off)| (c, ms(t), off)),
    );
    points.truncate(SEQUENCE_POINTS);
    let sacks = traced
        .events
        .iter()
        .filter_map(|(sender, e)| match *e {
            Event::Sacked { at, start, end } if *sender => Some((ms(at), start, end)),
            _ => None,
        })
        .take(SEQUENCE_POINTS)
        .collect();
    Sequence {
        from_ms: r3(from.as_secs_f64() * 1e3),
        to_ms: r3(to.as_secs_f64() * 1e3),
        write_ms: ms(Instant::from_nanos(w.write_time_ns)),
        latency_ms: r3(w.latency_ns as f64 / 1e6),
        end: w.end,
        categories: CATEGORIES.iter().map(|c| c.to_string()).collect(),
        points,
        sacks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_graph_has_the_sack_blocks_the_sender_received() {
        let s = Scenario::from_toml_str(
            r#"
name = "sack"
seed = 4
duration = "60s"
[network]
rtt = "100ms"
bandwidth = "10Mbit"
queue_packets = 100
[network.loss]
model = "bernoulli"
rate = 0.05
[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 100, interval = "20ms" }
tcp = { profile = "linux", nodelay = true }
"#,
        )
        .unwrap();
        let scenarios = [s];
        let reruns = SimReruns::new(&scenarios);
        let series = reruns.series(0, 4, &[0]).pop().flatten().unwrap();
        assert!(series.count() > 1000);
        let w = series.worst().unwrap();
        let (from, to) = window(&w);
        let traced = reruns.traced(0, 4, &[(0, from, to)]).pop().unwrap();
        assert!(!traced.writes.is_empty(), "no write in the window");
        let seq = sequence(&w, &traced);
        assert!(
            !seq.sacks.is_empty(),
            "no SACK block around the worst write"
        );
        for &(t, start, end) in &seq.sacks {
            assert!(start < end && (seq.from_ms..=seq.to_ms).contains(&t));
        }
        let sack_points = seq.points.iter().filter(|p| p.0 == 10).count();
        assert_eq!(sack_points, seq.sacks.len());
        assert_eq!(seq.categories.len(), 11);
        // every point lies in the window
        assert!(seq
            .points
            .iter()
            .all(|p| (seq.from_ms..=seq.to_ms).contains(&p.1)));
    }

    #[test]
    fn the_first_pairs_keep_series() {
        let one = |flows: usize| {
            let mut text =
                String::from("name = \"x\"\nduration = \"1s\"\n[network]\nrtt = \"10ms\"\nbandwidth = \"10Mbit\"\n");
            for i in 0..flows {
                text += &format!("[[flow]]\nname = \"f{i}\"\napp = {{ kind = \"bulk\" }}\n");
            }
            Scenario::from_toml_str(&text).unwrap()
        };
        let got = series_flows(&[one(3), one(4), one(5)]);
        assert_eq!(got, vec![vec![0, 1, 2], vec![0, 1, 2, 3], vec![0]]);
    }
}
