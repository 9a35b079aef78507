//! Golden snapshots: the summary.json of each small scenario in scenarios/small/ must
//! match tests/golden/<name>.summary.json byte for byte. When the simulator changes on
//! purpose, regenerate them with `bash scripts/update-golden.sh` (which runs this test
//! with UPDATE_GOLDEN=1) and review the diff.

mod common;
use common::*;

#[test]
fn small_scenarios_match_their_golden_summaries() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let root = repo();
    let golden_dir = root.join("tests/golden");
    let mut scenarios: Vec<_> = std::fs::read_dir(root.join("scenarios/small"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 4);
    let dir = TempDir::new("golden");
    let mut failures = Vec::new();
    for scn in &scenarios {
        let stem = scn.file_stem().unwrap().to_string_lossy().into_owned();
        let o = run_in(dir.path(), &["run", &scn.display().to_string(), "--out", &stem]);
        assert!(o.status.success(), "{stem}: {}", stderr(&o));
        let got = std::fs::read_to_string(dir.path().join(&stem).join("summary.json")).unwrap();
        let want_path = golden_dir.join(format!("{stem}.summary.json"));
        if update {
            std::fs::create_dir_all(&golden_dir).unwrap();
            std::fs::write(&want_path, &got).unwrap();
            eprintln!("updated {}", want_path.display());
            continue;
        }
        match std::fs::read_to_string(&want_path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{stem}: summary.json differs from {}\n--- golden\n{want}\n--- now\n{got}",
                want_path.display()
            )),
            Err(_) => failures.push(format!("{stem}: no golden file {}", want_path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\n\nIf the change is intended, run: bash scripts/update-golden.sh",
        failures.join("\n\n")
    );
}
