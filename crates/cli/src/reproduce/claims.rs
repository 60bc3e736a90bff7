//! The claims of each study as data: one TOML file per study under `reproduce/claims/`
//! (embedded at build time) lists every testable claim of the paper it reproduces — the paper's
//! words and section, the metric, the rule for *reproduced* and for *shape*, the numbers those
//! rules use (`params`, read by the study code), a claim the study does not cover yet with the
//! reason, and every rule changed after seeing results with the reason (`amended`). The rules
//! were written before the runs they judge; docs/reproduction/README.md describes the format.
//!
//! The report generator joins a study's verdicts with its file: the claim's text comes from the
//! file, an id the file does not list is an error, and a claim that is *not reproduced* counts as
//! explained only when the check its `explained_by` names is in the report and holds.

use super::report::{Report, Verdict};
use anyhow::{bail, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The claims files, by study name.
const FILES: [(&str, &str); 9] = [
    ("evensen-lab", include_str!("claims/evensen-lab.toml")),
    ("evensen-apps", include_str!("claims/evensen-apps.toml")),
    ("hurtig", include_str!("claims/hurtig.toml")),
    ("yin", include_str!("claims/yin.toml")),
    ("fairness", include_str!("claims/fairness.toml")),
    ("petlund-demo", include_str!("claims/petlund-demo.toml")),
    ("modern-linux", include_str!("claims/modern-linux.toml")),
    (
        "petlund-variants",
        include_str!("claims/petlund-variants.toml"),
    ),
    ("petlund", include_str!("claims/petlund.toml")),
];

/// One study's claims file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimsFile {
    /// The study (or, for claims no study covers yet, the group) name.
    pub study: String,
    /// The paper, by author and title.
    pub paper: String,
    /// The qualitative checks the study's report makes (quick and full runs alike), which the
    /// tests assert on `--quick`: properties of the model or tested explanations, which hold
    /// whatever the paper found. A check the file lists nowhere is an error.
    #[serde(default)]
    pub checks: Vec<String>,
    /// Checks that restate an effect the paper reports (X beats Y): computed and reported in
    /// every run like `checks`, but not asserted, since their failing is a reproduction result
    /// (the claim's verdict says it), not a defect.
    #[serde(default)]
    pub effect_checks: Vec<String>,
    #[serde(rename = "claim")]
    pub claims: Vec<ClaimSpec>,
}

/// One claim of a paper.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    pub id: String,
    /// Where the paper makes it (section, table, figure).
    pub section: String,
    /// What the paper says, in a line.
    pub text: String,
    /// What we measure and how.
    pub metric: String,
    /// The rule for *reproduced*.
    pub reproduced: String,
    /// The rule for *shape reproduced*.
    pub shape: String,
    /// Numbers the rules use, read by the study code.
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
    /// The text of the report's check that tests why the claim is not reproduced.
    pub explained_by: Option<String>,
    /// Why the study gives no verdict on this claim (yet).
    pub not_covered: Option<String>,
    /// Rules changed after results were seen.
    #[serde(default)]
    pub amended: Vec<Amendment>,
}

/// A rule changed after results were seen: what it was, what it is, why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Amendment {
    pub was: String,
    pub now: String,
    pub why: String,
}

/// Every claims file, parsed once. A file that does not parse is a bug caught by the unit test.
pub fn all() -> &'static [ClaimsFile] {
    static ALL: OnceLock<Vec<ClaimsFile>> = OnceLock::new();
    ALL.get_or_init(|| {
        FILES
            .iter()
            .map(|(name, text)| match toml::from_str::<ClaimsFile>(text) {
                Ok(f) => f,
                Err(e) => panic!("reproduce/claims/{name}.toml: {e}"),
            })
            .collect()
    })
}

/// The claims file of `study`.
pub fn of(study: &str) -> &'static ClaimsFile {
    all()
        .iter()
        .find(|f| f.study == study)
        .unwrap_or_else(|| panic!("no claims file for study {study}"))
}

impl ClaimsFile {
    pub fn get(&self, id: &str) -> Option<&ClaimSpec> {
        self.claims.iter().find(|c| c.id == id)
    }

    /// The parameter `key` of claim `id` (a missing one is a bug in the study or its file).
    pub fn num(&self, id: &str, key: &str) -> f64 {
        match self.get(id).and_then(|c| c.params.get(key)) {
            Some(&x) => x,
            None => panic!(
                "claims file of {}: claim {id} has no param {key}",
                self.study
            ),
        }
    }
}

/// The verdict counts of one study.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Claims in the file.
    pub total: usize,
    /// Claims with a verdict in this run.
    pub covered: usize,
    pub reproduced: usize,
    pub shape: usize,
    /// Not reproduced, with a check in the report that shows why and holds.
    pub not_explained: usize,
    /// Not reproduced, reason untested or unknown.
    pub not_unexplained: usize,
}

impl Counts {
    pub const HEADER: [&'static str; 6] = [
        "claims",
        "covered",
        "reproduced",
        "shape",
        "not reproduced, tested why",
        "not reproduced, unexplained",
    ];

    pub fn cells(&self) -> Vec<String> {
        [
            self.total,
            self.covered,
            self.reproduced,
            self.shape,
            self.not_explained,
            self.not_unexplained,
        ]
        .iter()
        .map(|n| n.to_string())
        .collect()
    }
}

/// Whether a not-reproduced claim's explanation is a check of `report` that holds.
pub fn explained(spec: &ClaimSpec, report: &Report) -> bool {
    spec.explained_by
        .as_ref()
        .is_some_and(|w| report.checks.iter().any(|c| &c.what == w && c.holds))
}

/// Joins `report` with its claims file: every verdict must name a claim of the file, a claim the
/// file says is not covered must have none, and an `explained_by` must name a check of the
/// report. Sets each claim's text from the file; returns the counts.
pub fn join(file: &ClaimsFile, report: &mut Report) -> Result<Counts> {
    let mut n = Counts {
        total: file.claims.len(),
        ..Counts::default()
    };
    for c in &mut report.claims {
        if let Some(spec) = file.get(&c.id) {
            c.claim.clone_from(&spec.text);
        }
    }
    for k in &mut report.checks {
        k.asserted = if file.checks.contains(&k.what) {
            true
        } else if file.effect_checks.contains(&k.what) {
            false
        } else {
            bail!(
                "check not listed in the claims file of {}: {}",
                file.study,
                k.what
            );
        };
    }
    for c in &report.claims {
        let Some(spec) = file.get(&c.id) else {
            bail!(
                "claim {} has a verdict but is not in the claims file of {}",
                c.id,
                file.study
            );
        };
        if spec.not_covered.is_some() {
            bail!("claim {} is marked not covered but has a verdict", c.id);
        }
        if let Some(w) = &spec.explained_by {
            if !report.checks.iter().any(|k| &k.what == w) {
                bail!(
                    "claim {}: explained_by names no check of the report: {w}",
                    c.id
                );
            }
        }
        n.covered += 1;
        match c.verdict {
            Verdict::Reproduced => n.reproduced += 1,
            Verdict::ShapeReproduced => n.shape += 1,
            Verdict::NotReproduced if explained(spec, report) => n.not_explained += 1,
            Verdict::NotReproduced => n.not_unexplained += 1,
        }
    }
    Ok(n)
}

/// The claims of a file that have no verdict, as Markdown rows (id, where, claim, why not).
pub fn uncovered_rows(file: &ClaimsFile, report: &Report) -> Vec<Vec<String>> {
    file.claims
        .iter()
        .filter(|s| !report.claims.iter().any(|c| c.id == s.id))
        .map(|s| {
            vec![
                s.id.clone(),
                s.section.clone(),
                s.text.clone(),
                s.not_covered
                    .clone()
                    .unwrap_or_else(|| "no verdict in this run (a `--quick` run skips it)".into()),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses_with_unique_ids_and_complete_rules() {
        let mut total = 0;
        for f in all() {
            let mut ids: Vec<&str> = f.claims.iter().map(|c| c.id.as_str()).collect();
            total += ids.len();
            ids.sort_unstable();
            let n = ids.len();
            ids.dedup();
            assert_eq!(ids.len(), n, "duplicate ids in {}", f.study);
            for c in &f.claims {
                for (what, s) in [
                    ("section", &c.section),
                    ("text", &c.text),
                    ("metric", &c.metric),
                    ("reproduced", &c.reproduced),
                    ("shape", &c.shape),
                ] {
                    assert!(!s.trim().is_empty(), "{} {}: empty {what}", f.study, c.id);
                }
                for a in &c.amended {
                    assert!(!a.why.trim().is_empty(), "{} {}", f.study, c.id);
                }
            }
        }
        // The papers' results sections make about 89 testable claims (issue 11's audit).
        assert!(total >= 89, "{total} claims");
    }

    #[test]
    fn counts_follow_verdicts_and_tested_explanations() {
        let file: ClaimsFile = toml::from_str(
            r#"
study = "t"
paper = "p"
checks = ["why"]
[[claim]]
id = "X.1"
section = "s"
text = "t"
metric = "m"
reproduced = "r"
shape = "s"
explained_by = "why"
[[claim]]
id = "X.2"
section = "s"
text = "t"
metric = "m"
reproduced = "r"
shape = "s"
[[claim]]
id = "X.3"
section = "s"
text = "t"
metric = "m"
reproduced = "r"
shape = "s"
not_covered = "later"
"#,
        )
        .unwrap();
        let mut r = Report::default();
        r.claim("X.1", "a", "b", Verdict::NotReproduced, "n");
        r.claim("X.2", "a", "b", Verdict::NotReproduced, "n");
        r.check("why", true);
        let n = join(&file, &mut r).unwrap();
        assert_eq!((n.total, n.covered), (3, 2));
        assert_eq!((n.not_explained, n.not_unexplained), (1, 1));
        assert_eq!(uncovered_rows(&file, &r).len(), 1);
        // an explanation whose check fails does not count
        r.checks[0].holds = false;
        assert_eq!(join(&file, &mut r).unwrap().not_explained, 0);
        // a verdict on an unknown or uncovered claim is an error
        r.claim("X.3", "a", "b", Verdict::Reproduced, "n");
        assert!(join(&file, &mut r).is_err());
        r.claims.pop();
        r.claim("X.9", "a", "b", Verdict::Reproduced, "n");
        assert!(join(&file, &mut r).is_err());
        r.claims.pop();
        // a check the file does not list is an error
        r.check("unlisted", true);
        assert!(join(&file, &mut r).is_err());
        r.checks.pop();
        assert!(r.checks[0].asserted);
    }
}
