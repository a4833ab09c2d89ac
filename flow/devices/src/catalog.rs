//! The set of datasheet profiles clflow knows, and which one an OpenCL device
//! matches.
//!
//! Lookup: the profiles in the source tree's `devices/` folder are built into
//! the binary, so an installed clflow needs no data files. A user directory
//! (`--profiles-dir DIR`, else `CLFLOW_DEVICES_DIR`) adds profiles and
//! overrides built-in ones of the same file name.
//!
//! Matching: a profile matches a device when one of its `match` patterns is a
//! case-insensitive substring of the OpenCL device name. The longest matching
//! pattern wins ("Tesla K20X" beats "Tesla K20" for a K20X); on a tie the
//! profile whose id sorts first wins and the others are reported.

use crate::error::{DevicesError, Result};
use crate::profile::{DatasheetProfile, ProfileOrigin};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The environment variable naming a user profile directory.
pub const PROFILES_DIR_ENV: &str = "CLFLOW_DEVICES_DIR";

macro_rules! embed {
    ($id:literal) => {
        (
            $id,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../devices/",
                $id,
                ".toml"
            )),
        )
    };
}

/// The profiles of `devices/`, built in. A unit test keeps this list equal to
/// the folder's contents.
const EMBEDDED: &[(&str, &str)] = &[
    embed!("adm-pcie-7v3"),
    embed!("amd-epyc-7763"),
    embed!("amd-epyc-9654"),
    embed!("amd-mi250x"),
    embed!("amd-mi300x"),
    embed!("intel-max-1550"),
    embed!("intel-n6001"),
    embed!("intel-pac-d5005"),
    embed!("intel-xeon-8480"),
    embed!("nvidia-a100-sxm"),
    embed!("nvidia-h100-pcie"),
    embed!("nvidia-h100-sxm"),
    embed!("nvidia-h200"),
    embed!("nvidia-v100-pcie"),
    embed!("nvidia-v100-sxm2"),
    embed!("tesla-k20"),
    embed!("tesla-k20x"),
    embed!("xeon-phi-5110p"),
    embed!("xeon-phi-7250"),
    embed!("xilinx-alveo-u250"),
    embed!("xilinx-alveo-u280"),
];

/// Every known profile, sorted by id.
#[derive(Debug, Clone, Default)]
pub struct ProfileCatalog {
    profiles: Vec<DatasheetProfile>,
    user_dir: Option<PathBuf>,
}

/// A device's profile and the pattern that chose it.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileMatch<'a> {
    pub profile: &'a DatasheetProfile,
    pub pattern: &'a str,
    /// Other profiles whose patterns matched as specifically (ids).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ties: Vec<&'a str>,
}

impl ProfileCatalog {
    /// The built-in profiles only.
    pub fn embedded() -> Result<Self> {
        let profiles = EMBEDDED
            .iter()
            .map(|(id, text)| {
                let file = format!("devices/{id}.toml");
                DatasheetProfile::parse(text, &file, id, ProfileOrigin::Embedded)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut catalog = ProfileCatalog { profiles, user_dir: None };
        catalog.sort();
        Ok(catalog)
    }

    /// The built-in profiles plus those of `dir`, else of `CLFLOW_DEVICES_DIR`.
    pub fn load(dir: Option<&Path>) -> Result<Self> {
        let mut catalog = ProfileCatalog::embedded()?;
        let from_env = std::env::var_os(PROFILES_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        if let Some(dir) = dir.map(Path::to_path_buf).or(from_env) {
            catalog.add_dir(&dir)?;
        }
        Ok(catalog)
    }

    /// Adds every `*.toml` of `dir`; a file replaces the profile of the same id.
    pub fn add_dir(&mut self, dir: &Path) -> Result<()> {
        let dir_error =
            |message: String| DevicesError::ProfileDir { dir: dir.display().to_string(), message };
        let entries = std::fs::read_dir(dir).map_err(|e| dir_error(e.to_string()))?;
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| dir_error(e.to_string()))?.path();
            if path.extension().is_some_and(|ext| ext == "toml") && path.is_file() {
                paths.push(path);
            }
        }
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| DevicesError::input_io(path.display(), &e))?;
            let id = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let file = path.display().to_string();
            let profile =
                DatasheetProfile::parse(&text, &file, &id, ProfileOrigin::File(path.clone()))?;
            self.profiles.retain(|p| p.id != id);
            self.profiles.push(profile);
        }
        self.user_dir = Some(dir.to_path_buf());
        self.sort();
        Ok(())
    }

    fn sort(&mut self) {
        self.profiles.sort_by(|a, b| a.id.cmp(&b.id));
    }

    pub fn profiles(&self) -> &[DatasheetProfile] {
        &self.profiles
    }

    /// The user directory that was read, if any.
    pub fn user_dir(&self) -> Option<&Path> {
        self.user_dir.as_deref()
    }

    pub fn get(&self, id: &str) -> Option<&DatasheetProfile> {
        self.profiles.iter().find(|p| p.id == id)
    }

    /// The profile an OpenCL device name matches, most specific first.
    pub fn match_name(&self, device_name: &str) -> Option<ProfileMatch<'_>> {
        let name = device_name.to_lowercase();
        // For each profile, its longest matching pattern.
        let mut hits: Vec<(&DatasheetProfile, &str)> = self
            .profiles
            .iter()
            .filter_map(|profile| {
                profile
                    .patterns
                    .iter()
                    .filter(|p| name.contains(&p.to_lowercase()))
                    .max_by_key(|p| p.chars().count())
                    .map(|p| (profile, p.as_str()))
            })
            .collect();
        // Longest pattern first; the sort is stable, so ties keep id order.
        hits.sort_by_key(|(_, pattern)| std::cmp::Reverse(pattern.chars().count()));
        let (&(profile, pattern), rest) = hits.split_first()?;
        let ties = rest
            .iter()
            .take_while(|(_, p)| p.chars().count() == pattern.chars().count())
            .map(|(other, _)| other.id.as_str())
            .collect();
        Some(ProfileMatch { profile, pattern, ties })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_is_exactly_the_devices_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../devices");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let built_in: Vec<&str> = EMBEDDED.iter().map(|(id, _)| *id).collect();
        assert_eq!(on_disk, built_in);
    }
}
