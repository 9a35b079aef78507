//! Gives the build an identity of what decides its results: a hash of the sources of
//! every crate the runs go through (and of `Cargo.lock`), as `CCLAB_SOURCE_HASH`. A
//! sweep or `cclab reproduce` reuses a finished run only if it was written by a build
//! with the same hash (`sweep::is_done`): the run's fingerprint covers the scenario text,
//! not the code, so after a model change a rerun into an old folder would otherwise
//! keep the old model's results.

use std::path::{Path, PathBuf};

/// Sources that decide what a run writes; the web page and tests do not.
const INPUTS: [&str; 8] = [
    "../units/src",
    "../cc/src",
    "../sim/src",
    "../scenario/src",
    "../emu/src",
    "../kernel/src",
    "../kernel/bpf",
    "src",
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut files = Vec::new();
    for dir in INPUTS {
        let dir = manifest.join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        collect(&dir, &mut files);
    }
    let lock = manifest.join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    files.push(lock);
    files.sort();
    let mut hash = Fnv::new();
    for f in &files {
        // The path relative to the workspace, so a clone elsewhere hashes the same.
        let rel = f.strip_prefix(&manifest).unwrap_or(f);
        hash.feed(rel.to_string_lossy().as_bytes());
        hash.feed(&std::fs::read(f).unwrap_or_default());
    }
    println!("cargo:rustc-env=CCLAB_SOURCE_HASH={:016x}", hash.0);
}

/// Every file under `dir`, recursively.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// 64-bit FNV-1a (the hash the scenario fingerprints use).
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
}
