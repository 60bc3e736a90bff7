//! Every test file of the workspace runs: with `autotests = false` (one integration-test binary
//! per crate, `tests/integration.rs`), a file of `tests/` that is neither a `mod` of that
//! binary nor a `[[test]]` of its own would compile into nothing and its tests would silently
//! never run.

use std::path::Path;

/// The test files (`tests/*.rs`, `tests/*/mod.rs`) of `crate_dir` that no target runs.
fn undeclared(crate_dir: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    if !manifest.contains("autotests = false") {
        return Vec::new(); // cargo finds each file itself
    }
    let binary =
        std::fs::read_to_string(crate_dir.join("tests/integration.rs")).unwrap_or_default();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(crate_dir.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        let module = if path.extension().is_some_and(|e| e == "rs") {
            path.file_stem().unwrap().to_string_lossy().into_owned()
        } else if path.join("mod.rs").is_file() {
            path.file_name().unwrap().to_string_lossy().into_owned()
        } else {
            continue; // data (fuzz regressions, captures)
        };
        let own_target = format!("path = \"tests/{module}.rs\"");
        let declared = binary.lines().any(|l| l.trim() == format!("mod {module};"));
        if module != "integration" && !declared && !manifest.contains(&own_target) {
            missing.push(format!("{}/tests/{module}", crate_dir.display()));
        }
    }
    missing
}

#[test]
fn every_test_file_is_a_module_or_a_target() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() && dir.join("tests").is_dir() {
            missing.extend(undeclared(&dir));
        }
    }
    assert!(
        missing.is_empty(),
        "test files that no test target compiles (add `mod NAME;` to tests/integration.rs): {missing:?}"
    );
}

#[test]
fn a_file_left_out_is_found() {
    let dir = std::env::temp_dir().join(format!("thinlab-undeclared-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nautotests = false\n").unwrap();
    std::fs::write(dir.join("tests/integration.rs"), "mod kept;\n").unwrap();
    std::fs::write(dir.join("tests/kept.rs"), "").unwrap();
    std::fs::write(dir.join("tests/forgotten.rs"), "").unwrap();
    let missing = undeclared(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].ends_with("tests/forgotten"), "{missing:?}");
}
