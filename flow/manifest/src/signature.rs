//! Checking a manifest against the kernel's real signature: what turns a
//! [`Manifest`] into a [`CheckedManifest`].

use crate::error::{ArgRef, ManifestError};
use crate::manifest::{CheckedManifest, Manifest, ParsedArg};
use crate::spec::{ArgSpec, BufferSpec, ElementName, ManifestFormat};
use clflow_core::{AddressSpace, ElementType, KernelParam, KernelSignature, ParamKind, ScalarType};

/// How far a signature's integer types can be trusted to carry their sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntegerSigns {
    /// The types came from the kernel's declared argument types (OpenCL C
    /// source or `kernel_arg_type` metadata): `int` and `uint` differ.
    Declared,
    /// The types came from SPIR-V, whose integers carry no sign: integers
    /// are compared by width alone.
    WidthOnly,
}

impl Manifest {
    /// Checks parameter count, that every pointer gets a buffer (or NULL),
    /// every `__local` pointer a `local_bytes`, every by-value parameter a
    /// scalar of matching size and int/float kind, and every buffer an
    /// element type matching the pointee where the kernel says what that is.
    ///
    /// It also completes what a `.sim` file leaves to the kernel: each
    /// argument's kind and, where its header names none, its data type.
    /// Arguments the manifest leaves unnamed take the kernel's parameter names.
    pub fn check(
        self,
        signature: &KernelSignature,
        signs: IntegerSigns,
    ) -> Result<CheckedManifest, ManifestError> {
        let Manifest { info, args } = self;
        let kernel_is = format!("the kernel is `{signature}`");
        if signature.name != info.kernel {
            return Err(ManifestError::input(
                &info.path,
                format!(
                    "the manifest launches kernel `{}`, but the signature given is of `{}`",
                    info.kernel, signature.name
                ),
            ));
        }
        let (params, given) = (signature.params.len(), args.len());
        if params != given {
            let entries = match info.format {
                ManifestFormat::Toml => "[[arg]] entries",
                ManifestFormat::OclgrindSim => "argument headers",
            };
            let line = args.get(params).or(args.last()).map_or(1, ParsedArg::line);
            return Err(info
                .error(line, format!("kernel `{}` takes {params} parameters, the manifest gives {given} {entries}", signature.name))
                .with_hint(kernel_is));
        }
        // A `.sim` header's type is only the format of its data, as in Oclgrind.
        let check_elements = info.format == ManifestFormat::Toml;
        let mut checked = Vec::with_capacity(params);
        for (index, (arg, param)) in args.into_iter().zip(&signature.params).enumerate() {
            let arg = match arg {
                ParsedArg::Typed(mut arg) => {
                    arg.param_name = param.name.clone();
                    arg
                }
                ParsedArg::Sim(pending) => pending.resolve(param).map_err(|(at, message)| {
                    let name = param.name.clone();
                    info.error(at.unwrap_or(pending.line), message)
                        .for_arg(ArgRef { index, name })
                        .with_hint(kernel_is.clone())
                })?,
                ParsedArg::Structs(pending) => {
                    pending.resolve(param, signs).map_err(|(at, message)| {
                        let name = pending.name.clone().or(param.name.clone());
                        info.error(at.unwrap_or(pending.line), message)
                            .for_arg(ArgRef { index, name })
                            .with_hint(kernel_is.clone())
                    })?
                }
            };
            check_arg(&arg.spec, param, signs, check_elements).map_err(|message| {
                info.error(arg.line, message)
                    .for_arg(arg.arg_ref(index))
                    .with_hint(kernel_is.clone())
            })?;
            checked.push(arg);
        }
        Ok(CheckedManifest { info, args: checked })
    }
}

/// What the manifest gives, as mismatch messages say it.
fn describe(spec: &ArgSpec) -> String {
    match spec {
        ArgSpec::Buffer(BufferSpec { structs: Some(structs), .. }) => {
            format!("a buffer of {}", structs.name)
        }
        ArgSpec::Buffer(BufferSpec { image: Some(image), access, .. }) => format!(
            "an {} of {} (access = \"{access}\")",
            image.dim.name(),
            image.format
        ),
        ArgSpec::Buffer(buffer) => format!("a buffer of {} {}", buffer.count, buffer.ty),
        ArgSpec::Sampler(_) => "a sampler".into(),
        ArgSpec::Scalar(scalar) => format!("a scalar {}", scalar.ty),
        ArgSpec::Local(local) => format!("local_bytes = {}", local.bytes),
        ArgSpec::Null { .. } => "a NULL pointer".into(),
        ArgSpec::SameBuffer { arg } => format!("the buffer of arg {arg}"),
    }
}

/// The parameter as messages name it: `__global uint* keys`.
pub(crate) fn declared(param: &KernelParam) -> String {
    match &param.name {
        Some(name) => format!("`{} {name}`", param.kind),
        None => format!("`{}`", param.kind),
    }
}

/// Whether values of `given` can stand for `declared`: same lanes, same
/// scalar width, both integer or both float, and the same sign where signs are known.
fn compatible(given: ElementType, declared: ElementType, signs: IntegerSigns) -> bool {
    let (g, d) = (given.scalar, declared.scalar);
    given.lanes == declared.lanes
        && g.size_bytes() == d.size_bytes()
        && g.is_float() == d.is_float()
        && (signs == IntegerSigns::WidthOnly || g.is_signed() == d.is_signed())
}

/// Whether a pointer argument's `type` suits what the parameter points to.
/// A struct pointer takes its struct's name, or an element that tiles the
/// struct: bytes (`uchar`), the raw image of anything, or a view such as
/// `float4` for a struct of two float4.
pub(crate) fn check_element(
    given: &ElementName,
    param: &KernelParam,
    signs: IntegerSigns,
) -> Result<(), String> {
    let ParamKind::Pointer { pointee, pointee_struct, .. } = &param.kind else {
        return Ok(());
    };
    let gives = |what: &str, instead: &str| {
        Err(format!(
            "the kernel declares {}, the manifest gives {what}; {instead}",
            declared(param)
        ))
    };
    match (given, pointee, pointee_struct) {
        // Bytes, the raw image of anything, of any length (a buffer an
        // application sized in no whole number of the kernel's elements).
        (ElementName::Builtin(given), Some(_), _)
            if *given == ElementType::scalar(ScalarType::UChar) =>
        {
            Ok(())
        }
        (ElementName::Builtin(given), Some(pointee), _) => {
            if compatible(*given, *pointee, signs) {
                Ok(())
            } else {
                gives(
                    &format!("{given} elements"),
                    &format!("make `type` \"{pointee}\""),
                )
            }
        }
        (ElementName::Builtin(given), None, Some(record)) => match record.size_bytes {
            Some(size) if !size.is_multiple_of(given.size_bytes()) => gives(
                &format!(
                    "{given} elements, which do not tile {} ({size} bytes)",
                    record.name
                ),
                &format!(
                    "make `type` \"{}\" (count in structs) or \"uchar\" (count in bytes)",
                    record.name
                ),
            ),
            _ => Ok(()),
        },
        (ElementName::Builtin(_), None, None) => Ok(()),
        (ElementName::Struct(name), _, Some(record)) if *name == record.name => Ok(()),
        (ElementName::Struct(name), _, Some(record)) => gives(
            &format!("{name} elements"),
            &format!(
                "make `type` \"{}\" as the kernel's source names it",
                record.name
            ),
        ),
        (ElementName::Struct(name), Some(pointee), None) => {
            let what = if name.contains(' ') {
                name.clone()
            } else {
                // A bare name that is no struct of the kernel's may be a typo.
                format!("`{name}` (no OpenCL type)")
            };
            gives(
                &format!("{what} elements"),
                &format!("make `type` \"{pointee}\""),
            )
        }
        (ElementName::Struct(name), None, None) => gives(
            &format!("{name} elements"),
            "it points to no struct: give its bytes as type = \"uchar\", count = BYTES",
        ),
    }
}

fn check_arg(
    spec: &ArgSpec,
    param: &KernelParam,
    signs: IntegerSigns,
    check_elements: bool,
) -> Result<(), String> {
    let mismatch = |what_to_give: &str| {
        Err(format!(
            "the kernel declares {}, the manifest gives {}; {what_to_give}",
            declared(param),
            describe(spec)
        ))
    };
    let element_check = |given: Option<&ElementName>| match given {
        Some(given) => check_element(given, param, signs),
        None => Ok(()),
    };
    match (&param.kind, spec) {
        (ParamKind::Image { dim, access }, ArgSpec::Buffer(buffer)) if buffer.image.is_some() => {
            let image = buffer.image.as_ref().expect("an image");
            if image.dim != *dim {
                mismatch(&format!("make `type` \"{}\"", dim.name()))
            } else if buffer.access != *access {
                mismatch(&format!("make `access` \"{access}\""))
            } else {
                Ok(())
            }
        }
        (ParamKind::Sampler, ArgSpec::Sampler(_)) => Ok(()),
        (
            ParamKind::Pointer {
                space: AddressSpace::Global | AddressSpace::Constant,
                ..
            },
            ArgSpec::Buffer(buffer),
        ) if buffer.image.is_none() => {
            // A buffer of structs was checked as its size was resolved.
            if check_elements && buffer.structs.is_none() {
                element_check(Some(&ElementName::Builtin(buffer.ty)))?;
            }
            Ok(())
        }
        (
            ParamKind::Pointer {
                space: AddressSpace::Global | AddressSpace::Constant,
                ..
            },
            ArgSpec::Null { ty },
        ) => element_check(ty.as_ref()),
        (
            ParamKind::Pointer {
                space: AddressSpace::Global | AddressSpace::Constant,
                ..
            },
            ArgSpec::SameBuffer { .. },
        ) => Ok(()),
        (
            ParamKind::Pointer {
                space: AddressSpace::Global | AddressSpace::Constant,
                ..
            },
            _,
        ) => mismatch("give a buffer (type, count and an initialiser) or null = true"),
        (
            ParamKind::Pointer {
                space: AddressSpace::Local,
                pointee_struct,
                ..
            },
            ArgSpec::Local(local),
        ) => {
            element_check(local.ty.as_ref())?;
            let size = pointee_struct.as_ref().and_then(|s| s.size_bytes);
            match (&local.ty, size) {
                (Some(ElementName::Struct(name)), Some(size))
                    if !local.bytes.is_multiple_of(size as u64) =>
                {
                    Err(format!(
                        "local_bytes = {} is not a whole number of {name} ({size}-byte) elements",
                        local.bytes
                    ))
                }
                _ => Ok(()),
            }
        }
        (
            ParamKind::Pointer {
                space: AddressSpace::Local,
                ..
            },
            ArgSpec::Null { .. },
        ) => mismatch("a __local pointer cannot be NULL: give local_bytes = N"),
        (
            ParamKind::Pointer {
                space: AddressSpace::Local,
                ..
            },
            _,
        ) => mismatch("give local_bytes = N, the size of the __local block"),
        (ParamKind::Pointer { space, .. }, _) => Err(format!(
            "the kernel declares {}, and clflow cannot pass a {space} pointer to a kernel",
            declared(param)
        )),
        (ParamKind::Scalar { ty }, ArgSpec::Scalar(scalar)) => {
            if compatible(scalar.ty, *ty, signs) {
                Ok(())
            } else {
                Err(format!(
                    "the kernel declares {} ({} bytes, {}), the manifest gives a scalar {} ({} bytes, {}); make `type` \"{ty}\"",
                    declared(param),
                    ty.size_bytes(),
                    kind_word(*ty),
                    scalar.ty,
                    scalar.ty.size_bytes(),
                    kind_word(scalar.ty)
                ))
            }
        }
        (ParamKind::Scalar { ty }, _) => mismatch(&format!("give type = \"{ty}\" and a value")),
        (ParamKind::Aggregate { size_bytes }, ArgSpec::Scalar(scalar))
            if scalar.bytes.len() == *size_bytes =>
        {
            Ok(())
        }
        (ParamKind::Aggregate { size_bytes }, _) => mismatch(&format!(
            "a struct passed by value needs exactly its {size_bytes} bytes"
        )),
        (ParamKind::Image { dim, access }, _) => mismatch(&format!(
            "give type = \"{}\", format = \"ORDER/TYPE\", shape = [...] and access = \"{access}\"",
            dim.name()
        )),
        (ParamKind::Sampler, _) => mismatch(
            "give sampler = { normalized = false, address = \"clamp_to_edge\", filter = \"nearest\" }",
        ),
        (ParamKind::Unsupported { what }, _) => Err(format!(
            "the kernel declares {}: clflow cannot pass a {what}",
            declared(param)
        )),
    }
}

fn kind_word(ty: ElementType) -> &'static str {
    if ty.scalar.is_float() {
        "floating point"
    } else {
        "integer"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Fixture;
    use clflow_core::Diagnostic;
    use clflow_core::ScalarType;

    fn param(name: &str, kind: ParamKind) -> KernelParam {
        KernelParam { name: Some(name.into()), kind }
    }

    fn pointer(space: AddressSpace, pointee: &str) -> ParamKind {
        ParamKind::Pointer {
            space,
            pointee: Some(pointee.parse().unwrap()),
            pointee_struct: None,
        }
    }

    fn scalar(ty: &str) -> ParamKind {
        ParamKind::Scalar { ty: ty.parse().unwrap() }
    }

    /// `__kernel void hash(__global uchar* keys, __global uint* out, uint n, __local uint* scratch)`
    fn hash_signature() -> KernelSignature {
        KernelSignature {
            name: "hash".into(),
            params: vec![
                param("keys", pointer(AddressSpace::Global, "uchar")),
                param("out", pointer(AddressSpace::Global, "uint")),
                param("n", scalar("uint")),
                param("scratch", pointer(AddressSpace::Local, "uint")),
            ],
        }
    }

    const HEAD: &str = "source = \"k.cl\"\nkernel = \"hash\"\nglobal_size = [4]\n";
    const KEYS: &str = "[[arg]]\nname = \"keys\"\ntype = \"uchar\"\ncount = 16\n";
    const OUT: &str = "[[arg]]\ntype = \"uint\"\ncount = 4\n";
    const N: &str = "[[arg]]\ntype = \"uint\"\nvalue = 4\n";
    const SCRATCH: &str = "[[arg]]\nlocal_bytes = 64\n";

    fn check(args: &[&str], signs: IntegerSigns) -> Result<CheckedManifest, String> {
        let fixture = Fixture::new();
        let manifest = fixture
            .load("m.toml", &format!("{HEAD}{}", args.concat()))
            .unwrap();
        manifest.check(&hash_signature(), signs).map_err(|e| {
            let shown = e
                .to_string()
                .replace(&fixture.dir.path().display().to_string(), "DIR");
            format!("{shown} | hint: {}", e.hint().unwrap_or_default())
        })
    }

    #[test]
    fn a_matching_manifest_passes_and_takes_parameter_names() {
        let manifest = check(&[KEYS, OUT, N, SCRATCH], IntegerSigns::Declared).unwrap();
        let names: Vec<_> = manifest
            .args()
            .iter()
            .map(|a| a.display_name().unwrap().to_string())
            .collect();
        assert_eq!(names, ["keys", "out", "n", "scratch"]);
        let launch = manifest.materialize().unwrap();
        assert_eq!(launch.args[1].name.as_deref(), Some("out"));
    }

    #[test]
    fn parameter_counts_must_agree() {
        let error = check(&[KEYS, OUT, N], IntegerSigns::WidthOnly).unwrap_err();
        assert_eq!(
            error,
            "DIR/m.toml:11: kernel `hash` takes 4 parameters, the manifest gives 3 [[arg]] entries \
             | hint: the kernel is `__kernel void hash(__global uchar* keys, __global uint* out, uint n, __local uint* scratch)`"
        );
    }

    #[test]
    fn pointers_need_buffers_and_scalars_need_values() {
        let error = check(&[KEYS, N, N, SCRATCH], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.starts_with("DIR/m.toml:8: arg 1 (out): the kernel declares `__global uint* out`, the manifest gives a scalar uint; give a buffer"),
            "{error}"
        );
        let error = check(&[KEYS, OUT, OUT, SCRATCH], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.starts_with("DIR/m.toml:11: arg 2 (n): the kernel declares `uint n`, the manifest gives a buffer of 4 uint; give type = \"uint\" and a value"),
            "{error}"
        );
    }

    #[test]
    fn local_and_global_pointers_are_told_apart() {
        let error = check(&[SCRATCH, OUT, N, SCRATCH], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.starts_with("DIR/m.toml:4: arg 0 (keys): the kernel declares `__global uchar* keys`, the manifest gives local_bytes = 64; give a buffer"),
            "{error}"
        );
        let error = check(&[KEYS, OUT, N, OUT], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.starts_with("DIR/m.toml:14: arg 3 (scratch): the kernel declares `__local uint* scratch`, the manifest gives a buffer of 4 uint; give local_bytes = N"),
            "{error}"
        );
        let null = "[[arg]]\nnull = true\n";
        let error = check(&[KEYS, OUT, N, null], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.contains("a __local pointer cannot be NULL"),
            "{error}"
        );
        assert!(check(&[null, OUT, N, SCRATCH], IntegerSigns::WidthOnly).is_ok());
    }

    #[test]
    fn scalar_sizes_and_kinds_must_match() {
        let long = "[[arg]]\ntype = \"ulong\"\nvalue = 4\n";
        let error = check(&[KEYS, OUT, long, SCRATCH], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.starts_with("DIR/m.toml:11: arg 2 (n): the kernel declares `uint n` (4 bytes, integer), the manifest gives a scalar ulong (8 bytes, integer); make `type` \"uint\""),
            "{error}"
        );
        let float = "[[arg]]\ntype = \"float\"\nvalue = 4\n";
        let error = check(&[KEYS, OUT, float, SCRATCH], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.contains(
                "(4 bytes, integer), the manifest gives a scalar float (4 bytes, floating point)"
            ),
            "{error}"
        );
    }

    #[test]
    fn integer_signs_count_only_when_declared() {
        let int = "[[arg]]\ntype = \"int\"\nvalue = 4\n";
        assert!(check(&[KEYS, OUT, int, SCRATCH], IntegerSigns::WidthOnly).is_ok());
        let error = check(&[KEYS, OUT, int, SCRATCH], IntegerSigns::Declared).unwrap_err();
        assert!(
            error.contains(
                "the kernel declares `uint n` (4 bytes, integer), the manifest gives a scalar int"
            ),
            "{error}"
        );
    }

    #[test]
    fn buffer_elements_must_match_the_pointee() {
        let float_out = "[[arg]]\ntype = \"float\"\ncount = 4\n";
        let error = check(&[KEYS, float_out, N, SCRATCH], IntegerSigns::WidthOnly).unwrap_err();
        assert!(
            error.starts_with("DIR/m.toml:8: arg 1 (out): the kernel declares `__global uint* out`, the manifest gives float elements; make `type` \"uint\""),
            "{error}"
        );
        let vector_out = "[[arg]]\ntype = \"uint4\"\ncount = 1\n";
        assert!(check(&[KEYS, vector_out, N, SCRATCH], IntegerSigns::WidthOnly).is_err());
        let char_keys = "[[arg]]\ntype = \"char\"\ncount = 16\n";
        assert!(check(&[char_keys, OUT, N, SCRATCH], IntegerSigns::WidthOnly).is_ok());
        assert!(check(&[char_keys, OUT, N, SCRATCH], IntegerSigns::Declared).is_err());
    }

    #[test]
    fn struct_pointers_and_values() {
        let fixture = Fixture::new();
        let text = "source = \"k.cl\"\nkernel = \"s\"\nglobal_size = [1]\n\
            [[arg]]\ntype = \"uchar\"\ncount = 24\n[[arg]]\ntype = \"uint2\"\nvalue = [1, 2]\n";
        let manifest = fixture.load("m.toml", text).unwrap();
        let signature = KernelSignature {
            name: "s".into(),
            params: vec![
                param(
                    "items",
                    ParamKind::Pointer {
                        space: AddressSpace::Global,
                        pointee: None,
                        pointee_struct: None,
                    },
                ),
                param("pair", ParamKind::Aggregate { size_bytes: 8 }),
            ],
        };
        let width_only = IntegerSigns::WidthOnly;
        manifest.clone().check(&signature, width_only).unwrap();
        let mut wrong = signature.clone();
        wrong.params[1].kind = ParamKind::Aggregate { size_bytes: 12 };
        let error = manifest.check(&wrong, width_only).unwrap_err();
        assert!(
            error
                .message()
                .contains("a struct passed by value needs exactly its 12 bytes"),
            "{error}"
        );
        assert_eq!(ScalarType::UInt.size_bytes() * 2, 8);
    }

    #[test]
    fn the_kernel_name_must_agree() {
        let fixture = Fixture::new();
        let manifest = fixture.load("m.toml", &format!("{HEAD}{KEYS}")).unwrap();
        let mut other = hash_signature();
        other.name = "other".into();
        let error = manifest.check(&other, IntegerSigns::WidthOnly).unwrap_err();
        assert_eq!(
            error.message(),
            "the manifest launches kernel `hash`, but the signature given is of `other`"
        );
    }
}
