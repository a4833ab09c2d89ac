//! -O2 forms llvm-spirv-15 cannot translate, written as forms it can, so
//! that such kernels keep their -O2 module instead of the fallback's.
//!
//! * `freeze`, which -O2 makes of the dividend of a division whose
//!   remainder it then computes by multiplying back (`x / w` and `x % w`,
//!   the everyday way to split an index into a row and a column). A
//!   same-type `bitcast` is the copy a freeze is for a kernel that never
//!   reads an undefined value: it translates to an `OpBitcast` spirv-val
//!   accepts and the interpreter counts as no operation.
//! * Switches on integers of widths SPIR-V lacks, which -O2 makes of
//!   `switch (x & 3)` (`i2`: a hash's tail of one to three bytes) or of a
//!   value whose top bits it knows are clear (`i30`); llvm-spirv-15 rejects
//!   such types ("InvalidBitWidth"). The truncation becomes the `&` the
//!   source wrote (or one that changes no value) and the switch takes the
//!   32-bit value, its cases the same values.
//!
//! And one rewrite for the device's sake: an explicit float `mad(a, b, c)`
//! becomes `a * b` then `+ c`, each rounded. OpenCL lets `mad` round either
//! way, and llvm-spirv writes it and a contracted `a * b + c` as the same
//! instruction; runtimes (PoCL among them) round an explicit `mad` twice
//! and fuse a contracted one, so the interpreter does each as they do.

/// The LLVM IR text with each `%v = freeze T x` written `%v = bitcast T x
/// to T`, or `None` where there is none. A freeze this cannot read (of an
/// aggregate, which `bitcast` does not take, or of a constant expression)
/// stays, and the module goes to the fallback as before.
pub fn freezes_as_copies(ir: &str) -> Option<String> {
    if !ir.contains(" = freeze ") {
        return None;
    }
    rewrite_lines(ir, as_copy)
}

/// The text with each line `rewrite` takes replaced by what it returns, or
/// `None` where it takes none.
fn rewrite_lines(ir: &str, rewrite: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::with_capacity(ir.len() + 256);
    let mut changed = false;
    for line in ir.split_inclusive('\n') {
        match rewrite(line) {
            Some(new) => {
                out.push_str(&new);
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
    let (operand, attachments) = split_attachments(rest);
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
    Some(format!(
        "{result} = bitcast {ty} {value} to {ty}{attachments}"
    ))
}

/// The LLVM IR text with each `%t = trunc i32 %x to iN` (a width SPIR-V
/// lacks) whose value only `switch`es use written `%t = and i32 %x, M`
/// (M = 2^N - 1), and those switches and their cases on `i32` (`i2 -2` is
/// case 2); or `None` where there is no such switch, or where a narrow type
/// appears in any other form (then the module goes to the fallback as
/// before).
pub fn narrow_switches_widened(ir: &str) -> Option<String> {
    if !ir.lines().any(|line| narrow_width(line).is_some()) {
        return None;
    }
    let mut out = String::with_capacity(ir.len());
    // Per function: the names its truncations to a narrow type define.
    let mut narrowed: Vec<&str> = Vec::new();
    let lines: Vec<&str> = ir.split_inclusive('\n').collect();
    for (at, line) in lines.iter().enumerate() {
        if line.starts_with("define ") {
            narrowed = function_truncations(&lines[at..])?;
        }
        let Some(width) = narrow_width(line) else {
            out.push_str(line);
            continue;
        };
        let ty = format!("i{width}");
        let mask = (1u64 << width) - 1;
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        if let Some((name, rest)) = body.split_once(" = trunc i32 ") {
            let (operand, attachments) = split_attachments(rest);
            let value = operand.strip_suffix(&format!(" to {ty}"))?;
            out.push_str(&format!(
                "{indent}{name} = and i32 {value}, {mask}{attachments}"
            ));
        } else if let Some(rest) = body.strip_prefix(&format!("switch {ty} ")) {
            let name = rest.split(',').next()?;
            if !narrowed.contains(&name) {
                return None;
            }
            out.push_str(&format!("{indent}switch i32 {rest}"));
        } else if let Some(rest) = body.strip_prefix(&format!("{ty} ")) {
            let (value, target) = rest.split_once(", label ")?;
            let value = value.parse::<i64>().ok()? as u64 & mask;
            out.push_str(&format!("{indent}i32 {value}, label {target}"));
        } else {
            return None;
        }
    }
    Some(out)
}

/// The LLVM IR text with each call of a float `mad` overload written as an
/// `fmul` and an `fadd` (its fast-math flags on both), or `None` where
/// there is none.
pub fn explicit_mads_unfused(ir: &str) -> Option<String> {
    if !ir.contains("@_Z3mad") {
        return None;
    }
    rewrite_lines(ir, unfused_mad)
}

/// One line's `%r = call spir_func float @_Z3madfff(float noundef %a,
/// float noundef %b, float noundef %c) #3, !dbg !7` as `%clflow.mad.r =
/// fmul float %a, %b, !dbg !7` and `%r = fadd float %clflow.mad.r, %c,
/// !dbg !7`.
fn unfused_mad(line: &str) -> Option<String> {
    let (head, rest) = line.split_once(" = ")?;
    let (call, callee) = rest.split_once(" @_Z3mad")?;
    let mut words = call.split(' ');
    words.find(|w| *w == "call")?;
    const FLAGS: [&str; 8] = [
        "fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc",
    ];
    let flags: String = words
        .filter(|w| FLAGS.contains(w))
        .map(|w| format!(" {w}"))
        .collect();
    let (mangled, after) = callee.split_once('(')?;
    let ty = mad_type(mangled)?;
    let (args, tail) = split_call_args(after)?;
    // Each argument is `TYPE [noundef] VALUE`.
    let values: Vec<&str> = args
        .iter()
        .map(|arg| {
            let value = arg.trim().strip_prefix(ty.as_str())?.trim_start();
            Some(value.strip_prefix("noundef ").unwrap_or(value))
        })
        .collect::<Option<_>>()?;
    let [a, b, c] = values[..] else {
        return None;
    };
    // Past the call: its attribute group (`#3`), then attachments.
    let tail = tail.trim_start();
    let tail = match tail.strip_prefix('#') {
        Some(group) => group.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => tail,
    };
    let (_, attachments) = split_attachments(tail);
    let attached = attachments.trim_end_matches(['\n', '\r']);
    let eol = &attachments[attached.len()..];
    let indent = &head[..head.len() - head.trim_start().len()];
    let result = head.trim_start();
    let product = format!("%clflow.mad.{}", result.trim_start_matches('%'));
    Some(format!(
        "{indent}{product} = fmul{flags} {ty} {a}, {b}{attached}\n\
         {indent}{result} = fadd{flags} {ty} {product}, {c}{attached}{eol}"
    ))
}

/// The LLVM type of a float `mad` overload's mangled name past `_Z3mad`:
/// `fff` is `float`, `Dv4_dS_S_` is `<4 x double>`; `None` for others.
fn mad_type(mangled: &str) -> Option<String> {
    let scalar = |code: &str| match code {
        "f" => Some("float"),
        "d" => Some("double"),
        "Dh" => Some("half"),
        _ => None,
    };
    if let Some(vector) = mangled.strip_prefix("Dv") {
        let (lanes, rest) = vector.split_once('_')?;
        let lanes: u32 = lanes.parse().ok()?;
        let code = rest.strip_suffix("S_S_")?;
        return Some(format!("<{lanes} x {}>", scalar(code)?));
    }
    let code = match mangled {
        "fff" => "f",
        "ddd" => "d",
        "DhDhDh" => "Dh",
        _ => return None,
    };
    scalar(code).map(str::to_string)
}

/// A call's arguments, split at the commas outside any brackets, and the
/// text after its closing parenthesis.
fn split_call_args(text: &str) -> Option<(Vec<&str>, &str)> {
    let mut depth = 0usize;
    let mut start = 0;
    let mut args = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '<' | '[' | '{' | '(' => depth += 1,
            '>' | ']' | '}' => depth = depth.checked_sub(1)?,
            ')' if depth == 0 => {
                args.push(&text[start..i]);
                return Some((args, &text[i + 1..]));
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    None
}

/// An instruction's text and what follows it: its `, !dbg !7` attachments
/// and the line's end.
fn split_attachments(text: &str) -> (&str, &str) {
    let end = text
        .find(", !")
        .unwrap_or(text.trim_end_matches(['\n', '\r']).len());
    text.split_at(end)
}

/// The width of an integer type narrower than 32 bits that SPIR-V lacks
/// (`i1` is its bool) a line names, if any.
fn narrow_width(line: &str) -> Option<u32> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|word| word.strip_prefix('i')?.parse::<u32>().ok())
        .find(|&width| (2..32).contains(&width) && width != 8 && width != 16)
}

/// The names a function's truncations to a narrow type define, each of
/// which must be used by switches alone (`switch iN %t,`); `None` where one
/// is used otherwise. `lines` starts at the function's `define`.
fn function_truncations<'a>(lines: &[&'a str]) -> Option<Vec<&'a str>> {
    let end = lines.iter().position(|l| l.starts_with('}'))?;
    let body = &lines[..end];
    let names: Vec<&str> = body
        .iter()
        .filter(|l| narrow_width(l).is_some())
        .filter_map(|l| l.trim_start().split_once(" = trunc i32 "))
        .map(|(name, _)| name)
        .collect();
    if names.is_empty() {
        return Some(names);
    }
    // One pass over the body (a kernel's may be 10^5 lines with 10^3
    // truncations): each line's words against the set of names.
    let wanted: std::collections::HashSet<&str> = names.iter().copied().collect();
    for l in body {
        let l = l.trim_start();
        let defined = l.split_once(" = ").map(|(name, _)| name);
        let switched = l
            .starts_with("switch i")
            .then(|| l.split(' ').nth(2)?.strip_suffix(','))
            .flatten();
        let other_use = l
            .split([',', ' ', '\n', ')', ']'])
            .any(|word| wanted.contains(word) && Some(word) != defined && Some(word) != switched);
        if other_use {
            return None;
        }
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_mad_becomes_a_multiply_then_an_add_with_its_attachments() {
        let ir =
            "  %13 = tail call spir_func float @_Z3madfff(float noundef %6, float noundef %9, \
                  float noundef %12) #3, !dbg !40\n  ret void\n";
        assert_eq!(
            explicit_mads_unfused(ir).unwrap(),
            "  %clflow.mad.13 = fmul float %6, %9, !dbg !40\n  \
             %13 = fadd float %clflow.mad.13, %12, !dbg !40\n  ret void\n"
        );
    }

    #[test]
    fn a_vector_mad_keeps_its_constant_operands_and_fast_math_flags() {
        let ir = "  %v = call fast spir_func <2 x double> @_Z3madDv2_dS_S_(<2 x double> %a, \
                  <2 x double> <double 1.0, double 2.0>, <2 x double> noundef %c) #4";
        assert_eq!(
            explicit_mads_unfused(ir).unwrap(),
            "  %clflow.mad.v = fmul fast <2 x double> %a, <double 1.0, double 2.0>\n  \
             %v = fadd fast <2 x double> %clflow.mad.v, %c"
        );
    }

    #[test]
    fn other_calls_and_a_contracted_multiply_add_stay() {
        let ir = "  %1 = tail call float @llvm.fmuladd.f32(float %a, float %b, float %c)\n\
                  %2 = call spir_func i32 @_Z5mad24iii(i32 %x, i32 %y, i32 %z)\n\
                  declare spir_func float @_Z3madfff(float noundef, float noundef, float noundef)\n";
        assert_eq!(explicit_mads_unfused(ir), None);
    }

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

    #[test]
    fn a_two_bit_switch_takes_the_and_the_source_wrote() {
        let ir = "define void @k(i32 %0) {\n  %2 = trunc i32 %0 to i2\n  switch i2 %2, label %5 [\n    \
                  i2 0, label %3\n    i2 -2, label %4\n    i2 -1, label %4\n  ]\n3:\n  ret void\n}\n";
        assert_eq!(
            narrow_switches_widened(ir).unwrap(),
            "define void @k(i32 %0) {\n  %2 = and i32 %0, 3\n  switch i32 %2, label %5 [\n    \
             i32 0, label %3\n    i32 2, label %4\n    i32 3, label %4\n  ]\n3:\n  ret void\n}\n"
        );
    }

    #[test]
    fn three_and_thirty_bit_switches_are_widened_too() {
        let ir = "define void @k(i32 %0) {\n  %2 = trunc i32 %0 to i3, !dbg !9\n  \
                  switch i3 %2, label %5 [\n    i3 -1, label %4\n  ]\n}\n";
        assert_eq!(
            narrow_switches_widened(ir).unwrap(),
            "define void @k(i32 %0) {\n  %2 = and i32 %0, 7, !dbg !9\n  \
             switch i32 %2, label %5 [\n    i32 7, label %4\n  ]\n}\n"
        );
        let ir = "define void @k(i32 %0) {\n  %2 = trunc i32 %0 to i30\n  \
                  switch i30 %2, label %5 [\n    i30 -1, label %4\n  ]\n}\n";
        assert_eq!(
            narrow_switches_widened(ir).unwrap(),
            "define void @k(i32 %0) {\n  %2 = and i32 %0, 1073741823\n  \
             switch i32 %2, label %5 [\n    i32 1073741823, label %4\n  ]\n}\n"
        );
    }

    #[test]
    fn an_i2_used_otherwise_leaves_the_module_to_the_fallback() {
        let ir =
            "define void @k(i32 %0) {\n  %2 = trunc i32 %0 to i2\n  %3 = zext i2 %2 to i32\n  \
                  switch i2 %2, label %5 [\n    i2 0, label %4\n  ]\n}\n";
        assert_eq!(narrow_switches_widened(ir), None);
        let stored = "define void @k(i32 %0, i2* %p) {\n  %2 = trunc i32 %0 to i2\n  \
                      store i2 %2, i2* %p\n}\n";
        assert_eq!(narrow_switches_widened(stored), None);
        assert_eq!(narrow_switches_widened("  %1 = add i32 %0, 1\n"), None);
    }
}
