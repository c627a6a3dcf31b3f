//! The README's comparison with RReliableQueue, BullMQ and asynq, checked:
//! every feature delayq claims ("yes") names at least one test, and every
//! test named exists; a feature delayq lacks names none. A claim whose test
//! is renamed or removed fails here instead of going stale.
//!
//! A name is `module::path::function`: in `tests/integration/` unless it
//! starts with `cli::` (`delayq-cli/tests/`) or `dashboard::`
//! (`delayq-dashboard/tests/dashboard/`). Reads the text, no build needed.

use std::path::{Path, PathBuf};

const HEADING: &str = "## Compared with RReliableQueue, BullMQ and asynq";

struct Row {
    feature: String,
    delayq: String,
    tests: Vec<String>,
}

/// The table's rows under [`HEADING`]: feature, delayq's cell and the
/// names in the last cell's backticks.
fn rows(readme: &str) -> Vec<Row> {
    let section = readme
        .split_once(HEADING)
        .map(|(_, rest)| rest)
        .expect("the README has the comparison section");
    let table = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'));
    table
        .skip(2) // the head and its rule
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 6, "a row has six cells: {line}");
            let tests = cells[5].split('`').skip(1).step_by(2).map(str::to_owned).collect();
            Row {
                feature: cells[0].to_owned(),
                delayq: cells[1].to_owned(),
                tests,
            }
        })
        .collect()
}

/// The source file a test name points into, and the function's name.
fn locate(root: &Path, name: &str) -> (PathBuf, String) {
    let mut parts: Vec<&str> = name.split("::").collect();
    let function = parts.pop().expect("a name has a function").to_owned();
    let base = match parts.first() {
        Some(&"cli") => {
            parts.remove(0);
            root.join("delayq-cli/tests")
        }
        Some(&"dashboard") => {
            parts.remove(0);
            root.join("delayq-dashboard/tests/dashboard")
        }
        _ => root.join("tests/integration"),
    };
    assert!(!parts.is_empty(), "{name}: a module, then the function");
    let module = parts.iter().fold(base, |path, part| path.join(part));
    let file = module.with_extension("rs");
    let file = if file.exists() { file } else { module.join("mod.rs") };
    (file, function)
}

/// Whether `source` defines a function `name` (plain or in a test macro).
fn defines(source: &str, name: &str) -> bool {
    source.match_indices(&format!("fn {name}(")).any(|(at, _)| {
        // A whole word: not the tail of a longer name.
        at == 0 || !source[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
    })
}

fn problems(root: &Path, readme: &str) -> Vec<String> {
    let rows = rows(readme);
    assert!(rows.len() >= 20, "the table has its rows ({} found)", rows.len());
    let mut problems = Vec::new();
    for row in &rows {
        let claimed = row.delayq.starts_with("yes");
        match (claimed, row.tests.is_empty()) {
            (true, true) => problems.push(format!("{}: delayq says yes and names no test", row.feature)),
            (false, false) if row.delayq == "no" => {
                problems.push(format!("{}: delayq says no and names a test", row.feature))
            }
            _ => {}
        }
        for name in &row.tests {
            let (file, function) = locate(root, name);
            match std::fs::read_to_string(&file) {
                Ok(source) if defines(&source, &function) => {}
                Ok(_) => problems.push(format!(
                    "{}: {name}: no fn {function} in {}",
                    row.feature,
                    file.display()
                )),
                Err(e) => problems.push(format!("{}: {name}: {}: {e}", row.feature, file.display())),
            }
        }
    }
    problems
}

#[test]
fn every_feature_delayq_claims_names_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let problems = problems(root, &readme);
    assert!(problems.is_empty(), "the README's comparison:\n{}", problems.join("\n"));
}

#[test]
fn a_claim_without_a_test_or_with_a_missing_one_is_found() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let renamed = readme.replace(
        "`limits::a_payload_over_the_limit_is_refused_with_its_length`",
        "`limits::a_payload_over_the_limit_is_refused`",
    );
    let found = problems(root, &renamed);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("no fn a_payload_over_the_limit_is_refused "),
        "{found:?}"
    );
    let untested = readme.replace(
        "| yes | `pause::reliable_consumers_take_nothing_while_paused_and_lose_nothing` |",
        "| yes | |",
    );
    let found = problems(root, &untested);
    assert_eq!(found, ["pause and resume: delayq says yes and names no test"]);
}
