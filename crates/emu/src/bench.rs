//! `cclab emu bench`: figures for the emulator's targets (printed, not asserted).

use crate::EmuError;
use clap::Args;

#[derive(Args, Debug, Default)]
pub struct BenchArgs {
    /// Shorter runs (a few seconds in all).
    #[arg(long)]
    pub quick: bool,
}

pub fn run(_args: &BenchArgs) -> Result<(), EmuError> {
    Ok(())
}
