//! A CPU's data caches, from the kernel's sysfs (`/sys/devices/system/cpu/
//! cpu0/cache/index*/{level,type,size}`): the hierarchy a CPU device's
//! hierarchical roofline has a point per level of. OpenCL states only one
//! cache (`CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`).

use std::path::Path;

/// Where Linux describes CPU 0's caches.
pub const CPU_CACHES: &str = "/sys/devices/system/cpu/cpu0/cache";

/// A cache level: `L1`, `L2` ... and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLevel {
    pub name: String,
    pub bytes: u64,
}

/// The data (and unified) caches under `dir`, nearest the core first; none
/// where the directory is missing or says nothing usable.
pub fn cpu_cache_levels(dir: &Path) -> Vec<CacheLevel> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let read = |index: &Path, file: &str| {
        std::fs::read_to_string(index.join(file))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mut levels: Vec<(u32, u64)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("index"))
        })
        .filter(|index| matches!(read(index, "type").as_deref(), Some("Data" | "Unified")))
        .filter_map(|index| {
            let level = read(&index, "level")?.parse().ok()?;
            Some((level, size(&read(&index, "size")?)?))
        })
        .collect();
    levels.sort();
    levels.dedup_by_key(|(level, _)| *level);
    levels
        .into_iter()
        .map(|(level, bytes)| CacheLevel { name: format!("L{level}"), bytes })
        .collect()
}

/// `48K`, `1024K`, `32M` (sysfs writes K), or plain bytes.
fn size(text: &str) -> Option<u64> {
    let (digits, scale) = match text.strip_suffix(['K', 'M', 'G']) {
        Some(digits) => (
            digits,
            match text.as_bytes()[text.len() - 1] {
                b'K' => 1u64 << 10,
                b'M' => 1 << 20,
                _ => 1 << 30,
            },
        ),
        None => (text, 1),
    };
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(scale)
        .filter(|b| *b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture in sysfs's own layout: L1 data and instruction caches, a
    /// unified L2 and L3.
    #[test]
    fn data_and_unified_caches_are_read_nearest_first() {
        let dir = tempfile::tempdir().unwrap();
        for (index, level, kind, size) in [
            ("index0", "1", "Data", "48K"),
            ("index1", "1", "Instruction", "32K"),
            ("index2", "2", "Unified", "1024K"),
            ("index3", "3", "Unified", "32768K"),
        ] {
            let at = dir.path().join(index);
            std::fs::create_dir(&at).unwrap();
            std::fs::write(at.join("level"), format!("{level}\n")).unwrap();
            std::fs::write(at.join("type"), format!("{kind}\n")).unwrap();
            std::fs::write(at.join("size"), format!("{size}\n")).unwrap();
        }
        std::fs::write(dir.path().join("uevent"), "").unwrap();
        let levels = cpu_cache_levels(dir.path());
        let named: Vec<(&str, u64)> = levels.iter().map(|l| (l.name.as_str(), l.bytes)).collect();
        assert_eq!(named, [("L1", 48 << 10), ("L2", 1 << 20), ("L3", 32 << 20)]);
        assert!(cpu_cache_levels(&dir.path().join("absent")).is_empty());
        assert_eq!(size("2M"), Some(2 << 20));
        assert_eq!(size("0K"), None);
    }
}
