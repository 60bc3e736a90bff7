//! The latency of a dependent load as the working set grows: a pointer chase over a random
//! cyclic permutation of 64-byte lines (each load's address is the previous load's value, so
//! no two loads overlap and no prefetcher can guess the next line). Where the latency jumps is
//! the cache the machine really gives this process, which on a shared virtual machine can be
//! less than the size the CPU reports (docs/performance/many-flows.md, "Hot fields first").
//!
//! `cargo run --release -p thinlab-sim --example cache_latency [MiB ...]`

use rand::seq::SliceRandom;
use rand::SeedableRng;

const LINE_WORDS: usize = 8;
const LOADS: usize = 20_000_000;

fn main() {
    let sizes: Vec<usize> = {
        let args: Vec<usize> = std::env::args()
            .skip(1)
            .map(|a| match a.parse::<usize>() {
                Ok(mib) if mib > 0 => mib,
                _ => {
                    eprintln!("cache_latency: sizes are whole MiB of at least 1, got '{a}'");
                    std::process::exit(2);
                }
            })
            .collect();
        if args.is_empty() {
            vec![1, 4, 8, 12, 16, 20, 24, 32, 48, 64, 128, 256]
        } else {
            args
        }
    };
    for mib in sizes {
        let lines = (mib << 20) / 64;
        let mut order: Vec<usize> = (0..lines).collect();
        order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
        let mut next = vec![0usize; lines * LINE_WORDS];
        for (i, &line) in order.iter().enumerate() {
            next[line * LINE_WORDS] = order[(i + 1) % lines] * LINE_WORDS;
        }
        let mut at = 0;
        for _ in 0..lines {
            at = next[at];
        }
        #[allow(clippy::disallowed_methods)]
        let t0 = std::time::Instant::now();
        for _ in 0..LOADS {
            at = next[at];
        }
        let ns = t0.elapsed().as_nanos() as f64 / LOADS as f64;
        std::hint::black_box(at);
        println!("{mib:4} MiB: {ns:6.1} ns per load");
    }
}
