//! The real-kernel panel: cclab's BPF algorithms in the running kernel (`cclab kernel
//! load|unload|set` through crates/kernel) and the kernel's available algorithms. The
//! status says exactly what is missing when the server cannot act (not root, BPF
//! programs not built, no kernel BTF). Actions need the server's token (see the server
//! module); they are blocking and run off the async threads.

use crate::error::{ApiError, ApiResult};
use cclab_kernel::loader::{self, Kernel};
use cclab_kernel::{run_params, Algo, Error};
use serde_json::{json, Value};

/// What keeps the panel from acting, in words (empty when nothing does).
pub fn missing() -> Vec<String> {
    let mut out = Vec::new();
    if !loader::is_root() {
        out.push("the server is not running as root (loading BPF congestion control and testbed runs need root): start it with sudo cclab serve".to_string());
    }
    if let Some(why) = cclab_kernel::bpf_unavailable() {
        out.push(format!("this cclab binary was built without its BPF programs: {why}"));
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        out.push("the kernel has no BTF (/sys/kernel/btf/vmlinux); struct_ops needs CONFIG_DEBUG_INFO_BTF".to_string());
    }
    out
}

fn algo_json(k: &Kernel, a: Algo) -> Value {
    let s = k.status(a);
    let params: Vec<Value> = a
        .params()
        .iter()
        .map(|p| {
            let current = s
                .params
                .as_ref()
                .and_then(|v| v.iter().find(|(n, _)| *n == p.name).map(|(_, x)| *x));
            let mut j = crate::catalog::param_json(p);
            j["current"] = json!(current);
            j
        })
        .collect();
    json!({
        "name": a.name(),
        "loaded": s.pinned && s.registered,
        "pinned": s.pinned,
        "registered": s.registered,
        "params": params,
    })
}

/// `GET /api/kernel`.
pub fn status() -> Value {
    let k = Kernel::default();
    let missing = missing();
    json!({
        "ready": missing.is_empty(),
        "missing": missing,
        "testbed_missing": crate::testbed::missing(),
        "available": loader::available().unwrap_or_default(),
        "default": loader::current_default().ok(),
        "algorithms": Algo::ALL.iter().map(|a| algo_json(&k, *a)).collect::<Vec<_>>(),
    })
}

fn need_ready() -> ApiResult<()> {
    let m = missing();
    if m.is_empty() {
        Ok(())
    } else {
        Err(ApiError::conflict(format!("the real kernel is not available: {}", m.join("; "))))
    }
}

fn algo(name: &str) -> ApiResult<Algo> {
    Algo::parse(name).map_err(|e| ApiError::field("algorithm", e.to_string()))
}

/// `POST /api/kernel/load` and `/unload` with `{"algorithm": "cclab_tuner"}`.
pub fn load(name: &str, load: bool) -> ApiResult<Value> {
    let a = algo(name)?;
    need_ready()?;
    let k = Kernel::default();
    if load {
        k.load(a).map_err(|e| ApiError::conflict(e.to_string()))?;
    } else {
        run_params::unload_between_runs(&k, a).map_err(|e| ApiError::conflict(e.to_string()))?;
    }
    Ok(status())
}

/// `POST /api/kernel/set` with `{"algorithm": ..., "name": "beta", "value": 0.5}`: rewrites
/// the algorithm's tunables map, as `cclab kernel set` does (refused, 409, while a run
/// holds them).
pub fn set(name: &str, param: &str, value: f64) -> ApiResult<Value> {
    let a = algo(name)?;
    need_ready()?;
    let k = Kernel::default();
    let (put_back, stored) = run_params::set_between_runs(&k, a, &[(param.to_string(), value)])
        .map_err(|e| match e {
            Error::Param(_) => ApiError::field(&format!("{}.{param}", a.name()), e.to_string()),
            e => ApiError::conflict(e.to_string()),
        })?;
    let pair = |n: &str, v: f64| json!({ "name": n, "value": v });
    Ok(json!({
        "algorithm": a.name(),
        "stored": stored.iter().map(|(n, v)| pair(n, *v)).collect::<Vec<_>>(),
        // What a run killed before its end had left to put back, put back first.
        "put_back": put_back.map(|p| p.iter().map(|(n, v)| pair(n, *v)).collect::<Vec<_>>()),
    }))
}
