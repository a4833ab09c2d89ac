//! What the end-to-end tests share: the repository, `clflow` run from the
//! repository root with a private data directory and history store.

// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

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

/// Gives `data_dir` device 0's quick profile (peaks and costs), measured
/// once per test run: tests that need a profile but do not test how it is
/// measured share one instead of each benchmarking the device.
pub fn with_quick_profile(data_dir: &Path) {
    let (from, to) = (quick_profile().join("measured"), data_dir.join("measured"));
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The data directory holding this run's quick profile: one per nextest
/// run (whose test processes wait on a lock while the first measures), one
/// per process under `cargo test`.
fn quick_profile() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let run = std::env::var("NEXTEST_RUN_ID")
            .unwrap_or_else(|_| format!("process-{}", std::process::id()));
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("quick-profiles");
        std::fs::create_dir_all(&root).unwrap();
        let lock = std::fs::File::create(root.join("lock")).unwrap();
        lock.lock().unwrap();
        let dir = root.join(run);
        if !dir.join("measured").is_dir() {
            let partial = dir.with_extension("partial");
            let _ = std::fs::remove_dir_all(&partial);
            std::fs::create_dir_all(&partial).unwrap();
            let out = clflow(&partial, &["-q", "bench", "--device", "0", "--quick"]);
            assert!(out.status.success(), "{}", text(&out.stderr));
            std::fs::rename(&partial, &dir).unwrap();
        }
        dir
    })
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes kernel `name` (`NAME.cl`, `source`) and its manifest
/// (`NAME.toml`: the kernel and `launch`, its sizes and `[[arg]]` tables):
/// the manifest's path.
pub fn kernel_in(dir: &Path, name: &str, source: &str, launch: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{name}.cl")), source).unwrap();
    let manifest = dir.join(format!("{name}.toml"));
    let header = format!("source = \"{name}.cl\"\nkernel = \"{name}\"\n");
    std::fs::write(&manifest, header + launch).unwrap();
    manifest
}

/// Writes kernel `name` (`NAME.cl`, `source`) and a manifest launching it
/// over 256 work-items in groups of 64 with the `[[arg]]` tables `args` and
/// a last `uint` argument `bad` (which variant runs); returns the
/// manifest's path, `NAME-BAD.toml`.
pub fn variant(dir: &Path, name: &str, source: &str, args: &str, bad: u32) -> String {
    std::fs::write(dir.join(format!("{name}.cl")), source).unwrap();
    let path = dir.join(format!("{name}-{bad}.toml"));
    std::fs::write(
        &path,
        format!(
            "source = \"{name}.cl\"\nkernel = \"{name}\"\nglobal_size = [256]\nlocal_size = [64]\n\
             {args}[[arg]]\ntype = \"uint\"\nvalue = {bad}\n"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}
