//! The endpoint fuzz script (`thinlab_tcp::fuzzing`, also the `endpoint_segments` cargo-fuzz
//! target) on random inputs: arbitrary segment streams into an established `linux`-profile
//! endpoint with every mechanism on never panic and keep its invariants.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]
    #[test]
    fn any_script_keeps_the_endpoint_consistent(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        thinlab_tcp::fuzzing::run_script(&data);
    }
}

/// The script reaches the machinery it is meant to attack: over 3 000 pseudo-random scripts
/// the endpoint retransmits by every cause, probes, takes D-SACKs and drops bad input.
#[test]
fn scripts_exercise_recovery() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut total = thinlab_tcp::Stats::default();
    for _ in 0..3000 {
        let data: Vec<u8> = (0..400)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let s = thinlab_tcp::fuzzing::run_script(&data);
        total.retransmissions_rto += s.retransmissions_rto;
        total.retransmissions_rack += s.retransmissions_rack;
        total.tlp_probes += s.tlp_probes;
        total.dsack_dups += s.dsack_dups;
        total.dropped_out_of_window += s.dropped_out_of_window;
        total.dropped_bad_ack += s.dropped_bad_ack;
    }
    eprintln!("{total:?}");
    assert!(total.retransmissions_rto > 0 && total.retransmissions_rack > 0);
    assert!(total.tlp_probes > 0 && total.dsack_dups > 0);
    assert!(total.dropped_out_of_window > 0 && total.dropped_bad_ack > 0);
}
