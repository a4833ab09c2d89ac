//! Test fixtures: a manifest directory with its kernel and input files.

use crate::{Manifest, ManifestError};
use std::path::PathBuf;

#[derive(Debug)]
pub(crate) struct Fixture {
    pub dir: tempfile::TempDir,
}

impl Fixture {
    /// A directory holding `k.cl` (the kernel source manifests point at).
    pub(crate) fn new() -> Self {
        let fixture = Fixture { dir: tempfile::tempdir().unwrap() };
        fixture.file(
            "k.cl",
            b"__kernel void k(__global uint* out) { out[0] = 1; }\n",
        );
        fixture
    }

    pub(crate) fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    pub(crate) fn load(&self, name: &str, text: &str) -> Result<Manifest, ManifestError> {
        Manifest::load(self.file(name, text.as_bytes()))
    }

    /// The error loading `text` gives, as the user sees it, with the
    /// temporary directory shown as `DIR`.
    pub(crate) fn load_error(&self, name: &str, text: &str) -> String {
        let error = self
            .load(name, text)
            .expect_err("the manifest should not load");
        error
            .to_string()
            .replace(&self.dir.path().display().to_string(), "DIR")
    }
}
