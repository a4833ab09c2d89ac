//! One module per subcommand. Each owns its clap arguments and its `run`.

mod analyze;
pub(crate) mod bench;
mod capture;
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
    Capture(capture::CaptureArgs),
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

/// A device selector flag's value: an index in `clflow devices`, a part of
/// a device's name, or a profile's name; never empty.
pub fn selector(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(
            "give a device index or a part of a device's name (see `clflow devices`)".into(),
        );
    }
    Ok(text.to_string())
}

/// `--line-bytes`: a cache line's size, a power of two.
pub fn line_size(text: &str) -> Result<u64, String> {
    let bytes = text
        .parse::<u64>()
        .map_err(|_| format!("`{text}` is not a number of bytes (e.g. 64)"))?;
    clflow_core::numbers::line_size(bytes)
}

/// The most worker threads a count may ask for: far beyond any machine's
/// cores, and well below what the system will spawn.
const MAX_THREADS: usize = 256;

/// `--threads`: 1 to [`MAX_THREADS`].
pub fn thread_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!("give a number of threads from 1 to {MAX_THREADS}")),
    }
}

pub fn dispatch(command: Command, verbosity: Verbosity) -> crate::Result<()> {
    match command {
        Command::Capture(args) => capture::run(args, verbosity),
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

/// `--build-options` for commands that take manifests.
#[derive(clap::Args)]
pub struct ManifestBuildOptions {
    /// OpenCL build options added to each manifest's own (a .sim file has no place for
    /// them): -D NAME[=VALUE], -I DIR, -cl-std=CLx.y, the -cl-* options, -w, -Werror.
    #[arg(
        long = "build-options",
        value_name = "OPTIONS",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub options: String,
}
