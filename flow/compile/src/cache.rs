//! The compile cache: modules already built, keyed by everything that
//! decides their bytes.
//!
//! An entry is one file, `<key>.spv-entry`: a text header naming the format,
//! how the module was built and the SHA-256 of the module, then the module.
//! Entries are written to a temporary file in the same directory and renamed
//! into place, so a reader never sees half an entry; an entry whose checksum
//! or SPIR-V does not hold is treated as absent and rebuilt.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bumped whenever the pipeline changes what it produces, so that entries
/// built by an older clflow are never served.
pub const PIPELINE_VERSION: &str = "clflow-compile/15";

const ENTRY_FORMAT: &str = "clflow-spirv-cache 1";

/// The inputs that decide a compiled module's bytes.
pub struct KeyInputs<'a> {
    /// The preprocessed source, so that `#include`d headers count.
    pub preprocessed: &'a [u8],
    /// The clang arguments derived from the build options.
    pub options: &'a [String],
    /// Each tool's `--version` output.
    pub tool_versions: &'a [String],
}

/// The cache key: a hex SHA-256 over the pipeline version and the inputs,
/// each length-prefixed so that no two input sets hash alike by
/// concatenation.
pub fn key(inputs: &KeyInputs) -> String {
    let mut hasher = Sha256::new();
    let mut field = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(PIPELINE_VERSION.as_bytes());
    field(inputs.preprocessed);
    field(&(inputs.options.len() as u64).to_le_bytes());
    for option in inputs.options {
        field(option.as_bytes());
    }
    field(&(inputs.tool_versions.len() as u64).to_le_bytes());
    for version in inputs.tool_versions {
        field(version.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// The cache directory: `CLFLOW_CACHE_DIR`, else `$XDG_CACHE_HOME/clflow`,
/// else `~/.cache/clflow`; `None` where none can be named.
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("CLFLOW_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|dir| dir.join("clflow")))
        .or_else(|| var("HOME").map(|home| home.join(".cache").join("clflow")))
}

/// A cached module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub spirv: Vec<u8>,
    pub fallback_used: bool,
}

#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    pub fn new(dir: PathBuf) -> Self {
        Cache { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds the entry under `key`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.spv-entry"))
    }

    /// The entry under `key`, if there is a sound one.
    pub fn get(&self, key: &str) -> Option<Entry> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        decode(&bytes)
    }

    /// Stores an entry atomically. Failing to cache is not failing to
    /// compile, so the error comes back for the caller to mention.
    pub fn put(&self, key: &str, entry: &Entry) -> Result<(), String> {
        let describe = |e: std::io::Error| {
            format!(
                "cannot write to the compile cache {}: {e}",
                self.dir.display()
            )
        };
        std::fs::create_dir_all(&self.dir).map_err(describe)?;
        let mut file = tempfile::NamedTempFile::new_in(&self.dir).map_err(describe)?;
        file.write_all(&encode(entry)).map_err(describe)?;
        file.as_file().sync_all().map_err(describe)?;
        file.persist(self.path(key))
            .map_err(|e| describe(e.error))?;
        Ok(())
    }
}

fn encode(entry: &Entry) -> Vec<u8> {
    let header = format!(
        "{ENTRY_FORMAT}\nfallback {}\nsha256 {}\n",
        u8::from(entry.fallback_used),
        hex::encode(Sha256::digest(&entry.spirv))
    );
    let mut bytes = header.into_bytes();
    bytes.extend_from_slice(&entry.spirv);
    bytes
}

fn decode(bytes: &[u8]) -> Option<Entry> {
    let mut rest = bytes;
    let mut line = || {
        let end = rest.iter().position(|&b| b == b'\n')?;
        let text = std::str::from_utf8(&rest[..end]).ok()?;
        rest = &rest[end + 1..];
        Some(text)
    };
    if line()? != ENTRY_FORMAT {
        return None;
    }
    let fallback_used = match line()?.strip_prefix("fallback ")? {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    let checksum = line()?.strip_prefix("sha256 ")?.to_string();
    let spirv = rest.to_vec();
    if hex::encode(Sha256::digest(&spirv)) != checksum || clflow_spirv::load(&spirv).is_err() {
        return None;
    }
    Some(Entry { spirv, fallback_used })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs_key(preprocessed: &str, options: &[&str], versions: &[&str]) -> String {
        let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        let versions: Vec<String> = versions.iter().map(|s| s.to_string()).collect();
        key(&KeyInputs {
            preprocessed: preprocessed.as_bytes(),
            options: &options,
            tool_versions: &versions,
        })
    }

    #[test]
    fn key_follows_each_input_and_nothing_else() {
        let base = inputs_key("kernel", &["-cl-std=CL1.2"], &["clang 15"]);
        assert_eq!(base.len(), 64);
        assert_eq!(
            base,
            inputs_key("kernel", &["-cl-std=CL1.2"], &["clang 15"])
        );
        assert_ne!(
            base,
            inputs_key("kernel ", &["-cl-std=CL1.2"], &["clang 15"])
        );
        assert_ne!(
            base,
            inputs_key("kernel", &["-cl-std=CL2.0"], &["clang 15"])
        );
        assert_ne!(
            base,
            inputs_key("kernel", &["-cl-std=CL1.2"], &["clang 16"])
        );
        // Moving bytes between fields changes the key too.
        assert_ne!(
            inputs_key("k", &["-DA", "B"], &[]),
            inputs_key("k", &["-DAB"], &[])
        );
    }

    fn module() -> Vec<u8> {
        // The smallest module rspirv loads: a header and OpMemoryModel.
        [0x0723_0203u32, 0x0001_0000, 0, 1, 0, 0x0003_000e, 2, 2]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }

    #[test]
    fn entries_round_trip_and_corruption_reads_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("nested"));
        let entry = Entry { spirv: module(), fallback_used: true };
        assert_eq!(cache.get("k"), None);
        cache.put("k", &entry).unwrap();
        assert_eq!(cache.get("k"), Some(entry.clone()));

        let path = cache.path("k");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.get("k"), None, "a flipped bit must not be served");
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert_eq!(cache.get("k"), None, "a torn entry must not be served");

        cache.put("k", &entry).unwrap();
        assert_eq!(cache.get("k"), Some(entry));
        let leftovers: Vec<_> = std::fs::read_dir(cache.dir()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files left behind");
    }
}
