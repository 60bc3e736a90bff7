//! TEMPORARY stand-in for the thinlab-sim API while it is being written; removed at integration.

use std::time::Duration;
use thinlab_tcp::event::{Event, SendKind};
use thinlab_tcp::Instant;
use thinlab_trace::{FlowRecorder, FlowRecords};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError(String);
impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ScenarioError {}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub repetitions: u32,
    pub duration: Duration,
    loss: f64,
    flows: Vec<String>,
}

impl Scenario {
    pub fn from_toml(v: toml::Value) -> Result<Scenario, ScenarioError> {
        let bad = |k: &str, e: &str| ScenarioError(format!("`{k}`: expected {e}"));
        let name = v.get("name").and_then(|x| x.as_str()).ok_or_else(|| bad("name", "a string"))?.to_string();
        let d = v.get("duration").and_then(|x| x.as_str()).ok_or_else(|| bad("duration", "a duration"))?;
        let secs: f64 = d.trim_end_matches("min").trim_end_matches('s').parse().map_err(|_| bad("duration", "a duration"))?;
        let secs = if d.ends_with("min") { secs * 60.0 } else { secs };
        let loss = v.get("network").and_then(|n| n.get("loss")).and_then(|l| l.get("rate")).and_then(|r| r.as_float()).unwrap_or(0.0);
        if !(0.0..=1.0).contains(&loss) {
            return Err(ScenarioError(format!("`network.loss.rate` = {loss}: expected a probability in [0, 1]")));
        }
        let flows: Vec<String> = v.get("flow").and_then(|f| f.as_array()).ok_or_else(|| bad("flow", "at least one [[flow]]"))?
            .iter().enumerate().map(|(i, f)| f.get("name").and_then(|n| n.as_str()).map_or(format!("flow{i}"), str::to_string)).collect();
        Ok(Scenario {
            name,
            seed: v.get("seed").and_then(|x| x.as_integer()).unwrap_or(1) as u64,
            repetitions: v.get("repetitions").and_then(|x| x.as_integer()).unwrap_or(1) as u32,
            duration: Duration::from_secs_f64(secs),
            loss,
            flows,
        })
    }
}

pub struct FlowResult {
    pub name: String,
    pub records: FlowRecords,
    pub duration: Duration,
}

pub struct RunResult {
    pub flows: Vec<FlowResult>,
    pub end_time: Instant,
    pub events_processed: u64,
    pub drain_bound_hit: bool,
}

pub fn run_observed(s: &Scenario, seed: u64, on_progress: &mut dyn FnMut(Duration)) -> RunResult {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut rnd = move || { x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (x >> 11) as f64 / (1u64 << 53) as f64 };
    let flows = s.flows.iter().map(|name| {
        let mut r = FlowRecorder::new();
        r.on_connect(Instant::ZERO);
        let mut t = 0u64;
        let mut off = 0u64;
        while t < s.duration.as_millis() as u64 {
            r.on_write(Instant::from_millis(t), off, off + 120);
            r.on_sender_event(&Event::Sent { at: Instant::from_millis(t), start: off, end: off + 120, kind: SendKind::New, syn: false, fin: false });
            let lat = if rnd() < s.loss { r.on_sender_event(&Event::RtoFired { at: Instant::from_millis(t + 300), rto: Duration::from_millis(300), backoff: 1 });
                r.on_sender_event(&Event::Sent { at: Instant::from_millis(t + 300), start: off, end: off + 120, kind: SendKind::Rto, syn: false, fin: false }); 350 } else { 50 };
            r.on_receiver_event(&Event::Arrived { at: Instant::from_millis(t + lat), start: off, end: off + 120 });
            r.on_receiver_event(&Event::Delivered { at: Instant::from_millis(t + lat), start: off, end: off + 120 });
            r.on_sender_event(&Event::Acked { at: Instant::from_millis(t + lat + 50), una: off + 120 });
            off += 120;
            t += 140;
            on_progress(Duration::from_millis(t));
        }
        FlowResult { name: name.clone(), records: r.finish(), duration: s.duration }
    }).collect();
    RunResult { flows, end_time: Instant::ZERO + s.duration, events_processed: 0, drain_bound_hit: false }
}
