//! The facts about a module that `clflow compile` shows.

use rspirv::binary::Assemble;
use rspirv::dr::{Module, Operand};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleSummary {
    /// `1.0`, `1.4` ...
    pub spirv_version: String,
    /// The tool that wrote the module, as the SPIR-V registry names it,
    /// with its own version: `LLVM/SPIR-V Translator 14`.
    pub generator: String,
    /// One more than the largest id the module uses.
    pub id_bound: u32,
    pub size_words: usize,
    pub size_bytes: usize,
    /// `Addresses`, `Kernel`, `Int64` ...
    pub capabilities: Vec<String>,
    pub extensions: Vec<String>,
    /// Extended instruction sets imported: `OpenCL.std`.
    pub ext_inst_imports: Vec<String>,
    /// `Physical64 OpenCL`.
    pub memory_model: Option<String>,
}

pub fn summary(module: &Module) -> ModuleSummary {
    let (spirv_version, generator, id_bound) = match &module.header {
        Some(header) => {
            let (major, minor) = header.version();
            let (tool, version) = header.generator();
            (
                format!("{major}.{minor}"),
                format!("{tool} {version}"),
                header.bound,
            )
        }
        None => ("unknown".to_string(), "unknown".to_string(), 0),
    };
    let size_words = module.assemble().len();
    let operands_text = |inst: &rspirv::dr::Instruction| {
        inst.operands
            .iter()
            .map(|operand| match operand {
                Operand::LiteralString(text) => text.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    ModuleSummary {
        spirv_version,
        generator,
        id_bound,
        size_words,
        size_bytes: size_words * 4,
        capabilities: module.capabilities.iter().map(operands_text).collect(),
        extensions: module.extensions.iter().map(operands_text).collect(),
        ext_inst_imports: module.ext_inst_imports.iter().map(operands_text).collect(),
        memory_model: module.memory_model.as_ref().map(operands_text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_modules::sample_module_bytes;

    #[test]
    fn summarises_the_sample_module() {
        let bytes = sample_module_bytes();
        let summary = summary(&crate::load(&bytes).unwrap());
        assert_eq!(summary.spirv_version, "1.0");
        assert_eq!(summary.generator, "LLVM/SPIR-V Translator 14");
        assert_eq!(summary.size_bytes, bytes.len());
        assert_eq!(summary.size_words * 4, bytes.len());
        assert_eq!(
            summary.capabilities,
            ["Addresses", "Kernel", "Int64", "Int8"]
        );
        assert_eq!(summary.ext_inst_imports, ["OpenCL.std"]);
        assert_eq!(summary.memory_model.as_deref(), Some("Physical64 OpenCL"));
        assert!(summary.extensions.is_empty());
        assert_eq!(
            summary.id_bound,
            u32::from_le_bytes(bytes[12..16].try_into().unwrap())
        );
    }
}
