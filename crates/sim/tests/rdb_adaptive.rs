//! `tcp.rdb_variant = "adaptive"` end to end (thinlab_tcp::thin::rdb_adaptive): accepted by the
//! scenario parser; on Evensen's (2008) thin stream (1 % loss each way) it bundles only after
//! losses, fewer times than the seed variant; on a loss-free path it never bundles.
//! (docs/mechanisms.md has the 30-minute measurement, where it does not pay on this stream.)

use thinlab_sim::{run, Scenario};
use thinlab_tcp::RdbVariant;

/// Evensen's (2008) stream for 5 minutes with `loss` each way; `extra` continues the `tcp` table.
fn scenario(extra: &str, loss: f64) -> Scenario {
    let s = format!(
        r#"
name = "thin"
duration = "5min"
[network]
rtt = "100ms"
bandwidth = "100Mbit"
[network.loss]
model = "bernoulli"
rate = {loss}
[[flow]]
app = {{ kind = "fixed", payload_bytes = 120, interval = "140ms" }}
tcp = {{ profile = "linux-2.6.22", nodelay = true {extra} }}
"#
    );
    Scenario::from_toml_str(&s).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_variant_is_accepted_and_a_bad_one_names_it() {
    let s = scenario(r#", mechanisms = ["rdb"], rdb_variant = "adaptive""#, 0.01);
    assert_eq!(s.flows[0].tcp.rdb_variant, RdbVariant::Adaptive);
    let s = r#"
name = "x"
duration = "1s"
[network]
rtt = "100ms"
bandwidth = "100Mbit"
[[flow]]
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
tcp = { mechanisms = ["rdb"], rdb_variant = "sometimes" }
"#;
    let e = Scenario::from_toml_str(s)
        .expect_err("an unknown variant")
        .to_string();
    assert!(
        e.contains("rdb_variant") && e.contains("\"adaptive\""),
        "{e}"
    );
}

struct Totals {
    redundant: u64,
    bundles: u64,
    retrans: u64,
}

fn totals(extra: &str, loss: f64) -> Totals {
    let mut t = Totals {
        redundant: 0,
        bundles: 0,
        retrans: 0,
    };
    for seed in [1, 2, 3] {
        let r = run(&scenario(extra, loss), seed);
        let p = &r.flows[0].records.packets;
        t.redundant += p.redundant_bytes_sent;
        t.bundles += p.rdb_bundles;
        t.retrans += p.retransmissions();
    }
    t
}

#[test]
fn adaptive_bundles_less_than_seed_and_only_after_losses() {
    let plain = totals("", 0.01);
    let seed = totals(r#", mechanisms = ["rdb"]"#, 0.01);
    let adaptive = totals(r#", mechanisms = ["rdb"], rdb_variant = "adaptive""#, 0.01);
    println!(
        "redundant B / bundles / retransmissions: plain {} / {} / {}, seed {} / {} / {}, adaptive {} / {} / {}",
        plain.redundant, plain.bundles, plain.retrans, seed.redundant, seed.bundles, seed.retrans,
        adaptive.redundant, adaptive.bundles, adaptive.retrans
    );
    assert!(adaptive.bundles > 0, "losses turn bundling on");
    assert!(
        adaptive.bundles < seed.bundles,
        "{} vs {}",
        adaptive.bundles,
        seed.bundles
    );
    let quiet = totals(r#", mechanisms = ["rdb"], rdb_variant = "adaptive""#, 0.0);
    assert_eq!(
        (quiet.bundles, quiet.redundant),
        (0, 0),
        "no loss, no bundle"
    );
}
