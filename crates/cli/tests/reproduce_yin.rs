//! `thinlab reproduce yin --quick`: the seed 002 study runs, exits 0, and every qualitative
//! check of its `claims.json` holds; every claim of reproduction-targets.md §D is reported.

use std::process::Command;

#[test]
fn yin_quick_holds() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .args(["reproduce", "yin", "--quick", "--quiet", "--out"])
        .arg(dir.path())
        .output()
        .expect("run thinlab");
    assert!(
        o.status.success(),
        "yin --quick failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("claims.json")).expect("claims.json");
    let claims: serde_json::Value = serde_json::from_str(&text).expect("claims.json is JSON");
    assert_eq!(claims["study"], "yin");
    assert_eq!(claims["quick"], true);
    let checks = claims["checks"].as_array().expect("checks");
    assert!(!checks.is_empty());
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
            assert!(!c["seed"].as_str().unwrap().is_empty());
            assert!(!c["ours"].as_str().unwrap().is_empty());
            assert!(!c["note"].as_str().unwrap().is_empty());
            c["id"].as_str().unwrap()
        })
        .collect();
    for want in [
        "D.1a", "D.1b", "D.1c", "D.1d", "D.2a", "D.2b", "D.2c", "D.2d",
    ] {
        assert!(ids.contains(&want), "claim {want} missing: {ids:?}");
    }
    let report = std::fs::read_to_string(dir.path().join("report.md")).expect("report.md");
    assert!(report.starts_with("# Reproduction: yin"), "{report}");
    assert!(dir.path().join("data/tmu-n20-sack/scenario.toml").exists());
}
