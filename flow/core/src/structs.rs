//! Structs that kernel parameters point to, as the module lays them out:
//! what a manifest's `type = "struct Node"` is checked against and what
//! sizes its buffer.

use crate::ElementType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A struct (or union) a pointer parameter points to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructType {
    /// As the kernel's source names it: `struct Node`, or a typedef: `Body`.
    pub name: String,
    /// Bytes per struct, its stride in an array; `None` where the module
    /// only names the struct (`struct Fwd;`, or a pointer it made `i8*`).
    pub size_bytes: Option<usize>,
    /// The members in order, as the module declares them: clang may add
    /// `uchar[N]` padding members, and integers carry no sign in SPIR-V,
    /// so they read unsigned.
    pub members: Vec<StructMember>,
}

/// One member of a [`StructType`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StructMember {
    pub offset_bytes: usize,
    pub size_bytes: usize,
    /// The scalar or vector the member holds (`count` of them for an
    /// array); `None` for a nested struct or an array of them.
    pub element: Option<ElementType>,
    /// 1, or the array's length (nested arrays multiplied out).
    pub count: usize,
}

impl fmt::Display for StructMember {
    /// `float4 @0`, `uchar[8] @24`, `struct (4 bytes)[2] @0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.element {
            Some(element) => write!(f, "{element}")?,
            None => write!(f, "struct ({} bytes)", self.size_bytes / self.count.max(1))?,
        }
        if self.count != 1 {
            write!(f, "[{}]", self.count)?;
        }
        write!(f, " @{}", self.offset_bytes)
    }
}

impl StructType {
    /// `struct Node (16 bytes: uint @0, uint @4, float @8, uchar[3] @12)`.
    pub fn layout_text(&self) -> String {
        let Some(size) = self.size_bytes else {
            return format!("{} (its size is not in the module)", self.name);
        };
        let members: Vec<String> = self.members.iter().map(ToString::to_string).collect();
        format!("{} ({size} bytes: {})", self.name, members.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_read_as_declared() {
        let member = |offset_bytes, size_bytes, element: Option<&str>, count| StructMember {
            offset_bytes,
            size_bytes,
            element: element.map(|e| e.parse().unwrap()),
            count,
        };
        let node = StructType {
            name: "struct Node".into(),
            size_bytes: Some(16),
            members: vec![
                member(0, 4, Some("uint"), 1),
                member(4, 8, None, 2),
                member(12, 3, Some("uchar"), 3),
            ],
        };
        assert_eq!(
            node.layout_text(),
            "struct Node (16 bytes: uint @0, struct (4 bytes)[2] @4, uchar[3] @12)"
        );
        let opaque = StructType {
            name: "struct Fwd".into(),
            size_bytes: None,
            members: Vec::new(),
        };
        assert_eq!(
            opaque.layout_text(),
            "struct Fwd (its size is not in the module)"
        );
    }
}
