//! `clflow count` (being written).

use crate::output::Verbosity;
use clap::Args;

#[derive(Args)]
pub struct CountArgs {}

pub fn run(_args: CountArgs, _verbosity: Verbosity) -> crate::Result<()> {
    Err(crate::failure::Failure::analysis(" is being written"))
}
