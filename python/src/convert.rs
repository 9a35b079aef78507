//! Python values as TOML, for `Scenario.from_dict`, `Scenario.set` and sweep grids: the
//! scenario crate then reads the text exactly as it reads a file or a `--set` value.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// How deep lists and dicts may nest. A scenario nests a few levels; a value that
/// contains itself would otherwise recurse until the stack overflows (a crash of the
/// interpreter, not an exception).
const MAX_DEPTH: usize = 64;

/// One value: str, bool, int, float, list/tuple or dict (nested as TOML allows).
pub fn value(v: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    value_at(v, "", 0)
}

/// `child` of the field at `path` (`flows[0]` + `rtt` = `flows[0].rtt`), as errors name it.
fn join(path: &str, child: &str) -> String {
    match (path.is_empty(), child.starts_with('[')) {
        (true, _) | (false, true) => format!("{path}{child}"),
        (false, false) => format!("{path}.{child}"),
    }
}

/// [`value`] of the field at `path`, which errors name (empty for a value on its own),
/// `depth` lists and dicts down.
fn value_at(v: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<toml::Value> {
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(toml::Value::String(s.extract()?));
    }
    // bool before int: Python's bool is an int.
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(toml::Value::Boolean(b.is_true()));
    }
    if let Ok(i) = v.downcast::<PyInt>() {
        return i.extract().map(toml::Value::Integer).map_err(|_| {
            PyTypeError::new_err(format!(
                "{}{i}: too large for a scenario (allowed: integers from -2^63 to 2^63-1)",
                at(path)
            ))
        });
    }
    if let Ok(f) = v.downcast::<PyFloat>() {
        return Ok(toml::Value::Float(f.value()));
    }
    let is_container = v.downcast::<PyList>().is_ok()
        || v.downcast::<PyTuple>().is_ok()
        || v.downcast::<PyDict>().is_ok();
    if is_container && depth >= MAX_DEPTH {
        return Err(too_deep(path));
    }
    let items = |it: &mut dyn Iterator<Item = Bound<'_, PyAny>>| {
        it.enumerate()
            .map(|(i, x)| value_at(&x, &join(path, &format!("[{i}]")), depth + 1))
            .collect::<PyResult<_>>()
            .map(toml::Value::Array)
    };
    if let Ok(l) = v.downcast::<PyList>() {
        return items(&mut l.iter());
    }
    if let Ok(t) = v.downcast::<PyTuple>() {
        return items(&mut t.iter());
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        return table(d, path, depth).map(toml::Value::Table);
    }
    Err(PyTypeError::new_err(format!(
        "{}a value of type {} cannot be written in a scenario (allowed: str, bool, int, float, list or dict)",
        at(path),
        v.get_type().name()?
    )))
}

/// `"path: "` before an error about the field at `path`, nothing for a value on its own.
fn at(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}: ")
    }
}

/// The error for lists and dicts nested deeper than [`MAX_DEPTH`] at `path`.
fn too_deep(path: &str) -> PyErr {
    let shown: String = path.chars().take(120).collect();
    let more = if shown.len() < path.len() { "..." } else { "" };
    PyValueError::new_err(format!(
        "{shown}{more}: lists and dicts nested more than {MAX_DEPTH} deep (a scenario nests a few levels; does the value contain itself?)"
    ))
}

fn table(d: &Bound<'_, PyDict>, path: &str, depth: usize) -> PyResult<toml::value::Table> {
    let mut t = toml::value::Table::new();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "{}the key {} is of type {}; scenario keys are strings",
                at(path),
                k.repr().map(|r| r.to_string()).unwrap_or_default(),
                k.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            ))
        })?;
        if v.is_none() {
            continue; // None leaves the field out (its default)
        }
        let field = join(path, &key);
        t.insert(key, value_at(&v, &field, depth + 1)?);
    }
    Ok(t)
}

/// A dict as a TOML document.
pub fn document(d: &Bound<'_, PyDict>) -> PyResult<String> {
    toml::to_string(&toml::Value::Table(table(d, "", 0)?))
        .map_err(|e| PyTypeError::new_err(format!("cannot write this dict as TOML: {e}")))
}
