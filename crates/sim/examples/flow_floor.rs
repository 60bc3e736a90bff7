//! The floor of the cost per event as flows grow, for a given size of per-flow state: what any
//! design with that much hot state per flow can reach on this machine, with nothing but an
//! event heap, a fixed amount of work per event, and the flow's state touched.
//!
//! Each flow has `bytes` of state, optionally a share of it *outboard* (in a block of its own at
//! a shuffled place, found through the flow's header line, as heap storage behind a pointer).
//! Its events come every 140 ms of virtual time (starts spread over one interval, as
//! `bench/scaling.py`'s thin streams); each event pops the heap, reads and writes the header
//! line and a third of the flow's other lines, inline and outboard (three events cover them
//! all, about the share of a write cycle's lines each of thinlab's events touches), does `work`
//! dependent steps of arithmetic on what it read, and pushes the flow's next event. With
//! prefetch on, while an event runs, the inline lines of the event after the next (the heap
//! top's lesser child) and the inline and outboard lines of the next one are prefetched, the
//! two stages of `thinlab_sim`'s own prefetch, but exact: only the lines the event will touch
//! (`whole`: every inline line of the flow).
//!
//! The question it answers (docs/performance/many-flows.md, "The floor at 10 000 flows"): how small
//! must a flow's hot state be for 10 000 flows to cost at most 1.5× the single flow per event.
//!
//! `cargo run --release -p thinlab-sim --example flow_floor -- [work] [flows,...] [bytes,...]
//! [outboard share] [events per flow] [event|whole]`

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::seq::SliceRandom;
use rand::SeedableRng;

const LINE: usize = 64;
const INTERVAL_NS: u64 = 140_000_000;
const EVENTS: u64 = 4_000_000;
const MAX_LINES_PER_EVENT: usize = 256;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: u64,
    seq: u64,
    flow: u32,
}

struct Flows {
    /// Each flow's inline block: a header line (its word 0 is where the flow's outboard block
    /// is) and the other inline lines.
    inline: Vec<u64>,
    inline_lines: usize,
    /// Each flow's outboard block, at a shuffled place (as heap storage behind a pointer).
    outboard: Vec<u64>,
    outboard_lines: usize,
    phase: Vec<u8>,
}

const WORDS: usize = LINE / 8;

impl Flows {
    /// `bytes` per flow, of which the share `indirect` is outboard.
    fn new(flows: usize, bytes: usize, indirect: f64) -> Self {
        let lines = bytes.div_ceil(LINE).max(1);
        let outboard_lines = ((lines as f64 * indirect).round() as usize).min(lines - 1);
        let inline_lines = lines - outboard_lines;
        let mut inline = vec![1; flows * inline_lines * WORDS];
        let mut places: Vec<usize> = (0..flows).collect();
        places.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
        for (flow, place) in places.into_iter().enumerate() {
            inline[flow * inline_lines * WORDS] = (place * outboard_lines * WORDS) as u64;
        }
        Self {
            inline,
            inline_lines,
            outboard: vec![1; flows * outboard_lines * WORDS],
            outboard_lines,
            phase: vec![0; flows],
        }
    }

    /// The first word of each inline line event `phase` of `flow` touches: the header, and a
    /// third of the others.
    fn inline_words(&self, flow: u32, phase: u8) -> impl Iterator<Item = usize> + '_ {
        let base = flow as usize * self.inline_lines * WORDS;
        let others = self.inline_lines - 1;
        std::iter::once(base).chain(thirds(others, phase).map(move |l| base + (1 + l) * WORDS))
    }

    /// The first word of each outboard line the event touches (a third of them), found through
    /// the header.
    fn outboard_words(&self, flow: u32, phase: u8) -> impl Iterator<Item = usize> + '_ {
        let base = self.inline[flow as usize * self.inline_lines * WORDS] as usize;
        thirds(self.outboard_lines, phase).map(move |l| base + l * WORDS)
    }

    /// Stage one, for the event after the next: its inline lines (`whole`: every inline line
    /// of its flow, most of which it will not touch).
    fn prefetch_inline(&self, flow: u32, whole: bool) {
        if whole {
            let base = flow as usize * self.inline_lines * WORDS;
            for line in 0..self.inline_lines {
                prefetch(&self.inline, base + line * WORDS);
            }
        } else {
            for w in self.inline_words(flow, self.phase[flow as usize]) {
                prefetch(&self.inline, w);
            }
        }
    }

    /// Stage two, for the next event: its outboard lines (its header is cached by now).
    fn prefetch_outboard(&self, flow: u32) {
        for w in self.outboard_words(flow, self.phase[flow as usize]) {
            prefetch(&self.outboard, w);
        }
    }

    /// Reads and writes the event's lines, with `work` dependent steps on what it read.
    fn run(&mut self, flow: u32, work: u32) -> u64 {
        let phase = self.phase[flow as usize];
        let mut words = [0usize; 2 * MAX_LINES_PER_EVENT];
        let mut inline_count = 0;
        for w in self.inline_words(flow, phase) {
            words[inline_count] = w;
            inline_count += 1;
        }
        let mut count = inline_count;
        for w in self.outboard_words(flow, phase) {
            words[count] = w;
            count += 1;
        }
        let (inline, outboard) = words[..count].split_at(inline_count);
        let mut acc = 0u64;
        for &w in inline {
            acc = acc.wrapping_add(self.inline[w]);
        }
        for &w in outboard {
            acc = acc.wrapping_add(self.outboard[w]);
        }
        for _ in 0..work {
            acc = acc
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        // The header's word 0 is the outboard block's place: write its other words.
        for &w in inline {
            self.inline[w + 1] = self.inline[w + 1].wrapping_add(acc | 1);
        }
        for &w in outboard {
            self.outboard[w] = self.outboard[w].wrapping_add(acc | 1);
        }
        self.phase[flow as usize] = (phase + 1) % 3;
        acc
    }
}

/// The lines of `lines` that event `phase` (0, 1, 2) touches: its third of them.
fn thirds(lines: usize, phase: u8) -> std::ops::Range<usize> {
    let per = lines.div_ceil(3);
    let first = (phase as usize * per).min(lines);
    first..(first + per).min(lines)
}

fn prefetch(memory: &[u64], word: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `word` indexes `memory`; a prefetch never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            memory.as_ptr().add(word) as *const i8,
        )
    }
}

/// The model's shape: `bytes` of state per flow, the share `indirect` of it outboard, `chains`
/// events per flow waiting in the heap at any time (thinlab's thin streams have about two: the
/// next write and a packet or a timer).
struct Shape {
    bytes: usize,
    indirect: f64,
    chains: usize,
    /// Prefetch every inline line of a flow, not only the event's.
    whole: bool,
}

fn measure(flows: usize, shape: &Shape, work: u32, prefetch: bool) -> f64 {
    let mut state = Flows::new(flows, shape.bytes, shape.indirect);
    let mut heap = BinaryHeap::with_capacity(flows * shape.chains);
    let mut seq = 0;
    let spread = flows * shape.chains;
    for chain in 0..shape.chains {
        for flow in 0..flows as u32 {
            let start = (chain * flows + flow as usize) as u64 * INTERVAL_NS / spread as u64;
            heap.push(Reverse(Event {
                time: start,
                seq,
                flow,
            }));
            seq += 1;
        }
    }
    let mut sink = 0u64;
    let mut timed = None;
    let warm = (spread as u64 * 3).min(EVENTS);
    for n in 0..warm + EVENTS {
        if n == warm {
            #[allow(clippy::disallowed_methods)] // a wall-clock measurement
            let t0 = std::time::Instant::now();
            timed = Some(t0);
        }
        let Reverse(e) = heap.pop().expect("one event per flow");
        if prefetch {
            if let Some(Reverse(next)) = heap.peek() {
                // Again, in case the guess of one event ago was wrong (cheap when it was right).
                state.prefetch_inline(next.flow, shape.whole);
                state.prefetch_outboard(next.flow);
            }
            // The heap's lesser child of the top: the event after the next, usually.
            let slice = heap.as_slice();
            let after = match (slice.get(1), slice.get(2)) {
                (Some(a), Some(b)) => Some(if a >= b { a } else { b }),
                (Some(a), None) => Some(a),
                _ => None,
            };
            if let Some(Reverse(after)) = after {
                state.prefetch_inline(after.flow, shape.whole);
            }
        }
        sink = sink.wrapping_add(state.run(e.flow, work));
        heap.push(Reverse(Event {
            time: e.time + INTERVAL_NS,
            seq,
            flow: e.flow,
        }));
        seq += 1;
    }
    std::hint::black_box(sink);
    timed.expect("timed").elapsed().as_nanos() as f64 / EVENTS as f64
}

fn list(arg: Option<String>, default: &[usize]) -> Vec<usize> {
    arg.map(|a| {
        a.split(',')
            .map(|v| v.parse().expect("a list of numbers"))
            .collect()
    })
    .unwrap_or_else(|| default.to_vec())
}

fn main() {
    let mut args = std::env::args().skip(1);
    // 1 000 steps make the single flow cost about what thinlab's single thin stream does here.
    let work: u32 = args
        .next()
        .map(|w| w.parse().expect("work: a number"))
        .unwrap_or(1000);
    let flows = list(args.next(), &[1, 100, 1_000, 3_000, 10_000]);
    let sizes = list(args.next(), &[256, 1024, 2048, 4096, 6144]);
    assert!(flows.iter().all(|&n| n >= 1), "flows: at least 1 each");
    let most = 3 * MAX_LINES_PER_EVENT * LINE;
    assert!(
        sizes.iter().all(|&b| b <= most),
        "bytes per flow: at most {most}"
    );
    let indirect: f64 = args
        .next()
        .map(|s| s.parse().expect("a share, 0 to 1"))
        .unwrap_or(0.0);
    assert!(
        (0.0..=1.0).contains(&indirect),
        "the outboard share is 0 to 1"
    );
    let chains: usize = args
        .next()
        .map(|c| c.parse().expect("events per flow"))
        .unwrap_or(1);
    assert!(chains >= 1, "at least one event per flow");
    let whole = match args.next().as_deref() {
        None | Some("event") => false,
        Some("whole") => true,
        Some(o) => panic!("prefetch \"{o}\": \"event\" or \"whole\""),
    };
    println!(
        "work {work} steps per event, {:.0} % of the state outboard, {chains} event(s) per flow \
         in the heap, prefetching {}; ns/event with prefetch off / on; best of the two \
         against 1 flow",
        indirect * 100.0,
        if whole {
            "every line of a flow"
        } else {
            "the event's lines"
        }
    );
    for &bytes in &sizes {
        let shape = Shape {
            bytes,
            indirect,
            chains,
            whole,
        };
        let mut one = None;
        for &n in &flows {
            let off = measure(n, &shape, work, false);
            let on = measure(n, &shape, work, true);
            let best = off.min(on);
            let base = *one.get_or_insert(best);
            println!(
                "{bytes:6} B/flow {n:6} flows ({:7.1} MiB): {off:7.1} / {on:7.1}  ×{:.2}",
                (n * bytes) as f64 / (1 << 20) as f64,
                best / base
            );
        }
    }
}
