//! The traffic stage: which cache a device has (`--cache`, else its
//! datasheet profile's last-level cache, else what its OpenCL driver
//! reports), the kernel's DRAM traffic Q through it from the cache
//! simulation, and how its accesses coalesce.

use crate::Error;
use clflow_core::numbers::{format_number, group_digits};
use clflow_counts::{LineCache, SourceLine};
use clflow_devices::caches::{cpu_cache_levels, CPU_CACHES};
use clflow_devices::{DatasheetProfile, Metric, ProfileCatalog};
use clflow_ocl::{DeviceInfo, DeviceKind};
use clflow_predict::{Coalescing, KernelFacts};
use clflow_traffic::{
    format_size, CacheSpec, DeviceTraffic, TrafficAnalysis, TrafficReport, TrafficSummary,
};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The `--cache` argument: a size (`40MiB/128`), or a datasheet profile's
/// name (`nvidia-h100-sxm`), whose last-level cache it means. The profiles
/// (`catalog`) are read only for a name.
pub fn parse_cache<'a>(
    text: &str,
    catalog: impl FnOnce() -> &'a ProfileCatalog,
) -> crate::Result<DeviceCache> {
    let size_error = match text.parse::<CacheSpec>() {
        Ok(spec) => return Ok(DeviceCache { spec, source: "--cache".into(), upper: Vec::new() }),
        Err(e) => e,
    };
    match catalog().get(text.trim()) {
        Some(profile) => cache_of(Some(profile), 0, 0).ok_or_else(|| {
            Error::input(format!(
                "--cache {text}: the datasheet profile states no last-level cache"
            ))
            .with_hint("give the size instead, e.g. --cache 40MiB/128")
        }),
        None => Err(
            Error::input(format!("--cache {text}: {size_error}")).with_hint(
                "give SIZE[/LINE] (e.g. 40MiB/128) or a datasheet profile's name \
             (`clflow devices --profiles` lists them)",
            ),
        ),
    }
}

/// [`parse_cache`] for an optional `--cache`.
pub fn parse_cache_option<'a>(
    text: Option<&str>,
    catalog: impl FnOnce() -> &'a ProfileCatalog,
) -> crate::Result<Option<DeviceCache>> {
    text.map(|text| parse_cache(text, catalog)).transpose()
}

/// A device's cache and where its figures come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceCache {
    pub spec: CacheSpec,
    pub source: String,
    /// The caches nearer the core, named, smallest first: the upper levels
    /// of the hierarchical roofline (known for the host's CPU).
    pub upper: Vec<(String, u64)>,
}

impl DeviceCache {
    /// With the host CPU's own caches above this one, for a CPU device
    /// (OpenCL's CPU devices run on the host); as it is otherwise.
    pub fn with_host_levels(mut self, kind: DeviceKind) -> Self {
        if kind == DeviceKind::Cpu {
            let levels = cpu_cache_levels(std::path::Path::new(CPU_CACHES));
            self.upper = levels
                .into_iter()
                .filter(|l| l.bytes < self.spec.bytes)
                .map(|l| (l.name, l.bytes))
                .collect();
        }
        self
    }
}

/// The cache the simulation uses for a device: `chosen` (`--cache`) if
/// given, else the datasheet's last-level cache and line (its sector, where
/// the profile states one), else the OpenCL driver's global-memory cache;
/// `None` when nothing states one.
pub fn device_cache(
    chosen: Option<&DeviceCache>,
    info: &DeviceInfo,
    datasheet: Option<&DatasheetProfile>,
) -> Option<DeviceCache> {
    if let Some(chosen) = chosen {
        return Some(chosen.clone());
    }
    cache_of(
        datasheet,
        info.global_cache_bytes,
        info.global_cacheline_bytes,
    )
}

/// [`device_cache`] without `--cache`, the driver's cache size and line given.
fn cache_of(
    datasheet: Option<&DatasheetProfile>,
    driver_bytes: u64,
    driver_line: u32,
) -> Option<DeviceCache> {
    let sheet = datasheet.and_then(|p| {
        let bytes = p.datasheet.quantity(Metric::LastLevelCache)?.value as u64;
        let stated = |metric| {
            p.datasheet
                .quantity(metric)
                .map(|q| q.value as u64)
                .filter(|l: &u64| l.is_power_of_two())
        };
        // Memory fills sectors where a line has them: DRAM traffic moves in those.
        Some(match stated(Metric::CacheSector) {
            Some(sector) => (
                bytes,
                sector,
                format!("datasheet profile {}, in {sector}-byte sectors", p.id),
            ),
            None => (
                bytes,
                stated(Metric::CacheLine).unwrap_or(clflow_traffic::DEFAULT_LINE_BYTES),
                format!("datasheet profile {}", p.id),
            ),
        })
    });
    let driver = || {
        let line = u64::from(driver_line);
        let line = if line.is_power_of_two() {
            line
        } else {
            clflow_traffic::DEFAULT_LINE_BYTES
        };
        Some((
            driver_bytes,
            line,
            "the OpenCL driver's CL_DEVICE_GLOBAL_MEM_CACHE_SIZE".to_string(),
        ))
    };
    let (bytes, line_bytes, source) = sheet.or_else(driver)?;
    (bytes >= line_bytes).then_some(DeviceCache {
        spec: CacheSpec { bytes, line_bytes },
        source,
        upper: Vec::new(),
    })
}

/// The facts the models read, with the simulated DRAM traffic at a
/// device's cache and the coalescing analysis filled in; `kind` says
/// whether the device pays for uncoalesced accesses (all but CPUs).
pub fn facts_at(facts: &KernelFacts, traffic: &DeviceTraffic, kind: DeviceKind) -> KernelFacts {
    let summary = &traffic.summary;
    let mut facts = facts.clone();
    facts.cache_gathers = traffic.cache_gathers;
    facts.cache_gather_table = traffic.cache_gather_table;
    facts.page_strides = Some(summary.coalescing.page_strides());
    facts.page_stride_stores = Some(summary.coalescing.page_stride_stores());
    facts.page_walkers = Some(summary.coalescing.page_walkers);
    facts.page_walk_bytes = Some(summary.coalescing.page_walk_bytes);
    facts.line_strides = Some(summary.coalescing.line_strides());
    facts.line_walk_bytes = Some(summary.coalescing.stretch_lines * summary.coalescing.line_bytes);
    facts.line_walk_dram = Some(summary.coalescing.line_walk_dram());
    facts.short_visits = Some(summary.coalescing.short_visits());
    facts.short_visit_line_bytes = Some(summary.coalescing.line_bytes);
    facts.traffic.simulated = Some(summary.dram.total());
    facts.traffic.simulated_written = Some(summary.dram.written_bytes);
    facts.traffic.simulated_allocated = Some(summary.dram.allocated_bytes);
    facts.traffic.cache_bytes = Some(summary.cache.bytes);
    facts.coalescing = Some(Coalescing {
        coalesced_bytes: summary.coalescing.bytes.coalesced(),
        uncoalesced_bytes: summary.coalescing.bytes.uncoalesced(),
        penalised: kind != DeviceKind::Cpu,
    });
    facts
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// How many access sites the text report lists.
const SITES_SHOWN: usize = 12;

/// The cache simulation and coalescing analysis as text; `work` is W,
/// `source` where the cache's figures come from.
pub fn render_text(summary: &TrafficSummary, work: u64, source: &str) -> String {
    let mut out = String::new();
    let q = summary.dram.total();
    let intensity = if q == 0 {
        "n/a (Q = 0)".to_string()
    } else {
        format_number(work as f64 / q as f64)
    };
    let _ = writeln!(
        out,
        "\nThrough a {} LRU cache (fully associative, write-back; {}-byte lines; {source}):",
        format_size(summary.cache.bytes),
        summary.cache.line_bytes
    );
    let _ = writeln!(
        out,
        "  Q DRAM      {:>18} bytes (read {}, written back {});  I = {intensity} OPS/B",
        group_digits(q),
        group_digits(summary.dram.read_bytes),
        group_digits(summary.dram.written_bytes),
    );
    let _ = writeln!(
        out,
        "  compulsory  {:>18} bytes (a cache that holds every line)",
        group_digits(summary.compulsory.total())
    );
    let _ = writeln!(
        out,
        "  accessed    {:>18} bytes (every load and store)",
        group_digits(summary.accessed_bytes)
    );
    if let Some(one_in) = summary.sampled_one_in {
        let _ = writeln!(
            out,
            "  (estimated: after {} line touches the simulation sampled the lines it follows, \
             1 in {one_in} by the end;\n   the figures at a cache that holds every line are exact)",
            group_digits(
                summary
                    .sampled_after
                    .unwrap_or(clflow_traffic::lru::EXACT_TOUCHES)
            )
        );
    }
    // Line rounding alone adds a little; say why only where it is more.
    if q as f64 > 1.01 * summary.accessed_bytes as f64 {
        let _ = writeln!(
            out,
            "  (more than accessed: the accesses use a small part of each line they miss)"
        );
    }
    let _ = writeln!(out, "\n  cache size      Q DRAM (bytes)  of accessed");
    for point in &summary.curve {
        let mark = if point.cache_bytes == summary.cache.bytes {
            "  <- this cache"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {:>10}  {:>18}  {:>11}{mark}",
            format_size(point.cache_bytes),
            group_digits(point.total()),
            percent(point.total(), summary.accessed_bytes)
        );
    }
    let c = &summary.coalescing;
    let all = c.bytes.total();
    let _ = writeln!(
        out,
        "\nCoalescing (neighbouring work-items' addresses), by bytes: contiguous {}, uniform {}, \
         strided {}, scattered {}",
        percent(c.bytes.contiguous, all),
        percent(c.bytes.uniform, all),
        percent(c.bytes.strided, all),
        percent(c.bytes.scattered, all)
    );
    if !c.sites.is_empty() {
        let _ = writeln!(
            out,
            "  {:<6} {:>16} {:>11} {:>8} {:>10} {:>10}  instruction",
            "kind", "bytes", "contiguous", "uniform", "strided", "scattered"
        );
    }
    for site in c.sites.iter().take(SITES_SHOWN) {
        let total = site.bytes.total();
        let _ = writeln!(
            out,
            "  {:<6} {:>16} {:>11} {:>8} {:>10} {:>10}  {}  ({:.0}% of each {}-byte line used)",
            site.kind,
            group_digits(total),
            percent(site.bytes.contiguous, total),
            percent(site.bytes.uniform, total),
            percent(site.bytes.strided, total),
            percent(site.bytes.scattered, total),
            site.description,
            100.0 * site.line_efficiency(c.line_bytes),
            c.line_bytes
        );
    }
    if c.sites.len() > SITES_SHOWN {
        let _ = writeln!(
            out,
            "  ... and {} more sites (--json lists all)",
            c.sites.len() - SITES_SHOWN
        );
    }
    // The other axis: a work-item's own walk, which a CPU runs alone.
    let mut walkers: Vec<_> = c.sites.iter().filter(|s| s.page_strides > 0).collect();
    walkers.sort_by_key(|s| std::cmp::Reverse(s.page_strides));
    if !walkers.is_empty() {
        let _ = writeln!(
            out,
            "\nPage strides: {} accesses a page or more past their work-item's last at the site, in \
             {} walks of {} or more\n  (a loop striding by the global size; a CPU runs each \
             work-item's walk alone: {} strides a work-item between barriers)",
            group_digits(c.page_strides()),
            group_digits(c.page_walks()),
            clflow_traffic::LONG_WALK,
            group_digits(c.page_strides() / c.page_walkers.max(1))
        );
        for site in walkers.iter().take(SITES_SHOWN) {
            let _ = writeln!(
                out,
                "  {:<6} {:>16}  {:>6} a walk  {}",
                site.kind,
                group_digits(site.page_strides),
                site.page_strides / site.page_walks.max(1),
                site.description
            );
        }
    }
    // Lines read a few of a page at a time, which no prefetcher follows.
    let visits = c.short_visits();
    let visited: u64 = visits.iter().sum();
    if visited > 0 {
        let by_length: Vec<String> = clflow_traffic::visits::VISIT_LENGTHS
            .iter()
            .zip(visits)
            .filter(|(_, n)| *n > 0)
            .map(|(length, n)| format!("{} in visits of {length}", group_digits(n)))
            .collect();
        let _ = writeln!(
            out,
            "
Short page visits: {} lines first touched a few of their page at a time ({}), \
             {} of the lines touched",
            group_digits(visited),
            by_length.join(", "),
            percent(
                visited * summary.cache.line_bytes,
                summary.compulsory.read_bytes + summary.compulsory.allocated_bytes
            )
        );
    }
    out
}

/// The line sizes to simulate for these devices' caches (the default line
/// when none has a cache).
pub fn line_sizes<'a>(caches: impl IntoIterator<Item = &'a Option<DeviceCache>>) -> Vec<u64> {
    let mut lines: Vec<u64> = Vec::new();
    for cache in caches.into_iter().flatten() {
        if !lines.contains(&cache.spec.line_bytes) {
            lines.push(cache.spec.line_bytes);
        }
    }
    if lines.is_empty() {
        lines.push(clflow_traffic::DEFAULT_LINE_BYTES);
    }
    lines
}

/// The cache simulation for these devices' caches: at their line sizes,
/// keeping each site's traffic at the sizes [`probed_caches`] names, and
/// fine enough to resolve every level above them.
pub fn traffic_analysis<'a>(
    caches: impl IntoIterator<Item = &'a Option<DeviceCache>> + Clone,
) -> TrafficAnalysis {
    let upper: Vec<u64> = caches
        .clone()
        .into_iter()
        .flatten()
        .flat_map(|c| c.upper.iter().map(|(_, bytes)| *bytes))
        .collect();
    TrafficAnalysis::new(&line_sizes(caches.clone()))
        .probing(&probed_caches(caches))
        .resolving(&upper)
}

/// A device's cache and the kernel's traffic through it.
pub fn device_traffic(device: &str, cache: &DeviceCache, report: &TrafficReport) -> DeviceTraffic {
    DeviceTraffic {
        device: device.to_string(),
        cache_source: cache.source.clone(),
        summary: report.summary(cache.spec),
        levels: report.levels(cache.spec, &cache.upper),
        cache_gathers: cache
            .upper
            .last()
            .and_then(|(_, above)| report.cache_gathers(cache.spec, *above)),
        cache_gather_table: cache
            .upper
            .last()
            .and_then(|(_, above)| report.cache_gather_table(cache.spec, *above)),
        order: None,
    }
}

/// The cache sizes a simulation keeps each site's traffic at: each
/// device's cache, and the level just above it where known (for
/// [`clflow_traffic::TrafficReport::cache_gathers`]).
pub fn probed_caches<'a>(
    caches: impl IntoIterator<Item = &'a Option<DeviceCache>>,
) -> Vec<CacheSpec> {
    caches
        .into_iter()
        .flatten()
        .flat_map(|c| {
            let above = c
                .upper
                .last()
                .map(|(_, bytes)| CacheSpec { bytes: *bytes, line_bytes: c.spec.line_bytes });
            std::iter::once(c.spec).chain(above)
        })
        .collect()
}

/// What `count --lines` shows of the cache simulation per source line: how
/// its accesses coalesce and its DRAM bytes (nothing where none ran).
pub fn line_caches(traffic: Option<&TrafficSummary>) -> BTreeMap<SourceLine, LineCache> {
    traffic.map_or_else(BTreeMap::new, |t| {
        t.coalescing
            .by_line()
            .into_iter()
            .map(|(line, (pattern, dram_bytes))| {
                let pattern = pattern.describe();
                (line, LineCache { pattern, dram_bytes })
            })
            .collect()
    })
}

/// One line: Q and I at a device's cache; `work` is W.
pub fn describe(traffic: &DeviceTraffic, work: u64) -> String {
    let summary = &traffic.summary;
    let q = summary.dram.total();
    let intensity = if q == 0 {
        "unbounded".to_string()
    } else {
        format!("{:.3}", work as f64 / q as f64)
    };
    let order = traffic
        .order
        .as_ref()
        .map_or(String::new(), |order| format!(", {order}"));
    format!(
        "Q DRAM {} bytes through a {} cache ({}{order}), I = {intensity} OPS/B; {:.0} % of bytes \
         coalesce",
        group_digits(q),
        summary.cache,
        traffic.cache_source,
        100.0 * summary.coalescing.bytes.coalesced() as f64
            / summary.coalescing.bytes.total().max(1) as f64
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clflow_devices::ProfileOrigin;

    fn profile(extra: &str) -> DatasheetProfile {
        let text = format!(
            "model = \"G\"\nvendor = \"V\"\ntype = \"gpu\"\nmatch = [\"G\"]\n\n[datasheet]\n\
             tdp_w = {{ value = 300, source = \"s\" }}\n{extra}"
        );
        DatasheetProfile::parse(&text, "g.toml", "g", ProfileOrigin::Embedded).unwrap()
    }

    #[test]
    fn the_cache_comes_from_the_option_the_datasheet_or_the_driver() {
        let llc = "last_level_cache_kib = { value = 51200, source = \"s\" }\n";
        let line = "cache_line_bytes = { value = 128, source = \"s\" }\n";
        let sector = "cache_sector_bytes = { value = 32, source = \"s\" }\n";
        let spec = |c: Option<DeviceCache>| c.map(|c| (c.spec.bytes, c.spec.line_bytes, c.source));
        // Sectors, where stated, are what DRAM traffic moves in.
        let sectored = profile(&format!("{llc}{line}{sector}"));
        assert_eq!(
            spec(cache_of(Some(&sectored), 1 << 20, 64)),
            Some((
                50 << 20,
                32,
                "datasheet profile g, in 32-byte sectors".into()
            ))
        );
        let lined = profile(&format!("{llc}{line}"));
        assert_eq!(spec(cache_of(Some(&lined), 0, 0)).unwrap().1, 128);
        // No cache in the datasheet: the driver's, with a sane line.
        let bare = profile("");
        let driver = spec(cache_of(Some(&bare), 1 << 20, 48)).unwrap();
        assert_eq!((driver.0, driver.1), (1 << 20, 64));
        // Nothing known at all is no cache.
        assert_eq!(spec(cache_of(None, 0, 0)), None);
    }

    #[test]
    fn the_cache_option_takes_a_size_or_a_profiles_name() {
        let catalog = ProfileCatalog::embedded().unwrap();
        let sized = parse_cache("1MiB", || &catalog).unwrap();
        assert_eq!((sized.spec.bytes, sized.spec.line_bytes), (1 << 20, 64));
        assert_eq!(sized.source, "--cache");
        // The H100's 50 MiB L2, filled in 32-byte sectors.
        let h100 = parse_cache("nvidia-h100-sxm", || &catalog).unwrap();
        assert_eq!((h100.spec.bytes, h100.spec.line_bytes), (50 << 20, 32));
        let bad = parse_cache("h100", || &catalog).unwrap_err();
        assert_eq!(
            bad.message,
            "--cache h100: `h100` is not a size (e.g. 40MiB, 512KiB, 128)"
        );
    }
}
