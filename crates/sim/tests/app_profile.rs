//! `app.kind = "profile"`: the Table 2.1 application profiles as traffic sources in a run, and
//! the errors for bad names.

use thinlab_sim::app_profiles::{names, profile};
use thinlab_sim::{run_keeping_writes, App, Scenario, ScenarioError};

fn scenario(name: &str, duration: &str, seed: u64) -> Scenario {
    Scenario::from_toml_str(&format!(
        r#"
        name = "p"
        duration = "{duration}"
        seed = {seed}
        [network]
        rtt = "100ms"
        bandwidth = "10Mbit"
        [network.loss]
        model = "none"
        [[flow]]
        name = "f"
        app = {{ kind = "profile", name = "{name}" }}
        "#
    ))
    .unwrap()
}

/// (sizes, gaps in ms) of a run's write records.
fn writes(s: &Scenario, seed: u64) -> (Vec<f64>, Vec<f64>, u64) {
    let r = run_keeping_writes(s, seed);
    let rec = &r.flows[0].records;
    let sizes: Vec<f64> = rec
        .writes
        .iter()
        .map(|w| (w.end - w.start) as f64)
        .collect();
    let gaps: Vec<f64> = rec
        .writes
        .windows(2)
        .map(|w| (w[1].write_time.as_nanos() - w[0].write_time.as_nanos()) as f64 / 1e6)
        .collect();
    let total = rec.writes.last().map_or(0, |w| w.end);
    assert_eq!(rec.bytes_delivered, total, "lossless: everything delivered");
    (sizes, gaps, total)
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn frac_below(x: &[f64], v: f64) -> f64 {
    x.iter().filter(|&&g| g < v).count() as f64 / x.len() as f64
}

#[test]
fn skype_profile_writes_match_the_table() {
    let s = scenario("skype-tcp", "300s", 1);
    assert_eq!(
        s.flows[0].app,
        App::Profile {
            name: "skype-tcp".into()
        }
    );
    let (sizes, gaps, _) = writes(&s, 1);
    // 300 s / 34 ms ≈ 8800 writes.
    assert!((8_300..9_300).contains(&sizes.len()), "{}", sizes.len());
    let m = mean(&sizes);
    assert!((m - 236.0).abs() < 236.0 * 0.05, "mean size {m}");
    assert!(sizes.iter().all(|&b| (14.0..=1267.0).contains(&b)));
    let g = mean(&gaps);
    assert!((g - 34.0).abs() < 34.0 * 0.05, "mean gap {g}");
    // Median 40 ms, 1 % percentile 4 ms, 99 % percentile 80 ms.
    let f = frac_below(&gaps, 40.0);
    assert!((0.47..0.53).contains(&f), "F(40 ms) = {f}");
    let f = frac_below(&gaps, 4.0);
    assert!((0.003..0.02).contains(&f), "F(4 ms) = {f}");
    let f = frac_below(&gaps, 80.0 + 1e-6);
    assert!((0.98..0.996).contains(&f), "F(80 ms) = {f}");
    assert!(gaps.iter().all(|&x| x <= 1671.0 + 1e-6));
}

#[test]
fn bzflag_profile_has_back_to_back_writes() {
    // BZFlag: median and 1 % interarrival time 0 ms: half the writes share the previous
    // write's instant; mean 24 ms, max 540 ms; sizes 4..=1448, mean 30.
    let s = scenario("bzflag", "120s", 2);
    let (sizes, gaps, _) = writes(&s, 2);
    assert!((4_500..5_500).contains(&sizes.len()), "{}", sizes.len());
    let zero = gaps.iter().filter(|&&g| g == 0.0).count() as f64 / gaps.len() as f64;
    assert!((0.47..0.53).contains(&zero), "zero gaps {zero}");
    let g = mean(&gaps);
    assert!((g - 24.0).abs() < 24.0 * 0.06, "mean gap {g}");
    assert!(gaps.iter().all(|&x| x <= 540.0 + 1e-6));
    let m = mean(&sizes);
    assert!((m - 30.0).abs() < 30.0 * 0.06, "mean size {m}");
    assert!(sizes.iter().all(|&b| (4.0..=1448.0).contains(&b)));
}

#[test]
fn profile_runs_are_deterministic_per_seed() {
    let s = scenario("ssh", "120s", 5);
    let a = writes(&s, 5);
    assert_eq!(a, writes(&s, 5));
    assert_ne!(a, writes(&s, 6));
    assert!(a.0.len() > 200, "{}", a.0.len());
}

#[test]
fn every_profile_runs() {
    for name in names() {
        let s = scenario(name, "30s", 3);
        let p = profile(name).unwrap();
        let (sizes, _, total) = writes(&s, 3);
        assert!(!sizes.is_empty(), "{name}");
        assert!(total > 0, "{name}");
        assert!(
            sizes
                .iter()
                .all(|&b| b >= p.row.payload_min && b <= p.row.payload_max),
            "{name}"
        );
    }
}

fn err(app: &str) -> ScenarioError {
    Scenario::from_toml_str(&format!(
        "name = \"p\"\nduration = \"1s\"\n[network]\nrtt = \"100ms\"\nbandwidth = \"1Mbit\"\n[[flow]]\napp = {app}\n"
    ))
    .unwrap_err()
}

#[test]
fn bad_profile_names_are_rejected_with_the_known_names() {
    let e = err("{ kind = \"profile\", name = \"skype\" }");
    assert_eq!(e.key(), "flow.0.app.name", "{e}");
    let m = e.to_string();
    assert!(m.contains("\"skype\""), "{m}");
    for n in names() {
        assert!(m.contains(&format!("\"{n}\"")), "{m}");
    }
    let e = err("{ kind = \"profile\" }");
    assert_eq!(e.key(), "flow.0.app.name", "{e}");
    let e = err("{ kind = \"profile\", name = \"ssh\", interval = \"1s\" }");
    assert_eq!(e.key(), "flow.0.app.interval", "{e}");
}
