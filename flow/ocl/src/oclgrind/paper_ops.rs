//! The paper's selection of operations for W (section 5, Figure 5: the
//! lookup3 kernel's Oclgrind histogram), written once for everything that
//! compares clflow's counts with Oclgrind's.

/// The selection as `clflow count --ops` spells it. `div` is clflow's alias
/// for every divide (integer and float, see `clflow_interp::OpSet`).
pub const PAPER_OPS: &str = "add,xor,sub,shl,lshr,or,getelementptr,icmp,mul,and,div";

/// The same selection as the LLVM instruction names Oclgrind's histogram
/// prints ([`super::InstructionHistogram::ops`]): summing these over a
/// histogram gives the W that `--ops` [`PAPER_OPS`] gives in clflow.
pub const PAPER_LLVM_OPS: &[&str] = &[
    // Integer add, also the loop counters and index arithmetic.
    "add",
    // Bitwise xor: lookup3's mixing.
    "xor",
    // Integer subtract.
    "sub",
    // Shift left, and logical shift right (lookup3's rotations are a
    // shl + lshr + or each at -O0).
    "shl",
    "lshr",
    // Bitwise or.
    "or",
    // Address computation: one per indexed pointer access.
    "getelementptr",
    // Integer compare (loop exits, bounds tests).
    "icmp",
    // Integer multiply.
    "mul",
    // Bitwise and.
    "and",
    // The paper's `div`. Its histogram (lookup3, unsigned keys) shows only
    // `udiv`; `sdiv` and `fdiv` are kept too because clflow's `div` counts
    // OpUDiv, OpSDiv and OpFDiv alike, so both sides measure the same set
    // on kernels that divide signed integers or floats. The remainders
    // (`urem`, `srem`, `frem`) are not divides in either spelling.
    "udiv",
    "sdiv",
    "fdiv",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The two spellings stay in step: every name of `PAPER_OPS` is an
    /// LLVM name of the list, `div` standing for the three divides.
    #[test]
    fn llvm_names_spell_out_the_ops_selection() {
        let expanded: Vec<&str> = PAPER_OPS
            .split(',')
            .flat_map(|op| match op {
                "div" => vec!["udiv", "sdiv", "fdiv"],
                other => vec![other],
            })
            .collect();
        assert_eq!(expanded, PAPER_LLVM_OPS);
    }
}
