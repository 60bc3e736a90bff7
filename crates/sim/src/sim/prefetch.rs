//! Software prefetch of the next events' state, for runs whose flows' state does not fit in
//! the last-level cache (thousands of flows), where nearly every event otherwise stalls on
//! one cache miss after another (docs/performance/many-flows.md, "Prefetching the next events").
//!
//! Two stages: while an event runs, the inline state (endpoint, recorder, path, the flow's
//! scalars) of the event after the next is fetched, and the heap storage (queue fronts, the
//! recorder's held writes) of the next one, whose inline state is by then in the caches
//! enough to read the pointers; the packets of the heap's third level are fetched too, and the
//! top's lane ahead (its next events and their packets).
//! A prefetch changes no result. It costs ~20 % on runs whose state fits in the cache, so it
//! is on only when the flows' state is estimated to exceed the last-level cache.

use super::net::{arrives_at, sent_by, PacketPeek};
use super::Sim;
use crate::event::EventKind;
use thinlab_tcp::prefetch::prefetch;
use thinlab_tcp::Endpoint;

/// A flow's state, roughly (the scaling benchmark measures 20–25 KB per thin stream).
const BYTES_PER_FLOW: u64 = 24 * 1024;

/// The last-level cache assumed when the system does not say.
const DEFAULT_LLC_BYTES: u64 = 32 << 20;

/// No last-level cache is smaller than this: runs whose state fits need not ask the system
/// (seven file reads at the start of every run).
const SMALLEST_LLC_BYTES: u64 = 1 << 20;

/// Whether `flows` flows' state is larger than the last-level cache. `THINLAB_PREFETCH=on` or
/// `off` overrides the estimate (for measuring).
/// Only x86_64 has the prefetch instruction here (elsewhere it would cost lookups for nothing).
pub(super) fn worth_it(flows: usize) -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    match std::env::var("THINLAB_PREFETCH").as_deref() {
        Ok("on") => true,
        Ok("off") => false,
        _ => {
            let state = flows as u64 * BYTES_PER_FLOW;
            state > SMALLEST_LLC_BYTES && state > last_level_cache_bytes()
        }
    }
}

/// The largest data or unified cache of CPU 0 (Linux sysfs), or `DEFAULT_LLC_BYTES`; read once
/// per process (a run of a sweep is short enough for the reads to show).
fn last_level_cache_bytes() -> u64 {
    static BYTES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BYTES.get_or_init(read_last_level_cache_bytes)
}

fn read_last_level_cache_bytes() -> u64 {
    let sizes = (0..8).filter_map(|i| {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let kind = std::fs::read_to_string(format!("{dir}/type")).ok()?;
        if kind.trim() == "Instruction" {
            return None;
        }
        parse_size(&std::fs::read_to_string(format!("{dir}/size")).ok()?)
    });
    sizes.max().unwrap_or(DEFAULT_LLC_BYTES)
}

/// `"32768K"`, `"2M"` or `"512"` in bytes.
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

/// What an event concerns, for prefetching.
struct Target {
    flow: usize,
    /// The endpoint it runs, if any.
    side: Option<usize>,
    /// The direction it sends in: the packet's for one that moves on to its next link, the
    /// endpoint's for one that runs an endpoint.
    dir: usize,
    /// It is the source's own (a write).
    writes: bool,
    /// It is a timer event: nearly all of them find their deadline moved later and only
    /// re-arm it, reading the timer's slot and the endpoint's deadlines (at 10 000 thin
    /// streams, 725 664 of 736 388 timer events), so only those are fetched.
    timer: bool,
    /// It delivers a pure ACK. On a thin stream that sends nothing, so its path (8–9 of the
    /// lines an event would otherwise fetch) is fetched only when written data waits, a stage
    /// later, when the endpoint can tell; of the recorder it updates only the cursors and the
    /// held writes. An ACK that releases a retransmission, a probe's answer or a FIN finds the
    /// path not fetched: time only, never a result.
    pure_ack: bool,
}

impl Sim<'_> {
    /// Prefetches what the next events will touch (the module's two stages).
    #[inline]
    pub(super) fn prefetch_next(&self) {
        if let Some(ev) = self.q.peek_second() {
            self.prefetch_state(ev.kind);
        }
        if let Some(ev) = self.q.peek() {
            for next in self.q.prefetch_lane_after(ev).into_iter().flatten() {
                if let EventKind::Arrive { packet } = next.kind {
                    self.net.prefetch_packet(packet);
                }
            }
            self.prefetch_state(ev.kind);
            if let Some(Target {
                flow,
                side: Some(side),
                timer: false,
                dir,
                pure_ack,
                ..
            }) = self.target(ev.kind)
            {
                let fl = &self.flows[flow];
                if let Some(ep) = &fl.eps[side] {
                    ep.prefetch_buffers();
                    if pure_ack && ep.has_unsent() {
                        self.net.prefetch_path(flow, dir);
                    }
                }
                fl.recorder.prefetch_buffers();
            }
        }
        for kind in self.q.third_level() {
            if let EventKind::Arrive { packet } = kind {
                self.net.prefetch_packet(packet);
            }
        }
    }

    /// Prefetches the inline state an event will touch: its flow's path (the direction it
    /// sends in), scalars and source, and when it runs an endpoint, that endpoint and the
    /// recorder. Only what the event touches: lines it would not touch take the place of lines
    /// it needs in the CPU's queue of misses (docs/performance/many-flows.md, "The floor at 10 000
    /// flows").
    #[inline]
    fn prefetch_state(&self, kind: EventKind) {
        if let Some(t) = self.target(kind) {
            let fl = &self.flows[t.flow];
            if let (true, Some(side)) = (t.timer, t.side) {
                prefetch(&fl.trace);
                prefetch(&fl.timers[side]);
                Endpoint::prefetch_timers_in(&fl.eps[side]);
                return;
            }
            if !t.pure_ack {
                self.net.prefetch_path(t.flow, t.dir);
            }
            prefetch(&fl.sender);
            prefetch(&fl.source_started);
            fl.source.prefetch(t.writes);
            if let Some(side) = t.side {
                prefetch(&fl.eps[side]);
                if t.pure_ack {
                    fl.recorder.prefetch_cursors();
                } else {
                    fl.recorder.prefetch_hot();
                }
                prefetch(&fl.timers[side]);
            }
        }
    }

    /// The flow an event concerns, the endpoint it runs and the direction it sends in.
    #[inline]
    fn target(&self, kind: EventKind) -> Option<Target> {
        let mut pure_ack = false;
        let (flow, side) = match kind {
            EventKind::Arrive { packet } => {
                let PacketPeek {
                    flow,
                    dir,
                    last_hop,
                    occupies_sequence,
                } = self.net.peek_packet(packet)?;
                if !last_hop {
                    return Some(Target {
                        flow,
                        side: None,
                        dir,
                        writes: false,
                        timer: false,
                        pure_ack: false,
                    });
                }
                pure_ack = !occupies_sequence;
                (flow, arrives_at(dir))
            }
            EventKind::Timer { endpoint, .. } => (endpoint as usize / 2, endpoint as usize % 2),
            EventKind::AppTick { flow } => (flow as usize, self.flows[flow as usize].sender),
            _ => return None,
        };
        Some(Target {
            flow,
            side: Some(side),
            dir: sent_by(side),
            writes: matches!(kind, EventKind::AppTick { .. }),
            timer: matches!(kind, EventKind::Timer { .. }),
            pure_ack,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse() {
        assert_eq!(parse_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    /// Prefetching only reads: a run with it forced on has exactly the results of one without,
    /// over flows with access links (packets moving on to a next link), loss both ways,
    /// jitter, random and profile sources, a bulk flow and a server that sends.
    #[test]
    fn prefetching_changes_no_result() {
        let s = crate::Scenario::from_toml_str(
            r#"
            name = "prefetch"
            seed = 3
            duration = "20s"
            [network]
            rtt = "60ms"
            bandwidth = "5Mbit"
            queue_packets = 30
            jitter = "2ms"
            [network.loss]
            model = "bernoulli"
            rate = 0.02
            [[flow]]
            name = "exp"
            rtt = "5ms"
            access_bandwidth = "10Mbit"
            app = { kind = "exponential", payload_bytes = 120, interval = "50ms" }
            [[flow]]
            name = "ssh"
            app = { kind = "profile", name = "ssh" }
            tcp = { profile = "linux", mechanisms = ["rdb"] }
            [[flow]]
            name = "bulk"
            start = "1s"
            app = { kind = "bulk" }
            tcp = { profile = "linux", cc = "cubic" }
            [[flow]]
            name = "down"
            direction = "reverse"
            app = { kind = "fixed", payload_bytes = 300, interval = "30ms" }
            "#,
        )
        .expect("scenario");
        let run = |prefetch: bool| {
            let mut sim = Sim::new(&s, 7);
            sim.prefetch = prefetch;
            sim.run(&mut |_| {})
        };
        let (off, on) = (run(false), run(true));
        assert!(off.flows.iter().all(|f| f.records.bytes_delivered > 0));
        assert_eq!(off, on);
    }

    #[test]
    fn on_only_beyond_the_cache() {
        if std::env::var_os("THINLAB_PREFETCH").is_some() {
            return;
        }
        let llc = last_level_cache_bytes();
        assert!(!worth_it(1));
        assert!(!worth_it((llc / BYTES_PER_FLOW) as usize));
        // only x86_64 prefetches
        assert_eq!(
            worth_it((llc / BYTES_PER_FLOW) as usize + 1),
            cfg!(target_arch = "x86_64")
        );
    }
}
