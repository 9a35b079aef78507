//! TCPTuner's `ip route` parameters: `rto_min` and `initcwnd` on routes.
//!
//! This shells out to iproute2 (`ip -d -j route show`, `ip route change`) rather than
//! speaking netlink itself: the JSON output is structured (no text scraping) and
//! `ip route change` carries every attribute of the route, so we rebuild each route's
//! full description (destination, gateway, device, protocol, scope, source, metric,
//! table and all its other metrics) and change only the two we own. Routes with
//! nexthop groups or metrics we do not know how to reproduce are skipped and reported,
//! never half-changed.
//!
//! Before a route is first changed its original values are saved (per table and network
//! namespace, the namespace known by its cookie rather than its name) in the state
//! directory, each route on its own: a later change of other routes adds theirs, a later
//! change of the same route keeps the first. `restore` puts them back, including "unset"
//! (all of them, or only `dst`'s), and forgets them.

use crate::error::Error;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A route's attributes in `ip -d -j route show` that [`change_args`] writes back, or that
/// need not be: `type` is checked (unicast only), `table` is given, and `flags` other than
/// `onlink` are the kernel's own state (`linkdown`). Any other (a `realm`, an `expires`,
/// an encapsulation) would be lost by `ip route change`, so such a route is skipped.
const REPRODUCED: &[&str] = &[
    "type", "dst", "gateway", "dev", "protocol", "scope", "prefsrc", "metric", "table", "tos",
    "flags", "metrics",
];

/// Integer route metrics we can pass back to `ip route change` unchanged.
const PASS_THROUGH: &[&str] = &[
    "mtu",
    "advmss",
    "window",
    "ssthresh",
    "cwnd",
    "initrwnd",
    "reordering",
    "hoplimit",
    "quickack",
    "fastopen_no_cookie",
];

/// One route, as far as this module cares.
#[derive(Clone, Debug, PartialEq)]
pub struct RouteInfo {
    pub dst: String,
    pub dev: Option<String>,
    pub gateway: Option<String>,
    /// rto_min in milliseconds, if set on the route.
    pub rto_min_ms: Option<u64>,
    pub initcwnd: Option<u64>,
    /// Why this route cannot be changed by us, if it cannot.
    pub unsupported: Option<String>,
    json: Value,
}

/// A route left alone: (destination, why).
pub type Skipped = (String, String);

/// Which routes: a table, optionally one destination, optionally inside a network namespace.
#[derive(Clone, Debug)]
pub struct Routes {
    pub table: String,
    pub dst: Option<String>,
    pub netns: Option<String>,
    pub state_dir: PathBuf,
}

impl Default for Routes {
    fn default() -> Self {
        Routes {
            table: "main".into(),
            dst: None,
            netns: None,
            state_dir: std::env::var_os("CCLAB_STATE_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| "/run/cclab".into()),
        }
    }
}

/// The change to make; `None` leaves that parameter as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct RouteChange {
    pub rto_min_ms: Option<u64>,
    pub initcwnd: Option<u64>,
    /// Whether `rto_min_ms` was rounded up from what was asked (routes hold whole ms).
    pub rto_min_rounded: bool,
}

impl Routes {
    fn ip(&self, args: &[String]) -> Result<String, Error> {
        let mut cmd = Command::new("ip");
        if let Some(ns) = &self.netns {
            cmd.args(["-n", ns]);
        }
        cmd.args(args);
        let out = cmd
            .output()
            .map_err(|e| Error::io("running `ip` (iproute2 is needed for route parameters)", e))?;
        if !out.status.success() {
            return Err(Error::Other(format!(
                "`ip {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The JSON list `ip -j <args>` prints (`ip` prints nothing for an empty table).
    fn ip_json(&self, args: &[&str]) -> Result<Vec<Value>, Error> {
        let text = self.ip(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())?;
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            Error::Other(format!("cannot parse `ip {}` output: {e}", args.join(" ")))
        })?;
        Ok(v.as_array().cloned().unwrap_or_default())
    }

    /// How many IPv6 routes the table has: this module changes IPv4 routes only, and
    /// says so when there are IPv6 ones it leaves alone.
    pub fn ipv6_routes(&self) -> Result<usize, Error> {
        Ok(self.ip_json(&["-6", "-j", "route", "show", "table", &self.table])?.len())
    }

    /// The routes of the table (only the chosen destination, if any).
    pub fn list(&self) -> Result<Vec<RouteInfo>, Error> {
        let routes = self.ip_json(&["-d", "-j", "route", "show", "table", &self.table])?;
        let mut all: Vec<RouteInfo> = routes.into_iter().map(route_info).collect();
        mark_ambiguous(&mut all);
        let mut out = Vec::new();
        for info in all {
            if let Some(want) = &self.dst {
                if &info.dst != want {
                    continue;
                }
            }
            out.push(info);
        }
        if let (Some(want), true) = (&self.dst, out.is_empty()) {
            return Err(Error::Other(format!("no route to \"{want}\" in table {}", self.table)));
        }
        Ok(out)
    }

    /// Where the values saved before our first change of the table's routes are kept:
    /// one file per table and network namespace. The namespace is known by its cookie, not
    /// by its name alone: a namespace deleted and made again under the same name is
    /// another namespace, whose routes must not be given the first one's values.
    fn state_file(&self) -> Result<PathBuf, Error> {
        let name = self.netns.as_deref().map(|n| format!("-{n}")).unwrap_or_default();
        let key = crate::netns::key(self.netns.as_deref())?;
        Ok(self.state_dir.join(format!("routes-{}{name}-{key}.json", self.table)))
    }

    /// Removes the files saved for earlier namespaces of this one's name. A name names one
    /// namespace at a time: an earlier one is deleted, or lives on only in processes still
    /// inside it, out of `--netns`'s reach, so its saved values can no longer be restored.
    fn forget_earlier_namespaces(&self, current: &std::path::Path) -> Result<(), Error> {
        let Some(name) = &self.netns else { return Ok(()) };
        let prefix = format!("routes-{}-{name}-", self.table);
        let Ok(entries) = std::fs::read_dir(&self.state_dir) else { return Ok(()) };
        for entry in entries.flatten() {
            let file = entry.file_name();
            let file = file.to_string_lossy();
            let key = file.strip_prefix(&prefix).and_then(|rest| rest.strip_suffix(".json"));
            if key.is_some_and(crate::netns::is_key) && entry.path() != current {
                std::fs::remove_file(entry.path())
                    .map_err(|e| Error::io(format!("removing {}", entry.path().display()), e))?;
            }
        }
        Ok(())
    }

    /// Applies `change` to every selected route; returns (changed, skipped-with-reason).
    pub fn set(&self, change: RouteChange) -> Result<(Vec<RouteInfo>, Vec<Skipped>), Error> {
        if !crate::loader::is_root() {
            return Err(Error::NotRoot { what: "cclab kernel route".into() });
        }
        let routes = self.list()?;
        if routes.is_empty() {
            return Err(Error::Other(format!(
                "no routes in table {}: nothing to change",
                self.table
            )));
        }
        self.save_originals(&routes)?;
        let mut changed = Vec::new();
        let mut skipped = Vec::new();
        for r in routes {
            if let Some(why) = &r.unsupported {
                let dev = r.dev.as_deref().map(|d| format!(" dev {d}")).unwrap_or_default();
                skipped.push((format!("{}{dev}", r.dst), why.clone()));
                continue;
            }
            let rto = change.rto_min_ms.or(r.rto_min_ms);
            let cwnd = change.initcwnd.or(r.initcwnd);
            if let Err(e) = self.ip(&change_args(&r, &self.table, rto, cwnd)) {
                if changed.is_empty() {
                    return Err(e);
                }
                let done: Vec<&str> = changed.iter().map(|c: &RouteInfo| c.dst.as_str()).collect();
                return Err(Error::Other(format!(
                    "{e}; changed before it: {} (the same command with --restore puts them back)",
                    done.join(", ")
                )));
            }
            changed.push(r);
        }
        Ok((changed, skipped))
    }

    /// The values saved so far (none if nothing is saved).
    fn saved(&self) -> Result<Vec<Value>, Error> {
        let path = self.state_file()?;
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| Error::Other(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
        }
    }

    /// Writes `saved` back, or removes the file when nothing is left to restore.
    fn keep(&self, saved: Vec<Value>) -> Result<(), Error> {
        let path = self.state_file()?;
        if saved.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(Error::io(format!("removing {}", path.display()), e))
                }
                _ => Ok(()),
            };
        }
        std::fs::create_dir_all(&self.state_dir)
            .map_err(|e| Error::io(format!("creating {}", self.state_dir.display()), e))?;
        // Whole or not at all: a crash mid-write must not leave a file restore cannot read.
        cclab_units::whole_file::write(&path, Value::Array(saved).to_string().as_bytes())
            .map_err(|e| Error::io(format!("writing {}", path.display()), e))
    }

    /// Saves the values of each of `routes` not saved yet (a route is known by its
    /// destination, metric and TOS), so that restore gives back what each had before its
    /// first change, whichever changes came after.
    fn save_originals(&self, routes: &[RouteInfo]) -> Result<(), Error> {
        let mut saved = self.saved()?;
        for r in routes.iter().filter(|r| r.unsupported.is_none()) {
            if saved.iter().any(|s| is_saved_of(s, r)) {
                continue;
            }
            saved.push(serde_json::json!({
                "dst": r.dst,
                "metric": scalar(r.json.get("metric")),
                "tos": scalar(r.json.get("tos")),
                "rto_min_ms": r.rto_min_ms,
                "initcwnd": r.initcwnd,
            }));
        }
        self.forget_earlier_namespaces(&self.state_file()?)?;
        self.keep(saved)
    }

    /// Puts back the values saved before each route's first `set` (only `dst`'s, when
    /// one is chosen) and forgets them. Returns the restored routes.
    pub fn restore(&self) -> Result<Vec<String>, Error> {
        if !crate::loader::is_root() {
            return Err(Error::NotRoot { what: "cclab kernel route --restore".into() });
        }
        let saved = self.saved()?;
        let nothing = |what: &str| {
            Error::Other(format!(
                "nothing to restore: `cclab kernel route` has not changed {what} in table {}{}",
                self.table,
                self.netns.as_deref().map(|n| format!(" of namespace {n}")).unwrap_or_default()
            ))
        };
        if saved.is_empty() {
            return Err(nothing("any route"));
        }
        if let Some(want) = &self.dst {
            if !saved.iter().any(|s| s["dst"].as_str() == Some(want)) {
                return Err(nothing(want));
            }
        }
        let current = Routes { dst: None, ..self.clone() }.list()?;
        let mut done = Vec::new();
        let mut left = Vec::new();
        for s in saved {
            let dst = s["dst"].as_str().unwrap_or_default();
            if self.dst.as_deref().is_some_and(|want| want != dst) {
                left.push(s);
                continue;
            }
            // A route that is gone has nothing to restore.
            if let Some(r) = current.iter().find(|r| is_saved_of(&s, r)) {
                let (rto, cwnd) = (s["rto_min_ms"].as_u64(), s["initcwnd"].as_u64());
                self.ip(&change_args(r, &self.table, rto, cwnd))?;
                done.push(dst.to_string());
            }
        }
        self.keep(left)?;
        Ok(done)
    }
}

/// Whether the saved entry `s` is route `r`'s (same destination, metric and TOS).
fn is_saved_of(s: &Value, r: &RouteInfo) -> bool {
    let same = |k: &str| r.json.get(k).unwrap_or(&Value::Null) == s.get(k).unwrap_or(&Value::Null);
    s["dst"].as_str() == Some(r.dst.as_str()) && same("metric") && same("tos")
}

/// A number or string from `ip -j` output, written back as it came (anything else: null).
fn scalar(v: Option<&Value>) -> Value {
    match v {
        Some(v @ (Value::Number(_) | Value::String(_))) => v.clone(),
        _ => Value::Null,
    }
}

fn route_info(json: Value) -> RouteInfo {
    let s = |k: &str| json.get(k).and_then(Value::as_str).map(str::to_string);
    let mut rto = None;
    let mut cwnd = None;
    let mut unsupported = None;
    if json.get("nexthops").is_some() || json.get("nhid").is_some() {
        unsupported = Some("multipath/nexthop-object routes are not supported".to_string());
    }
    if let Some(t) = s("type") {
        if t != "unicast" {
            unsupported = Some(format!("{t} route"));
        }
    }
    if let Some((k, v)) = json.as_object().and_then(|o| {
        o.iter()
            .find(|(k, _)| !REPRODUCED.contains(&k.as_str()) && *k != "nexthops" && *k != "nhid")
    }) {
        unsupported = Some(format!("route attribute \"{k}\" = {v} cannot be reproduced"));
    }
    for m in json.get("metrics").and_then(Value::as_array).cloned().unwrap_or_default() {
        if let Some(obj) = m.as_object() {
            for (k, v) in obj {
                match k.as_str() {
                    "rto_min" => rto = v.as_u64(),
                    "initcwnd" => cwnd = v.as_u64(),
                    k if PASS_THROUGH.contains(&k) && v.as_u64().is_some() => {}
                    "congctl" if v.is_string() => {}
                    other => {
                        unsupported =
                            Some(format!("route metric \"{other}\" = {v} cannot be reproduced"))
                    }
                }
            }
        }
    }
    RouteInfo {
        dst: s("dst").unwrap_or_default(),
        dev: s("dev"),
        gateway: s("gateway"),
        rto_min_ms: rto,
        initcwnd: cwnd,
        unsupported,
        json,
    }
}

/// Marks routes that `ip route change` cannot tell apart as unsupported: it finds a
/// route by destination, metric and TOS alone, so of two routes that share them (one
/// subnet on two devices), it would rewrite the first with the second's device.
fn mark_ambiguous(routes: &mut [RouteInfo]) {
    let key = |r: &RouteInfo| {
        (
            r.dst.clone(),
            scalar(r.json.get("metric")).to_string(),
            scalar(r.json.get("tos")).to_string(),
        )
    };
    let keys: Vec<_> = routes.iter().map(key).collect();
    for (i, r) in routes.iter_mut().enumerate() {
        let twins = keys.iter().filter(|k| **k == keys[i]).count();
        if twins > 1 && r.unsupported.is_none() {
            r.unsupported = Some(format!(
                "one of {twins} routes to {} with the same metric (on other devices or gateways); ip route change cannot tell them apart",
                r.dst
            ));
        }
    }
}

/// `ip route change` arguments reproducing `r` with the given rto_min and initcwnd.
fn change_args(
    r: &RouteInfo,
    table: &str,
    rto_min_ms: Option<u64>,
    initcwnd: Option<u64>,
) -> Vec<String> {
    let j = &r.json;
    let mut a: Vec<String> = vec!["route".into(), "change".into(), r.dst.clone()];
    let mut push = |k: &str, v: String| {
        a.push(k.to_string());
        a.push(v);
    };
    let get =
        |k: &str| j.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
    if let Some(t) = get("tos") {
        push("tos", t);
    }
    if let Some(g) = get("gateway") {
        push("via", g);
    }
    if let Some(d) = get("dev") {
        push("dev", d);
    }
    if let Some(p) = get("protocol") {
        push("proto", p);
    }
    if let Some(s) = get("scope") {
        push("scope", s);
    }
    if let Some(s) = get("prefsrc") {
        push("src", s);
    }
    if let Some(m) = get("metric") {
        push("metric", m);
    }
    push("table", table.to_string());
    for m in j.get("metrics").and_then(Value::as_array).cloned().unwrap_or_default() {
        if let Some(obj) = m.as_object() {
            for (k, v) in obj {
                if PASS_THROUGH.contains(&k.as_str()) {
                    push(k, v.to_string());
                } else if k == "congctl" {
                    push(k, v.as_str().unwrap_or_default().to_string());
                }
            }
        }
    }
    if let Some(ms) = rto_min_ms {
        push("rto_min", format!("{ms}ms"));
    }
    if let Some(c) = initcwnd {
        push("initcwnd", c.to_string());
    }
    if j.get("flags").and_then(Value::as_array).is_some_and(|f| f.iter().any(|x| x == "onlink")) {
        a.push("onlink".into());
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_keeps_every_attribute_and_replaces_ours() {
        let j: Value = serde_json::from_str(
            r#"{"type":"unicast","dst":"198.18.10.0/24","gateway":"198.18.9.2","dev":"v0","protocol":"boot","scope":"global","flags":[],"metrics":[{"mtu":1400,"initcwnd":20,"rto_min":50}]}"#,
        )
        .unwrap();
        let r = route_info(j);
        assert_eq!((r.rto_min_ms, r.initcwnd, r.unsupported.clone()), (Some(50), Some(20), None));
        let a = change_args(&r, "main", Some(10), None).join(" ");
        assert_eq!(a, "route change 198.18.10.0/24 via 198.18.9.2 dev v0 proto boot scope global table main mtu 1400 rto_min 10ms");
    }

    /// What restore reads back: the route's key (dst, metric, tos) and our two values.
    #[test]
    fn originals_are_saved_as_restore_reads_them() {
        let dir = std::env::temp_dir().join(format!("cclab-route-test-{}", std::process::id()));
        let routes = Routes { state_dir: dir.clone(), ..Routes::default() };
        let j: Value = serde_json::from_str(
            r#"{"dst":"198.18.10.0/24","dev":"v0","metric":100,"metrics":[{"rto_min":50}]}"#,
        )
        .unwrap();
        routes.save_originals(&[route_info(j.clone())]).unwrap();
        // A second change of the same route keeps its first values; another route's are
        // added beside them.
        let changed: Value = serde_json::from_str(
            r#"{"dst":"198.18.10.0/24","dev":"v0","metric":100,"metrics":[{"rto_min":10}]}"#,
        )
        .unwrap();
        let other: Value = serde_json::from_str(r#"{"dst":"198.18.11.0/24","dev":"v0"}"#).unwrap();
        routes.save_originals(&[route_info(changed), route_info(other)]).unwrap();
        let text = std::fs::read_to_string(routes.state_file().unwrap()).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let saved: Vec<Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(saved.len(), 2, "{text}");
        assert_eq!(saved[1]["dst"].as_str(), Some("198.18.11.0/24"));
        let s = &saved[0];
        assert_eq!((s["dst"].as_str(), s["metric"].as_u64()), (Some("198.18.10.0/24"), Some(100)));
        assert!(s["tos"].is_null() && s["initcwnd"].is_null(), "{text}");
        assert_eq!(s["rto_min_ms"].as_u64(), Some(50));
    }

    #[test]
    fn routes_that_ip_route_change_cannot_tell_apart_or_rebuild_are_unsupported() {
        let parse = |t: &str| route_info(serde_json::from_str(t).unwrap());
        let mut routes = vec![
            parse(r#"{"dst":"198.18.70.0/24","dev":"a0","protocol":"kernel","scope":"link"}"#),
            parse(r#"{"dst":"198.18.70.0/24","dev":"b0","protocol":"kernel","scope":"link"}"#),
            parse(r#"{"dst":"198.18.70.0/24","dev":"c0","metric":10}"#),
        ];
        mark_ambiguous(&mut routes);
        assert!(routes[0].unsupported.as_deref().unwrap().contains("one of 2 routes"));
        assert!(routes[1].unsupported.is_some());
        assert!(routes[2].unsupported.is_none(), "another metric is another route");
        // A realm, as `ip -d -j` shows it.
        let realm =
            parse(r#"{"dst":"198.19.62.0/24","dev":"a0","flow":{"to":"5"},"flags":["onlink"]}"#);
        assert!(realm.unsupported.unwrap().contains("\"flow\""));
    }

    #[test]
    fn unknown_metrics_make_a_route_unsupported() {
        let j: Value =
            serde_json::from_str(r#"{"dst":"default","dev":"e","metrics":[{"rtt":12.5}]}"#)
                .unwrap();
        assert!(route_info(j).unsupported.unwrap().contains("rtt"));
    }
}
