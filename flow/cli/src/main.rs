//! `clflow`: a thin command line over the stage crates.
//!
//! Each subcommand lives in `commands/`; it parses nothing itself (clap does)
//! and computes nothing itself (the stage crates do): it wires a stage to the
//! terminal and turns the stage's errors into one line and an exit status.

mod commands;
mod failure;
mod output;
mod terminal;

use clap::Parser;
use commands::Command;
use failure::Failure;
use output::Verbosity;

const ABOUT: &str = "How an OpenCL kernel fares on every accelerator at hand: work W, memory \
traffic Q, operational intensity I = W/Q, time, power and energy, against each device's roofline.";

const AFTER_HELP: &str = "\
The stages, in the order the main job runs them:
  compile   OpenCL C -> SPIR-V (clang-15 + llvm-spirv-15), validated and cached
  count     interpret the SPIR-V on the manifest's NDRange: operations W, traffic Q
  devices   the OpenCL devices at hand and the datasheet profiles they match
  bench     measure a device's peak throughput, bandwidth and power
  run       time the kernel on a device and sample its power
  analyze   all of the above for one or more kernels, then the report
  report    roofline, performance-per-watt and energy plots, CSV, JSON, HTML
  check     compare counts and timings with a baseline, for CI
  history   the trend of a kernel's counts and timings across runs
  predict   the kernel's time on a device by five models, beside the measured one
  split     PerDome bounds for splitting the work between two devices (C+G)
  capture   record an unmodified application's kernel launches as manifests

A kernel launch is described by a manifest (TOML, or an Oclgrind .sim file); see
kernels/*/ for examples. Exit status: 0 success, 1 the analysis failed, 2 usage
or input error.";

#[derive(Parser)]
#[command(name = "clflow", version, about = ABOUT, after_help = AFTER_HELP)]
struct Cli {
    /// Print only results and errors.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Say what each stage does (the commands it runs, the files it reads).
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

fn main() -> std::process::ExitCode {
    failure::install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return failure::clap_exit(err),
    };
    let verbosity = Verbosity::from_flags(cli.quiet, cli.verbose);
    match commands::dispatch(cli.command, verbosity) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(failure) => failure::report(&failure),
    }
}

/// What every command returns: done, or one failure to report.
pub(crate) type Result<T> = std::result::Result<T, Failure>;
