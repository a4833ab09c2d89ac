//! What the device-facing end-to-end tests share: `clflow` run from the
//! repository root with a private data directory and history store.

// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `clflow <args>` in the repository root; measured profiles and history go
/// to `data_dir`, so tests never touch the user's.
pub fn clflow(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clflow"))
        .args(args)
        .current_dir(repo())
        .env("CLFLOW_DATA_DIR", data_dir)
        .env("CLFLOW_STORE", data_dir.join("history.db"))
        .output()
        .unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
