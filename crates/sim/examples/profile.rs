//! Runs a bench scenario file once and prints timing and event counts:
//! `cargo run --release -p thinlab-sim --example profile -- bench/thinlab/dumbbell.toml [reps]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("scenario path");
    let reps: u32 = args.next().map_or(1, |r| r.parse().expect("reps"));
    let text = std::fs::read_to_string(&path).expect("read scenario");
    let s = thinlab_sim::Scenario::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..reps {
        #[allow(clippy::disallowed_methods)]
        let t0 = std::time::Instant::now();
        let r = thinlab_sim::run(&s, s.seed);
        let el = t0.elapsed();
        let pkts: u64 = r.links.iter().map(|l| l.stats.offered).sum();
        println!(
            "{}: {:?} wall, end {} sim, {} events, {} link packets, {:.0} ns/event, drops {:?}",
            s.name,
            el,
            r.end_time,
            r.events_processed,
            pkts,
            el.as_nanos() as f64 / r.events_processed as f64,
            r.drops
        );
    }
}
