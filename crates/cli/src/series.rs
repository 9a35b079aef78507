//! The time-series files of a results folder: every flow sample and queue sample, as
//! CSV (`flows.csv`, `queue.csv`), as Parquet (`flows.parquet`, `queue.parquet`; the same
//! columns with their types, Snappy-compressed) or not at all (`--series
//! csv|parquet|none`). By default (`auto`) a run whose series would be large is written
//! as Parquet: a 10,000-flow run writes hundreds of megabytes of CSV.
//!
//! The Parquet files are written as the run goes, a row group at a time, so memory stays
//! bounded whatever the run's length.

use crate::parquet_file::{err as parquet_err, schema_and_properties, Field};
use parquet::basic::{Compression, Repetition, Type as Physical};
use parquet::data_type::{DoubleType, Int64Type};
use parquet::file::writer::SerializedFileWriter;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// How the time series are written (`--series`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SeriesFormat {
    /// CSV, or Parquet when the series would pass 2,000,000 rows (`AUTO_PARQUET_ROWS`).
    #[default]
    Auto,
    Csv,
    Parquet,
    /// No time series (summary, plots and report only).
    None,
}

/// Rows (flows x samples) above which `auto` writes Parquet: about 120 MB of CSV.
pub const AUTO_PARQUET_ROWS: u64 = 2_000_000;
/// Rows buffered per Parquet row group (a few megabytes per column).
const ROWS_PER_GROUP: usize = 1 << 17;
/// CSV text buffered before it is written to the file.
const CSV_BUFFER: usize = 1 << 18;

impl SeriesFormat {
    /// The format for a run of `rows` flow samples: `auto` decided.
    pub fn resolve(self, rows: u64) -> SeriesFormat {
        match self {
            SeriesFormat::Auto if rows > AUTO_PARQUET_ROWS => SeriesFormat::Parquet,
            SeriesFormat::Auto => SeriesFormat::Csv,
            other => other,
        }
    }
}

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Int,
    Double,
    /// A number that some rows lack (an algorithm's variable on another algorithm's flow).
    OptionalDouble,
}

/// One cell of a row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Double(f64),
    Missing,
}

/// One series file being written.
pub enum SeriesFile {
    Csv(CsvFile),
    Parquet(Box<ParquetSeries>),
    None,
}

impl SeriesFile {
    /// Creates `<stem>.csv` or `<stem>.parquet` in `dir` with these columns.
    pub fn create(
        dir: &Path,
        stem: &str,
        format: SeriesFormat,
        columns: &[(String, Kind)],
    ) -> Result<SeriesFile, String> {
        let create = |name: String| {
            File::create(dir.join(&name))
                .map_err(|e| format!("cannot create {}: {e}", dir.join(name).display()))
        };
        match format {
            SeriesFormat::Csv | SeriesFormat::Auto => {
                let file = create(format!("{stem}.csv"))?;
                let mut buf = Vec::with_capacity(CSV_BUFFER + 4096);
                let header: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
                buf.extend_from_slice(header.join(",").as_bytes());
                buf.push(b'\n');
                Ok(SeriesFile::Csv(CsvFile { file, buf }))
            }
            SeriesFormat::Parquet => {
                let file = create(format!("{stem}.parquet"))?;
                Ok(SeriesFile::Parquet(Box::new(ParquetSeries::new(file, stem, columns)?)))
            }
            SeriesFormat::None => Ok(SeriesFile::None),
        }
    }

    /// Adds a row of CSV text, which `write` appends (without newline) to the file's
    /// buffer; nothing for other forms, so the caller formats numbers only for CSV.
    pub fn text_row(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), String> {
        match self {
            SeriesFile::Csv(f) => f.row(write),
            _ => Ok(()),
        }
    }

    /// Adds a row of typed values (Parquet); nothing for other forms.
    pub fn values_row(&mut self, values: &[Value]) -> Result<(), String> {
        match self {
            SeriesFile::Parquet(p) => p.row(values),
            _ => Ok(()),
        }
    }

    /// Whether rows are kept as typed values.
    pub fn wants_values(&self) -> bool {
        matches!(self, SeriesFile::Parquet(_))
    }

    /// Flushes a CSV file so that what is written so far can be read; other forms
    /// cannot be read before they are finished.
    pub fn flush_csv(&mut self) -> Result<(), String> {
        match self {
            SeriesFile::Csv(f) => f.flush(),
            _ => Err("the time series are not being written as CSV".into()),
        }
    }

    /// Writes what is buffered and closes the file.
    pub fn finish(&mut self) -> Result<(), String> {
        match std::mem::replace(self, SeriesFile::None) {
            SeriesFile::Csv(mut f) => f.flush(),
            SeriesFile::Parquet(p) => p.finish(),
            SeriesFile::None => Ok(()),
        }
    }
}

/// A CSV file and the text not yet written to it. Rows are formatted straight into the
/// buffer, which goes to the file in large writes.
pub struct CsvFile {
    file: File,
    buf: Vec<u8>,
}

impl CsvFile {
    fn row(&mut self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), String> {
        write(&mut self.buf);
        self.buf.push(b'\n');
        if self.buf.len() >= CSV_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        let written = self.file.write_all(&self.buf);
        self.buf.clear();
        written.map_err(|e| format!("cannot write results: {e}"))
    }
}

/// A column's buffered values (and, for optional ones, which rows have one).
enum Column {
    Int(Vec<i64>),
    Double(Vec<f64>),
    Optional(Vec<f64>, Vec<i16>),
}

/// A Parquet file written a row group at a time.
pub struct ParquetSeries {
    writer: SerializedFileWriter<BufWriter<File>>,
    columns: Vec<Column>,
    rows: usize,
}

impl ParquetSeries {
    fn new(file: File, name: &str, columns: &[(String, Kind)]) -> Result<ParquetSeries, String> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, kind)| {
                let (physical, repetition) = match kind {
                    Kind::Int => (Physical::INT64, Repetition::REQUIRED),
                    Kind::Double => (Physical::DOUBLE, Repetition::REQUIRED),
                    Kind::OptionalDouble => (Physical::DOUBLE, Repetition::OPTIONAL),
                };
                (name.as_str(), physical, repetition, None)
            })
            .collect();
        let (schema, props) = schema_and_properties(name, &fields, Compression::SNAPPY, true)?;
        let writer =
            SerializedFileWriter::new(BufWriter::new(file), schema, props).map_err(parquet_err)?;
        let columns = columns
            .iter()
            .map(|(_, k)| match k {
                Kind::Int => Column::Int(Vec::new()),
                Kind::Double => Column::Double(Vec::new()),
                Kind::OptionalDouble => Column::Optional(Vec::new(), Vec::new()),
            })
            .collect();
        Ok(ParquetSeries { writer, columns, rows: 0 })
    }

    fn row(&mut self, values: &[Value]) -> Result<(), String> {
        for (col, v) in self.columns.iter_mut().zip(values) {
            match (col, *v) {
                (Column::Int(c), Value::Int(x)) => c.push(x),
                (Column::Double(c), Value::Double(x)) => c.push(x),
                (Column::Optional(c, defs), Value::Double(x)) => {
                    c.push(x);
                    defs.push(1);
                }
                (Column::Optional(_, defs), Value::Missing) => defs.push(0),
                (_, v) => return Err(format!("series: a value {v:?} of the wrong type (a bug)")),
            }
        }
        self.rows += 1;
        if self.rows >= ROWS_PER_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> Result<(), String> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group().map_err(parquet_err)?;
        let mut columns = self.columns.iter_mut();
        while let Some(mut out) = group.next_column().map_err(parquet_err)? {
            let written = match columns.next() {
                Some(Column::Int(v)) => out.typed::<Int64Type>().write_batch(v, None, None),
                Some(Column::Double(v)) => out.typed::<DoubleType>().write_batch(v, None, None),
                Some(Column::Optional(v, d)) => {
                    out.typed::<DoubleType>().write_batch(v, Some(d), None)
                }
                None => return Err("series: more Parquet columns than buffers (a bug)".into()),
            };
            written.map_err(parquet_err)?;
            out.close().map_err(parquet_err)?;
        }
        group.close().map_err(parquet_err)?;
        for c in &mut self.columns {
            match c {
                Column::Int(v) => v.clear(),
                Column::Double(v) => v.clear(),
                Column::Optional(v, d) => {
                    v.clear();
                    d.clear();
                }
            }
        }
        self.rows = 0;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<(), String> {
        self.flush()?;
        let mut out = self.writer.into_inner().map_err(parquet_err)?;
        out.flush().map_err(|e| format!("cannot write results: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    #[test]
    fn auto_is_csv_until_the_series_is_large() {
        assert_eq!(SeriesFormat::Auto.resolve(AUTO_PARQUET_ROWS), SeriesFormat::Csv);
        assert_eq!(SeriesFormat::Auto.resolve(AUTO_PARQUET_ROWS + 1), SeriesFormat::Parquet);
        assert_eq!(SeriesFormat::None.resolve(u64::MAX), SeriesFormat::None);
    }

    /// More text than the CSV buffer holds, flushed once in the middle (for a reader
    /// while the run goes on) and at the end: every row arrives whole and in order.
    #[test]
    fn csv_rows_arrive_whole_across_buffer_flushes() {
        let dir = std::env::temp_dir().join(format!("cclab-series-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let columns = [("a".to_string(), Kind::Int), ("b".to_string(), Kind::Int)];
        let mut f = SeriesFile::create(&dir, "t", SeriesFormat::Csv, &columns).unwrap();
        let n = CSV_BUFFER / 4;
        let mut want = String::from("a,b\n");
        for i in 0..n {
            f.text_row(|out| out.extend_from_slice(format!("{i},{}", i * 7).as_bytes())).unwrap();
            want.push_str(&format!("{i},{}\n", i * 7));
            if i == n / 2 {
                f.flush_csv().unwrap();
                let so_far = std::fs::read_to_string(dir.join("t.csv")).unwrap();
                assert!(want.starts_with(&so_far) && so_far.ends_with('\n'));
            }
        }
        f.finish().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("t.csv")).unwrap(), want);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// More rows than a row group holds, with an optional column: every value reads back.
    #[test]
    fn parquet_rows_read_back_across_row_groups() {
        let dir = std::env::temp_dir().join(format!("cclab-series-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let columns = [
            ("time_s".to_string(), Kind::Double),
            ("flow".to_string(), Kind::Int),
            ("cc_x".to_string(), Kind::OptionalDouble),
        ];
        let mut f = SeriesFile::create(&dir, "t", SeriesFormat::Parquet, &columns).unwrap();
        let n = ROWS_PER_GROUP + 10;
        for i in 0..n {
            let x = if i % 3 == 0 { Value::Missing } else { Value::Double(i as f64 / 2.0) };
            f.values_row(&[Value::Double(i as f64 * 0.01), Value::Int(i as i64 % 7), x]).unwrap();
        }
        f.finish().unwrap();
        let reader = SerializedFileReader::new(File::open(dir.join("t.parquet")).unwrap()).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 2);
        let rows: Vec<_> = reader.get_row_iter(None).unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), n);
        for i in [0, 1, 5, ROWS_PER_GROUP, n - 1] {
            let cols: Vec<&Field> = rows[i].get_column_iter().map(|(_, v)| v).collect();
            assert_eq!(cols[0], &Field::Double(i as f64 * 0.01));
            assert_eq!(cols[1], &Field::Long(i as i64 % 7));
            let want = if i % 3 == 0 { Field::Null } else { Field::Double(i as f64 / 2.0) };
            assert_eq!(cols[2], &want, "row {i}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
