//! `thinlab reproduce hurtig --quick`: runs, exits 0, and every qualitative check of its
//! report holds (positions 17–19 inhibited in the 20-packet flow, the SYN-ACK's 3 s, the
//! penalty largest at high bandwidth and low delay, what ER and TLP repair, …); every claim
//! C.1–C.5 of reproduction-targets.md has a verdict.

use std::process::Command;

#[test]
fn hurtig_quick_holds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let o = Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .args(["reproduce", "hurtig", "--quick", "--quiet", "--out"])
        .arg(out)
        .output()
        .expect("run thinlab");
    assert!(
        o.status.success(),
        "hurtig --quick failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.join("claims.json")).expect("claims.json");
    let claims: serde_json::Value = serde_json::from_str(&text).expect("claims.json is JSON");
    assert_eq!(claims["study"], "hurtig");
    assert_eq!(claims["quick"], true);
    let checks = claims["checks"].as_array().expect("checks");
    assert!(checks.len() >= 8, "{checks:?}");
    for c in checks {
        assert_eq!(c["holds"], true, "check does not hold: {}", c["what"]);
    }
    let ids: Vec<&str> = claims["claims"]
        .as_array()
        .expect("claims")
        .iter()
        .map(|c| {
            let v = c["verdict"].as_str().expect("verdict");
            assert!(
                ["reproduced", "shape-reproduced", "not-reproduced"].contains(&v),
                "{v}"
            );
            c["id"].as_str().expect("id")
        })
        .collect();
    assert_eq!(ids, ["C.1", "C.2", "C.3", "C.4", "C.5"]);
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(report.starts_with("# Reproduction: hurtig"), "{report}");
    for fig in [
        "penalty_20.svg",
        "average_20.svg",
        "time_vs_position_20_1000.svg",
    ] {
        assert!(out.join(fig).exists(), "{fig} missing");
    }
}
