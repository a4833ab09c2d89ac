//! Writes the lookup3 case's inputs: `--keys` random keys of 0 to 60 random
//! bytes, the same for the same `--seed` on every machine, as the raw
//! little-endian `uint` files the lookup3 manifests read (`words.bin`,
//! `offsets.bin`, `lengths.bin`).

use clap::Parser;
use clflow_corpus::keys::write_key_files;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    about = "Write the lookup3 case's keys (0-60 random bytes each), deterministically from a seed",
    after_help = "Examples:\n  \
        gen-lookup3-keys --keys 4096 --seed 1 --out kernels/lookup3/data\n  \
        gen-lookup3-keys --keys 8388608 --seed 1 --out kernels/lookup3/data/paper"
)]
struct Cli {
    /// How many keys (work-items of the lookup3 kernel).
    #[arg(long)]
    keys: u64,
    /// The seed: the same seed always gives the same keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The folder to write words.bin, offsets.bin and lengths.bin to (created if missing).
    #[arg(long)]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match write_key_files(&cli.out, cli.seed, cli.keys) {
        Ok(written) => {
            println!(
                "wrote {} keys ({} key bytes, {} words) for seed {} to {}",
                written.keys,
                written.key_bytes,
                written.words,
                cli.seed,
                cli.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("gen-lookup3-keys: error: {error}");
            ExitCode::FAILURE
        }
    }
}
