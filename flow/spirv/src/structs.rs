//! Pointers to structs: the struct's name as the source spells it, and its
//! size and members as the module lays them out.
//!
//! llvm-spirv-15 declares the struct and points at it (`OpTypePointer
//! CrossWorkgroup %struct_Node`); a module translated from opaque LLVM
//! pointers may point at `i8` instead, and then only a declaration of the
//! struct elsewhere in the module (named `struct.Node` by clang) gives its
//! layout. Where none does, the size stays unknown rather than guessed.

use crate::arg_types::SpelledType;
use crate::types::{Scalar, Type, Types};
use clflow_core::{ElementType, StructMember, StructType};
use spirv::Word;
use std::collections::HashMap;

/// The struct a pointer parameter points to, if it points to one that has
/// a name (the source's spelling, else the module's `OpName`).
pub(crate) fn pointee_struct(
    types: &Types,
    names: &HashMap<Word, &str>,
    pointee: Word,
    spelled: Option<&SpelledType>,
) -> Option<StructType> {
    let spelled = spelled
        .filter(|s| s.is_pointer && !s.is_void_pointer() && s.element().is_none())
        .map(|s| s.base.as_str());
    let module_name = || names.get(&pointee).map(|name| source_name(name));
    match types.get(pointee).ok()? {
        Type::Struct { .. } => {
            let name = spelled.map(str::to_string).or_else(module_name)?;
            Some(laid_out(types, name, pointee))
        }
        Type::Opaque => Some(StructType {
            name: spelled.map(str::to_string).or_else(module_name)?,
            size_bytes: None,
            members: Vec::new(),
        }),
        // An opaque pointer: the struct may be declared for its other uses.
        Type::Scalar(Scalar::Int(8)) => {
            let spelled = spelled?;
            match declared_struct(types, names, spelled) {
                Some(id) => Some(laid_out(types, spelled.to_string(), id)),
                // A typedef of no struct the module declares may be a byte.
                None if is_tagged(spelled) => Some(StructType {
                    name: spelled.to_string(),
                    size_bytes: None,
                    members: Vec::new(),
                }),
                None => None,
            }
        }
        _ => None,
    }
}

fn is_tagged(name: &str) -> bool {
    name.starts_with("struct ") || name.starts_with("union ")
}

/// Clang's name for a struct type (`struct.Node`, `struct.Node.3` when
/// renamed, `union.U`) as the source writes it: `struct Node`.
fn source_name(llvm: &str) -> String {
    let (tag, rest) = llvm.split_once('.').unwrap_or(("", llvm));
    let name = match rest.rsplit_once('.') {
        Some((name, suffix)) if suffix.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => rest,
    };
    match tag {
        "struct" | "union" => format!("{tag} {name}"),
        _ => llvm.to_string(),
    }
}

/// The struct type the module declares under the spelled name: `struct X`
/// and `union X` by their tag, a typedef `T` as clang names an anonymous
/// struct given that typedef (`struct.T`).
fn declared_struct(types: &Types, names: &HashMap<Word, &str>, spelled: &str) -> Option<Word> {
    let wanted: Vec<String> = if is_tagged(spelled) {
        vec![spelled.to_string()]
    } else {
        vec![format!("struct {spelled}"), format!("union {spelled}")]
    };
    let mut found: Vec<Word> = names
        .iter()
        .filter(|(id, name)| {
            wanted.contains(&source_name(name))
                && matches!(types.get(**id), Ok(Type::Struct { .. }))
        })
        .map(|(id, _)| *id)
        .collect();
    found.sort_unstable();
    found.first().copied()
}

fn laid_out(types: &Types, name: String, id: Word) -> StructType {
    let size_bytes = types
        .layout(id)
        .ok()
        .and_then(|layout| usize::try_from(layout.size).ok());
    let members = match types.get(id) {
        Ok(Type::Struct { members, .. }) => members
            .iter()
            .enumerate()
            .map_while(|(index, &member)| {
                let offset = types.member_offset(id, index as u64).ok()?;
                let size = types.layout(member).ok()?.size;
                let (element, count) = shape(types, member, 0);
                Some(StructMember {
                    offset_bytes: usize::try_from(offset).ok()?,
                    size_bytes: usize::try_from(size).ok()?,
                    element,
                    count,
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    StructType { name, size_bytes, members }
}

/// A member's element and how many it holds, arrays of arrays multiplied.
fn shape(types: &Types, id: Word, depth: u32) -> (Option<ElementType>, usize) {
    match types.get(id) {
        Ok(Type::Array { element, length: Some(length) }) if depth < 64 => {
            let (inner, count) = shape(types, *element, depth + 1);
            (inner, count.saturating_mul(*length as usize))
        }
        _ => (types.element(id, false), 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clang_names_read_as_the_source_writes_them() {
        assert_eq!(source_name("struct.Node"), "struct Node");
        assert_eq!(source_name("struct.Node.12"), "struct Node");
        assert_eq!(source_name("union.fu_t"), "union fu_t");
        assert_eq!(source_name("struct.a.b"), "struct a.b");
        assert_eq!(source_name("Body"), "Body");
    }
}
