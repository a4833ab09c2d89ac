//! `freeze` as the copy it is for a kernel that never reads an undefined
//! value. -O2 freezes the dividend of a division whose remainder it then
//! computes by multiplying back (`x / w` and `x % w`, the everyday way to
//! split an index into a row and a column), and llvm-spirv-15 cannot
//! translate `freeze`. A same-type `bitcast` is the same copy: it
//! translates to an `OpBitcast` spirv-val accepts and the interpreter
//! counts as no operation, so such kernels keep their -O2 module.

/// The LLVM IR text with each `%v = freeze T x` written `%v = bitcast T x
/// to T`, or `None` where there is none. A freeze this cannot read (of an
/// aggregate, which `bitcast` does not take, or of a constant expression)
/// stays, and the module goes to the fallback as before.
pub fn freezes_as_copies(ir: &str) -> Option<String> {
    if !ir.contains(" = freeze ") {
        return None;
    }
    let mut out = String::with_capacity(ir.len() + 64);
    let mut changed = false;
    for line in ir.split_inclusive('\n') {
        match as_copy(line) {
            Some(copy) => {
                out.push_str(&copy);
                changed = true;
            }
            None => out.push_str(line),
        }
    }
    changed.then_some(out)
}

/// One line's freeze as a bitcast: `  %5 = freeze i32 %4, !dbg !7` becomes
/// `  %5 = bitcast i32 %4 to i32, !dbg !7`.
fn as_copy(line: &str) -> Option<String> {
    let (result, rest) = line.split_once(" = freeze ")?;
    let body = rest.trim_end_matches(['\n', '\r']);
    let (operand, attachments) = match body.find(", !") {
        Some(at) => body.split_at(at),
        None => (body, ""),
    };
    let (ty, value) = operand.rsplit_once(' ')?;
    let simple_value = value.starts_with('%')
        || value.parse::<i128>().is_ok()
        || [
            "true",
            "false",
            "poison",
            "undef",
            "null",
            "zeroinitializer",
        ]
        .contains(&value);
    let aggregate = ty.starts_with('{') || ty.starts_with('[') || ty.starts_with("<{");
    if !simple_value || aggregate || ty.is_empty() {
        return None;
    }
    let newline = &rest[body.len()..];
    Some(format!(
        "{result} = bitcast {ty} {value} to {ty}{attachments}{newline}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_and_vector_freezes_become_copies_with_their_attachments() {
        let ir = "define void @k() {\n  %5 = freeze i32 %4\n  %6 = udiv i32 %5, %2\n  \
                  %9 = freeze <4 x i32> %8, !dbg !17\n  ret void\n}\n";
        assert_eq!(
            freezes_as_copies(ir).unwrap(),
            "define void @k() {\n  %5 = bitcast i32 %4 to i32\n  %6 = udiv i32 %5, %2\n  \
             %9 = bitcast <4 x i32> %8 to <4 x i32>, !dbg !17\n  ret void\n}\n"
        );
    }

    #[test]
    fn a_pointers_freeze_becomes_a_copy_and_an_aggregates_stays() {
        let ir = "  %p = freeze float addrspace(1)* %q\n  %s = freeze { i32, i32 } %t\n";
        assert_eq!(
            freezes_as_copies(ir).unwrap(),
            "  %p = bitcast float addrspace(1)* %q to float addrspace(1)*\n  \
             %s = freeze { i32, i32 } %t\n"
        );
    }

    #[test]
    fn text_without_a_freeze_is_left_alone() {
        assert_eq!(freezes_as_copies("  %1 = add i32 %0, %freeze\n"), None);
        // Only a freeze of an aggregate: nothing to change.
        assert_eq!(freezes_as_copies("  %s = freeze { i32 } %t\n"), None);
    }
}
