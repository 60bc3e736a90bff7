//! `thinlab reproduce`: unknown names are bad input (exit 2), and the quick variants of the
//! evensen studies run and every qualitative check of their reports holds (exit 0 and
//! `claims.json`).

use std::path::Path;
use std::process::Command;

fn thinlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_thinlab"))
}

fn run_quick(study: &str, out: &Path) -> serde_json::Value {
    let o = thinlab()
        .args(["reproduce", study, "--quick", "--quiet", "--out"])
        .arg(out)
        .output()
        .expect("run thinlab");
    assert!(
        o.status.success(),
        "{study} --quick failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.join("claims.json")).expect("claims.json");
    let claims: serde_json::Value = serde_json::from_str(&text).expect("claims.json is JSON");
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    assert!(report.starts_with("# Reproduction: "), "{report}");
    claims
}

fn assert_checks_hold(claims: &serde_json::Value) {
    let checks = claims["checks"].as_array().expect("checks");
    assert!(!checks.is_empty());
    for c in checks {
        assert_eq!(c["holds"], true, "check does not hold: {}", c["what"]);
    }
    for c in claims["claims"].as_array().expect("claims") {
        let v = c["verdict"].as_str().expect("verdict");
        assert!(
            ["reproduced", "shape-reproduced", "not-reproduced"].contains(&v),
            "{v}"
        );
        assert!(!c["seed"].as_str().unwrap().is_empty() && !c["ours"].as_str().unwrap().is_empty());
    }
}

#[test]
fn unknown_study_is_bad_input() {
    let o = thinlab()
        .args(["reproduce", "nosuch", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("nosuch") && err.contains("evensen-lab"),
        "{err}"
    );
}

#[test]
fn evensen_lab_quick_holds() {
    let dir = tempfile::tempdir().unwrap();
    let claims = run_quick("evensen-lab", dir.path());
    assert_checks_hold(&claims);
    let ids: Vec<&str> = claims["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for id in [
        "A.1", "A.2", "A.3a", "A.3b", "A.3c", "A.4a", "A.4b", "A.5a", "A.5b", "A.6", "A.7", "A.8",
    ] {
        assert!(ids.contains(&id), "claim {id} missing from {ids:?}");
    }
    for f in [
        "retrans_vs_loss.svg",
        "payload_vs_iat.svg",
        "data/loss/runs.csv",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
}

#[test]
fn evensen_apps_quick_holds() {
    let dir = tempfile::tempdir().unwrap();
    let claims = run_quick("evensen-apps", dir.path());
    assert_checks_hold(&claims);
    assert!(claims["claims"].as_array().unwrap().len() >= 24);
    assert!(dir.path().join("cdf_skype-tcp_2.svg").exists());
}
