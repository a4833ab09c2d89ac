//! The baseline: what the suite's kernels measured when it was last
//! accepted. JSON, committed in the user's repository; keys are sorted so a
//! changed count is a one-line diff in review.

use crate::error::{CheckError, Result};
use crate::metric::{Sampled, Value};
use clflow_traffic::CacheSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The baseline format this clflow reads and writes.
pub const BASELINE_SCHEMA: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub schema: u32,
    /// The op set W.total was counted with.
    pub ops: String,
    pub line_bytes: u64,
    /// The cache the traffic metrics went through (`SIZE/LINE`), if the
    /// suite named one; absent in baselines recorded without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// By manifest path relative to the suite.
    pub kernels: BTreeMap<String, KernelBaseline>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelBaseline {
    pub kernel: String,
    pub counts: BTreeMap<String, Value>,
    /// Device name → T, F, R, E with their spread.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub devices: BTreeMap<String, BTreeMap<String, Sampled>>,
}

impl Baseline {
    pub fn new(ops: &str, line_bytes: u64, cache: Option<CacheSpec>) -> Self {
        Baseline {
            schema: BASELINE_SCHEMA,
            ops: ops.to_string(),
            line_bytes,
            cache: cache.map(cache_text),
            kernels: BTreeMap::new(),
        }
    }

    /// Whether the baseline was recorded through `cache` (or, both, none).
    /// The recorded text is read back, so "32768/64" and "32KiB/64" agree.
    pub fn recorded_with_cache(&self, cache: Option<CacheSpec>) -> bool {
        match (&self.cache, cache) {
            (None, None) => true,
            (Some(text), Some(cache)) => text.parse::<CacheSpec>() == Ok(cache),
            _ => false,
        }
    }

    pub fn load(path: &Path) -> Result<Baseline> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            let err = CheckError::new(path, None, format!("cannot read the baseline: {e}"));
            if e.kind() == std::io::ErrorKind::NotFound {
                err.with_hint("record one with `clflow check SUITE --update`")
            } else {
                err
            }
        })?;
        Baseline::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Baseline> {
        let at = |e: serde_json::Error| CheckError::new(path, Some(e.line()), e.to_string());
        // The version first, so a newer file says so rather than failing on
        // a field it added.
        let value: serde_json::Value = serde_json::from_str(text).map_err(at)?;
        match value.get("schema").and_then(|s| s.as_u64()) {
            Some(v) if v == u64::from(BASELINE_SCHEMA) => {}
            Some(v) if v > u64::from(BASELINE_SCHEMA) => {
                return Err(CheckError::new(
                    path,
                    None,
                    format!(
                        "baseline schema {v} is newer than the {BASELINE_SCHEMA} this clflow reads"
                    ),
                )
                .with_hint("upgrade clflow, or record a new baseline with --update"))
            }
            other => {
                return Err(CheckError::new(
                    path,
                    None,
                    format!(
                        "not a clflow baseline (\"schema\" is {}, expected {BASELINE_SCHEMA})",
                        other.map_or("absent".into(), |v| v.to_string())
                    ),
                ))
            }
        }
        serde_json::from_str(text).map_err(at)
    }

    /// Writes the baseline so that a reader never sees half of it: a
    /// temporary file in the same directory, then a rename.
    pub fn save(&self, path: &Path) -> Result<()> {
        let fail = |e: &dyn std::fmt::Display| {
            CheckError::new(path, None, format!("cannot write the baseline: {e}"))
        };
        let mut text = serde_json::to_string_pretty(self).map_err(|e| fail(&e))?;
        text.push('\n');
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(|e| fail(&e))?;
        file.write_all(text.as_bytes()).map_err(|e| fail(&e))?;
        file.as_file().sync_all().map_err(|e| fail(&e))?;
        file.persist(path).map_err(|e| fail(&e.error))?;
        Ok(())
    }
}

/// A cache as the baseline records it: its usual form (`32KiB/64`) where
/// that reads back exactly, else its size in bytes (`40000/64`).
fn cache_text(cache: CacheSpec) -> String {
    let text = cache.to_string();
    if text.parse::<CacheSpec>() == Ok(cache) {
        text
    } else {
        format!("{}/{}", cache.bytes, cache.line_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_round_trips_with_sorted_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.json");
        let mut baseline = Baseline::new("arith", 64, None);
        let mut counts = BTreeMap::new();
        counts.insert("W.total".to_string(), Value::Count(4096));
        counts.insert("I.max".to_string(), Value::Real(0.25));
        baseline.kernels.insert(
            "vadd/vadd.toml".into(),
            KernelBaseline { kernel: "vadd".into(), counts, devices: BTreeMap::new() },
        );
        baseline.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.find("I.max").unwrap() < text.find("W.total").unwrap());
        assert!(text.contains("\"W.total\": 4096"), "{text}");
        assert!(!text.contains("cache"), "no cache, no field: {text}");
        let loaded = Baseline::load(&path).unwrap();
        assert_eq!(loaded, baseline);
        assert!(loaded.recorded_with_cache(None));
        assert!(!loaded.recorded_with_cache(Some("32KiB/64".parse().unwrap())));
    }

    #[test]
    fn a_baseline_records_its_cache_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.json");
        let l1: CacheSpec = "32768/64".parse().unwrap();
        Baseline::new("arith", 64, Some(l1)).save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"cache\": \"32KiB/64\""), "{text}");
        let loaded = Baseline::load(&path).unwrap();
        assert_eq!(loaded.cache.as_deref(), Some("32KiB/64"));
        assert!(loaded.recorded_with_cache(Some(l1)));
        assert!(!loaded.recorded_with_cache(Some("32KiB/128".parse().unwrap())));
        assert!(!loaded.recorded_with_cache(None));

        // A size its short form would round is kept in bytes.
        let odd: CacheSpec = "40000/64".parse().unwrap();
        let baseline = Baseline::new("arith", 64, Some(odd));
        assert_eq!(baseline.cache.as_deref(), Some("40000/64"));
        assert!(baseline.recorded_with_cache(Some(odd)));
        assert!(!baseline.recorded_with_cache(Some("40001/64".parse().unwrap())));
    }

    #[test]
    fn a_baseline_from_before_caches_still_loads() {
        let old = "{\"schema\": 1, \"ops\": \"arith\", \"line_bytes\": 64, \"kernels\": {}}";
        let baseline = Baseline::parse(Path::new("ci/baseline.json"), old).unwrap();
        assert_eq!(baseline.cache, None);
        assert!(baseline.recorded_with_cache(None));
    }

    #[test]
    fn broken_and_newer_baselines_are_refused_with_their_line() {
        let path = Path::new("ci/baseline.json");
        let err = Baseline::parse(path, "{\n  \"schema\": 1,\n  \"ops\": 3\n}").unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
        let err = Baseline::parse(path, "{\n  \"schema\": 1,\n  \"ops\": \n").unwrap_err();
        assert_eq!(err.line, Some(4), "{err}");
        let err = Baseline::parse(path, "{\"schema\": 2}").unwrap_err();
        assert!(err.to_string().contains("newer"), "{err}");
        let err = Baseline::parse(path, "{\"kernels\": {}}").unwrap_err();
        assert!(err.to_string().contains("not a clflow baseline"), "{err}");
    }
}
