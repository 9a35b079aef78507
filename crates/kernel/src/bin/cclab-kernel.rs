//! `cclab kernel` as a binary of this crate alone, so the live tests can run it as a child
//! process without building the whole `cclab` binary: `cargo run -p cclab-kernel -- list`.

use clap::Parser;

#[derive(Parser)]
#[command(name = "cclab-kernel")]
struct Cli {
    #[command(flatten)]
    args: cclab_kernel::cli::Args,
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = cclab_kernel::cli::run(cli.args) {
        cclab_units::errln!("error: {e}");
        std::process::exit(1);
    }
}
