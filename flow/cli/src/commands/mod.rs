//! One module per subcommand. Each owns its clap arguments and its `run`.

mod compile;
mod count;
mod later;

use crate::output::Verbosity;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum Command {
    Compile(compile::CompileArgs),
    Count(count::CountArgs),
    Devices(later::LaterArgs),
    Bench(later::LaterArgs),
    Run(later::LaterArgs),
    Analyze(later::LaterArgs),
    Report(later::LaterArgs),
    Check(later::LaterArgs),
}

pub fn dispatch(command: Command, verbosity: Verbosity) -> crate::Result<()> {
    match command {
        Command::Compile(args) => compile::run(args, verbosity),
        Command::Count(args) => count::run(args, verbosity),
        Command::Devices(_) => later::not_yet("devices", "device analysis"),
        Command::Bench(_) => later::not_yet("bench", "device analysis"),
        Command::Run(_) => later::not_yet("run", "kernel runs on devices"),
        Command::Analyze(_) => later::not_yet("analyze", "the full analysis"),
        Command::Report(_) => later::not_yet("report", "reports"),
        Command::Check(_) => later::not_yet("check", "regression checking"),
    }
}
