//! Python values as TOML, for `Scenario.from_dict`, `Scenario.set` and sweep grids: the
//! scenario crate then reads the text exactly as it reads a file or a `--set` value.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// One value: str, bool, int, float, list/tuple or dict (nested as TOML allows).
pub fn value(v: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(toml::Value::String(s.extract()?));
    }
    // bool before int: Python's bool is an int.
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(toml::Value::Boolean(b.is_true()));
    }
    if let Ok(i) = v.downcast::<PyInt>() {
        return Ok(toml::Value::Integer(i.extract()?));
    }
    if let Ok(f) = v.downcast::<PyFloat>() {
        return Ok(toml::Value::Float(f.value()));
    }
    if let Ok(l) = v.downcast::<PyList>() {
        return l.iter().map(|x| value(&x)).collect::<PyResult<_>>().map(toml::Value::Array);
    }
    if let Ok(t) = v.downcast::<PyTuple>() {
        return t.iter().map(|x| value(&x)).collect::<PyResult<_>>().map(toml::Value::Array);
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        return table(d).map(toml::Value::Table);
    }
    Err(PyTypeError::new_err(format!(
        "{} cannot be written in a scenario (use str, bool, int, float, list or dict)",
        v.get_type().name()?
    )))
}

fn table(d: &Bound<'_, PyDict>) -> PyResult<toml::value::Table> {
    let mut t = toml::value::Table::new();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            PyTypeError::new_err(format!("scenario keys are strings, not {}", k.get_type()))
        })?;
        if v.is_none() {
            continue; // None leaves the field out (its default)
        }
        t.insert(key, value(&v)?);
    }
    Ok(t)
}

/// A dict as a TOML document.
pub fn document(d: &Bound<'_, PyDict>) -> PyResult<String> {
    toml::to_string(&toml::Value::Table(table(d)?))
        .map_err(|e| PyTypeError::new_err(format!("cannot write this dict as TOML: {e}")))
}
