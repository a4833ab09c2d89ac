//! Buffers of structs: `type = "struct Node"` (or a typedef, `"Body"`),
//! `count` in structs. The struct's size is the kernel's, so such a buffer
//! is sized only when [`crate::Manifest::check`] has the kernel's signature;
//! until then it waits here, as a `.sim` argument waits for its kind.

use crate::init::Initialiser;
use crate::signature::{check_element, declared};
use crate::spec::{ArgSpec, BufferSpec, DumpFormat, ElementName, ManifestArg, StructArray};
use crate::IntegerSigns;
use clflow_core::{Access, AddressSpace, ElementType, KernelParam, ParamKind, ScalarType};

/// A message, and the manifest line it is about where that is not the
/// argument's own.
type Failure = (Option<usize>, String);

/// A buffer of structs as its `[[arg]]` gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PendingStructs {
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    /// The line of the `[[arg]]`.
    pub(crate) line: usize,
    /// `struct Node`, `Body`: as the manifest names it.
    pub(crate) struct_name: String,
    /// Structs, where `count` gives them, and its line.
    pub(crate) count: Option<(u64, usize)>,
    /// A raw file's initialiser, its length in bytes, and its line.
    pub(crate) file: Option<(Initialiser, u64, usize)>,
    /// `noinit = true` (see `BufferSpec::undefined`).
    pub(crate) undefined: bool,
    pub(crate) access: Access,
    pub(crate) dump: Option<DumpFormat>,
}

impl PendingStructs {
    /// The buffer sized by the struct the parameter points to; a parameter
    /// of another kind gets a spec its check refuses with the usual message.
    pub(crate) fn resolve(
        &self,
        param: &KernelParam,
        signs: IntegerSigns,
    ) -> Result<ManifestArg, Failure> {
        let record = match &param.kind {
            ParamKind::Pointer {
                space: AddressSpace::Global | AddressSpace::Constant,
                pointee_struct,
                ..
            } => {
                check_element(&ElementName::Struct(self.struct_name.clone()), param, signs)
                    .map_err(|message| (None, message))?;
                pointee_struct.as_ref()
            }
            _ => None,
        };
        let size = match record {
            Some(record) => record.size_bytes.ok_or_else(|| {
                (None, format!(
                    "the kernel declares {}, but its module does not give the size of {} (it only names it); give the buffer's bytes as type = \"uchar\", count = BYTES",
                    declared(param),
                    record.name
                ))
            })? as u64,
            None => return Ok(self.arg(param, 0, 0)),
        };
        let name = &self.struct_name;
        let count = match (&self.file, self.count) {
            (Some((_, bytes, at)), given) => {
                if !bytes.is_multiple_of(size) {
                    return Err((
                        Some(*at),
                        format!("the file holds {bytes} bytes, not a whole number of {name} ({size}-byte) elements"),
                    ));
                }
                let implied = bytes / size;
                if let Some((given, at)) = given.filter(|(given, _)| *given != implied) {
                    return Err((
                        Some(at),
                        format!("count = {given} but the file holds {implied} {name} elements; drop `count` (the file implies it) or fix it"),
                    ));
                }
                implied
            }
            (None, Some((count, at))) => {
                let fits = count
                    .checked_mul(size)
                    .is_some_and(|bytes| usize::try_from(bytes).is_ok());
                if !fits {
                    return Err((
                        Some(at),
                        format!("{count} {name} elements do not fit in memory"),
                    ));
                }
                count
            }
            (None, None) => unreachable!("the parser gives a struct buffer a count or a file"),
        };
        Ok(self.arg(param, count, size))
    }

    fn arg(&self, param: &KernelParam, count: u64, size_bytes: u64) -> ManifestArg {
        ManifestArg {
            name: self.name.clone(),
            description: self.description.clone(),
            line: self.line,
            param_name: param.name.clone(),
            spec: ArgSpec::Buffer(BufferSpec {
                ty: ElementType::scalar(ScalarType::UChar),
                count: count * size_bytes,
                init: match &self.file {
                    Some((init, ..)) => init.clone(),
                    None => Initialiser::Zeros,
                },
                undefined: self.undefined,
                access: self.access,
                dump: self.dump,
                image: None,
                structs: Some(StructArray { name: self.struct_name.clone(), count, size_bytes }),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::Fixture;
    use crate::{ArgSpec, CheckedManifest, IntegerSigns, StructArray};
    use clflow_core::{
        AddressSpace, ArgValue, Diagnostic, KernelParam, KernelSignature, ParamKind, StructType,
    };

    fn pointer(space: AddressSpace, record: Option<(&str, Option<usize>)>) -> ParamKind {
        ParamKind::Pointer {
            space,
            pointee: None,
            pointee_struct: record.map(|(name, size_bytes)| StructType {
                name: name.into(),
                size_bytes,
                members: Vec::new(),
            }),
        }
    }

    /// `__kernel void step(__global Body* bodies, __global struct Node* nodes,
    /// __global void* raw, __global struct Fwd* fwd, __local struct Node*
    /// scratch, __global uint* out)`: Body 48 bytes, Node 16, Fwd unsized.
    fn signature() -> KernelSignature {
        let global = AddressSpace::Global;
        let params = [
            ("bodies", pointer(global, Some(("Body", Some(48))))),
            ("nodes", pointer(global, Some(("struct Node", Some(16))))),
            ("raw", pointer(global, None)),
            ("fwd", pointer(global, Some(("struct Fwd", None)))),
            (
                "scratch",
                pointer(AddressSpace::Local, Some(("struct Node", Some(16)))),
            ),
            (
                "out",
                ParamKind::Pointer {
                    space: global,
                    pointee: Some("uint".parse().unwrap()),
                    pointee_struct: None,
                },
            ),
        ];
        KernelSignature {
            name: "step".into(),
            params: params
                .into_iter()
                .map(|(name, kind)| KernelParam { name: Some(name.into()), kind })
                .collect(),
        }
    }

    const HEAD: &str = "source = \"k.cl\"\nkernel = \"step\"\nglobal_size = [4]\n";
    const BODIES: &str = "[[arg]]\nname = \"bodies\"\ntype = \"Body\"\ncount = 4\n";
    const NODES: &str = "[[arg]]\ntype = \"struct  Node\"\nfile = \"nodes.bin\"\naccess = \"ro\"\n";
    const RAW: &str = "[[arg]]\ntype = \"uchar\"\ncount = 10\n";
    const FWD: &str = "[[arg]]\nnull = true\ntype = \"struct Fwd\"\n";
    const SCRATCH: &str = "[[arg]]\nlocal_bytes = 64\ntype = \"struct Node\"\n";
    const OUT: &str = "[[arg]]\ntype = \"uint\"\ncount = 4\n";

    /// The manifest of `args` checked against [`signature`], or its error
    /// as the user reads it. `nodes.bin` holds 3 Nodes.
    /// The first line of the error checking `args` gives.
    fn first_error(args: [&str; 6]) -> String {
        check(args)
            .unwrap_err()
            .split(" | ")
            .next()
            .unwrap()
            .to_string()
    }

    fn check(args: [&str; 6]) -> Result<(Fixture, CheckedManifest), String> {
        let fixture = Fixture::new();
        fixture.file("nodes.bin", &(0..48).collect::<Vec<u8>>());
        let manifest = fixture
            .load("m.toml", &format!("{HEAD}{}", args.concat()))
            .map_err(|e| e.to_string())?;
        let checked = manifest
            .check(&signature(), IntegerSigns::Declared)
            .map_err(|e| {
                let shown = e
                    .to_string()
                    .replace(&fixture.dir.path().display().to_string(), "DIR");
                format!("{shown} | hint: {}", e.hint().unwrap_or_default())
            })?;
        Ok((fixture, checked))
    }

    #[test]
    fn struct_buffers_are_sized_by_the_kernels_layout() {
        let (_fixture, manifest) = check([BODIES, NODES, RAW, FWD, SCRATCH, OUT]).unwrap();
        let structs: Vec<Option<&StructArray>> = manifest
            .args()
            .iter()
            .map(|arg| match &arg.spec {
                ArgSpec::Buffer(buffer) => buffer.structs.as_ref(),
                _ => None,
            })
            .collect();
        let array =
            |name: &str, count, size_bytes| StructArray { name: name.into(), count, size_bytes };
        assert_eq!(
            structs,
            [
                Some(&array("Body", 4, 48)),
                Some(&array("struct Node", 3, 16)),
                None,
                None,
                None,
                None
            ]
        );
        let launch = manifest.materialize().unwrap();
        let buffer = |index: usize| match &launch.args[index].value {
            ArgValue::Buffer { ty, bytes, .. } => (ty.to_string(), bytes.clone()),
            other => panic!("{other:?}"),
        };
        // 4 Bodies of zeros, the file's 3 Nodes as they are, 10 raw bytes.
        assert_eq!(buffer(0), ("uchar".into(), vec![0; 192]));
        assert_eq!(buffer(1), ("uchar".into(), (0..48).collect::<Vec<u8>>()));
        assert_eq!(buffer(2).1.len(), 10);
        assert_eq!(launch.args[0].name.as_deref(), Some("bodies"));
        assert_eq!(launch.args[1].name.as_deref(), Some("nodes"));
        assert_eq!(launch.args[3].value, ArgValue::NullPointer);
        assert_eq!(launch.args[4].value, ArgValue::Local { bytes: 64 });
    }

    #[test]
    fn elements_that_tile_the_struct_view_it_and_others_are_refused() {
        // The raw form: bytes, with count in bytes, of any length.
        let bytes = "[[arg]]\ntype = \"char\"\ncount = 33\n";
        assert!(check([bytes, NODES, RAW, FWD, SCRATCH, OUT]).is_ok());
        // A view: 48-byte Bodies as float4 (a random fill, float tolerance).
        let view =
            "[[arg]]\ntype = \"float4\"\ncount = 12\nrandom = { min = 0, max = 1, seed = 1 }\n";
        let (_fixture, manifest) = check([view, NODES, RAW, FWD, SCRATCH, OUT]).unwrap();
        let ArgSpec::Buffer(buffer) = &manifest.args()[0].spec else {
            panic!("a buffer")
        };
        assert_eq!((buffer.ty.to_string(), buffer.count), ("float4".into(), 12));
        assert_eq!(buffer.structs, None);
        let wide = "[[arg]]\ntype = \"double4\"\ncount = 6\n";
        assert_eq!(
            check([wide, NODES, RAW, FWD, SCRATCH, OUT]).unwrap_err(),
            "DIR/m.toml:4: arg 0 (bodies): the kernel declares `__global Body* bodies`, the manifest \
             gives double4 elements, which do not tile Body (48 bytes); make `type` \"Body\" (count in \
             structs) or \"uchar\" (count in bytes) | hint: the kernel is `__kernel void step(__global \
             Body* bodies, __global struct Node* nodes, __global void* raw, __global struct Fwd* fwd, \
             __local struct Node* scratch, __global uint* out)`"
        );
    }

    #[test]
    fn a_wrong_struct_name_says_the_kernels() {
        let tagged = "[[arg]]\nname = \"bodies\"\ntype = \"struct Body\"\ncount = 4\n";
        assert_eq!(
            first_error([tagged, NODES, RAW, FWD, SCRATCH, OUT]),
            "DIR/m.toml:4: arg 0 (bodies): the kernel declares `__global Body* bodies`, the manifest \
             gives struct Body elements; make `type` \"Body\" as the kernel's source names it"
        );
        let node_for_uint = "[[arg]]\ntype = \"struct Node\"\ncount = 4\n";
        assert_eq!(
            first_error([BODIES, NODES, RAW, FWD, SCRATCH, node_for_uint]),
            "DIR/m.toml:21: arg 5 (out): the kernel declares `__global uint* out`, the manifest \
             gives struct Node elements; make `type` \"uint\""
        );
        let typo = "[[arg]]\ntype = \"unit\"\ncount = 4\n";
        assert_eq!(
            first_error([BODIES, NODES, RAW, FWD, SCRATCH, typo]),
            "DIR/m.toml:21: arg 5 (out): the kernel declares `__global uint* out`, the manifest \
             gives `unit` (no OpenCL type) elements; make `type` \"uint\""
        );
        let on_void = "[[arg]]\ntype = \"struct Node\"\ncount = 1\n";
        assert_eq!(
            first_error([BODIES, NODES, on_void, FWD, SCRATCH, OUT]),
            "DIR/m.toml:12: arg 2 (raw): the kernel declares `__global void* raw`, the manifest gives \
             struct Node elements; it points to no struct: give its bytes as type = \"uchar\", count = BYTES"
        );
        let null = "[[arg]]\nnull = true\ntype = \"Fwd\"\n";
        assert!(first_error([BODIES, NODES, RAW, null, SCRATCH, OUT])
            .contains("make `type` \"struct Fwd\" as the kernel's source names it"));
        let as_value = "[[arg]]\ntype = \"struct Node\"\ncount = 4\n";
        assert!(first_error([BODIES, NODES, RAW, FWD, as_value, OUT]).starts_with(
            "DIR/m.toml:18: arg 4 (scratch): the kernel declares `__local struct Node* scratch`, \
             the manifest gives a buffer of struct Node; give local_bytes = N"
        ));
    }

    #[test]
    fn sizes_must_be_whole_structs_and_known() {
        let miscounted = "[[arg]]\ntype = \"struct Node\"\nfile = \"nodes.bin\"\ncount = 4\n";
        assert_eq!(
            first_error([BODIES, miscounted, RAW, FWD, SCRATCH, OUT]),
            "DIR/m.toml:11: arg 1 (nodes): count = 4 but the file holds 3 struct Node elements; \
             drop `count` (the file implies it) or fix it"
        );
        let fixture = Fixture::new();
        fixture.file("odd.bin", &[0; 50]);
        let odd = "[[arg]]\ntype = \"struct Node\"\nfile = \"odd.bin\"\n";
        let manifest = fixture
            .load(
                "m.toml",
                &[HEAD, BODIES, odd, RAW, FWD, SCRATCH, OUT].concat(),
            )
            .unwrap();
        let shown = manifest
            .check(&signature(), IntegerSigns::Declared)
            .unwrap_err()
            .to_string()
            .replace(&fixture.dir.path().display().to_string(), "DIR");
        assert_eq!(
            shown,
            "DIR/m.toml:10: arg 1 (nodes): the file holds 50 bytes, not a whole number of \
             struct Node (16-byte) elements"
        );
        let sizeless = "[[arg]]\ntype = \"struct Fwd\"\ncount = 2\n";
        assert_eq!(
            first_error([BODIES, NODES, RAW, sizeless, SCRATCH, OUT]),
            "DIR/m.toml:15: arg 3 (fwd): the kernel declares `__global struct Fwd* fwd`, but its \
             module does not give the size of struct Fwd (it only names it); give the buffer's \
             bytes as type = \"uchar\", count = BYTES"
        );
        let local = "[[arg]]\nlocal_bytes = 40\ntype = \"struct Node\"\n";
        assert_eq!(
            first_error([BODIES, NODES, RAW, FWD, local, OUT]),
            "DIR/m.toml:18: arg 4 (scratch): local_bytes = 40 is not a whole number of \
             struct Node (16-byte) elements"
        );
    }

    #[test]
    fn struct_buffers_take_a_raw_file_or_zeros() {
        let fixture = Fixture::new();
        let fill = "[[arg]]\ntype = \"Body\"\ncount = 4\nfill = 1\n";
        assert_eq!(
            fixture.load_error("m.toml", &format!("{HEAD}{fill}")),
            "DIR/m.toml:7: arg 0: `fill` does not initialise a buffer of Body; give `file` (its raw \
             bytes), or nothing for zeros, or the bytes as type = \"uchar\""
        );
        let npy = "[[arg]]\ntype = \"Body\"\nfile = \"b.npy\"\n";
        assert!(fixture
            .load_error("m.toml", &format!("{HEAD}{npy}"))
            .contains("a buffer of Body takes a raw file of its bytes, not .npy"));
        let uncounted = "[[arg]]\ntype = \"Body\"\n";
        assert!(fixture
            .load_error("m.toml", &format!("{HEAD}{uncounted}"))
            .starts_with("DIR/m.toml:4: arg 0: a buffer needs `count`"));
        // Without the kernel a struct's size is unknown.
        let manifest = fixture.load("m.toml", &format!("{HEAD}{BODIES}")).unwrap();
        let error = manifest.check_typed().unwrap_err();
        assert!(
            error
                .message()
                .contains("a buffer of structs takes its size from the kernel's layout"),
            "{error}"
        );
    }
}
