//! The one error an API call answers with: an HTTP status and a JSON body
//! `{"error": "<one line>", ...}`. Scenario errors carry the CLI's fields (file, line,
//! field, value, message) so the page can put the message beside the field.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use cclab_scenario::ScenarioError;
use cclab_sim::SimError;
use serde_json::{json, Value};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Value,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, body: json!({ "error": message.into() }) }
    }
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }
    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }
    /// 507: the results folder is at its limit (`--max-disk-mb`).
    pub fn no_room(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INSUFFICIENT_STORAGE, message)
    }
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// A 400 naming a field: `{"error": "<field>: <message>", "field": ...}`.
    pub fn field(field: &str, message: impl Into<String>) -> ApiError {
        let message = message.into();
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: json!({ "error": format!("{field}: {message}"), "field": field, "message": message }),
        }
    }

    /// A bad scenario, worded exactly as `cclab run` prints it (without "error: ").
    pub fn scenario(e: &ScenarioError) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: json!({
                "error": e.to_string(),
                "file": e.file,
                "line": e.line,
                // A syntax error is in no field: null, as a missing value is.
                "field": (!e.field.is_empty()).then_some(&e.field),
                "value": e.value,
                "message": e.message,
            }),
        }
    }

    /// A 400 from the simulator's checks, worded as `cclab run` prints it (after `file: `
    /// when one is given), with the field, the value at fault and the message apart.
    pub fn sim(e: &SimError, file: Option<&str>) -> ApiError {
        let error = match file {
            Some(f) => format!("{f}: {e}"),
            None => e.to_string(),
        };
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: json!({ "error": error, "field": e.field, "value": e.value, "message": e.message }),
        }
    }

    /// Adds a key to the body (e.g. the parsed document beside a scenario error).
    pub fn with(mut self, key: &str, value: Value) -> ApiError {
        if let Value::Object(m) = &mut self.body {
            m.insert(key.to_string(), value);
        }
        self
    }

    pub fn message(&self) -> &str {
        self.body["error"].as_str().unwrap_or("")
    }
}

/// The longest text an error's fields carry: messages quote the value at fault, and a
/// request can send a value of a megabyte (lists the server makes, such as the known
/// traces, stay well under it).
const MAX_FIELD_CHARS: usize = 2000;

/// `s` cut to [`MAX_FIELD_CHARS`] characters, saying how much was left out.
fn clipped(s: &str) -> Option<String> {
    let n = s.chars().count();
    (n > MAX_FIELD_CHARS).then(|| {
        let head: String = s.chars().take(MAX_FIELD_CHARS).collect();
        format!("{head}... ({} more characters)", n - MAX_FIELD_CHARS)
    })
}

impl IntoResponse for ApiError {
    fn into_response(mut self) -> Response {
        if let Value::Object(m) = &mut self.body {
            for v in m.values_mut() {
                if let Some(short) = v.as_str().and_then(clipped) {
                    *v = Value::String(short);
                }
            }
        }
        (self.status, axum::Json(self.body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_value_is_clipped_in_every_text_field_and_says_so() {
        let long = "x".repeat(600_000);
        let e = ApiError::field("file", format!("{long}: not a file name"));
        let r = e.into_response();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let body = futures_body(r);
        let v: Value = serde_json::from_slice(&body).unwrap();
        for key in ["error", "message"] {
            let s = v[key].as_str().unwrap();
            assert!(s.len() < 2100 && s.ends_with("more characters)"), "{key}: {}", s.len());
        }
        assert_eq!(v["field"], "file");
    }

    fn futures_body(r: Response) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async { axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap().to_vec() })
    }
}
