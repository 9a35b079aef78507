//! Writes a [`Table`] as an Apache Parquet file (sweep.parquet): one row group, plain
//! encoding, no compression, so any Parquet reader (pyarrow, pandas, DuckDB, Spark)
//! opens it. Column types follow the cells: whole numbers are INT64, other numbers
//! DOUBLE, anything with text a UTF-8 string; empty cells are nulls.

use crate::sweep_table::{Cell, Table};
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

/// What a column holds, decided from all its cells.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Int,
    Double,
    Text,
}

/// The column's kind; in the swept-value columns (`numeric_text`), text that reads as
/// a number counts as one (`bottleneck.loss = 0.01` is a number, `"10ms"` is text).
fn kind_of(table: &Table, c: usize, numeric_text: bool) -> Kind {
    let mut kind = Kind::Int;
    for row in &table.rows {
        let text = match &row[c] {
            Cell::Empty => continue,
            Cell::Num(s) => s,
            Cell::Text(s) if numeric_text && s.parse::<f64>().is_ok_and(f64::is_finite) => s,
            Cell::Text(_) => return Kind::Text,
        };
        if kind == Kind::Int && text.parse::<i64>().is_err() {
            kind = Kind::Double;
        }
    }
    kind
}

fn text_of(cell: &Cell) -> Option<&str> {
    match cell {
        Cell::Num(s) | Cell::Text(s) => Some(s),
        Cell::Empty => None,
    }
}

/// A Parquet error as the results' writers report it.
pub(crate) fn err(e: parquet::errors::ParquetError) -> String {
    format!("cannot write Parquet: {e}")
}

/// One column of a schema: name, physical type, required or optional, logical type.
pub(crate) type Field<'a> = (&'a str, Physical, Repetition, Option<LogicalType>);

/// The schema (`name`, a flat list of columns) and writer properties every cclab Parquet
/// file uses: `compression`, and the writer's name and version in `created_by`.
pub(crate) fn schema_and_properties(
    name: &str,
    fields: &[Field],
    compression: Compression,
    dictionary: bool,
) -> Result<(Arc<Type>, Arc<WriterProperties>), String> {
    let fields = fields
        .iter()
        .map(|(column, physical, repetition, logical)| {
            Type::primitive_type_builder(column, *physical)
                .with_repetition(*repetition)
                .with_logical_type(logical.clone())
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let schema = Arc::new(Type::group_type_builder(name).with_fields(fields).build().map_err(err)?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(compression)
            .set_dictionary_enabled(dictionary)
            .set_created_by(format!("cclab {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    Ok((schema, props))
}

/// The table as Parquet bytes.
pub fn write(table: &Table) -> Result<Vec<u8>, String> {
    let kinds: Vec<Kind> = (0..table.columns.len())
        .map(|c| kind_of(table, c, (3..table.key_columns).contains(&c)))
        .collect();
    let fields: Vec<Field> = table
        .columns
        .iter()
        .zip(&kinds)
        .map(|(name, kind)| {
            let physical = match kind {
                Kind::Int => Physical::INT64,
                Kind::Double => Physical::DOUBLE,
                Kind::Text => Physical::BYTE_ARRAY,
            };
            let logical = (*kind == Kind::Text).then_some(LogicalType::String);
            (name.as_str(), physical, Repetition::OPTIONAL, logical)
        })
        .collect();
    let (schema, props) =
        schema_and_properties("sweep", &fields, Compression::UNCOMPRESSED, false)?;
    let mut buf = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut buf, schema, props).map_err(err)?;
    let mut group = writer.next_row_group().map_err(err)?;
    let mut c = 0;
    while let Some(mut col) = group.next_column().map_err(err)? {
        let cells: Vec<Option<&str>> = table.rows.iter().map(|r| text_of(&r[c])).collect();
        let defs: Vec<i16> = cells.iter().map(|v| v.is_some() as i16).collect();
        let present = cells.iter().flatten();
        match kinds[c] {
            Kind::Int => {
                let v: Vec<i64> = present.map(|s| s.parse().unwrap_or(0)).collect();
                col.typed::<Int64Type>().write_batch(&v, Some(&defs), None).map_err(err)?;
            }
            Kind::Double => {
                let v: Vec<f64> = present.map(|s| s.parse().unwrap_or(f64::NAN)).collect();
                col.typed::<DoubleType>().write_batch(&v, Some(&defs), None).map_err(err)?;
            }
            Kind::Text => {
                let v: Vec<ByteArray> = present.map(|s| ByteArray::from(*s)).collect();
                col.typed::<ByteArrayType>().write_batch(&v, Some(&defs), None).map_err(err)?;
            }
        }
        col.close().map_err(err)?;
        c += 1;
    }
    group.close().map_err(err)?;
    writer.close().map_err(err)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_take_the_narrowest_kind_that_fits() {
        let t = Table {
            columns: vec!["run".into(), "point".into(), "seed".into(), "loss".into(), "x".into()],
            rows: vec![
                vec![
                    Cell::Num("0".into()),
                    Cell::Num("0".into()),
                    Cell::Num("1".into()),
                    Cell::Text("0.01".into()),
                    Cell::Num("2".into()),
                ],
                vec![
                    Cell::Num("1".into()),
                    Cell::Num("1".into()),
                    Cell::Num("1".into()),
                    Cell::Text("10ms".into()),
                    Cell::Empty,
                ],
            ],
            key_columns: 4,
            first_flow_column: 4,
        };
        assert_eq!(kind_of(&t, 0, false), Kind::Int);
        assert_eq!(kind_of(&t, 3, true), Kind::Text);
        assert_eq!(kind_of(&t, 4, false), Kind::Int);
        let bytes = write(&t).unwrap();
        // A Parquet file starts and ends with the magic "PAR1".
        assert_eq!(&bytes[..4], b"PAR1");
        assert_eq!(&bytes[bytes.len() - 4..], b"PAR1");
        assert_eq!(bytes, write(&t).unwrap());
    }
}
