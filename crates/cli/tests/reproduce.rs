//! `cclab reproduce --quick` over every seed with expected values: the structure of
//! reproduce.json and reproduce.html, and the verdicts of the items that do not hinge on
//! run length (quick runs are short, so only those are pinned).

mod common;
use common::*;

/// Items whose verdict holds with the quick runs as with the full ones, each with the
/// reason it is stable.
const STABLE: &[(&str, &str)] = &[
    // At 82 ms CUBIC leaves its TCP-friendly region and out-grows TCP-SACK.
    ("001-fig5/82 ms: CUBIC takes more", "agrees"),
    // Eight flows with one-BDP buffers keep a 400 Mbit/s link busy.
    ("001-fig6/utilisation", "agrees"),
    // CUBIC-FIT out-takes plain CUBIC at 1% loss by 10% or more at every delay.
    ("000-fig2-share/CUBIC-FIT / CUBIC/50ms", "agrees"),
    ("000-fig2-share/CUBIC-FIT / CUBIC/200ms", "agrees"),
    // The paper's Reno gets an eighth of CUBIC's share at 200 ms; cclab's far more.
    ("000-table1/Reno/200ms", "differs"),
    // The notebook's sender used a few percent of the link; cclab's TCP fills it.
    ("002-low-throughput/Tahoe alone", "differs"),
    ("002-high-throughput/CUBIC alone", "differs"),
    // Base RTT plus a full 30 kB queue bounds the RTT near the notebook's.
    ("002-low-rtt/Tahoe alone", "agrees"),
    ("003-utilisation/CUBIC", "agrees"),
    // TCPTuner with beta = 0.25 backs off far more than CUBIC.
    ("004-inter/Fig. 5: beta = 0.25 gives CUBIC more", "agrees"),
    // With beta = 1 neither flow backs off, so the newcomer never gets in.
    ("004-fig6/new flow's goodput", "differs"),
    // A 1 MB transfer at beta = 1 takes well under half the time of beta = 0.2 at 1% loss.
    ("004-fig7-trend/beta 1.0", "agrees"),
];

const ITEM_KEYS: &[&str] = &[
    "id",
    "seed",
    "figure",
    "page",
    "setup",
    "scenario",
    "where",
    "x",
    "paper",
    "paper_claim",
    "cclab",
    "ci95",
    "runs",
    "verdict",
    "rule",
    "why",
];

#[test]
fn reproduce_quick_covers_every_seed_with_the_documented_report() {
    let dir = TempDir::new("reproduce");
    let seeds = repo().join("scenarios/seeds");
    let o = cclab()
        .current_dir(dir.path())
        .args(["reproduce", "--quick", "--out", "rep", "--seeds"])
        .arg(&seeds)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("item") && out.contains("verdict"), "{out}");
    assert!(out.contains("reproduce: ") && out.contains(" agree, "), "{out}");

    let text = std::fs::read_to_string(dir.path().join("rep/reproduce.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["quick"], serde_json::Value::Bool(true));
    let items = json["items"].as_array().unwrap();
    assert!(items.len() >= 60, "{} items", items.len());
    for item in items {
        let obj = item.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        for k in ITEM_KEYS {
            assert!(keys.contains(k), "{k} missing in {item}");
        }
        let verdict = item["verdict"].as_str().unwrap();
        assert!(["agrees", "roughly", "differs"].contains(&verdict), "{item}");
        assert!(item["cclab"].is_number() && item["runs"].as_u64().unwrap() >= 1, "{item}");
        assert!(item["paper"].is_number() || item["paper_claim"].is_string(), "{item}");
        assert!(!item["rule"].as_str().unwrap().is_empty(), "{item}");
        assert!(
            !item["page"].as_str().unwrap().is_empty()
                && !item["setup"].as_str().unwrap().is_empty()
        );
    }
    for seed in ["000", "001", "002", "003", "004"] {
        assert!(items.iter().any(|i| i["seed"] == seed), "seed {seed} missing");
    }
    let count = |v: &str| items.iter().filter(|i| i["verdict"] == v).count() as u64;
    assert_eq!(json["summary"]["agrees"].as_u64(), Some(count("agrees")));
    assert_eq!(json["summary"]["differs"].as_u64(), Some(count("differs")));
    for (id, verdict) in STABLE {
        let item = items.iter().find(|i| i["id"] == *id).unwrap_or_else(|| panic!("no item {id}"));
        assert_eq!(item["verdict"], *verdict, "{item}");
    }
    // Paper values sit beside cclab's: Table I's first CUBIC-FIT cell is 0.999.
    let cell = items.iter().find(|i| i["id"] == "000-table1/CUBIC-FIT/10ms").unwrap();
    assert_eq!(cell["paper"].as_f64(), Some(0.999));
    assert_eq!(cell["figure"], "Table I");

    let html = std::fs::read_to_string(dir.path().join("rep/reproduce.html")).unwrap();
    assert!(html.contains("Table I") && html.contains("(paper)") && html.contains("(cclab)"));
    assert!(html.matches("<svg").count() >= 10);
    // Each experiment's sweep is a normal sweep folder.
    assert!(dir.path().join("rep/000-fairness/sweep.csv").is_file());
}

#[test]
fn reproduce_refuses_an_unknown_seed() {
    let dir = TempDir::new("reproduce-bad");
    let o = cclab()
        .current_dir(dir.path())
        .args(["reproduce", "999", "--quick", "--seeds"])
        .arg(repo().join("scenarios/seeds"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no expected values for seed \"999\""), "{}", stderr(&o));
}
