//! Bytes → module, with every malformation reported rather than panicked on.
//!
//! rspirv's parser trusts each instruction's word count when it slices out a
//! string operand, so a count that runs past the end of the module would
//! panic inside it. We walk the instruction stream first and refuse such a
//! module ourselves; rspirv then only ever sees a well-framed stream.
//!
//! rspirv also reads an `OpSpecConstantOp`'s operands by the inner
//! opcode's grammar once each, so a variable number of them (an access
//! chain's indexes: `global int *p = &t[1];`) fails to load. Those whose
//! operands are all ids are read here instead ([`SpecConstantOps`]).

use crate::SpirvError;
use rspirv::binary::ParseState;
use rspirv::dr::{Module, Operand};
use rspirv::grammar::{OperandKind, INSTRUCTION_TABLE};

/// The first word of every SPIR-V module.
pub const SPIRV_MAGIC: u32 = 0x0723_0203;

const WORD: usize = 4;
pub(crate) const HEADER_WORDS: usize = 5;

/// Loads a little-endian SPIR-V module.
pub fn load(bytes: &[u8]) -> Result<Module, SpirvError> {
    let words = words_of(bytes)?;
    check_header(&words)?;
    check_framing(&words)?;
    let spec_ops = SpecConstantOps::take(&words);
    let stream: Vec<u8> = spec_ops
        .words
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let mut module = rspirv::dr::load_bytes(&stream).map_err(from_parse_state)?;
    spec_ops.restore(&mut module);
    // rspirv keeps the version and bound but not the generator word; the
    // summary names the tool that wrote the module, so restore it.
    if let Some(header) = module.header.as_mut() {
        header.generator = words[2];
    }
    Ok(module)
}

pub(crate) fn words_of(bytes: &[u8]) -> Result<Vec<u32>, SpirvError> {
    if bytes.len() < HEADER_WORDS * WORD {
        return Err(SpirvError::TooShort { bytes: bytes.len() });
    }
    if !bytes.len().is_multiple_of(WORD) {
        return Err(SpirvError::NotWordAligned { bytes: bytes.len() });
    }
    Ok(bytes
        .chunks_exact(WORD)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}

fn check_header(words: &[u32]) -> Result<(), SpirvError> {
    match words[0] {
        SPIRV_MAGIC => Ok(()),
        found if found == SPIRV_MAGIC.swap_bytes() => Err(SpirvError::BigEndian),
        found => Err(SpirvError::WrongMagic { found }),
    }
}

/// Every instruction's word count must be at least one and stay inside the
/// module.
fn check_framing(words: &[u32]) -> Result<(), SpirvError> {
    let mut at = HEADER_WORDS;
    let mut index = 1;
    while at < words.len() {
        let declared = (words[at] >> 16) as usize;
        let available = words.len() - at;
        if declared == 0 {
            return Err(SpirvError::ZeroWordCount { index, offset: at * WORD });
        }
        if declared > available {
            return Err(SpirvError::Truncated { index, offset: at * WORD, declared, available });
        }
        at += declared;
        index += 1;
    }
    Ok(())
}

/// The module's words with each `OpSpecConstantOp` whose inner operands
/// are all ids cut to a form rspirv reads (a `Bitcast` of its first
/// operand), and those operands kept, to be put back once it has.
struct SpecConstantOps {
    words: Vec<u32>,
    /// Result id → the operands as rspirv would give them.
    operands: Vec<(u32, Vec<Operand>)>,
}

impl SpecConstantOps {
    const OPCODE: u32 = 52;

    fn take(words: &[u32]) -> SpecConstantOps {
        let mut out = words[..HEADER_WORDS].to_vec();
        let mut operands = Vec::new();
        let mut at = HEADER_WORDS;
        while at < words.len() {
            let count = (words[at] >> 16) as usize;
            let inst = &words[at..at + count];
            at += count;
            let inner = (inst[0] & 0xffff == Self::OPCODE && count >= 5)
                .then(|| INSTRUCTION_TABLE.lookup_opcode(inst[3]))
                .flatten()
                .filter(|g| {
                    g.operands.iter().all(|o| {
                        matches!(
                            o.kind,
                            OperandKind::IdResultType | OperandKind::IdResult | OperandKind::IdRef
                        )
                    })
                });
            let Some(inner) = inner else {
                out.extend_from_slice(inst);
                continue;
            };
            let mut kept = vec![Operand::LiteralSpecConstantOpInteger(inner.opcode)];
            kept.extend(inst[4..].iter().map(|id| Operand::IdRef(*id)));
            operands.push((inst[2], kept));
            const BITCAST: u32 = 124;
            out.extend_from_slice(&[(5 << 16) | Self::OPCODE, inst[1], inst[2], BITCAST, inst[4]]);
        }
        SpecConstantOps { words: out, operands }
    }

    fn restore(self, module: &mut rspirv::dr::Module) {
        for (id, operands) in self.operands {
            if let Some(inst) = module
                .types_global_values
                .iter_mut()
                .find(|i| i.result_id == Some(id))
            {
                inst.operands = operands;
            }
        }
    }
}

fn from_parse_state(state: ParseState) -> SpirvError {
    match state {
        ParseState::OpcodeUnknown(offset, index, opcode) => {
            SpirvError::UnknownOpcode { opcode, index, offset }
        }
        // The loader's own complaints (an unclosed function ...) read best
        // without the parser's "consumer error" wrapping.
        ParseState::ConsumerError(err) => SpirvError::Malformed { detail: err.to_string() },
        other => SpirvError::Malformed { detail: other.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_modules::sample_module_bytes;

    #[test]
    fn loads_a_module_and_keeps_its_generator() {
        let bytes = sample_module_bytes();
        let module = load(&bytes).unwrap();
        let header = module.header.unwrap();
        assert_eq!(header.version(), (1, 0));
        assert_eq!(header.generator, 0x0006_000e);
    }

    #[test]
    fn short_unaligned_and_foreign_bytes_are_named() {
        assert_eq!(load(&[]).unwrap_err(), SpirvError::TooShort { bytes: 0 });
        assert_eq!(
            load(&[0; 19]).unwrap_err(),
            SpirvError::TooShort { bytes: 19 }
        );
        let mut bytes = sample_module_bytes();
        bytes.push(0);
        assert_eq!(
            load(&bytes).unwrap_err(),
            SpirvError::NotWordAligned { bytes: bytes.len() }
        );
        let text = b"__kernel void f(__global int *a) { }\n\0\0\0";
        assert_eq!(
            load(text).unwrap_err(),
            SpirvError::WrongMagic { found: u32::from_le_bytes(*b"__ke") }
        );
        let mut swapped = sample_module_bytes();
        swapped[..4].copy_from_slice(&SPIRV_MAGIC.to_be_bytes());
        assert_eq!(load(&swapped).unwrap_err(), SpirvError::BigEndian);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = sample_module_bytes();
        for words in 0..bytes.len() / WORD {
            let cut = &bytes[..words * WORD];
            if let Ok(module) = load(cut) {
                // A cut between instructions can still be a well-formed
                // prefix only while no function is left open.
                assert!(words >= HEADER_WORDS, "loaded {words} words");
                assert!(module.functions.iter().all(|f| f.end.is_some()));
            }
        }
        // The first instruction (OpCapability, 2 words) cut after 1 word.
        assert_eq!(
            load(&bytes[..(HEADER_WORDS + 1) * WORD]).unwrap_err(),
            SpirvError::Truncated { index: 1, offset: 20, declared: 2, available: 1 }
        );
        // Without its final OpFunctionEnd the last function stays open.
        let unclosed = load(&bytes[..bytes.len() - WORD]).unwrap_err();
        assert_eq!(
            unclosed.to_string(),
            "malformed SPIR-V module: found unclosed function"
        );
    }

    #[test]
    fn corrupted_words_give_errors_not_panics() {
        let bytes = sample_module_bytes();
        let patterns = [
            0u32,
            1,
            0xffff_ffff,
            0x0001_ffff,
            0x00ff_0011,
            0x0002_0005,
            0x0100_0000,
        ];
        // Every word of the module replaced by each pattern in turn: load
        // either succeeds or names the problem.
        for at in HEADER_WORDS..bytes.len() / WORD {
            for pattern in patterns {
                let mut corrupt = bytes.clone();
                corrupt[at * WORD..at * WORD + WORD].copy_from_slice(&pattern.to_le_bytes());
                if let Err(err) = load(&corrupt) {
                    assert!(!err.to_string().is_empty());
                }
            }
        }
    }

    #[test]
    fn unknown_opcodes_are_named() {
        let mut bytes = sample_module_bytes();
        // The first instruction after the header, re-coded as opcode 0xfff0
        // with its word count kept.
        let first = u32::from_le_bytes(bytes[20..24].try_into().unwrap());
        let recoded = (first & 0xffff_0000) | 0xfff0;
        bytes[20..24].copy_from_slice(&recoded.to_le_bytes());
        match load(&bytes) {
            Err(SpirvError::UnknownOpcode { opcode, index, offset }) => {
                assert_eq!((opcode, index, offset), (0xfff0, 1, 20));
            }
            other => panic!("expected an unknown-opcode error, got {other:?}"),
        }
    }
}
