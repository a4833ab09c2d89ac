//! Source lines without the rest of the debug information. llvm-spirv-15
//! writes `OpLine` only with LLVM's debug locations, and then also an
//! `OpenCL.DebugInfo.100` description of the program that needs SPIR-V 1.1
//! and that spirv-val rejects (its `DebugFunction`s). The compile stage
//! translates such a module at 1.1 and keeps only `OpLine`, `OpNoLine` and
//! the file names here: a SPIR-V 1.0 module that computes what the module
//! without line information computes.

use crate::SpirvError;
use spirv::Op;

/// Extended instruction sets that describe the program and compute nothing.
pub const DEBUG_SETS: [&str; 3] = ["OpenCL.DebugInfo.100", "SPIRV.debug", "NonSemantic."];

/// Whether `name` is an extended instruction set that computes nothing.
pub fn is_debug_set(name: &str) -> bool {
    DEBUG_SETS.iter().any(|set| name.starts_with(set))
}

/// The module without its debug instruction sets, at SPIR-V 1.0, or
/// `None` when it uses none (the bytes are then left as they are). Done on
/// the words: a module reader takes the sets' global instructions for
/// misplaced function code.
pub fn strip_debug_info(bytes: &[u8]) -> Result<Option<Vec<u8>>, SpirvError> {
    if bytes.len() < 20 {
        return Err(SpirvError::TooShort { bytes: bytes.len() });
    }
    if !bytes.len().is_multiple_of(4) {
        return Err(SpirvError::NotWordAligned { bytes: bytes.len() });
    }
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let mut instructions = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let (index, offset) = (instructions.len(), at * 4);
        if count == 0 {
            return Err(SpirvError::ZeroWordCount { index, offset });
        }
        if at + count > words.len() {
            return Err(SpirvError::Truncated {
                index,
                offset,
                declared: count,
                available: words.len() - at,
            });
        }
        instructions.push(&words[at..at + count]);
        at += count;
    }
    let sets: Vec<u32> = instructions
        .iter()
        .filter(|i| opcode(i) == Op::ExtInstImport as u32 && i.len() > 2)
        .filter(|i| is_debug_set(&literal_string(&i[2..])))
        .map(|i| i[1])
        .collect();
    if sets.is_empty() {
        return Ok(None);
    }
    let debug = |i: &[u32]| match opcode(i) {
        op if op == Op::ExtInstImport as u32 => sets.contains(&i[1]),
        op if op == Op::ExtInst as u32 => i.len() > 3 && sets.contains(&i[3]),
        // What a 1.0 consumer would not know: the producer's note.
        op => op == Op::ModuleProcessed as u32,
    };
    let mut out: Vec<u32> = words[..5].to_vec();
    out[1] = 0x0001_0000;
    for i in instructions.into_iter().filter(|i| !debug(i)) {
        out.extend_from_slice(i);
    }
    Ok(Some(out.iter().flat_map(|w| w.to_le_bytes()).collect()))
}

fn opcode(instruction: &[u32]) -> u32 {
    instruction[0] & 0xffff
}

/// A nul-terminated UTF-8 literal packed into words.
fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_sets_are_told_by_name() {
        assert!(is_debug_set("OpenCL.DebugInfo.100"));
        assert!(is_debug_set("NonSemantic.Shader.DebugInfo.100"));
        assert!(!is_debug_set("OpenCL.std"));
    }
}
