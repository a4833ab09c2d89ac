//! What a count measures, and how W, Q and I come out of it.
//!
//! # Counting rules
//!
//! * **Histogram.** Every executed instruction is counted per SPIR-V opcode
//!   (OpenCL.std builtins by their own name: `mad`, `sqrt`, `rotate`) and per
//!   element type, in *lanes*: a `float4` add counts 4. Integers are named
//!   unsigned (`uint`) unless the operation is signed (`OpSDiv` on `int`).
//!   Comparisons are typed by their operands, boolean logic is `bool`,
//!   address computations (`OpInBoundsPtrAccessChain` ...) are `ptr`.
//!   Control flow (`OpBranch`, `OpSwitch`, `OpReturn`, `OpFunctionCall`) and
//!   `OpPhi` are counted once per execution. An instruction without a
//!   result is `void` (`OpBranch`, `OpReturn`, `OpControlBarrier`, a call of
//!   a void function), unless it is about one value: stores are typed by
//!   the value stored, `OpSwitch` by its selector, `OpBranchConditional`
//!   by its `bool` condition. Counting is per basic block: a
//!   block's static counts times the number of times it ran.
//! * **Operations (W)** count each instruction in its *base form*, lanes
//!   times operations per lane:
//!   `fma`, `mad` = mul + add (2); `mad24`, `mad_hi`, `mad_sat` = mul + add
//!   (2); `rotate` = shl + lshr + or (3); `mix` = sub + mul + add (3);
//!   `clamp`, `fclamp` = max + min (2); `OpDot` of n lanes = n mul + (n-1)
//!   add; `length` = n mul + (n-1) add + sqrt; `distance` = n sub + n mul +
//!   (n-1) add + sqrt; `normalize` = n mul + (n-1) add + rsqrt + n mul;
//!   `cross` = 6 mul + 3 sub; llvm-spirv's emulation of LLVM's funnel
//!   shifts (`spirv.llvm_fshl_*`, what clang makes of the rotate idiom
//!   `(x << k) | (x >> (32 - k))`), listed as `llvm.fshl`, = shl + lshr + or
//!   (3), not the five operations of the emulation.
//!   A work-group or sub-group reduction or scan (`OpGroupIAdd`,
//!   `OpGroupFMax` ...) is one operation per work-item under its own name;
//!   broadcasts and votes (`OpGroupAll`) move values only. Every other
//!   arithmetic instruction or builtin is one operation per lane under its
//!   own name. A multi-operation
//!   builtin is selected through its base operations (`--ops mul` counts the
//!   multiply of every `mad`), never by its own name: `--ops fma` is an
//!   error that names the base operations to select instead.
//! * **Op classes.** `int`: integer and boolean arithmetic, bitwise ops,
//!   shifts, comparisons and address computations (Oclgrind's
//!   `getelementptr`, which the paper counts); `fp32`, `fp64`, `fp16`: float
//!   arithmetic, comparisons and math builtins by width; `arith`: all four.
//!   `work`: the algorithm's operations (see Roles): every float operation,
//!   and the integer operations whose role is work, so not the index
//!   arithmetic, loop counters and bound tests that `arith` counts (vadd:
//!   4,096 of `arith`'s 20,480); builtins in their base form as always; and
//!   the atomics that compute as they update (`atomic_add`, `atomic_inc`,
//!   `atomic_min`, `atomic_and` ...: one operation per work-item) where their
//!   role is work (a histogram's increments; not a slot taken for an
//!   index), which are no class's arithmetic. It is
//!   the default of `count`, `analyze`, `predict` and `split` (a check suite
//!   says its own `ops`, `arith` where it says none).
//!   Loads, stores, conversions, `OpSelect`, `OpPhi`, atomics, control flow
//!   and register moves are not arithmetic; conversions, select, phi and
//!   atomics can still be selected by name.
//! * **Op lists.** `--ops add,xor,...` selects base operations by SPIR-V
//!   name (`OpIAdd`, `IAdd`), OpenCL.std name (`sqrt`) or LLVM/Oclgrind alias:
//!   add sub mul udiv sdiv urem srem div rem shl lshr ashr and or xor icmp
//!   fadd fsub fmul fdiv frem fneg fcmp getelementptr zext sext trunc fpext
//!   fptrunc fptoui fptosi uitofp sitofp select phi. `zext` and `trunc` both
//!   name `OpUConvert` (SPIR-V does not tell them apart).
//! * **Roles.** Every histogram lane and every operation in W also carries
//!   what its result is for, decided once per SPIR-V function from its
//!   def-use graph (a backward fixpoint over uses):
//!   `address` when it only locates memory (a load's or store's pointer, an
//!   access chain's base and indexes, vload/vstore offsets, image
//!   coordinates, async and memory copies), `control` when it only decides
//!   the path (`OpBranchConditional`'s condition, `OpSwitch`'s selector),
//!   and `work` otherwise: a stored value, a return value, an atomic's values,
//!   what printf prints, a value nothing reads.
//!   Arithmetic, conversions, access chains, selects and phis pass their
//!   own role on to their operands, so an index computed only for an access
//!   chain is address however many operations make it. A value with both
//!   address and control uses is `address`, one with a work use `work`:
//!   a loop counter that is tested and indexes memory is address, its
//!   increment with it, its compare control. An instruction without a result
//!   is `control` if it is a branch, switch or return (with a value or
//!   without), else `work`. A call's argument has the role its parameter has
//!   in the callee (callees are classified first); one the callee never
//!   reads is work. Values kept in memory are work (a store's value is), so `-O0` code, which
//!   keeps every variable in private memory, shows less address and control
//!   than the same kernel at `-O2`. `count` prints every arithmetic
//!   operation's split by role (`Arithmetic by role: work 4,096, address
//!   12,288, control 4,096` for vadd; `arith_by_role` in `--json`), and
//!   `W_by_role` and `ops_by_role` split the selected op set's W.
//! * **Q.** Bytes loaded and stored in `__global` and `__constant` memory
//!   (atomics count as one load and one store of their width; `vload`,
//!   `vstore`, memcpy and async work-group copies by the bytes they move).
//!   `compulsory` is the number of distinct `line_bytes` lines read plus the
//!   number written, times `line_bytes`: the traffic of a cold cache large
//!   enough to hold the working set. `__local` and `__private` traffic is
//!   reported apart and is not part of Q. An access through a generic
//!   pointer counts in the space its value points into, as it runs
//!   (histogram `OpLoad generic`, `OpStore generic`).
//! * **Images.** An image is a `__global` buffer of texels. `read_image*`
//!   and `write_image*` count their texels' bytes in global traffic (Q) as
//!   they run: one texel per read or write, and with `CLK_FILTER_LINEAR` the
//!   2 (1D), 4 (2D) or 8 (3D) texels filtered, less any that lie on the
//!   border (`CLK_ADDRESS_CLAMP`), which are read from no memory. The
//!   histogram names them `OpImageRead global`, `OpImageSampleExplicitLod
//!   global` and `OpImageWrite global`, typed by the texel (`float`, `uint`)
//!   in 4 lanes. Addressing, filtering and format conversion are no
//!   operations in W; image queries (`get_image_width` ...) are counted in
//!   the histogram only.
//! * **I.** `accessed` = W / Q accessed, `compulsory` = W / Q compulsory
//!   (§4.2's walls); `min` and `max` are the lower and the higher of the two.

pub use clflow_counts::{
    group_digits, render_lines, render_text, Branches, ByRole, CountReport, Counts, Gathers,
    HistogramEntry, IntensityReport, LaneType, LineCache, LineCounts, LineReport, LoopChains,
    OpClass, OpSet, ParseOpSetError, Role, SimdUse, SourceLine, Space, SpaceBytes, SpaceReport,
    TrafficReport, WorkKey, WorkReport, SIMD_WIDTHS,
};
