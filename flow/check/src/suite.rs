//! The suite file: which kernels a check covers and how each metric is
//! judged.
//!
//! ```toml
//! manifests = ["../kernels/*/*.toml"]        # globs, relative to this file
//! exclude = ["../kernels/lookup3/lookup3-paper.toml"]
//! ops = "arith"                              # the op set W.total counts
//! line_bytes = 64                            # compulsory-traffic line size
//! cache = "32KiB/64"                         # SIZE[/LINE]: also Q.dram, Q.uncoalesced, I.dram
//! ignore = ["I", "ops.OpPhi"]                # metrics not compared
//! devices = []                               # devices to time on (none: counts only)
//!
//! [rules]                                    # default: counts exact, timings
//! "Q.compulsory" = "1%"                      # from the baseline's spread
//! T = "10%"
//! "E@NVIDIA" = "15%"                         # on devices whose name contains NVIDIA
//! ```
//!
//! A rule or ignore entry names a metric or a prefix of its dotted name
//! (`W` is every W, `ops.OpIAdd` every type of OpIAdd), optionally followed by
//! `@DEVICE` for device metrics. The most specific rule wins: one naming a
//! device before one that does not, then the longer name.
//!
//! With a `cache`, each kernel's global accesses also run through an LRU
//! cache of that size and line (as `clflow count --cache` does), which adds
//! the DRAM traffic there (`Q.dram`), the bytes of accesses that do not
//! coalesce (`Q.uncoalesced`) and `I.dram` = W.total / Q.dram: an access
//! pattern that worsens shows there even when W and Q.accessed stay put.

use crate::error::{line_of, CheckError, Result};
use crate::metric::Group;
use clflow_counts::OpSet;
use clflow_traffic::CacheSpec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// How far a metric may move before it counts as changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// Counts must be equal; real values (I) within 1e-9 relative.
    Exact,
    /// Within this fraction of the baseline value (0.05 = 5 %).
    Relative(f64),
}

/// Relative slack "exact" allows real values, which pass through JSON.
pub const REAL_EPSILON: f64 = 1e-9;

impl Tolerance {
    fn parse(text: &str) -> Option<Tolerance> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("exact") {
            return Some(Tolerance::Exact);
        }
        let percent: f64 = text.strip_suffix('%')?.trim().parse().ok()?;
        (percent.is_finite() && percent >= 0.0).then_some(Tolerance::Relative(percent / 100.0))
    }

    pub fn describe(self) -> String {
        match self {
            Tolerance::Exact => "exact".into(),
            Tolerance::Relative(r) => format!("±{}%", clflow_metrics::format_number(r * 100.0)),
        }
    }
}

/// Names metrics: a dotted prefix and, optionally, a device.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    pub path: String,
    pub device: Option<String>,
}

impl Selector {
    fn parse(text: &str) -> std::result::Result<Selector, String> {
        let (path, device) = match text.split_once('@') {
            Some((path, device)) if !device.trim().is_empty() => {
                (path.trim(), Some(device.trim().to_string()))
            }
            Some(_) => return Err(format!("`{text}`: nothing after `@` (a device name)")),
            None => (text.trim(), None),
        };
        let group = Group::of(path).ok_or_else(|| {
            format!("`{text}`: unknown metric (known: W, Q, I, ops, T, F, R, E and their members such as W.total, Q.accessed, ops.OpIAdd)")
        })?;
        let members = group.members();
        if path != group.name() && !members.is_empty() && !members.contains(&path) {
            return Err(format!(
                "`{text}`: unknown metric (the {} metrics are {})",
                group.name(),
                members.join(", ")
            ));
        }
        if device.is_some() && !group.is_device() {
            return Err(format!(
                "`{text}`: only device metrics (T, F, R, E) take `@DEVICE`"
            ));
        }
        Ok(Selector { path: path.to_string(), device })
    }

    /// Whether this names `metric` (measured on `device`, if any).
    pub fn matches(&self, metric: &str, device: Option<&str>) -> bool {
        let path_matches = metric == self.path
            || (metric.starts_with(&self.path) && metric[self.path.len()..].starts_with('.'));
        let device_matches = match (&self.device, device) {
            (None, _) => true,
            (Some(wanted), Some(device)) => device.to_lowercase().contains(&wanted.to_lowercase()),
            (Some(_), None) => false,
        };
        path_matches && device_matches
    }

    fn specificity(&self) -> (bool, usize) {
        (self.device.is_some(), self.path.len())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub selector: Selector,
    pub tolerance: Tolerance,
    /// Where the rule is written, for messages.
    pub line: usize,
}

/// One kernel manifest of the suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteManifest {
    /// The manifest's path relative to the suite file, `/`-separated: the
    /// kernel's key in the baseline.
    pub key: String,
    pub path: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Suite {
    pub path: PathBuf,
    pub manifests: Vec<SuiteManifest>,
    pub ops: String,
    pub line_bytes: u64,
    /// The cache the traffic metrics are simulated through, if any.
    pub cache: Option<CacheSpec>,
    pub ignore: Vec<Selector>,
    pub rules: Vec<Rule>,
    pub devices: Vec<String>,
    /// The baseline file the suite names, resolved; default `baseline.json`
    /// beside the suite.
    pub baseline: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    manifests: Spanned<Vec<Spanned<String>>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
    ops: Option<Spanned<String>>,
    line_bytes: Option<Spanned<u64>>,
    cache: Option<Spanned<String>>,
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    devices: Vec<String>,
    #[serde(default)]
    rules: BTreeMap<Spanned<String>, Spanned<String>>,
    baseline: Option<String>,
}

impl Suite {
    pub fn load(path: &Path) -> Result<Suite> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CheckError::new(path, None, format!("cannot read the suite: {e}")))?;
        Suite::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Suite> {
        let at = |span: std::ops::Range<usize>, message: String| {
            CheckError::new(path, Some(line_of(text, span.start)), message)
        };
        let raw: RawSuite = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start));
            CheckError::new(path, line, e.message().trim().to_string())
        })?;
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();

        let ops = raw
            .ops
            .map(|ops| {
                ops.get_ref()
                    .parse::<OpSet>()
                    .map(|_| ops.get_ref().clone())
                    .map_err(|e| at(ops.span(), format!("ops: {e}")))
            })
            .transpose()?
            .unwrap_or_else(|| "arith".to_string());
        let line_bytes = match raw.line_bytes {
            Some(n) => clflow_core::numbers::line_size(*n.get_ref())
                .map_err(|e| at(n.span(), format!("line_bytes: {e}")))?,
            None => 64,
        };
        let cache = raw
            .cache
            .map(|cache| {
                cache.get_ref().parse::<CacheSpec>().map_err(|e| {
                    at(
                        cache.span(),
                        format!(
                            "cache: `{}`: {e} (write SIZE[/LINE], e.g. \"32KiB/64\")",
                            cache.get_ref()
                        ),
                    )
                })
            })
            .transpose()?;
        let ignore = raw
            .ignore
            .iter()
            .map(|s| Selector::parse(s.get_ref()).map_err(|e| at(s.span(), format!("ignore: {e}"))))
            .collect::<Result<Vec<_>>>()?;
        let rules = raw
            .rules
            .iter()
            .map(|(key, value)| {
                let selector = Selector::parse(key.get_ref())
                    .map_err(|e| at(key.span(), format!("rules: {e}")))?;
                let tolerance = Tolerance::parse(value.get_ref()).ok_or_else(|| {
                    at(
                        value.span(),
                        format!(
                            "rules: `{}` for `{}` is not a tolerance (write \"exact\" or a percentage such as \"5%\")",
                            value.get_ref(),
                            key.get_ref()
                        ),
                    )
                })?;
                Ok(Rule {
                    selector,
                    tolerance,
                    line: line_of(text, key.span().start),
                })
            })
            .collect::<Result<Vec<_>>>()?;

        let excluded: Vec<PathBuf> = raw
            .exclude
            .iter()
            .map(|pattern| {
                expand(&dir, pattern).map_err(|m| at(pattern.span(), format!("exclude: {m}")))
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        let mut manifests = Vec::new();
        for pattern in raw.manifests.get_ref() {
            let found =
                expand(&dir, pattern).map_err(|m| at(pattern.span(), format!("manifests: {m}")))?;
            for manifest in found {
                if excluded.contains(&manifest)
                    || manifests.iter().any(|m: &SuiteManifest| m.path == manifest)
                {
                    continue;
                }
                manifests.push(SuiteManifest { key: key_of(&dir, &manifest), path: manifest });
            }
        }
        if manifests.is_empty() {
            return Err(at(
                raw.manifests.span(),
                "manifests: the suite covers no kernel (every match is excluded)".into(),
            ));
        }
        Ok(Suite {
            path: path.to_path_buf(),
            manifests,
            ops,
            line_bytes,
            cache,
            ignore,
            rules,
            devices: raw.devices,
            baseline: dir.join(raw.baseline.as_deref().unwrap_or("baseline.json")),
        })
    }

    /// A suite of a capture's launches (`manifests`, in `dir`): the
    /// defaults a suite file starts from (ops `arith`, 64-byte lines, no
    /// cache, every metric exact), its baseline `baseline.json` in `dir`.
    pub fn of_capture(dir: &Path, manifests: Vec<PathBuf>) -> Suite {
        Suite {
            path: dir.join("capture.toml"),
            manifests: manifests
                .into_iter()
                .map(|path| SuiteManifest { key: key_of(dir, &path), path })
                .collect(),
            ops: "arith".into(),
            line_bytes: 64,
            cache: None,
            ignore: Vec::new(),
            rules: Vec::new(),
            devices: Vec::new(),
            baseline: dir.join("baseline.json"),
        }
    }

    /// Whether a metric is left out of the comparison.
    pub fn ignores(&self, metric: &str, device: Option<&str>) -> bool {
        self.ignore.iter().any(|s| s.matches(metric, device))
    }

    /// The most specific rule naming the metric, if any.
    pub fn rule_for(&self, metric: &str, device: Option<&str>) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.selector.matches(metric, device))
            .max_by_key(|r| r.selector.specificity())
    }
}

/// The manifests a glob names, sorted; an error if it names none.
fn expand(dir: &Path, pattern: &Spanned<String>) -> std::result::Result<Vec<PathBuf>, String> {
    let full = dir.join(pattern.get_ref());
    let full = full.to_string_lossy();
    let paths = glob::glob(&full).map_err(|e| format!("`{}`: {e}", pattern.get_ref()))?;
    let mut found: Vec<PathBuf> = paths
        .filter_map(|p| p.ok())
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "`{}` matches no file (looked for {full})",
            pattern.get_ref()
        ));
    }
    Ok(found)
}

fn key_of(dir: &Path, manifest: &Path) -> String {
    let relative = manifest.strip_prefix(dir).unwrap_or(manifest);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite_in(dir: &Path, text: &str) -> Result<Suite> {
        std::fs::create_dir_all(dir.join("k/a")).unwrap();
        std::fs::create_dir_all(dir.join("k/b")).unwrap();
        std::fs::write(dir.join("k/a/a.toml"), "").unwrap();
        std::fs::write(dir.join("k/b/b.toml"), "").unwrap();
        Suite::parse(&dir.join("suite.toml"), text)
    }

    #[test]
    fn globs_expand_relative_to_the_suite_and_exclusions_apply() {
        let dir = tempfile::tempdir().unwrap();
        let suite = suite_in(
            dir.path(),
            "manifests = [\"k/*/*.toml\"]\nexclude = [\"k/b/b.toml\"]\n",
        )
        .unwrap();
        let keys: Vec<&str> = suite.manifests.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["k/a/a.toml"]);
        assert_eq!(suite.ops, "arith");
        assert_eq!(suite.line_bytes, 64);
        assert_eq!(suite.cache, None);
        assert_eq!(suite.baseline, dir.path().join("baseline.json"));
    }

    #[test]
    fn the_most_specific_rule_wins() {
        let dir = tempfile::tempdir().unwrap();
        let suite = suite_in(
            dir.path(),
            "manifests = [\"k/a/a.toml\"]\nignore = [\"ops.OpPhi\"]\n[rules]\nW = \"2%\"\n\"W.total\" = \"exact\"\nT = \"10%\"\n\"T@nvidia\" = \"5%\"\n",
        )
        .unwrap();
        assert_eq!(
            suite.rule_for("W.int", None).unwrap().tolerance,
            Tolerance::Relative(0.02)
        );
        assert_eq!(
            suite.rule_for("W.total", None).unwrap().tolerance,
            Tolerance::Exact
        );
        assert_eq!(
            suite.rule_for("T", Some("NVIDIA A100")).unwrap().tolerance,
            Tolerance::Relative(0.05)
        );
        assert_eq!(
            suite.rule_for("T", Some("pocl")).unwrap().tolerance,
            Tolerance::Relative(0.1)
        );
        assert_eq!(suite.rule_for("T", Some("pocl")).unwrap().line, 6);
        assert!(suite.rule_for("Q.load", None).is_none());
        assert!(suite.ignores("ops.OpPhi.uint", None));
        assert!(!suite.ignores("ops.OpPhiX.uint", None));
    }

    #[test]
    fn a_cache_is_read_as_size_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let suite = suite_in(
            dir.path(),
            "manifests = [\"k/a/a.toml\"]\ncache = \"32KiB/128\"\n",
        )
        .unwrap();
        assert_eq!(
            suite.cache,
            Some(CacheSpec { bytes: 32 << 10, line_bytes: 128 })
        );
        let suite = suite_in(
            dir.path(),
            "manifests = [\"k/a/a.toml\"]\ncache = \"1MiB\"\n",
        )
        .unwrap();
        assert_eq!(
            suite.cache.map(|c| (c.bytes, c.line_bytes)),
            Some((1 << 20, 64))
        );
    }

    #[test]
    fn mistakes_name_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "manifests = [\"k/a/a.toml\"]\n[rules]\nW = \"lots\"\n",
                3,
                "not a tolerance",
            ),
            (
                "manifests = [\"k/a/a.toml\"]\n\n[rules]\n\"W.all\" = \"exact\"\n",
                4,
                "W.int, W.fp32",
            ),
            (
                "manifests = [\"k/a/a.toml\"]\nignore = [\"Z\"]\n",
                2,
                "unknown metric",
            ),
            (
                "manifests = [\"k/a/a.toml\"]\n[rules]\n\"W@gpu\" = \"1%\"\n",
                3,
                "only device metrics",
            ),
            ("\nmanifests = [\"k/*/none.toml\"]\n", 2, "matches no file"),
            ("manifests = [\"k/a/a.toml\"]\nops = \"bogus\"\n", 2, "ops:"),
            (
                "manifests = [\"k/a/a.toml\"]\nline_bytes = 48\n",
                2,
                "power of two",
            ),
            ("manifests = [\"k/a/a.toml\"]\ncolour = 1\n", 2, "colour"),
            (
                "manifests = [\"k/a/a.toml\"]\n\ncache = \"32 furlongs\"\n",
                3,
                "cache: `32 furlongs`: unknown size unit",
            ),
            (
                "manifests = [\"k/a/a.toml\"]\ncache = \"32KiB/48\"\n",
                2,
                "not a power of two",
            ),
            (
                "manifests = [\"k/a/a.toml\"]\ncache = 32768\n",
                2,
                "expected a string",
            ),
            ("manifests = [\"k/a/a.toml\"\n", 1, ""),
        ];
        for (text, line, needle) in cases {
            let err = suite_in(dir.path(), text).unwrap_err();
            assert_eq!(err.line, Some(line), "{text:?}: {err}");
            assert!(err.to_string().contains(needle), "{text:?}: {err}");
            assert!(err
                .to_string()
                .starts_with(&dir.path().join("suite.toml").display().to_string()));
        }
    }
}
