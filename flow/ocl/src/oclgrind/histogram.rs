//! Oclgrind's instruction histogram (`--inst-counts`), as it prints it:
//!
//! ```text
//! Instructions executed for kernel 'vadd':
//!             9216 - call _Z13get_global_idj()
//!             1024 - load global (8192 bytes)
//!             1024 - fadd
//! ```
//!
//! Counts are LLVM instructions executed over all work-items; loads and
//! stores are split by address space with the bytes they moved. Oclgrind
//! formats numbers with the locale's digit grouping, so "1,024" reads too.

use crate::error::{OclError, Result};
use clflow_core::AddressSpace;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const HEADER_START: &str = "Instructions executed for kernel '";

/// Memory instructions of one direction (loads or stores) in one address space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryOps {
    pub instructions: u64,
    pub bytes: u64,
}

/// Loads or stores per address space.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpaceTraffic {
    pub private: MemoryOps,
    pub global: MemoryOps,
    pub constant: MemoryOps,
    pub local: MemoryOps,
}

impl SpaceTraffic {
    pub fn get(&self, space: AddressSpace) -> MemoryOps {
        match space {
            AddressSpace::Private => self.private,
            AddressSpace::Global => self.global,
            AddressSpace::Constant => self.constant,
            AddressSpace::Local => self.local,
            // Oclgrind names only the four OpenCL 1.2 spaces.
            AddressSpace::Generic => MemoryOps::default(),
        }
    }

    fn slot(&mut self, oclgrind_name: &str) -> Option<&mut MemoryOps> {
        match oclgrind_name {
            "private" => Some(&mut self.private),
            "global" => Some(&mut self.global),
            "constant" => Some(&mut self.constant),
            "local" => Some(&mut self.local),
            _ => None,
        }
    }
}

/// One kernel's histogram.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionHistogram {
    pub kernel: String,
    /// LLVM opcode name (`add`, `fadd`, `getelementptr`, `call f()` ...) →
    /// times executed. Loads and stores are in `loads`/`stores` instead.
    pub ops: BTreeMap<String, u64>,
    pub loads: SpaceTraffic,
    pub stores: SpaceTraffic,
}

impl InstructionHistogram {
    /// Times `opcode` was executed; 0 when it never was.
    pub fn count(&self, opcode: &str) -> u64 {
        self.ops.get(opcode).copied().unwrap_or(0)
    }
}

/// Reads every histogram in `text` (one per kernel launch), skipping the
/// lines around them (Oclgrind's diagnostics, the program's own output).
pub fn parse_histograms(text: &str) -> Result<Vec<InstructionHistogram>> {
    let mut histograms = Vec::new();
    let mut current: Option<InstructionHistogram> = None;
    for (index, line) in text.lines().enumerate() {
        let fail = |problem: &str| OclError::Histogram {
            line_number: index + 1,
            line: line.to_string(),
            problem: problem.to_string(),
        };
        if let Some(rest) = line.trim().strip_prefix(HEADER_START) {
            histograms.extend(current.take());
            let kernel = rest
                .strip_suffix("':")
                .ok_or_else(|| fail("a kernel header ends in \"':\""))?;
            current =
                Some(InstructionHistogram { kernel: kernel.to_string(), ..Default::default() });
            continue;
        }
        let Some(histogram) = current.as_mut() else {
            continue;
        };
        if line.trim().is_empty() {
            // A blank line closes the histogram.
            histograms.extend(current.take());
            continue;
        }
        let (count, name) = line
            .trim()
            .split_once(" - ")
            .ok_or_else(|| fail("expected 'COUNT - INSTRUCTION'"))?;
        let count = parse_grouped(count).ok_or_else(|| fail("the count is not a number"))?;
        match parse_memory_op(name) {
            Some((is_load, space, bytes)) => {
                let traffic = if is_load {
                    &mut histogram.loads
                } else {
                    &mut histogram.stores
                };
                let slot = traffic
                    .slot(space)
                    .ok_or_else(|| fail("unknown address space"))?;
                let bytes =
                    parse_grouped(bytes).ok_or_else(|| fail("the byte count is not a number"))?;
                slot.instructions += count;
                slot.bytes += bytes;
            }
            None => *histogram.ops.entry(name.to_string()).or_insert(0) += count,
        }
    }
    histograms.extend(current);
    Ok(histograms)
}

/// `load global (8,192 bytes)` → (true, "global", "8,192").
fn parse_memory_op(name: &str) -> Option<(bool, &str, &str)> {
    let (direction, rest) = name.split_once(' ')?;
    let is_load = match direction {
        "load" => true,
        "store" => false,
        _ => return None,
    };
    let (space, rest) = rest.split_once(" (")?;
    let bytes = rest.strip_suffix(" bytes)")?;
    Some((is_load, space, bytes))
}

/// A number that may carry the locale's digit grouping ("1,024", "1.024",
/// "1 024"): every character must be a digit or a grouping mark.
fn parse_grouped(text: &str) -> Option<u64> {
    let text = text.trim();
    let grouping = |c: char| matches!(c, ',' | '.' | '\'' | ' ' | '\u{a0}' | '\u{202f}');
    if text.is_empty() || !text.chars().all(|c| c.is_ascii_digit() || grouping(c)) {
        return None;
    }
    text.chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VADD: &str = include_str!("../../tests/fixtures/vadd-1024.inst-counts.txt");
    const TWO_KERNELS: &str = include_str!("../../tests/fixtures/two-kernels.inst-counts.txt");

    #[test]
    fn reads_the_vadd_histogram() {
        let histograms = parse_histograms(VADD).unwrap();
        assert_eq!(histograms.len(), 1);
        let h = &histograms[0];
        assert_eq!(h.kernel, "vadd");
        assert_eq!(h.count("fadd"), 1024);
        assert_eq!(
            h.loads.global,
            MemoryOps { instructions: 2048, bytes: 8192 }
        );
        assert_eq!(
            h.stores.global,
            MemoryOps { instructions: 1024, bytes: 4096 }
        );
        assert_eq!(h.loads.get(AddressSpace::Local), MemoryOps::default());
        assert!(!h
            .ops
            .keys()
            .any(|k| k.starts_with("load") || k.starts_with("store")));
    }

    #[test]
    fn reads_several_kernels_and_every_address_space() {
        let histograms = parse_histograms(TWO_KERNELS).unwrap();
        let kernels: Vec<&str> = histograms.iter().map(|h| h.kernel.as_str()).collect();
        assert_eq!(kernels, ["reduce", "scale"]);
        let reduce = &histograms[0];
        assert!(reduce.loads.local.bytes > 0 && reduce.stores.local.bytes > 0);
        assert!(reduce.count("call _Z7barrierj()") > 0);
    }

    #[test]
    fn reads_locale_grouped_numbers() {
        let text = "Instructions executed for kernel 'k':\n\
                    \x20          1,048,576 - add\n\
                    \x20              2.048 - load constant (8.192 bytes)\n\n";
        let h = &parse_histograms(text).unwrap()[0];
        assert_eq!(h.count("add"), 1_048_576);
        assert_eq!(
            h.loads.constant,
            MemoryOps { instructions: 2048, bytes: 8192 }
        );
    }

    #[test]
    fn rejects_malformed_lines_naming_them() {
        let text = "noise before\nInstructions executed for kernel 'k':\n   12 add\n";
        let err = parse_histograms(text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Oclgrind histogram line 3: expected 'COUNT - INSTRUCTION': '   12 add'"
        );
        let text = "Instructions executed for kernel 'k':\n 4 - load generic (16 bytes)\n";
        assert!(parse_histograms(text)
            .unwrap_err()
            .to_string()
            .contains("unknown address space"));
        assert!(parse_histograms("no histogram here\n").unwrap().is_empty());
    }
}
