//! One module per subcommand. Each owns its clap arguments and its `run`.

mod bench;
mod check;
mod compile;
mod count;
mod devices;
mod history;
mod later;
mod report;

use crate::output::Verbosity;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum Command {
    Compile(compile::CompileArgs),
    Count(count::CountArgs),
    Devices(devices::DevicesArgs),
    Bench(bench::BenchArgs),
    Run(later::LaterArgs),
    Analyze(later::LaterArgs),
    Report(report::ReportArgs),
    Check(check::CheckArgs),
    History(history::HistoryArgs),
}

pub fn dispatch(command: Command, verbosity: Verbosity) -> crate::Result<()> {
    match command {
        Command::Compile(args) => compile::run(args, verbosity),
        Command::Count(args) => count::run(args, verbosity),
        Command::Devices(args) => devices::run(args, verbosity),
        Command::Bench(args) => bench::run(args, verbosity),
        Command::Run(_) => later::not_yet("run", "kernel runs on devices"),
        Command::Analyze(_) => later::not_yet("analyze", "the full analysis"),
        Command::Report(args) => report::run(args, verbosity),
        Command::Check(args) => check::run(args, verbosity),
        Command::History(args) => history::run(args, verbosity),
    }
}
