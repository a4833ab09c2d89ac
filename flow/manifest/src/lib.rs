//! Kernel manifests: one kernel launch and the inputs it runs on.
//!
//! W and Q depend on the inputs, so a manifest names them exactly: the
//! kernel, its NDRange and the value of every argument. [`Manifest::load`]
//! reads a TOML manifest or an Oclgrind `.sim` file; [`Manifest::check`]
//! checks it against the kernel's real signature, giving a
//! [`CheckedManifest`]; [`CheckedManifest::materialize`] builds the
//! [`clflow_core::Launch`] that the interpreter and every device runner share.
//!
//! # The TOML manifest
//!
//! ```toml
//! name = "lookup3"                 # optional: the case's name in reports
//! description = "Bob Jenkins' lookup3, one work-item per key"   # optional
//! source = "lookup3.cl"            # OpenCL C, relative to the manifest
//! kernel = "hash"
//! build_options = "-DKEY_MAX=60"   # optional, passed to every compiler
//! global_size = [8388608]          # 1 to 3 dimensions
//! local_size = [256]               # optional; divides global_size (under -cl-std=CL2.0/CL3.0 the last group may be smaller)
//! global_offset = [0]              # optional, same dimensions as global_size
//!
//! [[arg]]                          # one per kernel parameter, in order
//! name = "keys"                    # optional, used in reports and errors
//! description = "key bytes"        # optional
//! type = "uchar"                   # OpenCL element type; vectors too: float4, int3 ...
//! file = "data/keys.bin"           # one initialiser (see below), or none for zeros
//! access = "ro"                    # ro | wo | rw (default rw)
//! dump = true                      # optional: show the contents after the run (true, false or "hex")
//!
//! [[arg]]
//! name = "hashes"
//! type = "uint"
//! count = 8388608                  # elements (not bytes; 0 for a buffer the kernel never touches); implied by `file`
//! access = "wo"
//!
//! [[arg]]
//! name = "nodes"
//! type = "struct Node"             # a struct, named as the kernel's source names it (a typedef too: "Body")
//! count = 128                      # structs, each as large as the kernel lays the struct out
//! file = "data/nodes.bin"          # raw bytes: count × the struct's size
//!
//! [[arg]]
//! type = "uint"
//! value = 0                        # a scalar; vector types take an array: value = [1.0, 2.0, 0.5, 0.0]
//!
//! [[arg]]
//! local_bytes = 4096               # a __local pointer: the size of the block
//! type = "float"                   # optional: checked against the pointee
//!
//! [[arg]]
//! null = true                      # a NULL __global/__constant pointer
//!
//! [[arg]]
//! same_as = 0                      # the very buffer of an earlier argument
//! ```
//!
//! Unknown keys are errors (naming the key, its line and the closest known
//! key). Argument errors name the argument as `arg 2 (keys)`, counting from
//! 0 as `clSetKernelArg` does.
//!
//! ## Buffer initialisers (at most one per buffer)
//!
//! - `file = "path"`: a raw file is the buffer's exact little-endian image
//!   (3-lane vectors take 4 lanes of room, as in OpenCL); its size must be a
//!   whole number of elements. A `.gz` file is such an image compressed
//!   with gzip (captures store buffers so where it pays). A `.npy` file must hold the element's dtype
//!   (`<u4` for `uint`, `<f4` for `float`, `|u1` for `uchar` ...),
//!   little-endian, in C order; for vector types its last dimension is the
//!   lane count (3 for 3-lane vectors, which clflow pads to 4). `count` is
//!   implied; if given it must agree.
//! - `fill = v`: every lane holds v; for vectors, `fill = [a, b, c, d]` gives
//!   each lane its own value.
//! - `range = [start, step]`: lane k holds start + k·step, counting lanes in
//!   memory order and skipping the padding lane of 3-lane vectors. Integers
//!   are exact and every value must fit the type; floats are computed in
//!   double precision and rounded once (as `numpy.arange`).
//! - `random = { min = 0, max = 60, seed = 1 }`: lanes drawn from PCG64
//!   (the `pcg64` XSL-RR 128/64 generator of the PCG reference, as
//!   `rand_pcg::Pcg64::new(seed, 0xa02bdbf7bb3c0a7ac28fa16a64abf96)`: state
//!   = seed, the reference default stream), one 64-bit draw x per lane:
//!   integer types take values in [min, max] as min + x mod span where span
//!   = max − min + 1, drawing again while x ≥ 2⁶⁴ − (2⁶⁴ mod span) so
//!   every value is equally likely (a span of 2⁶⁴ takes x as is); float
//!   types take min + u·(max − min) with u = (x >> 11) / 2⁵³, computed in
//!   double precision and rounded to the type. A seed gives the same bytes
//!   on every platform, for good.
//! - `noinit = true`: contents the kernel must write before it reads them
//!   (an output the host never fills): zeros, so that runs repeat, or with
//!   `file` the bytes the device held (a capture writes it so for a buffer
//!   the host never wrote); `clflow count --detect uninit` treats them as
//!   never written. Not with `fill`, `range` or `random`.
//! - none: zeros.
//!
//! Scalar values, fills and ranges are checked against their type: 300 is an
//! error for a `uchar`, 1.5 for an `int`.
//!
//! #### Buffers of structs
//!
//! A pointer to a struct takes the struct's name as the kernel's source
//! writes the parameter's type: `type = "struct Node"` for `__global struct
//! Node *nodes`, `type = "Body"` for `__global Body *bodies` where `typedef
//! struct { ... } Body`. `count` counts structs, each as large as the
//! kernel's module lays the struct out (OpenCL C's alignment: `struct {
//! float4 pos; float mass; int id; }` takes 32 bytes); `clflow compile` prints
//! every such struct with its size and members' offsets. The buffer is a
//! raw `file`, the array's exact image (a whole number of structs; `count`
//! implied), or zeros; `fill`, `range`, `random` and `.npy` files, whose
//! values are per element, are refused. Another struct's name is an error
//! that names the kernel's. An element type whose size divides the
//! struct's views the array as elements instead, `count` counting them: bytes
//! (`type = "uchar"`, the raw image of anything, of any length, as for
//! `void*`), or `float4` for a struct of two float4 (`kernels/nbody` fills
//! its bodies so, at random, compared with a float tolerance). An element
//! that does not tile the struct is an error.
//! Any pointer takes bytes (`type = "uchar"`): a capture writes so a buffer
//! the application sized in no whole number of the kernel's elements.
//! `local_bytes` and `null` arguments may name the struct too (`local_bytes`
//! then holds whole structs). Where the module only names the struct (declared
//! but never defined) its size is unknown, and the check says so: give the
//! bytes. The interpreter and devices see the structs as bytes, so outputs
//! are compared byte for byte, float members without a tolerance.
//!
//! # Oclgrind `.sim` files
//!
//! A file ending in `.sim` (or any file whose first statement is not TOML)
//! is read as `oclgrind-kernel` reads it: the kernel file (OpenCL C,
//! relative to the `.sim` file), the kernel name, the global size and the
//! local size (3 numbers each; the launch has 3 dimensions, as Oclgrind's
//! does), then one `<...>` argument header per parameter with its data
//! after it; `#` comments. Header options: `size=N` (bytes), a data type
//! (`char` … `double`; by default the parameter's), `fill=V`,
//! `range=START:STEP:END` (END included; floats accumulate in their own
//! precision, as Oclgrind does), `noinit` (as TOML's `noinit = true`), `null`, `dump`, `hex`, `ro`, `wo`. The header's data type is
//! only the format of the data, as in Oclgrind: it is not checked against
//! the pointee. Options clflow does not know, and kernels given as LLVM
//! bitcode, are errors that say so.
//!
//! A `.sim` argument's kind (buffer, scalar or `__local` size) comes from the
//! kernel, so a `.sim` manifest is complete only once [`Manifest::check`]ed.
//!
//! # Modules
//!
//! `spec` holds the data both parsers build (`toml_format`, `sim_format`);
//! `structs` the buffers of structs that wait for the kernel to size them;
//! `manifest` reads a file through one of them into a [`Manifest`];
//! `signature` checks that against the kernel into a [`CheckedManifest`].

pub mod data_file;
pub mod dump;
mod error;
#[cfg(test)]
mod image_tests;
mod init;
mod manifest;
mod npy;
mod number;
mod signature;
mod sim_format;
mod spec;
mod structs;
#[cfg(test)]
mod testing;
mod toml_format;

pub use error::{ArgRef, ManifestError};
pub use init::{FileLayout, Initialiser, RANDOM_STREAM};
pub use manifest::{CheckedManifest, Manifest};
pub use number::Number;
pub use signature::IntegerSigns;
pub use spec::{
    ArgSpec, BufferSpec, DumpFormat, ElementName, LocalSpec, ManifestArg, ManifestFormat,
    ManifestInfo, ScalarSpec, StructArray,
};
