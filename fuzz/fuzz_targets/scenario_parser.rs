//! Any bytes as a scenario file, with and without an override: the parser must return
//! a scenario or a one-line error naming the file, and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // The first line, if it looks like FIELD=VALUE, is also tried as a --set override.
    let first = text.lines().next().unwrap_or("").to_string();
    for overrides in [vec![], vec![first]] {
        if let Err(e) = cclab_scenario::parse_str(text, "fuzz.toml", None, "fuzz", &overrides) {
            let shown = e.to_string();
            assert!(shown.starts_with("fuzz.toml") && !shown.contains('\n'), "{shown}");
        }
    }
});
