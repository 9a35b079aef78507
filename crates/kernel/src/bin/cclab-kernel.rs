//! Stand-alone `cclab kernel` for trying the subcommand before it is wired into the main
//! binary: `cargo run -p cclab-kernel --bin cclab-kernel -- list`.

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
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
