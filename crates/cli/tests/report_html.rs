//! `report.html` in a real browser: headless Chromium (Debian's `chromium`, which `.ci/run`
//! installs) opens the report of a small sweep from a file URL, with the network off. The page
//! must raise no script error (it records uncaught errors into its `#errors` element), draw
//! every plot (one uPlot chart per plot), and render to a screenshot that is not blank.
//!
//! Without Chromium the test fails under `CI` and is skipped elsewhere, saying how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

const SCENARIO: &str = r#"
name = "report-test"
seed = 1
duration = "60s"
repetitions = 2

[network]
rtt = "100ms"
bandwidth = "10Mbit"

[network.loss]
model = "bernoulli"
rate = 0.02

[sweep]
"flow.0.tcp.mechanisms" = [[], ["rdb"]]

[[flow]]
name = "game"
app = { kind = "fixed", payload_bytes = 120, interval = "140ms" }
tcp = { profile = "linux", nodelay = true }
"#;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("THINLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

/// Chromium headless with the flags a closed network needs, and a fresh profile.
fn browser(bin: &Path, profile: &Path) -> Command {
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=10000",
        "--window-size=1280,2400",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn report_renders_in_headless_chromium_without_errors() {
    let Some(bin) = chromium() else {
        let msg = "headless Chromium not found: install Debian's `chromium` package \
                   (apt-get install chromium) or set THINLAB_CHROMIUM to the browser";
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("skipped: {msg}");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let out = dir.path().join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .arg("run")
        .arg(&scenario)
        .args(["--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = out.join("report.html");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.len() < 2_000_000,
        "report.html is {} bytes",
        html.len()
    );
    let url = format!("file://{}", report.display());

    let dom = browser(&bin, &dir.path().join("p1"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    // CDF + CCDF, five metric-vs-parameter plots, the per-write series of one configuration
    let charts = dom.matches("class=\"uplot").count();
    assert!(
        charts >= 8,
        "{charts} plots rendered:\n{}",
        &dom[..dom.len().min(3000)]
    );
    let errors = dom
        .split("<pre id=\"errors\"")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .expect("the page's error box");
    assert!(
        errors.trim_start().starts_with("hidden") && errors.ends_with('>'),
        "script errors: {errors}"
    );
    // both configurations are in the summary table and the legends
    assert!(dom.contains("time-sequence graph around the worst write"));
    for label in ["flow.0.tcp.mechanisms=[]", "flow.0.tcp.mechanisms=[rdb]"] {
        assert!(dom.contains(label), "{label} missing");
    }

    // `thinlab compare` of the folder with itself: a table of zero differences, and a page with
    // one CDF and one CCDF per configuration; a folder without results is refused
    let html_cmp = dir.path().join("compare.html");
    let cmp = Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .arg("compare")
        .args([&out, &out])
        .arg("--html")
        .arg(&html_cmp)
        .output()
        .unwrap();
    assert!(
        cmp.status.success(),
        "{}",
        String::from_utf8_lossy(&cmp.stderr)
    );
    let table = String::from_utf8_lossy(&cmp.stdout);
    assert_eq!(table.matches("+0.0 %").count(), 2 * 3, "{table}");
    let dom = browser(&bin, &dir.path().join("p3"))
        .arg("--dump-dom")
        .arg(format!("file://{}", html_cmp.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(
        dom.matches("class=\"uplot").count(),
        4,
        "compare.html plots"
    );
    assert!(
        dom.contains("<pre id=\"errors\" hidden=\"\"></pre>"),
        "compare.html errors"
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_thinlab"))
        .arg("compare")
        .args([&out, &empty])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a thinlab result folder"));

    let png = dir.path().join("shot.png");
    let shot = browser(&bin, &dir.path().join("p2"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    // A blank 1280×2400 page compresses to a few KB; text, tables and plots do not.
    assert!(
        bytes.len() > 60_000,
        "screenshot of {} bytes looks blank",
        bytes.len()
    );
}
