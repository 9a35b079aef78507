//! The `cclab` command's modules as a library: the binary (src/main.rs) parses the
//! command line and calls them, and the Python package (python/) calls the same results
//! writer and sweep runner, so a run from Python writes the very files `cclab run` does.

pub mod algorithms;
pub mod bench;
pub mod compare;
pub mod fidelity;
pub mod fidelity_report;
pub mod flow_writer;
pub mod format;
pub mod huge_pages;
pub mod out_folder;
pub mod parquet_file;
pub mod plot;
pub mod progress;
pub mod reproduce;
pub mod reproduce_spec;
pub mod reproduce_testbed;
pub mod results;
pub mod run;
pub mod series;
pub mod serve;
pub mod sweep;
pub mod sweep_html;
pub mod sweep_table;
pub mod testbed;
