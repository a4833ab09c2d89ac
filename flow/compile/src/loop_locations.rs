//! Line tables without their one effect on code. With debug information,
//! clang gives every loop an `!llvm.loop` node that holds nothing but the
//! loop's start and end locations; llvm-spirv-15 puts a loop that has such a
//! node in its simplified form (an extra preheader and exit block, each a
//! lone `OpBranch`), which the same kernel without line tables does not
//! get. Dropping the attachments of location-only nodes keeps the module
//! block for block the one built without line tables, so that line
//! information changes no count.

use std::collections::{HashMap, HashSet};

/// The LLVM IR text without `!llvm.loop` attachments whose node holds
/// only its own id and `DILocation`s; loop nodes with anything else (an
/// unroll pragma) are kept.
pub fn drop_location_only_loops(ir: &str) -> String {
    let definitions: HashMap<&str, &str> = ir
        .lines()
        .filter_map(|line| line.split_once(" = "))
        .filter(|(name, _)| name.starts_with('!') && name[1..].bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let is_location = |name: &str| {
        definitions
            .get(name)
            .is_some_and(|body| body.starts_with("!DILocation("))
    };
    let location_only: HashSet<&str> = definitions
        .iter()
        .filter(|(name, body)| {
            let Some(operands) = body
                .strip_prefix("distinct !{")
                .and_then(|rest| rest.strip_suffix('}'))
            else {
                return false;
            };
            let mut operands = operands.split(", ");
            operands.next() == Some(name) && operands.all(is_location)
        })
        .map(|(name, _)| *name)
        .collect();
    if location_only.is_empty() {
        return ir.to_string();
    }
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        match line.find(", !llvm.loop !") {
            Some(at) => {
                let rest = &line[at + ", !llvm.loop ".len()..];
                let end = rest[1..]
                    .find(|c: char| !c.is_ascii_digit())
                    .map_or(rest.len(), |e| e + 1);
                if location_only.contains(&rest[..end]) {
                    out.push_str(&line[..at]);
                    out.push_str(&rest[end..]);
                } else {
                    out.push_str(line);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "\
  br i1 %68, label %28, label %21, !dbg !33, !llvm.loop !47
  br i1 %9, label %2, label %3, !llvm.loop !50
!33 = !DILocation(line: 64, column: 5, scope: !8)
!47 = distinct !{!47, !33, !48}
!48 = !DILocation(line: 70, column: 5, scope: !8)
!50 = distinct !{!50, !33, !51}
!51 = !{!\"llvm.loop.unroll.disable\"}
";

    #[test]
    fn only_location_only_loop_nodes_lose_their_attachment() {
        let out = drop_location_only_loops(IR);
        assert!(out.contains("br i1 %68, label %28, label %21, !dbg !33\n"));
        assert!(out.contains("br i1 %9, label %2, label %3, !llvm.loop !50\n"));
        // The nodes themselves stay: unreferenced metadata is legal.
        assert!(out.contains("!47 = distinct !{!47, !33, !48}"));
    }

    #[test]
    fn ir_without_loop_nodes_is_left_as_it_is() {
        let ir = "define void @f() {\n  ret void\n}\n";
        assert_eq!(drop_location_only_loops(ir), ir);
    }
}
