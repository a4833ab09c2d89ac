//! Subcommands whose stages have not landed yet. They accept any arguments so
//! that scripts written against the final interface get a clear answer.

use crate::failure::Failure;
use clap::Args;

/// (This stage has not landed yet.)
#[derive(Args)]
pub struct LaterArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    rest: Vec<String>,
}

pub fn not_yet(command: &str, stage: &str) -> crate::Result<()> {
    Err(
        Failure::analysis(format!("`clflow {command}` is not yet implemented")).with_hint(format!(
            "{stage} is still being built; `clflow compile` and `clflow count` work today"
        )),
    )
}
