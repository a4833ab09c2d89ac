//! The formatter against C: every expected string below is what glibc's
//! printf prints for the same format and values (checked with a C program),
//! or, for what C lacks (vectors), what OpenCL C 6.12.13 describes.

use super::{print, Value};
use clflow_bytecode::PrintfKind;

/// An argument as a kernel passes it.
enum A {
    /// An int (chars and shorts arrive promoted to one).
    I(i64),
    /// A long.
    L(i64),
    /// A double (floats arrive promoted to one).
    D(f64),
    /// A float that was not promoted.
    F(f32),
    /// A string literal.
    S(&'static str),
    /// A pointer, as clflow encodes it.
    P(u64),
    /// A vector: its element kind and lanes.
    V(PrintfKind, Vec<u64>),
}

use A::*;

/// String literals live at these pointers in the tests.
const STRINGS: u64 = 0x4000_0100_0000_0000;

fn printf(format: &str, args: &[A]) -> Result<String, String> {
    let strings: Vec<&str> = args
        .iter()
        .filter_map(|a| match a {
            S(s) => Some(*s),
            _ => None,
        })
        .collect();
    let mut next_string = 0;
    let lanes: Vec<(PrintfKind, Vec<u64>)> = args
        .iter()
        .map(|a| match a {
            I(v) => (PrintfKind::Int(32), vec![*v as u64 & 0xffff_ffff]),
            L(v) => (PrintfKind::Int(64), vec![*v as u64]),
            D(v) => (PrintfKind::Float(64), vec![v.to_bits()]),
            F(v) => (PrintfKind::Float(32), vec![v.to_bits() as u64]),
            S(_) => {
                next_string += 1;
                (PrintfKind::Pointer, vec![STRINGS + next_string - 1])
            }
            P(p) => (PrintfKind::Pointer, vec![*p]),
            V(kind, lanes) => (*kind, lanes.clone()),
        })
        .collect();
    let values: Vec<Value> = lanes
        .iter()
        .map(|(kind, lanes)| Value { kind: *kind, lanes })
        .collect();
    let read = |p: u64, max: Option<usize>| -> Result<Vec<u8>, String> {
        let s = strings
            .get(p.wrapping_sub(STRINGS) as usize)
            .ok_or("it points into __global memory, not to a string literal")?;
        Ok(s.bytes().take(max.unwrap_or(usize::MAX)).collect())
    };
    let mut out = Vec::new();
    print(format.as_bytes(), &values, &read, &mut out)?;
    Ok(String::from_utf8(out).expect("UTF-8"))
}

fn ok(format: &str, args: &[A]) -> String {
    printf(format, args).unwrap_or_else(|e| panic!("{format}: {e}"))
}

/// The error, which must quote `names`.
fn refused(format: &str, args: &[A], names: &str) -> String {
    let e = printf(format, args).expect_err(format);
    assert!(e.contains(names), "{format}: `{e}` does not name `{names}`");
    e
}

fn ints(bits: u8, lanes: &[i64]) -> A {
    let mask = crate::opencl_std::mask(bits);
    V(
        PrintfKind::Int(bits),
        lanes.iter().map(|v| *v as u64 & mask).collect(),
    )
}

fn floats(lanes: &[f32]) -> A {
    V(
        PrintfKind::Float(32),
        lanes.iter().map(|v| v.to_bits() as u64).collect(),
    )
}

#[test]
fn text_and_percent_pass_through() {
    assert_eq!(ok("plain text\n", &[]), "plain text\n");
    assert_eq!(ok("100%% sure", &[]), "100% sure");
    // Arguments past the format are evaluated and ignored.
    assert_eq!(ok("x", &[I(1), D(2.0)]), "x");
}

#[test]
fn signed_decimal_with_flags_width_and_precision() {
    let args = [-7, 0, 0, 7, -7, -7, -7, -7, 7, -7, 0, 0, 0].map(I);
    assert_eq!(
        ok(
            "%d|%+d|% d|%+ d|%0+5d|%5d|%-5d|%.3d|%+.3d|%05.3d|%.0d|%+.0d|% .0d",
            &args
        ),
        "-7|+0| 0|+7|-0007|   -7|-7   |-007|+007| -007||+| "
    );
    assert_eq!(
        ok("%i %i", &[I(i32::MIN as i64), I(i32::MAX as i64)]),
        "-2147483648 2147483647"
    );
}

#[test]
fn unsigned_octal_and_hex() {
    let args = [0, 0, 8, 8, 8, 0, 0, 0, 255, 255, 255, 255].map(I);
    assert_eq!(
        ok(
            "%x|%#x|%#o|%#.3o|%#5o|%.0o|%#.0o|%#.0x|%.5x|%08.3x|%-8.3x|%#08x",
            &args
        ),
        "0|0|010|010|  010||0||000ff|     0ff|0ff     |0x0000ff"
    );
    assert_eq!(
        ok("%u %X %#X", &[I(-1), I(0xabcdef), I(0xab)]),
        "4294967295 ABCDEF 0XAB"
    );
}

#[test]
fn flags_a_conversion_ignores() {
    let args = [
        S("ab"),
        I(3),
        I(5),
        I(5),
        I(5),
        I(255),
        I('a' as i64),
        I('b' as i64),
    ];
    assert_eq!(
        ok("%05s|%-05d|%+u|% u|%#d|%+x|%05c|%#c", &args),
        "   ab|3    |5|5|5|ff|    a|b"
    );
}

#[test]
fn length_modifiers_convert_to_their_type() {
    // Chars and shorts arrive as ints; the modifier converts them back.
    let args = [
        I(-1),
        I(255),
        I(-300),
        I(65000),
        I(0xab),
        L(i64::MIN),
        L(-1),
        L(0xdead_beef_cafe),
        L(8),
    ];
    assert_eq!(
        ok("%hhd|%hhu|%hd|%hu|%hhx|%ld|%lu|%lx|%lo", &args),
        "-1|255|-300|65000|ab|-9223372036854775808|18446744073709551615|deadbeefcafe|10"
    );
    assert_eq!(ok("%hhd %hu", &[I(0x1ff), I(0x12345)]), "-1 9029");
}

#[test]
fn a_wider_integer_prints_its_low_bits_as_devices_do() {
    // `%d` of a size_t (get_global_id): the int the low 32 bits make.
    assert_eq!(
        ok("%d %u %x", &[L(-2), L(0x1_0000_0005), L(0x1_ffff_ffff)]),
        "-2 5 ffffffff"
    );
}

#[test]
fn characters_and_strings() {
    assert_eq!(
        ok(
            "%c|%-5c|%3c",
            &[I('x' as i64), I('y' as i64), I('z' as i64)]
        ),
        "x|y    |  z"
    );
    // The int is converted to an unsigned char.
    assert_eq!(ok("%c", &[I(0x141)]), "A");
    assert_eq!(ok("%c", &[I(0)]), "\0");
    assert_eq!(
        ok(
            "%5.1s|%.0s|%-4s|%.10s|%s|%s",
            &[S("xyz"), S("abc"), S("ab"), S("hi"), S(""), S("héllo")]
        ),
        "    x||ab  |hi||héllo"
    );
}

#[test]
fn pointers_print_as_glibc_prints_them() {
    let p = 0x4000_0000_0000_0010;
    assert_eq!(
        ok("%p|%p|%20p|%-20p|", &[P(0), P(p), P(0x10), P(0)]),
        "(nil)|0x4000000000000010|                0x10|(nil)               |"
    );
    let args = [P(0x10), P(0x10), P(0x10), P(0x10), P(0x10), P(0x10), P(0)];
    assert_eq!(
        ok("%020p|%+p|% p|%#p|%.5p|%-+20p|%020p", &args),
        "0x000000000000000010|+0x10| 0x10|0x10|0x00010|+0x10               |               (nil)"
    );
}

#[test]
fn fixed_and_exponent_round_ties_to_even() {
    let args = [0.125, 0.375, 0.5, 1.5, 2.5, 0.25, 1.0005, 2.5, 3.5].map(D);
    assert_eq!(
        ok("%.2f|%.2f|%.0f|%.0f|%.0f|%.1f|%.3e|%.0e|%.0e", &args),
        "0.12|0.38|0|2|2|0.2|1.000e+00|2e+00|4e+00"
    );
    assert_eq!(
        ok("%.17g|%.20f|%.3f", &[D(0.1), D(0.1), D(-0.0005)]),
        "0.10000000000000001|0.10000000000000000555|-0.001"
    );
    assert_eq!(
        ok(
            "%f|%.10f|%e|%.10e|%g|%.12g",
            &[D(5e-324), D(1e-5), D(5e-324), D(1e22), D(1e22), D(1e22)]
        ),
        "0.000000|0.0000100000|4.940656e-324|1.0000000000e+22|1e+22|1e+22"
    );
}

#[test]
fn large_doubles_print_every_digit() {
    assert_eq!(ok("%e|%g", &[D(1e300), D(1e300)]), "1.000000e+300|1e+300");
    let f = ok("%f", &[D(1e300)]);
    assert!(f.starts_with("10000000000000000525047602552044202487044685811081591549158541"));
    assert!(f.ends_with("86865459400540160.000000"), "{f}");
    assert_eq!(f.len(), 301 + 7);
}

#[test]
fn general_form_picks_fixed_or_exponent() {
    let args = [
        0.0,
        100000.0,
        1e6,
        1e-4,
        1e-5,
        1e-5,
        1.0,
        0.5,
        123456789.0,
        0.000123456,
        9.9999995,
    ];
    assert_eq!(
        ok("%g|%g|%g|%g|%g|%#g|%#.3g|%.0g|%g|%g|%g", &args.map(D)),
        "0|100000|1e+06|0.0001|1e-05|1.00000e-05|1.00|0.5|1.23457e+08|0.000123456|10"
    );
    let args = [
        1e-10, 12345.678, -0.0, 999.5, 9995.0, 0.0009995, 1.23456, 2.0, 123.0, 0.0,
    ];
    assert_eq!(
        ok(
            "%G|%E|%g|%.3g|%.3g|%.3g|%10.4g|%-10.3e|%+.2e|%e",
            &args.map(D)
        ),
        "1E-10|1.234568E+04|-0|1e+03|1e+04|0.000999|     1.235|2.000e+00 |+1.23e+02|0.000000e+00"
    );
    assert_eq!(
        ok("%#.0f|%#.0e|%#g|%#.1g", &[D(3.0), D(3.0), D(3.0), D(3.0)]),
        "3.|3.e+00|3.00000|3."
    );
}

#[test]
fn infinities_and_nans_pad_with_spaces() {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let args = [nan, nan, inf, -nan, -inf, -nan, -nan, inf, inf, -inf, inf];
    assert_eq!(
        ok(
            "%+f|% f|%05f|%+e|%+f|%f|%F|%5f|%-6f|%06f|%+06f",
            &args.map(D)
        ),
        "+nan| nan|  inf|-nan|-inf|-nan|-NAN|  inf|inf   |  -inf|  +inf"
    );
    assert_eq!(
        ok("%G %A %e", &[D(inf), D(-inf), F(f32::NAN)]),
        "INF -INF nan"
    );
}

#[test]
fn hexadecimal_floats() {
    let args = [
        1.5,
        3.0,
        1.15625,
        1.21875,
        5e-324,
        f64::from_bits(0x000f_ffff_ffff_ffff),
        5e-324,
        1.0,
        1.0,
        1.0,
        1.0,
        1.0,
    ];
    assert_eq!(
        ok("%.0a|%.0a|%.1a|%.1a|%a|%a|%.3a|%#.0a|%010a|%-10a|%+a|% a", &args.map(D)),
        "0x2p+0|0x2p+1|0x1.2p+0|0x1.4p+0|0x0.0000000000001p-1022|0x0.fffffffffffffp-1022|0x0.000p-1022|0x1.p+0|0x00001p+0|0x1p+0    |+0x1p+0| 0x1p+0"
    );
    let args = [0.1, 255.0, 1.9999, 1.96875, -0.0, f64::MAX];
    assert_eq!(
        ok("%a|%A|%.0a|%.1a|%a|%a", &args.map(D)),
        "0x1.999999999999ap-4|0X1.FEP+7|0x2p+0|0x2.0p+0|-0x0p+0|0x1.fffffffffffffp+1023"
    );
    let args = [
        D(1.0),
        D(1.0),
        D(1.0),
        D(1.998046875),
        D(1.03125),
        D(f64::from_bits(2)),
    ];
    assert_eq!(
        ok("%.3a|%.13a|%.14a|%.2a|%.1a|%.0a", &args),
        "0x1.000p+0|0x1.0000000000000p+0|0x1.00000000000000p+0|0x2.00p+0|0x1.0p+0|0x0p-1022"
    );
}

#[test]
fn a_float_not_promoted_prints_its_exact_value() {
    assert_eq!(
        ok("%f %.17f %a", &[F(0.1), F(0.1), F(0.1)]),
        "0.100000 0.10000000149011612 0x1.99999ap-4"
    );
    // `l` changes nothing of a float conversion.
    assert_eq!(ok("%lf", &[D(2.5)]), "2.500000");
}

#[test]
fn vectors_convert_each_element_and_join_them_with_commas() {
    assert_eq!(
        ok("%v4hlf", &[floats(&[1.5, 2.0, 3.0, 4.0])]),
        "1.500000,2.000000,3.000000,4.000000"
    );
    assert_eq!(ok("%5.1v2hlf|", &[floats(&[1.5, -2.0])]), "  1.5, -2.0|");
    assert_eq!(ok("%v2hla", &[floats(&[0.1, 1.0])]), "0x1.99999ap-4,0x1p+0");
    assert_eq!(ok("%v2hd", &[ints(16, &[-1, 2])]), "-1,2");
    assert_eq!(ok("%v3hhu", &[ints(8, &[1, 2, 255])]), "1,2,255");
    assert_eq!(ok("%#v2lx", &[ints(64, &[10, 11])]), "0xa,0xb");
    assert_eq!(ok("%+v2hli", &[ints(32, &[-5, 5])]), "-5,+5");
    assert_eq!(
        ok("%v16hhx", &[ints(8, &(0..16).collect::<Vec<_>>())]),
        "0,1,2,3,4,5,6,7,8,9,a,b,c,d,e,f"
    );
    let doubles = V(
        PrintfKind::Float(64),
        vec![0.25f64.to_bits(), (-1e10f64).to_bits()],
    );
    assert_eq!(ok("%v2lg", &[doubles]), "0.25,-1e+10");
    // Half vectors take `h`: 1.0 and -2.0 in binary16.
    let halves = V(PrintfKind::Float(16), vec![0x3c00, 0xc000]);
    assert_eq!(ok("%v2hf", &[halves]), "1.000000,-2.000000");
}

#[test]
fn what_opencl_c_forbids_is_refused_by_name() {
    // A vector's length modifier is required.
    refused("%v4f", &[floats(&[1.0; 4])], "`%v4f`");
    refused("%v2d", &[ints(32, &[1, 2])], "length modifier");
    refused("%*d", &[I(5), I(1)], "`*`");
    refused("%.*f", &[I(5), D(1.0)], "`%.*`");
    refused("%lld", &[L(1)], "`%lld`");
    refused("%zu", &[L(1)], "`%zu`");
    refused("%Lf", &[D(1.0)], "`%Lf`");
    refused("%n", &[P(1)], "`%n`");
    refused("%5%", &[], "`%5%`");
    refused("%k", &[I(1)], "`%k`");
    refused("%é", &[I(1)], "`%é`");
    refused("50%", &[], "`%`");
    refused("%v5hd", &[ints(16, &[1; 5])], "2, 3, 4, 8 or 16");
    refused("%hlf", &[D(1.0)], "vectors only");
    refused("%hld", &[I(1)], "vectors only");
    refused("%v4hhf", &[floats(&[1.0; 4])], "hh");
    refused("%v4hlc", &[ints(32, &[1; 4])], "vector specifier");
    refused("%lc %ls", &[I(1), S("a")], "`%lc`");
    refused("%hf", &[D(1.0)], "length modifier");
    refused("%100000d", &[I(1)], "65536");
}

#[test]
fn arguments_of_another_kind_are_refused() {
    refused("%d %d", &[I(1)], "`%d` has no argument");
    refused("%ld", &[I(-2)], "64-bit");
    refused("%d", &[D(1.0)], "double");
    refused("%f", &[I(1)], "32-bit integer");
    refused("%s", &[I(1)], "`%s`");
    refused("%s", &[P(0x4000_0000_0000_0000)], "__global");
    refused("%p", &[I(1)], "pointer");
    refused("%c", &[D(1.0)], "character");
    refused("%d", &[floats(&[1.0; 4])], "%v4hld");
    refused("%v4hlf", &[floats(&[1.0, 2.0])], "vector of 2 floats");
    refused(
        "%v2hlf",
        &[ints(32, &[1, 2])],
        "vector of 2 32-bit integers",
    );
    refused("%v2hd", &[ints(32, &[1, 2])], "16-bit");
}
