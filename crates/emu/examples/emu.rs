//! Stand-alone `cclab emu` for development: `cargo run -p cclab-emu --example emu -- ...`.
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    emu: cclab_emu::cli::EmuArgs,
}

fn main() {
    let cli = Cli::parse();
    match cclab_emu::cli::run(&cli.emu) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
