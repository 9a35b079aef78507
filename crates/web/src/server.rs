//! The HTTP server: routes, the request guard, the embedded page, and start/stop.
//!
//! The guard, before any handler:
//! - `Host` must be `localhost` or an IP address literal (any port, so SSH port
//!   forwarding works). A DNS-rebinding attack reaches the server under the attacker's
//!   domain name, which is refused.
//! - State-changing requests (anything but GET/HEAD) and WebSocket upgrades that carry
//!   an `Origin` must come from the page itself (`Origin` = `http://` + `Host`); browsers
//!   always send `Origin` on such requests, so another site's page cannot drive the lab.
//!   Scripts (curl, Python) send none and are allowed.
//! - Kernel actions (`POST /api/kernel/...`) also need the token printed at start, in an
//!   `X-Cclab-Token` header; they act as root.
//! - A request's headers must arrive within
//!   [`HEADER_DEADLINE`](crate::connections::HEADER_DEADLINE) (the connection is closed
//!   otherwise), and its body may not stop arriving for [`BODY_DEADLINE`] (a 408).

use crate::api;
use crate::body_deadline::{BodyLate, DeadlineBody, BODY_DEADLINE};
use crate::error::ApiError;
use crate::runs::Runs;
use crate::store::Store;
use crate::Config;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;

/// Everything the handlers share.
pub struct App {
    pub cfg: Config,
    pub runs: Runs,
    pub store: Arc<Store>,
}

pub type Shared = Arc<App>;

/// The page's files, built into the binary: (path under /assets/, content, content type).
const ASSETS: &[(&str, &str, &str)] = &[
    ("app.css", include_str!("../assets/app.css"), "text/css; charset=utf-8"),
    ("js/app.js", include_str!("../assets/js/app.js"), "text/javascript; charset=utf-8"),
    ("js/api.js", include_str!("../assets/js/api.js"), "text/javascript; charset=utf-8"),
    ("js/charts.js", include_str!("../assets/js/charts.js"), "text/javascript; charset=utf-8"),
    ("js/form.js", include_str!("../assets/js/form.js"), "text/javascript; charset=utf-8"),
    ("js/toml.js", include_str!("../assets/js/toml.js"), "text/javascript; charset=utf-8"),
    ("js/live.js", include_str!("../assets/js/live.js"), "text/javascript; charset=utf-8"),
    ("js/tune.js", include_str!("../assets/js/tune.js"), "text/javascript; charset=utf-8"),
    ("js/results.js", include_str!("../assets/js/results.js"), "text/javascript; charset=utf-8"),
    ("js/kernel.js", include_str!("../assets/js/kernel.js"), "text/javascript; charset=utf-8"),
    ("js/dom.js", include_str!("../assets/js/dom.js"), "text/javascript; charset=utf-8"),
    ("js/session.js", include_str!("../assets/js/session.js"), "text/javascript; charset=utf-8"),
];
const INDEX: &str = include_str!("../assets/index.html");
/// The page may load only its own files and talk only to its own server.
const PAGE_CSP: &str = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'; form-action 'none'";

fn router(app: Shared) -> Router {
    let limit = app.cfg.limits.max_body_bytes;
    let trace_limit = app.cfg.limits.max_trace_bytes;
    let routes = Router::new()
        .route("/", get(index))
        .route("/assets/{*file}", get(asset))
        .route("/api/algorithms", get(api::algorithms))
        .route("/api/scenarios", get(api::scenarios))
        .route("/api/scenarios/check", post(api::check_scenario))
        .route(
            "/api/traces",
            get(api::traces).post(api::upload_trace).layer(DefaultBodyLimit::max(trace_limit)),
        )
        .route("/api/traces/{name}", delete(api::delete_trace))
        .route("/api/runs", get(api::list_runs).post(api::create_run))
        .route("/api/runs/{id}", get(api::run_status))
        .route("/api/runs/{id}/live", get(api::live))
        .route("/api/runs/{id}/control", post(api::control))
        .route("/api/runs/{id}/params", post(api::params))
        .route("/api/runs/{id}/save", post(api::save))
        .route("/api/runs/{id}/scenario", get(api::run_scenario))
        .route("/api/saved", get(api::saved_list))
        .route("/api/saved/{name}", get(api::saved_detail).delete(api::saved_delete))
        .route("/api/saved/{name}/files/{file}", get(api::saved_file))
        .route("/api/compare", post(api::compare))
        .route("/api/compare/{a}/{b}/files/{file}", get(api::compare_file))
        .route("/api/kernel", get(api::kernel_status))
        .route("/api/kernel/runs", post(api::kernel_run))
        .route("/api/kernel/{action}", post(api::kernel_action))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(app.clone());
    // The guard wraps the routes from outside: axum adds a 405's `Allow` header as the
    // routes' answer leaves them, so only a layer outside them can name those methods.
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

async fn not_found(req: Request) -> ApiError {
    ApiError::not_found(format!(
        "no such page or API endpoint: {} {}",
        req.method(),
        req.uri().path()
    ))
}

async fn index() -> Response {
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response();
    r.headers_mut().insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    r
}

async fn asset(axum::extract::Path(file): axum::extract::Path<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, body, ty)) => ([(header::CONTENT_TYPE, *ty)], *body).into_response(),
        None => ApiError::not_found(format!("no asset {file}")).into_response(),
    }
}

/// The host name of a `Host` header value, without the port.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// Whether a `Host` may reach this server: `localhost` or an IP address literal.
pub fn host_allowed(host: &str) -> bool {
    let name = host_name(host);
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

fn is_upgrade(req: &Request) -> bool {
    req.headers().get(header::UPGRADE).is_some()
}

fn token_ok(req: &Request, token: &str) -> bool {
    let given = req.headers().get("x-cclab-token").and_then(|v| v.to_str().ok()).unwrap_or("");
    // Compared without stopping at the first difference.
    given.len() == token.len()
        && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// The guard of the module doc, and headers every answer carries.
async fn guard(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let mut r = admit(&app, req, next).await;
    let h = r.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The guard's checks, then the request's own answer (errors in the API's JSON form).
async fn admit(app: &App, req: Request, next: Next) -> Response {
    // Two Host headers would leave which one names the server to whoever reads them
    // (RFC 9112, sec. 3.2: a 400); only the first would be checked below.
    if req.headers().get_all(header::HOST).iter().count() > 1 {
        return ApiError::new(StatusCode::BAD_REQUEST, "the request has more than one Host header")
            .into_response();
    }
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !host_allowed(host) {
        return ApiError::forbidden(format!("Host \"{host}\" is not this server: use http://localhost:PORT or an IP address (names other than localhost are refused against DNS rebinding)")).into_response();
    }
    let changes_state = !matches!(*req.method(), Method::GET | Method::HEAD) || is_upgrade(&req);
    if changes_state {
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if origin != format!("http://{host}") {
                return ApiError::forbidden(format!("Origin \"{origin}\" is not this server's page (http://{host}): requests from other sites are refused")).into_response();
            }
        }
    }
    let path = req.uri().path();
    if path.starts_with("/api/kernel/")
        && *req.method() == Method::POST
        && !token_ok(&req, &app.cfg.token)
    {
        return ApiError::new(StatusCode::UNAUTHORIZED, "kernel actions need the token printed when the server started (open the URL it printed, or send it in an X-Cclab-Token header)").into_response();
    }
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    // A body announced larger than the path takes is refused at once, not read until
    // it stops arriving.
    let limit = body_limit(&path, &app.cfg.limits);
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared.and_then(|v| v.parse::<u64>().ok()).is_some_and(|n| n > limit as u64) {
        return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, too_large(&path, limit))
            .into_response();
    }
    let req = req.map(|body| DeadlineBody::wrap(body, BODY_DEADLINE));
    let r = next.run(req).await;
    let failed = r.status().is_client_error() || r.status().is_server_error();
    if failed && !is_json(&r) {
        return as_json_error(r, &method, &path, &app.cfg.limits).await;
    }
    r
}

fn is_json(r: &Response) -> bool {
    r.headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"))
}

/// An error answered before any handler of ours ran (axum's: a method a route does not
/// take, a body over the limit, a WebSocket endpoint asked without an upgrade) in the
/// API's form, `{"error": ...}`, saying what was wrong.
async fn as_json_error(
    r: Response,
    method: &Method,
    path: &str,
    limits: &crate::Limits,
) -> Response {
    let (parts, body) = r.into_parts();
    let status = parts.status;
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let late = BodyLate.to_string();
    let (status, text) = match text.ends_with(&late) {
        true => (StatusCode::REQUEST_TIMEOUT, late),
        false => (status, text),
    };
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = parts.headers.get(header::ALLOW).and_then(|v| v.to_str().ok());
            let allowed = allowed.unwrap_or("").replace(',', ", ");
            format!("{method} is not allowed on {path}; it takes {allowed}")
        }
        StatusCode::PAYLOAD_TOO_LARGE => too_large(path, body_limit(path, limits)),
        _ if !text.is_empty() => text,
        _ => status.canonical_reason().unwrap_or("refused").to_string(),
    };
    // axum's own headers (`Allow` on a 405, say) stay; the body is now ours.
    let mut r = ApiError::new(status, message).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            r.headers_mut().insert(name.clone(), value.clone());
        }
    }
    r
}

/// The largest body `path` takes: a trace upload's, or any other request's.
fn body_limit(path: &str, limits: &crate::Limits) -> usize {
    if path == "/api/traces" {
        limits.max_trace_bytes
    } else {
        limits.max_body_bytes
    }
}

fn too_large(path: &str, limit: usize) -> String {
    format!("the request body is larger than the {limit} bytes {path} takes")
}

/// A random token from the kernel's generator.
pub fn new_token() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Malloc arenas the server may use. Each run has a thread of its own, glibc gives busy
/// threads arenas of their own (up to eight per core), and the finished runs the server
/// keeps hold memory in all of them, so over a hundred and fifty runs the server's
/// resident memory kept creeping up (23 to 62 MB in one run of
/// `a_hundred_and_fifty_runs_in_a_row_keep_server_memory_flat`, which a clean-clone CI
/// run failed at 59 MB). With two arenas it levelled off at about 36 MB in three runs of
/// that test; concurrent runs then share arenas, which the simulator, allocating
/// little per packet, hardly notices.
const MALLOC_ARENAS: i32 = 2;

fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets a parameter of glibc's allocator, here before the
    // server starts its threads; a value it refuses leaves the default in place.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
    }
}

/// Serves until Ctrl-C (or SIGTERM). `ready` gets the URL to open (with the token) once
/// the port is bound.
pub fn serve(cfg: Config, ready: impl FnOnce(&str)) -> Result<(), String> {
    limit_malloc_arenas();
    if cfg.results.exists() && !cfg.results.is_dir() {
        return Err(format!(
            "--results {}: a file, not a folder; allowed: a folder (made if missing)",
            cfg.results.display()
        ));
    }
    std::fs::create_dir_all(&cfg.results)
        .map_err(|e| format!("cannot create the results folder {}: {e}", cfg.results.display()))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's threads: {e}"))?;
    rt.block_on(async move {
        let addr = SocketAddr::new(cfg.bind, cfg.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("--bind {} --port {}: cannot listen: {e}", cfg.bind, cfg.port))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        // Before the address is printed: the store tidies the folder as it starts.
        let store = Arc::new(Store::new(
            cfg.results.clone(),
            cfg.trace_dirs.clone(),
            cfg.results_writer.clone(),
            cfg.limits.max_disk_bytes,
        ));
        ready(&format!("http://{local}/?token={}", cfg.token));
        let runs = Runs::new(cfg.limits.clone(), cfg.results_writer.clone(), store.clone());
        let app = Arc::new(App { cfg, runs, store });
        tokio::spawn(evict_forever(app.clone()));
        crate::connections::serve(listener, router(app.clone()), shutdown_signal()).await;
        app.runs.stop_all();
        Ok(())
    })
}

async fn evict_forever(app: Shared) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        app.runs.evict();
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = ctrl_c.await;
            return;
        }
    };
    tokio::select! {
        _ = ctrl_c => {}
        _ = term.recv() => {}
    }
}

/// A response with a body and a content type (used for downloads).
pub fn file_response(bytes: Vec<u8>, ty: &str, download: Option<&str>) -> Response {
    let mut r = Response::new(Body::from(bytes));
    if let Ok(v) = HeaderValue::from_str(ty) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    // Saved reports are shown, never run: no scripts, no requests.
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
        ),
    );
    if let Some(name) = download {
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            r.headers_mut().insert(header::CONTENT_DISPOSITION, v);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_localhost_and_addresses_are_hosts() {
        for ok in ["localhost:7878", "127.0.0.1:7878", "[::1]:7878", "LOCALHOST", "10.0.0.5:80"] {
            assert!(host_allowed(ok), "{ok}");
        }
        for bad in ["evil.example:7878", "", "localhost.evil.example", "127.0.0.1.nip.io:7878"] {
            assert!(!host_allowed(bad), "{bad}");
        }
    }
}
