//! Kernel argument types as the source spelled them.
//!
//! SPIR-V integers carry no sign and typedefs vanish, but clang records each
//! kernel's argument types (`kernel_arg_type` metadata) and llvm-spirv, given
//! `--preserve-ocl-kernel-arg-type-metadata-through-string`, keeps them as
//!
//! ```text
//! OpString "kernel_arg_type.scale.uint*,float4*,hash_t,"
//! OpString "kernel_arg_type_qual.scale.const,,,"
//! ```

use clflow_core::ElementType;
use rspirv::dr::{Module, Operand};
use spirv::Op;
use std::collections::HashMap;

/// One argument's type as spelled in the kernel's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpelledType {
    /// `uint`, `hash_t`, `pair_t`: the pointee for a pointer, without `*`.
    pub base: String,
    pub is_pointer: bool,
    /// Qualifiers such as `const`, `volatile`, `restrict`, space-separated.
    pub qualifiers: String,
}

impl SpelledType {
    /// The OpenCL element the spelling names, if it is a built-in scalar or
    /// vector or a standard typedef of one (spir64 widths; a mismatch with
    /// the module's own width is caught by the caller).
    pub fn element(&self) -> Option<ElementType> {
        let standard = match self.base.as_str() {
            "size_t" | "uintptr_t" => "ulong",
            "ptrdiff_t" | "intptr_t" => "long",
            other => other,
        };
        standard.parse().ok()
    }

    /// Whether the spelling is `void*`, whose pointee SPIR-V shows as bytes.
    pub fn is_void_pointer(&self) -> bool {
        self.is_pointer && self.base == "void"
    }

    /// `const uint*`, `hash_t`, as a declaration would read.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for qualifier in self.qualifiers.split_whitespace() {
            // `restrict` qualifies the pointer, not the pointee; keep the
            // rendering short by leaving it out.
            if qualifier != "restrict" {
                text.push_str(qualifier);
                text.push(' ');
            }
        }
        text.push_str(&self.base);
        if self.is_pointer {
            text.push('*');
        }
        text
    }
}

/// Spelled argument types per kernel name, where the module keeps them.
pub(crate) fn spelled_types(module: &Module) -> HashMap<String, Vec<SpelledType>> {
    let mut types: HashMap<String, Vec<String>> = HashMap::new();
    let mut qualifiers: HashMap<String, Vec<String>> = HashMap::new();
    for inst in &module.debug_string_source {
        if inst.class.opcode != Op::String {
            continue;
        }
        let Some(Operand::LiteralString(text)) = inst.operands.first() else {
            continue;
        };
        // Qualifiers first: "kernel_arg_type." is a prefix of neither.
        if let Some((kernel, list)) = split_record(text, "kernel_arg_type_qual.") {
            qualifiers.insert(kernel, list);
        } else if let Some((kernel, list)) = split_record(text, "kernel_arg_type.") {
            types.insert(kernel, list);
        }
    }
    types
        .into_iter()
        .map(|(kernel, list)| {
            let quals = qualifiers.remove(&kernel).unwrap_or_default();
            let spelled = list
                .into_iter()
                .enumerate()
                .map(|(index, ty)| spell(&ty, quals.get(index).map(String::as_str).unwrap_or("")))
                .collect();
            (kernel, spelled)
        })
        .collect()
}

/// `kernel_arg_type.<kernel>.<t0>,<t1>,` → (kernel, [t0, t1]). Kernel names
/// are C identifiers, so the first `.` after the prefix ends the name.
fn split_record(text: &str, prefix: &str) -> Option<(String, Vec<String>)> {
    let rest = text.strip_prefix(prefix)?;
    let (kernel, list) = rest.split_once('.')?;
    let list = list.strip_suffix(',').unwrap_or(list);
    let entries = if list.is_empty() && !rest.ends_with(',') {
        Vec::new()
    } else {
        list.split(',').map(|t| t.trim().to_string()).collect()
    };
    Some((kernel.to_string(), entries))
}

fn spell(ty: &str, qualifiers: &str) -> SpelledType {
    let ty = ty.trim();
    let (base, is_pointer) = match ty.strip_suffix('*') {
        Some(base) => (base.trim(), true),
        None => (ty, false),
    };
    // Clang writes `struct S*` for an untypedef'd struct; keep the tag.
    SpelledType {
        base: base.to_string(),
        is_pointer,
        qualifiers: qualifiers.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::dr::Builder;

    #[test]
    fn reads_types_and_qualifiers_per_kernel() {
        let mut b = Builder::new();
        b.string("kernel_arg_type.scale.uint*,float4*,hash_t,size_t,void*,");
        b.string("kernel_arg_type_qual.scale.const,,,,restrict const,");
        b.string("kernel_arg_type.empty.");
        b.string("unrelated string");
        let module = b.module();
        let spelled = spelled_types(&module);
        let scale = &spelled["scale"];
        let rendered: Vec<String> = scale.iter().map(SpelledType::render).collect();
        assert_eq!(
            rendered,
            ["const uint*", "float4*", "hash_t", "size_t", "const void*"]
        );
        assert_eq!(
            scale[0].element().map(|e| e.to_string()),
            Some("uint".into())
        );
        assert_eq!(scale[2].element(), None);
        assert_eq!(
            scale[3].element().map(|e| e.to_string()),
            Some("ulong".into())
        );
        assert!(scale[4].is_void_pointer() && !scale[0].is_void_pointer());
        assert!(spelled["empty"].is_empty());
        assert_eq!(spelled.len(), 2);
    }
}
