//! `clflow compile` (being written).

use crate::output::Verbosity;
use clap::Args;

#[derive(Args)]
pub struct CompileArgs {}

pub fn run(_args: CompileArgs, _verbosity: Verbosity) -> crate::Result<()> {
    Err(crate::failure::Failure::analysis(" is being written"))
}
