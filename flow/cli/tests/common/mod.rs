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
    Clflow::new().data(data_dir).run(args)
}

/// The binary run as a user runs it, and the one way every test runs it:
/// from the repository root, with the repository's datasheet profiles and a
/// data directory (measured profiles) and history store of its own, a
/// temporary one unless the test names one, so that no test reads or
/// writes the user's. The compile cache is shared.
pub struct Clflow {
    command: Command,
    /// The temporary data directory, kept while the command may run.
    temporary: Option<tempfile::TempDir>,
}

impl Clflow {
    pub fn new() -> Clflow {
        let data = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_clflow"));
        command.current_dir(repo()).env_remove("CLFLOW_DEVICES_DIR");
        let clflow = Clflow { command, temporary: None }.data(data.path());
        Clflow { temporary: Some(data), ..clflow }
    }

    /// Measured profiles in `dir`, the history in `dir/history.db`.
    pub fn data(mut self, dir: &Path) -> Clflow {
        self.command
            .env("CLFLOW_DATA_DIR", dir)
            .env("CLFLOW_STORE", dir.join("history.db"));
        self
    }

    /// The history in `path`.
    pub fn store(mut self, path: &Path) -> Clflow {
        self.command.env("CLFLOW_STORE", path);
        self
    }

    /// Run in `dir`, so that relative paths read as the user typed them.
    pub fn dir(mut self, dir: &Path) -> Clflow {
        self.command.current_dir(dir);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Clflow {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Clflow {
        self.command.env_remove(key);
        self
    }

    /// The command, to spawn or to give standard input; the data directory
    /// lives as long as this `Clflow`.
    pub fn command(&mut self, args: &[&str]) -> &mut Command {
        self.command.args(args)
    }

    pub fn run(mut self, args: &[&str]) -> Output {
        self.command.args(args).output().expect("clflow runs")
    }

    /// What a run that must succeed printed on stdout.
    pub fn stdout(self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    }

    /// The JSON a run that must succeed printed on stdout.
    pub fn json(self, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.stdout(args)).expect("JSON on stdout")
    }
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
