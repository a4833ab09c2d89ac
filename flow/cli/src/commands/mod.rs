//! One module per subcommand. Each owns its clap arguments and its `run`.

mod analyze;
pub(crate) mod bench;
mod check;
mod compile;
mod count;
mod devices;
mod history;
pub(crate) mod predict;
mod report;
pub(crate) mod run;
mod split;

use crate::output::Verbosity;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum Command {
    Compile(compile::CompileArgs),
    Count(count::CountArgs),
    Devices(devices::DevicesArgs),
    Bench(bench::BenchArgs),
    Run(run::RunArgs),
    Analyze(analyze::AnalyzeArgs),
    Report(report::ReportArgs),
    Check(check::CheckArgs),
    History(history::HistoryArgs),
    Split(split::SplitArgs),
    Predict(predict::PredictArgs),
}

pub fn dispatch(command: Command, verbosity: Verbosity) -> crate::Result<()> {
    match command {
        Command::Compile(args) => compile::run(args, verbosity),
        Command::Count(args) => count::run(args, verbosity),
        Command::Devices(args) => devices::run(args, verbosity),
        Command::Bench(args) => bench::run(args, verbosity),
        Command::Run(args) => run::run(args, verbosity),
        Command::Analyze(args) => analyze::run(args, verbosity),
        Command::Report(args) => report::run(args, verbosity),
        Command::Check(args) => check::run(args, verbosity),
        Command::History(args) => history::run(args, verbosity),
        Command::Predict(args) => predict::run(args, verbosity),
        Command::Split(args) => split::run(args, verbosity),
    }
}
