//! `report.html` (docs/spec/interface.md, "Results"): one self-contained page per result folder
//! — scenario, run-health warnings, summary table and interactive plots — that opens without
//! network access. The charts are drawn by uPlot (Leon Sorokin, MIT licence, vendored unmodified
//! in `crates/cli/assets/uplot/`) from the JSON of [`data`]; `assets/report/report.js` lays
//! them out ([`layout`] decides facets and colours).

pub mod data;
pub mod layout;
pub mod write_series;

use anyhow::{Context, Result};
use std::path::Path;

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const REPORT_JS: &str = include_str!("../../assets/report/report.js");
const REPORT_CSS: &str = include_str!("../../assets/report/report.css");

/// Text safe inside an HTML element (`&`, `<`, `>` escaped).
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// JSON safe inside `<script>`: `</` cannot end the element early.
fn script_json(v: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string(v)
        .context("serializing the report data")?
        .replace("</", "<\\/"))
}

/// The page: `kind` selects the drawing code in report.js (`"run"` or `"compare"`).
pub fn page(title: &str, kind: &str, data: &impl serde::Serialize) -> Result<String> {
    let json = script_json(data)?;
    let title = escape(title);
    Ok(format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="thinlab {version}">
<title>{title}</title>
<style>{UPLOT_CSS}</style>
<style>{REPORT_CSS}</style>
<script>
window.thinlabErrors = [];
function thinlabError(m) {{
  window.thinlabErrors.push(String(m));
  var e = document.getElementById('errors');
  if (e) {{ e.hidden = false; e.textContent += String(m) + '\n'; }}
}}
window.addEventListener('error', function (e) {{ thinlabError(e.message); }});
</script>
</head>
<body data-kind="{kind}">
<pre id="errors" hidden></pre>
<main id="report"><h1>{title}</h1><noscript>The plots need JavaScript; the numbers are in the CSV and JSON files of this folder.</noscript></main>
<script id="thinlab-data" type="application/json">{json}</script>
<script>{UPLOT_JS}</script>
<script>{REPORT_JS}</script>
</body>
</html>
"#,
        version = env!("CARGO_PKG_VERSION"),
    ))
}

/// Writes `report.html` of a `thinlab run` result folder.
/// `reruns`: how to run a repetition again for the per-write plots (`None` for the emulator,
/// whose runs cannot be repeated exactly: no per-write plots). `lines`: the results' CDF lines
/// when the caller has them (`Results::lines`), else they are computed here.
pub fn write_run(
    dir: &Path,
    results: &crate::output::Results<'_>,
    problems: &[crate::health::Problem],
    resolved: &str,
    reruns: Option<&write_series::SimReruns<'_>>,
    lines: Option<&[crate::output::CdfLine]>,
) -> Result<()> {
    let d = data::build(results, problems, resolved, reruns, lines);
    let html = page(&format!("thinlab report: {}", results.scenario), "run", &d)?;
    let path = dir.join("report.html");
    std::fs::write(&path, html).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_is_self_contained_and_script_safe() {
        let html = page(
            "a <b> & c",
            "run",
            &serde_json::json!({"s": "</script><x>"}),
        )
        .unwrap();
        assert!(html.contains("<title>a &lt;b&gt; &amp; c</title>"));
        assert!(html.contains(r#"{"s":"<\/script><x>"}"#));
        assert_eq!(html.matches("</script>").count(), 4);
        // Nothing is fetched: no external script, style sheet or font.
        for needle in ["src=", "href=", "@import", "url("] {
            let outside_uplot = html.replace(UPLOT_JS, "").replace(UPLOT_CSS, "");
            assert!(!outside_uplot.contains(needle), "{needle}");
        }
    }
}
